"""The Transform step: per-row features for the model, driven by the dataset spec.

Called by TFX Transform with `custom_config={'dataset_spec': spec.to_json()}`. Analyzers
(means, variances, vocabularies) run on the train split only. Outputs, per row:
  - the composite series key (string) and its integer id;
  - the time (epoch seconds) and the target, unscaled (the model scales each window);
  - real covariates z-scored with train statistics (over all series, or per series
    where the spec says so), missing values imputed with the train mean (0 after
    scaling), plus a 0/1 missing indicator where the spec allows missing values;
  - categoricals as vocabulary ids with one out-of-vocabulary bucket;
  - calendar features (minute of hour ... quarter of year) as integer ids; the values later
    times take that no training row does: `untrained_calendar_values`.
"""

from typing import Dict, Mapping, Optional, Sequence, Set, Tuple, Union

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from schema import features as feature_names
from schema import time_zones
from schema.dataset_spec import DatasetSpec, DType, Role, Scaling

Tensor = Union[tf.Tensor, tf.SparseTensor]
_MIN_STD = 1e-6


def preprocessing_fn(inputs: Dict[str, Tensor], custom_config: Dict) -> Dict[str, tf.Tensor]:
  """TFX Transform entry point."""
  spec = DatasetSpec.from_json(custom_config['dataset_spec'])
  name = feature_names.transformed_name
  seconds = _dense(inputs[spec.time_column], 0)
  outputs = {
      name(spec.time_column): seconds,
      name(spec.target_column): _dense(inputs[spec.target_column], float('nan')),
  }
  series_key = series_key_of(inputs, spec, batch_like=seconds)
  series_id = _vocabulary_ids(series_key, feature_names.SERIES_VOCABULARY)
  outputs[feature_names.SERIES_KEY] = series_key
  outputs[feature_names.SERIES_ID] = series_id
  seen_series = series_id < tft.experimental.get_vocabulary_size_by_name(
      feature_names.SERIES_VOCABULARY)
  if len(spec.series_key_columns) > 1:
    for column in spec.series_key_columns:
      outputs[name(column)] = _vocabulary_ids(_dense(inputs[column], b''), column)
  on_clock = seconds if spec.time_zone is None else local_seconds(seconds, spec.time_zone)
  for feature in spec.calendar_features:
    outputs[name(feature)] = calendar_feature(feature, on_clock)
  for role in (Role.STATIC, Role.KNOWN, Role.OBSERVED):
    for column in spec.columns_with(role):
      if column.dtype == DType.CATEGORICAL:
        outputs[name(column.name)] = _vocabulary_ids(_dense(inputs[column.name], b''),
                                                     column.name)
        continue
      per_series = column.scaling == Scaling.PER_SERIES
      scaled, missing = _impute_and_scale(inputs[column.name],
                                          (series_key, seen_series) if per_series else None)
      outputs[name(column.name)] = scaled
      if column.allow_missing:
        outputs[feature_names.missing_indicator_name(column.name)] = missing
  return outputs


def series_key_of(inputs: Dict[str, Tensor], spec: DatasetSpec, batch_like: tf.Tensor):
  """The composite series key string [B]; the spec's name for single-series data."""
  if not spec.series_key_columns:
    return tf.fill(tf.shape(batch_like), spec.name)
  parts = [_dense(inputs[column], b'') for column in spec.series_key_columns]
  return tf.strings.join(parts, separator=feature_names.SERIES_KEY_SEPARATOR)


def local_seconds(seconds: tf.Tensor, zone: str) -> tf.Tensor:
  """UTC epoch `seconds` [B] plus the UTC offset of time zone `zone` at each: seconds
  whose UTC calendar is the zone's local one (`schema.time_zones`)."""
  starts, offsets = time_zones.offset_table(zone)
  index = tf.searchsorted(tf.constant(starts)[None], seconds[None], side='right')[0] - 1
  return seconds + tf.gather(tf.constant(offsets), index)


def calendar_feature(feature: str, seconds: tf.Tensor) -> tf.Tensor:
  """A calendar feature of epoch `seconds` [B], read on the UTC calendar, as a 0-based
  int64 id [B]; `local_seconds` first reads it on a zone's clock."""
  days = tf.math.floordiv(seconds, 86400)
  if feature == 'minute_of_hour':
    return tf.math.floormod(tf.math.floordiv(seconds, 60), 60)
  if feature == 'hour_of_day':
    return tf.math.floormod(tf.math.floordiv(seconds, 3600), 24)
  if feature == 'day_of_week':  # Monday is 0; 1970-01-01 was a Thursday
    return tf.math.floormod(days + 3, 7)
  month, day = _civil_month_day(days)
  if feature == 'day_of_month':
    return day - 1
  if feature == 'month_of_year':
    return month - 1
  if feature == 'quarter_of_year':
    return tf.math.floordiv(month - 1, 3)
  raise ValueError(f"unknown calendar feature '{feature}'")


