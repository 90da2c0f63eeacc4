"""A model's forecasts of every window of a Windowing split, with what the windows hold.

For scoring outside TFMA, window by window: the backtest, the benchmarks. Windows are
read by `trainer_module.window_inputs.read_records`, in the order every reader of the
split gets them (GbmBaseline's saved forecasts among them).
"""

import dataclasses
import glob
import os
from typing import Dict, List, Sequence

import numpy as np
import tensorflow as tf

from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START, TARGET_FUTURE, TARGET_HISTORY
from trainer_module.export import EVAL_SIGNATURE, EXAMPLES_INPUT, quantile_key
from trainer_module.window_inputs import read_records

_PREDICT_BATCH = 512


@dataclasses.dataclass
class ScoredWindows:
  """Every window of one split with the model's forecasts; targets in original units.

  Attributes:
    series: series key of each window [N].
    forecast_start: epoch seconds of each window's first forecast step [N].
    history: target history [N, E].
    actual: target future [N, H].
    forecasts: quantile -> forecast [N, H].
  """
  series: np.ndarray
  forecast_start: np.ndarray
  history: np.ndarray
  actual: np.ndarray
  forecasts: Dict[float, np.ndarray]


def split_files(windows_uri: str, split: str) -> List[str]:
  """The window files of one split of a Windowing output."""
  return sorted(glob.glob(os.path.join(windows_uri, f'Split-{split}', '*.gz')))


def score_windows(model_dir: str, files: List[str], quantiles: Sequence[float]
                  ) -> ScoredWindows:
  """The exported model's forecasts (its Evaluator signature) for every window in
  `files`."""
  parsing = {SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
             FORECAST_START: tf.io.FixedLenFeature([1], tf.int64),
             TARGET_HISTORY: tf.io.VarLenFeature(tf.float32),
             TARGET_FUTURE: tf.io.VarLenFeature(tf.float32)}
  signature = tf.saved_model.load(model_dir).signatures[EVAL_SIGNATURE]
  parts = {'series': [], 'forecast_start': [], 'history': [], 'actual': [], 'forecasts': []}
  for batch in read_records(files).batch(_PREDICT_BATCH):
    parsed = tf.io.parse_example(batch, parsing)
    parts['series'].append(parsed[SERIES_KEY].numpy()[:, 0])
    parts['forecast_start'].append(parsed[FORECAST_START].numpy()[:, 0])
    parts['history'].append(tf.sparse.to_dense(parsed[TARGET_HISTORY]).numpy())
    parts['actual'].append(tf.sparse.to_dense(parsed[TARGET_FUTURE]).numpy())
    outputs = signature(**{EXAMPLES_INPUT: batch})
    parts['forecasts'].append({q: outputs[quantile_key(q)].numpy() for q in quantiles})
  return ScoredWindows(
      series=np.concatenate(parts['series']),
      forecast_start=np.concatenate(parts['forecast_start']),
      history=np.concatenate(parts['history']),
      actual=np.concatenate(parts['actual']),
      forecasts={q: np.concatenate([f[q] for f in parts['forecasts']]) for q in quantiles})
