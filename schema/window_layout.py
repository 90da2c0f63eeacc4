"""The layout of one window example, as written by windowing and parsed by the trainer.

A window covers T = E + H consecutive steps of one series. Static features hold one
value, known features T values, observed features E values; the target is split into its
history (E values, model input) and its future (H values, the label). All values except
the target are Transform outputs; the target is in original units.
"""

from typing import Dict

import tensorflow as tf

from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_KEY, Group, model_features

TARGET_HISTORY = 'target_history'
TARGET_FUTURE = 'target_future'
FORECAST_START = 'forecast_start'  # epoch seconds of the first forecast step


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
