"""Calibrated prediction intervals: conformalized quantile regression on the eval windows.

A quantile loss does not guarantee that the P10-P90 band holds 80% of what happens: on
many series with covariates it held 61% (Stallion). After training, each band of
symmetric quantiles (q, 1 - q) is rescaled by one factor chosen on the eval windows
(Romano et al., 2019, with scores relative to the band's width, so one factor serves
series of every level):

  score = max(lo - y, y - hi) / (hi - lo)       per window and horizon step
  w     = the ceil((n + 1)(1 - 2q))-th smallest of the n scores
  lo'   = lo - w (hi - lo),  hi' = hi + w (hi - lo)

w > 0 widens a band that covered too little, w < 0 narrows one that covered too much
(never past the band's middle); a band whose ends cross (an undertrained model's P10
above its P90) is taken from the lower to the higher end. P50 and every quantile outside
such pairs are left as they are. The factors travel inside the exported model
(`trainer_module.export`), so every signature, and so the Evaluator, `tft-predict` and
the run's forecasts, serves the calibrated bands; `calibration.json` beside the model
records them, and the run summary prints them (`describe`).
"""

import json
import math
import os
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

CALIBRATION_FILE = os.path.join('assets.extra', 'calibration.json')
# A band is never narrowed past this share of its half-width: it keeps its order.
_MIN_FACTOR = -0.45
_MIN_WIDTH = 1e-6


def quantile_pairs(quantiles: Sequence[float]) -> Tuple[Tuple[int, int], ...]:
  """Index pairs (lower, upper) of the quantiles q < 0.5 whose 1 - q is forecast too."""
  index = {round(q, 6): i for i, q in enumerate(quantiles)}
  return tuple((index[round(q, 6)], index[round(1 - q, 6)])
               for q in quantiles if q < 0.5 and round(1 - q, 6) in index)


def conformal_factor(lower: np.ndarray, upper: np.ndarray, actual: np.ndarray,
                     coverage: float) -> float:
  """The factor w that makes [lo - w (hi - lo), hi + w (hi - lo)] hold `coverage` of
  `actual` on these forecasts, with the finite-sample correction of split conformal."""
  lower, upper = np.minimum(lower, upper), np.maximum(lower, upper)
  width = np.maximum(upper - lower, _MIN_WIDTH)
  scores = np.sort((np.maximum(lower - actual, actual - upper) / width).ravel())
  rank = math.ceil((scores.size + 1) * coverage)
  factor = scores[min(rank, scores.size) - 1]
  return float(max(factor, _MIN_FACTOR))


def fit(quantile_forecasts: np.ndarray, actual: np.ndarray,
        quantiles: Sequence[float]) -> Dict[str, float]:
  """Factors per band from forecasts [N, H, Q] and actuals [N, H] in the same units;
  keyed 'q_low:q_high'."""
  return {f'{quantiles[low]:g}:{quantiles[high]:g}': conformal_factor(
              quantile_forecasts[..., low], quantile_forecasts[..., high], actual,
              quantiles[high] - quantiles[low])
          for low, high in quantile_pairs(quantiles)}


def apply(quantile_forecasts: tf.Tensor, quantiles: Sequence[float],
          factors: Dict[str, float]) -> tf.Tensor:
  """Forecasts [B, H, Q] with each band rescaled by its factor (graph-safe)."""
  columns = tf.unstack(quantile_forecasts, axis=-1)
  for low, high in quantile_pairs(quantiles):
    factor = factors.get(f'{quantiles[low]:g}:{quantiles[high]:g}', 0.0)
    lower = tf.minimum(columns[low], columns[high])
    upper = tf.maximum(columns[low], columns[high])
    width = tf.maximum(upper - lower, _MIN_WIDTH)
    columns[low], columns[high] = lower - factor * width, upper + factor * width
  return tf.stack(columns, axis=-1)


def coverage(quantile_forecasts: np.ndarray, actual: np.ndarray,
             quantiles: Sequence[float]) -> Dict[str, float]:
  """Share of actuals inside each band, keyed as `fit`'s factors."""
  return {f'{quantiles[low]:g}:{quantiles[high]:g}': float(np.mean(
              (actual >= quantile_forecasts[..., low]) & (actual <= quantile_forecasts[..., high])))
          for low, high in quantile_pairs(quantiles)}


def write(path: str, report: Dict[str, object]) -> None:
  target = os.path.join(path, CALIBRATION_FILE)
  tf.io.gfile.makedirs(os.path.dirname(target))
  with tf.io.gfile.GFile(target, 'w') as f:
    json.dump(report, f, indent=2, sort_keys=True)


def read(model_dir: str) -> Optional[Dict[str, object]]:
  """The calibration report of an exported model, or None if its bands were not
  calibrated."""
  source = os.path.join(model_dir, CALIBRATION_FILE)
  if not tf.io.gfile.exists(source):
    return None
  with tf.io.gfile.GFile(source) as f:
    return json.load(f)


def describe(report: Dict[str, object]) -> str:
  """'P10-P90 held 73.0% of the eval actuals, 80.0% after calibration (factor +0.110)'."""
  parts = []
  for band, factor in sorted(report['factors'].items()):
    low, high = (100 * float(q) for q in band.split(':'))
    parts.append(f'P{low:g}-P{high:g} held {100 * report["eval_coverage_before"][band]:.1f}% '
                 f'of the eval actuals, {100 * report["eval_coverage_after"][band]:.1f}% '
                 f'after calibration (factor {factor:+.3f})')
  return '; '.join(parts)
