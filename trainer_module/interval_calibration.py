"""Calibrated prediction intervals: conformalized quantile regression on the eval windows.

A quantile loss does not guarantee that the P10-P90 band holds 80% of what happens: on
many series with covariates it held 61% (Stallion). After training, each end of each band
of symmetric quantiles (q, 1 - q) is moved by its own factor chosen on the eval windows
(Romano et al., 2019, the variant with one score per end, with scores relative to the
band's width, so one factor serves series of every level):

  below = (lo - y) / (hi - lo),  above = (y - hi) / (hi - lo)   per window and step
  w_lo  = the ceil((n + 1)(1 - q))-th smallest of the n scores `below`; w_hi of `above`
  lo'   = lo - w_lo (hi - lo),   hi' = hi + w_hi (hi - lo)

so that each end leaves about q of the actuals beyond it, and the band holds 1 - 2q. On
request (`TrainingConfig.calibrate_on_the_period_before`) the Trainer pools the eval
windows' scores with those of the period before the eval period, forecast by a copy of
the model trained before it (`trainer_module.earlier_period`). One
factor for both ends would hold 1 - 2q as well, but a model whose misses lie mostly on
one side keeps them there: on Stallion 4 to 7% of the actuals fell below the calibrated
P10 and 11 to 18% above the P90 (benchmarks/pages/calibration.md). A factor > 0 moves its end out,
< 0 in (never past the band's middle); a band whose ends cross (an undertrained model's
P10 above its P90) is taken from the lower to the higher end. P50 and every quantile
outside such pairs are left as they are. The factors travel inside the exported model
(`trainer_module.export`), so every signature, and so the Evaluator, `tft-predict` and
the run's forecasts, serves the calibrated bands, put in order from the median out
(`export.in_order_from_median`); `calibration.json` beside the model records them and
how often the quantiles, the model's or the calibrated ones, were out of order, and the
run summary prints them (`describe`).
"""

import json
import math
import os
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

CALIBRATION_FILE = os.path.join('assets.extra', 'calibration.json')
# An end never moves in by more than this share of the band's width: it stops short of
# the band's middle, so the band keeps its order.
_MIN_FACTOR = -0.45
_MIN_WIDTH = 1e-6
# Each end moves this share of the width past the actual its rank falls on, so that the
# actual stays inside after float32 rounding: the served band, and metrics computed on
# other batches (other kernels), would otherwise disagree on it.
_ROUNDING_MARGIN = 1e-3
# Fewer eval windows than this beyond an end (a share q of them, for the band's lower
# quantile q) and `describe` says that the factors rest on few forecasts.
_FEW_BEYOND_AN_END = 10
# The factors of each band, as `fit` gives them: {'0.1:0.9': {'lower': w_lo, 'upper': w_hi}}.
BandFactors = Mapping[str, Mapping[str, float]]


def band_key(quantiles: Sequence[float], low: int, high: int) -> str:
  """'0.1:0.9', the key of the band between quantiles[low] and quantiles[high]."""
  return f'{quantiles[low]:g}:{quantiles[high]:g}'


def quantile_pairs(quantiles: Sequence[float]) -> Tuple[Tuple[int, int], ...]:
  """Index pairs (lower, upper) of the quantiles q < 0.5 whose 1 - q is forecast too."""
  index = {round(q, 6): i for i, q in enumerate(quantiles)}
  return tuple((index[round(q, 6)], index[round(1 - q, 6)])
               for q in quantiles if q < 0.5 and round(1 - q, 6) in index)


def _end_factor(scores: np.ndarray, level: float) -> float:
  """The ceil((n + 1) level)-th smallest of n scores (split conformal's finite-sample
  rank) plus `_ROUNDING_MARGIN`, at least the factor that stops an end at the band's
  middle."""
  scores = np.sort(scores.ravel())
  rank = math.ceil((scores.size + 1) * level)
  return float(max(scores[min(rank, scores.size) - 1] + _ROUNDING_MARGIN, _MIN_FACTOR))


def conformal_factors(lower: np.ndarray, upper: np.ndarray, actual: np.ndarray,
                      tail: float) -> Dict[str, float]:
  """The factors {'lower': w_lo, 'upper': w_hi} that make
  [lo - w_lo (hi - lo), hi + w_hi (hi - lo)] leave `tail` of `actual` below it and as
  much above."""
  lower, upper = np.minimum(lower, upper), np.maximum(lower, upper)
  width = np.maximum(upper - lower, _MIN_WIDTH)
  return {'lower': _end_factor((lower - actual) / width, 1 - tail),
          'upper': _end_factor((actual - upper) / width, 1 - tail)}


