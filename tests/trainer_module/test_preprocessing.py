"""preprocessing_fn under TF Transform's Beam implementation: analyzers see train only."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from schema.dataset_spec import Scaling
from schema.datasets import SYNTHETIC
from schema.features import (OOV_BUCKETS, SERIES_ID, SERIES_VOCABULARY,
                             missing_indicator_name, transformed_name)
from schema.time_split import parse_timestamp
from schema.frequency import Frequency
from trainer_module.preprocessing import (calendar_values, preprocessing_fn,
                                         untrained_calendar_values)

FEATURE_SPEC = {
    'station': tf.io.FixedLenFeature([1], tf.string),
    'timestamp': tf.io.FixedLenFeature([1], tf.int64),
    'load': tf.io.FixedLenFeature([1], tf.float32),
    'region': tf.io.FixedLenFeature([1], tf.string),
    'capacity': tf.io.FixedLenFeature([1], tf.float32),
    'price': tf.io.FixedLenFeature([1], tf.float32),
    'temperature': tf.io.VarLenFeature(tf.float32),
}
T0 = parse_timestamp('2024-01-01 00:00')


def _row(station, hour, temperature, price=1.0, region='north'):
  return {'station': [station.encode()], 'timestamp': [T0 + 3600 * hour], 'load': [10.0 + hour],
          'region': [region.encode()], 'capacity': [50.0], 'price': [price],
          'temperature': [] if temperature is None else [temperature]}


TRAIN = [_row('a', 0, 10.0), _row('a', 1, None), _row('b', 0, 14.0), _row('b', 1, 12.0, 2.0)]
# Extreme eval values: if they reached the analyzers, the statistics would move a lot.
EVAL = [_row('a', 2, 1000.0, 50.0), _row('new_station', 3, None, region='mars')]


def run_transform(spec, train, evaluation, tmp_path_factory):
  """Analyzes `train` only, transforms both; returns their rows and the transform output."""
  metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(FEATURE_SPEC))
  with tft_beam.Context(temp_dir=str(tmp_path_factory.mktemp('tft')), force_tf_compat_v1=False):
    transform_fn = (train, metadata) | tft_beam.AnalyzeDataset(
        lambda inputs: preprocessing_fn(inputs, {'dataset_spec': spec.to_json()}))
    (train_out, _), (eval_out, _) = (
        ((train, metadata), transform_fn) | 'Train' >> tft_beam.TransformDataset(),
        ((evaluation, metadata), transform_fn) | 'Eval' >> tft_beam.TransformDataset())
    output_dir = str(tmp_path_factory.mktemp('transform_fn'))
    _ = transform_fn | tft_beam.WriteTransformFn(output_dir)
  return train_out, eval_out, tft.TFTransformOutput(output_dir)


@pytest.fixture(scope='module')
def transformed(tmp_path_factory):
  return run_transform(SYNTHETIC, TRAIN, EVAL, tmp_path_factory)


def test_missing_values_are_imputed_with_the_train_mean_and_flagged(transformed):
  train, _, _ = transformed
  temperature = transformed_name('temperature')
  flag = missing_indicator_name('temperature')
  present = np.array([10.0, 14.0, 12.0])
  mean, std = present.mean(), present.std()
  got = [row[temperature] for row in train]
  np.testing.assert_allclose(got, [(10 - mean) / std, 0.0, (14 - mean) / std, (12 - mean) / std],
                             rtol=1e-5)
  assert [row[flag] for row in train] == [0.0, 1.0, 0.0, 0.0]


def test_eval_values_never_influence_the_statistics(transformed):
  _, evaluation, _ = transformed
  mean, std = np.mean([10.0, 14.0, 12.0]), np.std([10.0, 14.0, 12.0])
  np.testing.assert_allclose(evaluation[0][transformed_name('temperature')],
                             (1000.0 - mean) / std, rtol=1e-5)
  prices = np.array([1.0, 1.0, 1.0, 2.0])
  np.testing.assert_allclose(evaluation[0][transformed_name('price')],
                             (50.0 - prices.mean()) / prices.std(), rtol=1e-5)
  assert evaluation[1][transformed_name('temperature')] == pytest.approx(0.0, abs=1e-6)


def test_unseen_categories_map_to_the_out_of_vocabulary_bucket(transformed):
  train, evaluation, transform_output = transformed
  series_vocabulary = transform_output.vocabulary_size_by_name(SERIES_VOCABULARY)
  assert series_vocabulary == 2
  assert {row[SERIES_ID] for row in train} == {0, 1}
  assert evaluation[1][SERIES_ID] == series_vocabulary + OOV_BUCKETS - 1
  region_vocabulary = transform_output.vocabulary_size_by_name('region')
  assert evaluation[1][transformed_name('region')] == region_vocabulary


def test_target_and_time_pass_through_unscaled(transformed):
  train, _, _ = transformed
  assert [row[transformed_name('load')] for row in train] == [10.0, 11.0, 10.0, 11.0]
  assert [row[transformed_name('hour_of_day')] for row in train] == [0, 1, 0, 1]
  assert train[0][transformed_name('timestamp')] == T0


def test_per_series_scaling_uses_each_series_statistics(tmp_path_factory):
  per_series = dataclasses.replace(SYNTHETIC, columns=tuple(
      dataclasses.replace(c, scaling=Scaling.PER_SERIES) if c.name == 'temperature' else c
      for c in SYNTHETIC.columns))
  train = [_row('a', 0, 10.0), _row('a', 1, 12.0), _row('a', 2, None),
           _row('b', 0, 100.0), _row('b', 1, 120.0)]
  evaluation = [_row('a', 3, 11.0), _row('b', 2, 130.0), _row('new_station', 0, 57.0)]
  train_out, eval_out, _ = run_transform(per_series, train, evaluation, tmp_path_factory)
  temperature = transformed_name('temperature')
  np.testing.assert_allclose([row[temperature] for row in train_out],
                             [-1.0, 1.0, 0.0, -1.0, 1.0], atol=1e-5)
  everyone = np.array([10.0, 12.0, 100.0, 120.0])
  np.testing.assert_allclose(
      [row[temperature] for row in eval_out],
      [0.0, 2.0, (57.0 - everyone.mean()) / everyone.std()], atol=1e-5)


def test_calendar_features_are_read_on_the_spec_time_zone_clock(tmp_path_factory):
  """2024-01-01 00:00 UTC is 05:30 in Kolkata; the exported Transform layer, which
  serving runs, reads times on that clock too."""
  spec = dataclasses.replace(SYNTHETIC, time_zone='Asia/Kolkata')
  train_out, _, output = run_transform(spec, TRAIN, EVAL, tmp_path_factory)
  assert [row[transformed_name('hour_of_day')] for row in train_out] == [5, 6, 5, 6]
  row = dict(TRAIN[0], timestamp=[T0 + 19 * 3600])  # 00:30 on Tuesday in Kolkata
  served = output.transform_features_layer()(
      tf.io.parse_example([_serialized(row)], FEATURE_SPEC))
  assert served[transformed_name('hour_of_day')].numpy().ravel().tolist() == [0]
  assert served[transformed_name('day_of_week')].numpy().ravel().tolist() == [1]


def test_untrained_calendar_values_are_those_only_later_rows_take():
  monday = parse_timestamp('2024-01-01')
  six_days = np.arange(6) * 86400 + monday  # Monday to Saturday, all in January
  features = ['day_of_week', 'month_of_year']
  assert calendar_values(features, six_days) == {'day_of_week': set(range(6)),
                                                 'month_of_year': {0}}
  assert calendar_values(features, six_days[:0]) == {'day_of_week': set(),
                                                     'month_of_year': set()}
  # Later rows from Sunday 2024-01-07 to Tuesday 2024-02-06: Sunday and February are new.
  later = calendar_values(features, np.arange(31) * 86400 + monday + 6 * 86400)
  assert untrained_calendar_values(calendar_values(features, six_days), later) == {
      'day_of_week': (1, 7), 'month_of_year': (1, 2)}
  assert untrained_calendar_values(later, calendar_values(features, six_days)) == {}
  # The forecasts after a last row on Saturday 2024-01-06: Sunday to Tuesday.
  last = Frequency('daily').step_of(six_days[-1])
  np.testing.assert_array_equal(Frequency('daily').seconds_after(last, 3),
                                six_days[-1] + np.arange(1, 4) * 86400)
  # 20:00 UTC on each of the six days is the next day in Kolkata (Tuesday to Sunday), and
  # Monday 00:00 UTC is Monday there too: every weekday on that clock, not in UTC.
  times = np.append(six_days + 20 * 3600, monday)
  assert calendar_values(['day_of_week'], times) == {'day_of_week': set(range(6))}
  assert calendar_values(['day_of_week'], times, zone='Asia/Kolkata') == {
      'day_of_week': set(range(7))}


def _serialized(row):
  """A row of `_row` as a serialized tf.Example of FEATURE_SPEC's types."""
  lists = {tf.string: lambda values: tf.train.Feature(bytes_list=tf.train.BytesList(value=values)),
           tf.int64: lambda values: tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
           tf.float32: lambda values: tf.train.Feature(float_list=tf.train.FloatList(value=values))}
  return tf.train.Example(features=tf.train.Features(feature={
      name: lists[FEATURE_SPEC[name].dtype](values) for name, values in row.items()})
                          ).SerializeToString()
