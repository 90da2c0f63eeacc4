"""The layout of window and segment examples, as written by windowing and parsed by the
trainer.

A window covers T = E + H consecutive steps of one series. Static features hold one
value, known features T values, observed features E values; the target is split into its
history (E values, model input) and its future (H values, the label). These values,
but the target's, are Transform outputs; the target is in original units. Evaluation
splits are stored as windows, each naming its split (`WINDOW_SPLIT`), by which the
Evaluator scores the eval and the test windows apart in one pass; no model reads it.

Windows of the evaluation splits also carry the RAW columns of the dataset spec, as the
raw serving signature reads them (`raw_window_feature_spec`, named as the columns are,
which the spec keeps apart from the names above: `dataset_spec.reserved_names`), so
that a model trained with another Transform (the Evaluator's baseline) can score them
through its own.

Training windows are stored as segments, so that each row is stored about twice rather
than T times: a segment holds 2T - 1 consecutive steps of one series, every feature and
the target at every step, and `WINDOW_MASK` [T] marks which of the T windows starting at
its first T steps are training windows (0: a gap, another split, the stride, sampled out,
or past the series' end, where values are 0), `FORECAST_START` [T] their forecast starts
(0 where masked). The trainer cuts the windows out
(`trainer_module.window_inputs.make_training_dataset`).
"""

from typing import Dict, List

import tensorflow as tf

from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.features import SERIES_KEY, Group, model_features, transformed_name

TARGET_HISTORY = 'target_history'
TARGET_FUTURE = 'target_future'
FORECAST_START = 'forecast_start'  # epoch seconds of the first forecast step
WINDOW_MASK = 'window_mask'  # segments: 1 for each of its T windows that is a training window
WINDOW_SPLIT = 'window_split'  # windows: the split they belong to, which the Evaluator slices by


def feature_length(group: Group, spec: DatasetSpec) -> int:
  """Values per window of a feature in `group`."""
  if group in (Group.STATIC_CATEGORICAL, Group.STATIC_REAL):
    return 1
  if group == Group.OBSERVED_REAL:
    return spec.encoder_steps
  return spec.window_length


def window_feature_spec(spec: DatasetSpec) -> Dict[str, tf.io.FixedLenFeature]:
  """The parsing spec of a serialized window example."""
  parsing = {
      SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
      FORECAST_START: tf.io.FixedLenFeature([1], tf.int64),
      TARGET_HISTORY: tf.io.FixedLenFeature([spec.encoder_steps], tf.float32),
      TARGET_FUTURE: tf.io.FixedLenFeature([spec.horizon], tf.float32),
  }
  for feature in model_features(spec):
    dtype = tf.int64 if feature.group.is_categorical else tf.float32
    parsing[feature.name] = tf.io.FixedLenFeature([feature_length(feature.group, spec)],
                                                  dtype)
  return parsing


def raw_value_count(column: Column, spec: DatasetSpec) -> int:
  """Values of `column` in one raw window: 1 for the series key and static columns, T for
  the time and known columns, E for observed columns and the target (the history)."""
  if column.role in (Role.SERIES_KEY, Role.STATIC):
    return 1
  if column.role in (Role.TIME, Role.KNOWN):
    return spec.window_length
  return spec.encoder_steps


def raw_window_feature_spec(spec: DatasetSpec) -> Dict[str, tf.io.FixedLenFeature]:
  """The parsing spec of the raw columns of a window, the input of `serving_default`:
  times as int64 epoch seconds, categoricals as bytes, reals as floats (NaN: missing)."""
  parsing = {}
  for column in spec.columns:
    if column.role == Role.TIME:
      dtype = tf.int64
    elif column.dtype == DType.CATEGORICAL:
      dtype = tf.string
    else:
      dtype = tf.float32
    parsing[column.name] = tf.io.FixedLenFeature([raw_value_count(column, spec)], dtype)
  return parsing


def segment_length(spec: DatasetSpec) -> int:
  """Steps in a segment: its T windows' starts and the last one's T steps."""
  return 2 * spec.window_length - 1


def step_value_names(spec: DatasetSpec) -> List[str]:
  """The values of a series at each step, as windowing reads them from Transform and a
  segment stores them: the target, then each model feature."""
  return [transformed_name(spec.target_column)] + [f.name for f in model_features(spec)]


def segment_feature_spec(spec: DatasetSpec) -> Dict[str, tf.io.FixedLenFeature]:
  """The parsing spec of a serialized training segment."""
  categorical = {f.name for f in model_features(spec) if f.group.is_categorical}
  parsing = {SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
             WINDOW_MASK: tf.io.FixedLenFeature([spec.window_length], tf.int64),
             FORECAST_START: tf.io.FixedLenFeature([spec.window_length], tf.int64)}
  for name in step_value_names(spec):
    parsing[name] = tf.io.FixedLenFeature(
        [segment_length(spec)], tf.int64 if name in categorical else tf.float32)
  return parsing