def fit(quantile_forecasts: np.ndarray, actual: np.ndarray,
        quantiles: Sequence[float]) -> BandFactors:
  """Factors per band from forecasts [N, H, Q] and actuals [N, H] in the same units;
  keyed 'q_low:q_high', each {'lower': w_lo, 'upper': w_hi}."""
  return {band_key(quantiles, low, high): conformal_factors(
              quantile_forecasts[..., low], quantile_forecasts[..., high], actual,
              quantiles[low])
          for low, high in quantile_pairs(quantiles)}


def apply(quantile_forecasts: tf.Tensor, quantiles: Sequence[float],
          factors: BandFactors) -> tf.Tensor:
  """Forecasts [B, H, Q] with each band's ends moved by their factors (graph-safe)."""
  columns = tf.unstack(quantile_forecasts, axis=-1)
  for low, high in quantile_pairs(quantiles):
    ends = factors.get(band_key(quantiles, low, high), {'lower': 0.0, 'upper': 0.0})
    lower = tf.minimum(columns[low], columns[high])
    upper = tf.maximum(columns[low], columns[high])
    width = tf.maximum(upper - lower, _MIN_WIDTH)
    columns[low] = lower - ends['lower'] * width
    columns[high] = upper + ends['upper'] * width
  return tf.stack(columns, axis=-1)


def out_of_order(*quantile_forecasts: np.ndarray) -> float:
  """Share of the (window, step) pairs at which the quantiles of any of the forecasts
  [N, H, Q] given (the model's, the calibrated ones) decrease."""
  return float(np.mean(np.any([np.any(np.diff(forecasts, axis=-1) < 0, axis=-1)
                               for forecasts in quantile_forecasts], axis=0)))


def coverage(quantile_forecasts: np.ndarray, actual: np.ndarray,
             quantiles: Sequence[float]) -> Dict[str, float]:
  """Share of actuals inside each band, keyed as `fit`'s factors."""
  return {band_key(quantiles, low, high): float(np.mean(
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
  """'P10-P90 held 65.7% of the eval actuals, 80.0% after calibration (its lower end moved
  in by 0.020 of its width, its upper end out by 0.380)'."""
  parts = []
  for band, factors in sorted(report['factors'].items()):
    low, high = (100 * float(q) for q in band.split(':'))
    lower, upper = factors['lower'], factors['upper']
    parts.append(f'P{low:g}-P{high:g} held {100 * report["eval_coverage_before"][band]:.1f}% '
                 f'of the eval actuals, {100 * report["eval_coverage_after"][band]:.1f}% '
                 f'after calibration (its lower end moved {_moved(lower)} of its width, its '
                 f'upper end {_moved(upper)})')
  if report.get('earlier_windows'):
    before = report['earlier_coverage_before']
    parts.append(f"the factors fitted on the eval windows and the {report['earlier_windows']:,} "
                 'windows of the period before them pooled (forecast by a copy trained '
                 'before it; held ' + ', '.join(
                     f'{100 * before[band]:.1f}%' for band in sorted(report['factors']))
                 + ' before calibration)')
  few = _few_windows(report)
  if few:
    parts.append(few)
  if report.get('eval_out_of_order'):
    parts.append(f"the quantiles were out of order at {100 * report['eval_out_of_order']:.1f}% "
                 'of the eval steps (the model\'s or after calibration), served in order')
  return '; '.join(parts)


def _few_windows(report: Mapping[str, object]) -> str:
  """A note when the outermost band's ends rest on few eval windows (those expected
  beyond an end), or ''. The steps of one window are forecast together and miss together,
  so the windows, not the steps, count."""
  windows = report.get('eval_windows')
  tails = [float(band.split(':')[0]) for band in report['factors']]
  if not windows or not tails:
    return ''
  beyond = windows * min(tails)
  if beyond >= _FEW_BEYOND_AN_END:
    return ''
  return (f'calibrated on {windows} eval windows, so each end of P{100 * min(tails):g}-'
          f'P{100 - 100 * min(tails):g} rests on about {beyond:.1f} of them: the factors may '
          'not hold on new data; a longer eval period (or more series) gives steadier ones')


def _moved(factor: float) -> str:
  """'out by 0.380' for a factor that widens the band, 'in by 0.020' for one that narrows
  it."""
  return f'{"out" if factor >= 0 else "in"} by {abs(factor):.3f}'

