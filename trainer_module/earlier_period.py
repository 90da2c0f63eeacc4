"""The period before the eval period: a second stretch of time for the bands' calibration.

Factors fitted on the eval windows alone carry that one stretch of time's luck to the
forecasts: on the development suite the eval period asked for wider bands than the test
period needed (ERCOT, ETTh1) or narrower ones (EPF), by more than their windows' spread
allows (benchmarks/pages/calibration.md, "Where the bands miss on the suite"). With
`TrainingConfig.calibrate_on_the_period_before` the Trainer also forecasts the period
before the eval period, as long as it, series by series, with a copy of the judged model
trained only on the windows whose targets end before that period
(`train.forecast_the_earlier_period`), and fits the factors on both periods' scores
(LightGBM's copies likewise: `evaluation.gbm_baseline`). On the suite that did not bring
the test coverage nearer 0.80 ("Two eval periods pooled" on the same page): it is off by
default.

Everything here is read from the windows themselves: each series' eval period from its
eval windows' forecast starts, the earlier period and the copy's training windows from
the training segments' forecast starts (`window_inputs.WindowFilter`).
"""

import dataclasses
from typing import Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START, WINDOW_MASK, segment_feature_spec
from trainer_module import window_inputs


@dataclasses.dataclass(frozen=True)
class EarlierPeriod:
  """The forecast starts of the earlier period's windows, at the eval windows' stride
  (`forecasts`: 'series key@epoch seconds', so that the period weighs as much as the
  eval period), and per series (`series`, the transformed series keys) the last forecast
  start of a window whose targets all end before it (`train_until`)."""
  forecasts: Tuple[bytes, ...]
  series: Tuple[bytes, ...]
  train_until: Tuple[int, ...]

  def windows(self) -> window_inputs.WindowFilter:
    """The training windows of the earlier period that forecast from one of its starts
    (the training split ends where the eval period begins)."""
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(self.forecasts), tf.ones(len(self.forecasts), tf.int64)), default_value=0)

    def keep(series, starts):
      keys = tf.strings.join([tf.broadcast_to(series, tf.shape(starts)), '@',
                              tf.strings.as_string(starts)])
      return tf.equal(table.lookup(keys), 1)
    return keep

  def training_windows(self) -> window_inputs.WindowFilter:
    """The training windows whose targets end before the earlier period; for a series
    without an eval window, before the earliest series' earlier period."""
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(self.series), tf.constant(self.train_until, tf.int64)),
        default_value=min(self.train_until))
    return lambda series, starts: starts <= table.lookup(series)


def of_eval_windows(eval_files: Sequence[str], spec: DatasetSpec) -> Optional[EarlierPeriod]:
  """Each series' earlier period from its eval windows: its eval period runs from its
  first eval forecast start to its last one's horizon, and the earlier period is as many
  steps before it, its forecasts starting at the eval windows' stride (the series' own).
  None without eval windows."""
  parsing = {SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
             FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)}
  series, starts = [], []
  for batch in window_inputs.read_records(eval_files).batch(4096):
    parsed = tf.io.parse_example(batch, parsing)
    series.extend(parsed[SERIES_KEY].numpy()[:, 0])
    starts.extend(parsed[FORECAST_START].numpy()[:, 0])
  if not series:
    return None
  step_of, seconds_of = spec.frequency.period_of, spec.frequency.seconds_of
  keys = sorted(set(series))
  series, starts = np.array(series, dtype=object), np.array(starts)
  forecasts, until = [], []
  for key in keys:
    own_starts = starts[series == key]
    own = np.unique([step_of(int(start)) for start in own_starts])
    begins, ends = int(own[0]), int(own[-1]) + spec.horizon
    stride = int(np.diff(own).min()) if len(own) > 1 else spec.horizon
    earlier = begins - (ends - begins)
    # Forecast starts keep their distance from the grid's steps (a time zone's offset).
    offset = int(own_starts.min()) - seconds_of(begins)
    forecasts += [key + b'@' + str(seconds_of(step) + offset).encode()
                  for step in range(earlier, begins, stride)]
    until.append(seconds_of(earlier - spec.horizon) + offset)
  return EarlierPeriod(tuple(forecasts), tuple(keys), tuple(until))


def count(train_files: Sequence[str], spec: DatasetSpec,
          *filters: window_inputs.WindowFilter) -> Tuple[int, ...]:
  """The training windows each of `filters` keeps, counted in one pass over the segments'
  masks and starts."""
  parsing = {key: value for key, value in segment_feature_spec(spec).items()
             if key in (SERIES_KEY, WINDOW_MASK, FORECAST_START)}
  totals = [0] * len(filters)
  for batch in window_inputs.read_records(train_files).batch(1024):
    parsed = tf.io.parse_example(batch, parsing)
    mask = tf.cast(parsed[WINDOW_MASK], tf.bool)
    for index, only in enumerate(filters):
      kept = mask & only(parsed[SERIES_KEY], parsed[FORECAST_START])
      totals[index] += int(tf.reduce_sum(tf.cast(kept, tf.int64)))
  return tuple(totals)
