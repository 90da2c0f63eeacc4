"""The raw values Windowing keeps beside Transform's outputs, for the eval windows' raw
columns: parsed rows, dense or sparse (as Transform's schema reads a column, whatever the
spec allows), as one value per row."""

import math

import numpy as np
import tensorflow as tf

from components.windowing import raw_row_values
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.frequency import Frequency

SPEC = DatasetSpec(
    name='hand', frequency=Frequency.HOURLY, encoder_steps=3, horizon=2,
    columns=(Column('id', Role.SERIES_KEY, DType.CATEGORICAL), Column('t', Role.TIME, DType.CATEGORICAL),
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
