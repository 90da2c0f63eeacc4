"""The naive forecasts a model must beat, from each window's own target history.

Repeat-last-value repeats the last history value; the history mean repeats the mean of the
E history values (on noisy series it beats repeating the last one by far); seasonal naive
with period p repeats the last p history values. The exported model's Evaluator signature
returns them beside the model's forecasts, so the Evaluator scores both on the same
windows (`evaluation.metrics.NaiveComparison`); `naive_maes` scores them for GbmBaseline,
`tft-pipeline init` and the benchmarks.
"""

from typing import Dict, List, Sequence

import numpy as np
import tensorflow as tf

REPEAT_LAST = 'repeat_last'
HISTORY_MEAN = 'history_mean'
OUTPUT_PREFIX = 'naive_'


def seasonal_name(period: int) -> str:
  return f'seasonal_{period}'


def periods_for(seasons: Sequence[int], encoder_steps: int) -> Sequence[int]:
  """The seasonal periods whose last cycle lies in a history of `encoder_steps`."""
  return [period for period in seasons if 1 < period <= encoder_steps]


def forecast_names(periods: Sequence[int]) -> List[str]:
  """The names of the forecasts `naive_forecasts` returns for `periods`, in its order."""
  return [REPEAT_LAST, HISTORY_MEAN] + [seasonal_name(period) for period in periods]


def naive_forecasts(history: tf.Tensor, horizon: int,
                    periods: Sequence[int]) -> Dict[str, tf.Tensor]:
  """Naive point forecasts [B, H] by name, from target histories [B, E]."""
  history = tf.convert_to_tensor(history)
  encoder = history.shape[1]
  forecasts = {REPEAT_LAST: tf.repeat(history[:, -1:], horizon, axis=1),
               HISTORY_MEAN: tf.repeat(tf.reduce_mean(history, axis=1, keepdims=True),
                                       horizon, axis=1)}
  for period in periods:
    steps = [encoder - period + step % period for step in range(horizon)]
    forecasts[seasonal_name(period)] = tf.gather(history, steps, axis=1)
  return forecasts


def naive_maes(history: np.ndarray, future: np.ndarray,
               periods: Sequence[int]) -> Dict[str, float]:
  """The MAE of each naive forecast of `future` [N, H] from `history` [N, E], by name, in
  float64: the one computation GbmBaseline, `init` and the benchmarks score them by."""
  future = np.asarray(future, dtype=np.float64)
  forecasts = naive_forecasts(np.asarray(history, dtype=np.float64), future.shape[1], periods)
  return {name: float(np.mean(np.abs(values.numpy() - future)))
          for name, values in forecasts.items()}