def calendar_values(features: Sequence[str], seconds: np.ndarray, zone: Optional[str] = None
                    ) -> Dict[str, Set[int]]:
  """The ids each calendar feature takes at epoch `seconds` (UTC, read on `zone`'s clock
  if given), as `preprocessing_fn` computes them: name -> set of ids."""
  if not features or not len(seconds):
    return {feature: set() for feature in features}
  moments = tf.constant(np.unique(np.asarray(seconds, np.int64)))
  on_clock = moments if zone is None else local_seconds(moments, zone)
  return {feature: set(np.unique(calendar_feature(feature, on_clock).numpy()).tolist())
          for feature in features}


def untrained_calendar_values(training: Mapping[str, Set[int]], later: Mapping[str, Set[int]]
                              ) -> Dict[str, Tuple[int, int]]:
  """The calendar features whose later times (the eval and test rows, the forecasts after
  the data) take values no training row does (`calendar_values` of each): name -> (how
  many such values, how many values the later times take).

  A calendar feature enters the model as an embedding per value, and a value no training
  row takes keeps the embedding it was initialised with: forecasts at such times (the
  months after five months of daily rows) rest on weights nothing trained.
  """
  return {feature: (len(values - training.get(feature, set())), len(values))
          for feature, values in later.items() if values - training.get(feature, set())}


def _civil_month_day(days: tf.Tensor):
  """Month (1-12) and day of month (1-31) of days since 1970-01-01, proleptic Gregorian.

  Integer arithmetic from H. Hinnant's `civil_from_days`, so it runs inside the graph.
  """
  z = days + 719468
  era = tf.math.floordiv(z, 146097)
  day_of_era = z - era * 146097
  year_of_era = tf.math.floordiv(
      day_of_era - tf.math.floordiv(day_of_era, 1460) + tf.math.floordiv(day_of_era, 36524)
      - tf.math.floordiv(day_of_era, 146096), 365)
  day_of_year = day_of_era - (365 * year_of_era + tf.math.floordiv(year_of_era, 4)
                              - tf.math.floordiv(year_of_era, 100))
  shifted_month = tf.math.floordiv(5 * day_of_year + 2, 153)  # March is 0
  day = day_of_year - tf.math.floordiv(153 * shifted_month + 2, 5) + 1
  month = tf.where(shifted_month < 10, shifted_month + 3, shifted_month - 9)
  return month, day


def _vocabulary_ids(values: tf.Tensor, vocabulary: str) -> tf.Tensor:
  return tft.compute_and_apply_vocabulary(values, num_oov_buckets=feature_names.OOV_BUCKETS,
                                          vocab_filename=vocabulary)


def _impute_and_scale(values: Tensor, per_series: Optional[Tuple[tf.Tensor, tf.Tensor]]):
  """Z-scored values [B] with missing ones at the mean (0), and a 0/1 missing flag [B].

  Args:
    values: a feature with at most one value per row, dense or sparse.
    per_series: (series key [B], whether the series was seen in training [B]) to scale
      by each series' statistics; None scales by statistics over all series.
  """
  if isinstance(values, tf.SparseTensor):
    present, rows, batch = values.values, values.indices[:, 0], values.dense_shape[:1]
  else:
    present = tf.reshape(values, [-1])
    batch = tf.shape(present, out_type=tf.int64)
    rows = tf.range(batch[0])
  scaled = (present - tft.mean(present)) / tf.maximum(tf.sqrt(tft.var(present)), _MIN_STD)
  if per_series is not None:
    series_key, seen_series = per_series
    scaled_per_series = tft.scale_to_z_score_per_key(present, tf.gather(series_key, rows))
    scaled = tf.where(tf.gather(seen_series, rows), scaled_per_series, scaled)
  row_indices = tf.expand_dims(rows, 1)
  missing = 1.0 - tf.scatter_nd(row_indices, tf.ones_like(scaled), batch)
  return tf.scatter_nd(row_indices, scaled, batch), missing


def _dense(values: Tensor, default) -> tf.Tensor:
  """A feature with at most one value per row as a dense [B] tensor."""
  if isinstance(values, tf.SparseTensor):
    values = tft.sparse_tensor_to_dense_with_shape(values, [None, 1], default_value=default)
  return tf.reshape(values, [-1])
