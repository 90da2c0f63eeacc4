"""What Windowing does with rows beside cutting windows: the raw values it keeps for the
eval windows' raw columns (parsed rows, dense or sparse as Transform's schema reads a
column, whatever the spec allows, as one value per row), and the file and line of rows
it cannot window."""

import dataclasses
import math

import numpy as np
import pytest
import tensorflow as tf

from components import windowing
from components.window_builder import Row, RowChunk, step_value_names
from components.windowing import raw_row_values
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.features import transformed_name
from schema.frequency import Frequency

SPEC = DatasetSpec(
    name='hand', frequency=Frequency.HOURLY, encoder_steps=3, horizon=2,
    columns=(Column('id', Role.SERIES_KEY, DType.CATEGORICAL),
             Column('t', Role.TIME, DType.CATEGORICAL),
             Column('y', Role.TARGET), Column('promo', Role.KNOWN, DType.CATEGORICAL),
             Column('temp', Role.OBSERVED, allow_missing=True)))
FEATURES = {'id': tf.io.FixedLenFeature([1], tf.string),
            't': tf.io.FixedLenFeature([1], tf.int64),
            'y': tf.io.FixedLenFeature([1], tf.float32),
            'promo': tf.io.VarLenFeature(tf.string), 'temp': tf.io.VarLenFeature(tf.float32)}


def _row(temp=None, promo=None):
  feature = {'id': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'a'])),
             't': tf.train.Feature(int64_list=tf.train.Int64List(value=[0])),
             'y': tf.train.Feature(float_list=tf.train.FloatList(value=[1.5]))}
  if temp is not None:
    feature['temp'] = tf.train.Feature(float_list=tf.train.FloatList(value=[temp]))
  if promo is not None:
    feature['promo'] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[promo]))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_missing_values_become_nan_or_empty_and_the_time_is_left_to_the_rows():
  parsed = tf.io.parse_example(tf.constant([_row(20.0, b'x'), _row(), _row(promo=b'y')]),
                               FEATURES)
  values = raw_row_values(parsed, SPEC)
  assert sorted(values) == ['id', 'promo', 'temp', 'y']
  assert values['id'].tolist() == [b'a'] * 3 and values['y'].tolist() == [1.5] * 3
  assert values['promo'].tolist() == [b'x', b'', b'y']
  assert values['temp'][0] == 20.0 and np.isnan(values['temp'][1:]).all()


def test_a_batch_without_any_value_of_a_sparse_column_still_has_one_per_row():
  values = raw_row_values(tf.io.parse_example(tf.constant([_row(), _row()]), FEATURES), SPEC)
  assert values['promo'].tolist() == [b'', b''] and all(math.isnan(v) for v in values['temp'])


def _transformed_row(hour):
  return Row(seconds=1704067200 + 3600 * hour, split='train', values={
      transformed_name('y'): 1.5, transformed_name('promo'): 0,
      transformed_name('temp'): 20.0, transformed_name('series_id'): 1})


def test_rows_it_cannot_window_are_named_by_file_and_line(tmp_path):
  header = 'id,t,y,promo,temp\n'
  first, second = tmp_path / 'a.csv', tmp_path / 'b.csv'
  first.write_text(header + ''.join(f'a,2024-01-01 {h:02d}:00:00,1.5,x,20\n' for h in range(4)))
  second.write_text(header + 'a,2024-01-01 02:00:00,1.5,x,20\n')
  rows = [_transformed_row(hour) for hour in [0, 1, 2, 3, 2]]
  with pytest.raises(ValueError, match=(
      f"series 'a' has more than one row at 2024-01-01 02:00 .*; rows at {first}, line 4 and "
      f'{second}, line 2$')):
    windowing.cut_series(('a', rows), SPEC, {'train': 1}, {}, [str(first), str(second)])
  # Without the files, the error is the same, without the places.
  with pytest.raises(ValueError, match=r'the same time of a series\)$'):
    windowing.cut_series(('a', rows), SPEC, {'train': 1}, {})
  # Files that cannot be read again do not hide the error.
  with pytest.raises(ValueError, match=(
      r"series 'a' has more than one row .* \(their files could not be read again: ")):
    windowing.cut_series(('a', rows), SPEC, {'train': 1}, {}, [str(tmp_path / 'gone.csv')])


def test_rows_with_and_without_raw_values_are_not_mixed():
  raw = dataclasses.replace(_transformed_row(1), raw={'id': b'a', 'y': 1.5, 'promo': b'x',
                                                       'temp': 20.0})
  with pytest.raises(ValueError, match='hold the raw values of different columns'):
    RowChunk.of([_transformed_row(0), raw])


def test_the_refit_split_covers_the_rows_of_its_periods_as_one():
  spec = dataclasses.replace(SPEC, columns=SPEC.columns[:3])
  values = {name: np.arange(12, dtype=float) for name in step_value_names(spec)}
  splits = np.array(['train'] * 6 + ['eval'] * 3 + ['test'] * 3, object)
  chunk = RowChunk(np.arange(12) * 3600, splits, values)
  strides = {'train': 1, 'eval': 2, 'test': 2}
  _, counts = windowing.cut_series(('a', [chunk]), spec, strides, {}, refit_splits=())
  assert 'windows_refit' not in counts
  built, counts = windowing.cut_series(('a', [chunk]), spec, strides, {},
                                       refit_splits=('train', 'eval', 'test'))
  # Windows of 5 steps start at every step of the 12, whichever periods they cross.
  assert counts['windows_refit'] == 8 and counts['windows_train'] == 2
  assert 'refit' in dict(built)
  _, counts = windowing.cut_series(('a', [chunk]), spec, strides, {},
                                   refit_splits=('train', 'eval'))
  assert counts['windows_refit'] == 5  # none reaches into the test rows
