"""Reading rows by the spec and assigning them to splits by time."""

import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf

from components import csv_chunks
from components import time_series_example_gen as gen
from components import input_rows
from components import split_report
from schema import split_placement
from schema.dataset_spec import Role
from schema.datasets import SYNTHETIC
from schema.frequency import Frequency
from schema.time_split import TimeSplit, parse_timestamp

ROW = {'station': 's1', 'timestamp': '2024-01-01 05:00:00', 'load': '3.5', 'region': 'north',
       'capacity': '50', 'price': '1.1', 'temperature': ''}


def test_parse_row_types_values_and_leaves_allowed_missing_values_out():
  example = input_rows.parse_row(ROW, SYNTHETIC, 'f.csv, line 2')
  feature = example.features.feature
  assert feature['timestamp'].int64_list.value == [parse_timestamp('2024-01-01T05:00:00')]
  assert feature['load'].float_list.value == [3.5]
  assert feature['region'].bytes_list.value == [b'north']
  assert 'temperature' not in feature


@pytest.mark.parametrize('column, value, message', [
    ('load', 'n/a', r"f.csv, line 2: column 'load' holds 'n/a', which is not a number"),
    ('load', '', r"f.csv, line 2: column 'load' is empty"),
    ('timestamp', 'yesterday', r"f.csv, line 2, column 'timestamp': cannot parse 'yesterday'"),
])
def test_bad_values_name_file_line_and_column(column, value, message):
  with pytest.raises(ValueError, match=message):
    input_rows.parse_row(dict(ROW, **{column: value}), SYNTHETIC, 'f.csv, line 2')


@pytest.mark.parametrize('frequency, written, hint', [
    ('hourly', '2024-01-01 05:30:00', 'align the times to the grid'),
    ('daily', '2024-01-01 05:00:00', 'align the times to the grid'),
    ('daily', '2024-01-01T00:00:00+01:00', 'write the dates without the offset'),
    ('monthly', '2024-01-15', "first day of its period (2024-01-01 for '2024-01-15')")])
def test_a_time_off_the_specs_grid_is_named_with_its_line_and_the_fix(frequency, written,
                                                                      hint):
  spec = dataclasses.replace(SYNTHETIC, frequency=Frequency(frequency), calendar_features=())
  with pytest.raises(ValueError) as raised:
    input_rows.parse_row(dict(ROW, timestamp=written), spec, 'f.csv, line 2')
  message = str(raised.value)
  assert message.startswith(f"f.csv, line 2, column 'timestamp': {written!r} is not on the "
                            f"{frequency} grid (")
  assert hint in message and "give that as the spec's 'frequency'" in message


def test_missing_declared_column_names_the_file_and_the_column(tmp_path):
  path = tmp_path / 'data.csv'
  path.write_text('station,timestamp,load\ns1,2024-01-01,1\n')
  with pytest.raises(ValueError, match=r"data.csv: columns \['region', 'capacity', 'price', "
                     r"'temperature'\] are missing; dataset spec 'synthetic' declares them"):
    input_rows.read_header(str(path), SYNTHETIC)


def test_columns_the_spec_does_not_declare_are_listed_once_in_the_order_met(tmp_path):
  first, second = tmp_path / 'a.csv', tmp_path / 'b.csv'
  first.write_text(','.join([*ROW, 'promo']) + '\n')
  second.write_text(','.join(['note', *ROW, 'promo']) + '\n')
  records = tmp_path / 'c.tfrecord'  # not a CSV: its features are not read here
  records.write_bytes(b'')
  files = [str(first), str(second), str(records)]
  assert input_rows.undeclared_columns(files, SYNTHETIC) == ['promo', 'note']
  assert input_rows.undeclared_columns(files[:1], SYNTHETIC) == ['promo']
  second.write_text('station,timestamp,load\n')  # and the headers are checked
  with pytest.raises(ValueError, match=r"b.csv: columns \['region'"):
    input_rows.undeclared_columns(files, SYNTHETIC)


def test_a_header_that_repeats_a_name_is_an_error(tmp_path):
  path = tmp_path / 'data.csv'
  path.write_text(','.join(ROW) + ',load\n' + ','.join(ROW.values()) + ',4\n')
  with pytest.raises(ValueError, match=r"data.csv: the header names 'load' twice \(columns 3 "
                     r'and 8\); give each column its own name'):
    input_rows.read_header(str(path), SYNTHETIC)


@pytest.mark.parametrize('written', ['2024-01-01T05:00:00Z', '2024-01-01 05:00:00z',
                                     '2024-01-01T06:00:00+01:00'])
def test_a_time_in_utc_may_end_in_z_or_name_its_offset(written):
  assert parse_timestamp(written) == parse_timestamp('2024-01-01 05:00:00')


def test_rows_with_the_wrong_field_count_are_an_error(tmp_path):
  path = tmp_path / 'data.csv'
  path.write_text(','.join(ROW) + '\n' + ','.join(ROW.values()) + '\ns1,2024\n')
  with pytest.raises(ValueError, match='line 3: 2 fields, but the header has 7'):
    list(input_rows.read_csv_examples(str(path), SYNTHETIC))


def _example_at(timestamp):
  return input_rows.parse_row(dict(ROW, timestamp=timestamp), SYNTHETIC, 'x')


def test_split_by_timestamps_with_test_and_end():
  split = TimeSplit(eval_start='2024-01-10', test_start='2024-01-20', end='2024-01-30')
  names = split.split_names + (split_report.AFTER_END,)
  assigned = [names[input_rows.split_index(_example_at(day), SYNTHETIC, split, None)]
              for day in ('2024-01-09 23:00', '2024-01-10', '2024-01-19 23:00', '2024-01-20',
                          '2024-01-29 23:00', '2024-01-30')]
  assert assigned == ['train', 'eval', 'eval', 'test', 'test', split_report.AFTER_END]


def test_split_by_fraction_of_the_time_range():
  split = TimeSplit(eval_start=0.75)
  time_range = (parse_timestamp('2024-01-01'), parse_timestamp('2024-01-05'))
  assert input_rows.split_index(_example_at('2024-01-03 23:00'), SYNTHETIC, split, time_range) == 0
  assert input_rows.split_index(_example_at('2024-01-04'), SYNTHETIC, split, time_range) == 1
  # Between grid times, a fraction is moved on to the next: the same rows either side.
  split = TimeSplit(eval_start=0.801)  # 2024-01-04 04:53:45.6
  assert split_placement.resolve_boundary(0.801, time_range, SYNTHETIC) == parse_timestamp(
      '2024-01-04 05:00')
  assert input_rows.split_index(_example_at('2024-01-04 04:00'), SYNTHETIC, split, time_range) == 0
  assert input_rows.split_index(_example_at('2024-01-04 05:00'), SYNTHETIC, split, time_range) == 1


def test_split_by_the_last_steps_moves_with_the_data():
  split = TimeSplit(eval_start='last 30 steps')  # hourly, horizon 24: a forecast every 24 h
  # 30 hours before the last row is 18:00 the day before; back to that day's 00:00, where a
  # forecast starts. Rows added later move the eval period with them.
  for end, day_before, first_day in (('2024-01-05 23:00', '2024-01-03', '2024-01-04'),
                                     ('2024-01-09 23:00', '2024-01-07', '2024-01-08')):
    time_range = (parse_timestamp('2024-01-01'), parse_timestamp(end))
    assert input_rows.split_index(_example_at(f'{first_day} 00:00'), SYNTHETIC, split,
                           time_range) == 1
    assert input_rows.split_index(_example_at(f'{day_before} 23:00'), SYNTHETIC, split,
                           time_range) == 0
  assert split_placement.resolve_boundary('last 24 steps', time_range, SYNTHETIC) == parse_timestamp(
      '2024-01-09')


def test_the_last_steps_of_each_series_are_placed_from_that_series_last_row():
  split = TimeSplit(eval_start='last 48 steps of each series',
                    test_start='last 24 steps of each series')
  # Series a ends on 2024-01-05 23:00, series b a year later: each gets its own periods.
  ends = {'a': parse_timestamp('2024-01-05 23:00'), 'b': parse_timestamp('2025-01-05 23:00')}
  times = ['2024-01-03 23:00', '2024-01-04 00:00', '2024-01-05 00:00', '2025-01-03 23:00',
           '2025-01-04 00:00', '2025-01-05 00:00']
  seconds = np.array([parse_timestamp(time) for time in times])
  keys = np.array(['a', 'a', 'a', 'b', 'b', 'b'], dtype=object)
  time_range = (parse_timestamp('2024-01-01'), ends['b'])
  assert split_placement.split_indices(seconds, split, time_range, SYNTHETIC, keys, ends).tolist() == [
      0, 1, 2, 0, 1, 2]
  # Placed in the data's time range instead, series a would be all training rows.
  whole = TimeSplit(eval_start='last 48 steps', test_start='last 24 steps')
  assert split_placement.split_indices(seconds, whole, time_range, SYNTHETIC).tolist() == [
      0, 0, 0, 0, 1, 2]
  chunk = csv_chunks.Encoded(seconds, [b''] * 6, keys)
  assert sorted(gen.series_ends(chunk)) == [('a', parse_timestamp('2024-01-05 00:00')),
                                            ('b', parse_timestamp('2025-01-05 00:00'))]


def test_the_report_of_periods_placed_per_series_gives_their_earliest_and_latest_place(
    tmp_path):
  split = TimeSplit(eval_start='last 24 steps of each series')
  ends = {'a': parse_timestamp('2024-01-05 23:00'), 'b': parse_timestamp('2024-02-05 23:00')}
  path = tmp_path / 'report.json'
  split_report.write_split_report([('train', 5), ('eval', 3)], str(path), split, spans=[0],
                         files=['a.csv'], spec=SYNTHETIC,
                         time_range=(parse_timestamp('2024-01-01'), ends['b']), ends=ends)
  report = json.loads(path.read_text())
  assert report[split_report.BOUNDARIES] == {'eval_start': '2024-02-05 00:00:00'}  # the latest
  assert report[split_report.SERIES_BOUNDARIES] == {'eval_start': ['2024-01-05 00:00:00',
                                                          '2024-02-05 00:00:00']}


def test_boundaries_of_both_kinds_out_of_order_in_the_data_are_refused():
  split = TimeSplit(eval_start='2024-01-04', test_start=0.5)  # 0.5: 2024-01-03
  time_range = (parse_timestamp('2024-01-01'), parse_timestamp('2024-01-05'))
  with pytest.raises(ValueError, match=r"time split test_start=0.5 falls at or before "
                     r"eval_start='2024-01-04' in the data, which runs from 2024-01-01 "
                     r'00:00:00 to 2024-01-05 00:00:00'):
    input_rows.split_index(_example_at('2024-01-02'), SYNTHETIC, split, time_range)


@pytest.mark.parametrize('kwargs, message', [
    ({'eval_start': 1.5}, 'strictly between 0 and 1'),
    ({'eval_start': 'soon'}, "cannot parse 'soon'"),
    ({'eval_start': 'last 48 steps of every series'},
     r"cannot parse 'last 48 steps of every series' as a timestamp; .*or 'last 48 steps of "
     r"each series'"),
    ({'eval_start': 'last 0 steps'}, 'give at least one step'),
    ({'eval_start': 'last 10 steps', 'end': 'last 20 steps'},
     r"end='last 20 steps' is not after eval_start='last 10 steps'"),
    # Compared with every boundary of its kind, not only the next one.
    ({'eval_start': '2024-06-01', 'test_start': 0.9, 'end': '2024-01-01'},
     r"time split end='2024-01-01' is not after eval_start='2024-06-01'"),
    ({'eval_start': 'last 48 steps of each series', 'test_start': 'last 24 steps'},
     r"eval_start is placed from each series' last row, so the other period's start must "
     r"be too: give both as 'last N steps of each series'"),
    ({'eval_start': 'last 48 steps of each series', 'end': '2024-01-01'},
     r"the periods are placed from each series' last row, so every row after the eval "
     r'start is eval or test data; leave the end out'),
    ({'eval_start': 'last 24 steps of each series',
      'test_start': 'last 48 steps of each series'},
     r"test_start='last 48 steps of each series' is not after eval_start="),
])
def test_bad_time_splits_raise(kwargs, message):
  with pytest.raises(ValueError, match=message):
    TimeSplit(**kwargs)


def test_empty_split_is_an_error(tmp_path):
  with pytest.raises(ValueError, match=r"leaves splits \['eval'\] empty"):
    split_report.write_split_report([('train', 5)], str(tmp_path / 'r.json'), TimeSplit(eval_start=0.5),
                           spans=[0], files=['a.csv'], spec=SYNTHETIC, time_range=(0, 36000))


def _tfrecord(path, rows, compress=False):
  options = tf.io.TFRecordOptions('GZIP' if compress else '')
  with tf.io.TFRecordWriter(str(path), options) as writer:
    for row in rows:
      features = {}
      for name, value in row.items():
        if isinstance(value, bytes):
          features[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        elif isinstance(value, int):
          features[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
        elif isinstance(value, list):
          features[name] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
          features[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
      writer.write(tf.train.Example(
          features=tf.train.Features(feature=features)).SerializeToString())


TF_ROW = {'station': b's1', 'load': 3.5, 'region': b'north', 'capacity': 50.0, 'price': 1.25}


@pytest.mark.parametrize('time_value', [b'2024-01-01 05:00:00',
                                        parse_timestamp('2024-01-01 05:00:00')])
def test_tfrecord_rows_read_like_csv_rows(tmp_path, time_value):
  path = tmp_path / 'rows.tfrecord.gz'
  _tfrecord(path, [dict(TF_ROW, timestamp=time_value)], compress=True)
  [(seconds, [from_tfrecord], keys)] = input_rows.read_chunks(str(path), SYNTHETIC)
  from_csv = input_rows.parse_row(dict(ROW, price='1.25'), SYNTHETIC, 'x')
  assert tf.train.Example.FromString(from_tfrecord) == from_csv
  assert seconds.tolist() == [parse_timestamp('2024-01-01 05:00:00')]
  assert keys.tolist() == ['s1']


def test_tfrecord_errors_name_file_and_record(tmp_path):
  path = tmp_path / 'rows.tfrecord'
  _tfrecord(path, [dict(TF_ROW, timestamp=b'2024-01-01'), dict(TF_ROW, timestamp=b'2024-01-01',
                                                                 load=[1.0, 2.0])])
  with pytest.raises(ValueError, match="rows.tfrecord, record 2: column 'load' holds 2 values"):
    list(input_rows.read_chunks(str(path), SYNTHETIC))
  _tfrecord(path, [{k: v for k, v in TF_ROW.items() if k != 'load'} | {'timestamp': b'2024-01-01'}])
  with pytest.raises(ValueError, match=r"rows.tfrecord, record 1: column 'load' is empty"):
    list(input_rows.read_chunks(str(path), SYNTHETIC))


def test_unknown_file_format_is_an_error(tmp_path):
  with pytest.raises(ValueError, match='unknown input format'):
    input_rows.read_chunks('data.parquet', SYNTHETIC)
  # A span directory read without a span pattern: the pattern is the fix.
  (tmp_path / 'span-1').mkdir()
  with pytest.raises(ValueError, match=r"span-1 is a directory among the input files; for "
                     r"span directories .* give --input-pattern 'span-\{SPAN\}/\*.csv'"):
    input_rows.read_chunks(str(tmp_path / 'span-1'), SYNTHETIC)


@pytest.mark.parametrize('text', ['', 'NA', 'null', 'None', 'NaN', 'nan', 'inf', '-inf',
                                  '1e39'])
def test_missing_markers_and_non_finite_numbers_are_missing_where_allowed(text):
  example = input_rows.parse_row(dict(ROW, temperature=text), SYNTHETIC, 'f.csv, line 2')
  assert 'temperature' not in example.features.feature


@pytest.mark.parametrize('text', ['NA', 'null', 'NaN', 'inf', '-Infinity', '3.5e38'])
def test_missing_or_non_finite_values_where_not_allowed_name_file_line_and_column(text):
  with pytest.raises(ValueError, match=rf"f.csv, line 7: column 'price' holds '{text}', a "
                     r'missing or non-finite value; .* allow_missing: true'):
    input_rows.parse_row(dict(ROW, price=text), SYNTHETIC, 'f.csv, line 7')


def test_an_empty_target_points_at_the_future_file_not_at_allow_missing():
  with pytest.raises(ValueError, match=r"f.csv, line 7: column 'load' is empty; it is the "
                     'target .* every row of the data needs. Fill the value or drop the row; '
                     r'rows that give the known columns .* future file \(tft-pipeline --future '
                     r'FILE, future_file: in a deployment file\), not among the data files$'):
    input_rows.parse_row(dict(ROW, load=''), SYNTHETIC, 'f.csv, line 7')
  no_known = dataclasses.replace(
      SYNTHETIC, columns=tuple(c for c in SYNTHETIC.columns if c.role != Role.KNOWN))
  with pytest.raises(ValueError, match=r'which every row of the data needs. Fill the value '
                     r'or drop the row$'):
    input_rows.parse_row(dict(ROW, load=''), no_known, 'f.csv, line 7')


def test_categorical_values_are_kept_as_written():
  example = input_rows.parse_row(dict(ROW, region='NA'), SYNTHETIC, 'x')
  assert example.features.feature['region'].bytes_list.value == [b'NA']


def test_a_byte_order_mark_before_the_header_is_not_part_of_a_name(tmp_path):
  path = tmp_path / 'excel.csv'
  path.write_bytes(('\ufeff' + ','.join(ROW) + '\n' + ','.join(ROW.values()) + '\n')
                   .encode('utf-8'))
  [example] = input_rows.read_csv_examples(str(path), SYNTHETIC)
  assert example == input_rows.parse_row(ROW, SYNTHETIC, 'x')


def test_a_header_without_rows_is_an_error(tmp_path):
  path = tmp_path / 'empty.csv'
  path.write_text(','.join(ROW) + '\n')
  with pytest.raises(ValueError, match='empty.csv has a header and no rows'):
    list(input_rows.read_csv_examples(str(path), SYNTHETIC))


def test_csv_chunks_hold_the_examples_of_the_rows_read_one_by_one(tmp_path, monkeypatch):
  """The native encoding of whole chunks against `parse_row`: missing values in several
  patterns (left out, not empty), markers, spaces, exponents, overflow, repeated
  timestamps, and chunk borders."""
  monkeypatch.setattr(input_rows, 'CHUNK_ROWS', 4)
  rows = [dict(ROW, timestamp=f'2024-01-01 {hour % 3:02d}:00:00', station=f' s{hour % 2} ',
               load=f'{hour}.25e1', price=price, temperature=temperature)
          for hour, (price, temperature) in enumerate(
              [('1.1', ''), ('NA', '3'), (' 2 ', 'nan'), ('1e39', 'inf'), ('-0.5', '4.5'),
               ('null', 'None'), ('7', '-2'), ('', '')])]
  path = tmp_path / 'data.csv'
  path.write_text(','.join(ROW) + '\n' + ''.join(','.join(row.values()) + '\n' for row in rows))

  spec = dataclasses.replace(SYNTHETIC, columns=tuple(
      dataclasses.replace(column, allow_missing=True) if column.name == 'price' else column
      for column in SYNTHETIC.columns))

  chunks = list(input_rows.read_chunks(str(path), spec))

  assert [len(chunk.serialized) for chunk in chunks] == [4, 4]
  one_by_one = list(input_rows.read_csv_examples(str(path), spec))
  assert [tf.train.Example.FromString(s) for chunk in chunks for s in chunk.serialized] == (
      one_by_one)
  assert [t for chunk in chunks for t in chunk.seconds.tolist()] == [
      input_rows.example_time(example, spec) for example in one_by_one]
  assert [key for chunk in chunks for key in chunk.keys] == [
      example.features.feature['station'].bytes_list.value[0].decode()
      for example in one_by_one]
  assert 'price' not in one_by_one[1].features.feature  # left out, as row by row


@pytest.mark.parametrize('column, value, message', [
    ('load', 'n/a', r"data.csv, line 4: column 'load' holds 'n/a', which is not a number"),
    ('load', '', r"data.csv, line 4: column 'load' is empty; it is the target"),
    ('station', ' ', r"data.csv, line 4: column 'station' is empty"),
    ('timestamp', 'soon', r"data.csv, line 4, column 'timestamp': cannot parse 'soon'"),
    ('timestamp', '2024-01-01 05:30:00', r"data.csv, line 4, column 'timestamp': "
     r"'2024-01-01 05:30:00' is not on the hourly grid"),
])
def test_a_bad_value_in_a_chunk_names_its_line_and_column(tmp_path, column, value, message):
  rows = [ROW, ROW, dict(ROW, **{column: value}), ROW]
  path = tmp_path / 'data.csv'
  path.write_text(','.join(ROW) + '\n' + ''.join(','.join(row.values()) + '\n' for row in rows))
  with pytest.raises(ValueError, match=message):
    list(input_rows.read_chunks(str(path), SYNTHETIC))


def test_rows_are_found_again_by_series_and_time_with_their_file_and_line(tmp_path):
  header = 'station,timestamp,load,region,capacity,price,temperature'
  row = lambda station, hour: f'{station},2024-01-01 {hour:02d}:00:00,1.5,north,50,1.1,20'
  first, second = tmp_path / 'a.csv', tmp_path / 'b.csv'
  first.write_text('\n'.join([header, row('s1', 0), row('s2', 1), row('s1', 1)]) + '\n')
  second.write_text('\n'.join([header, row('s1', 1)]) + '\n')
  records = tmp_path / 'c.tfrecord'
  _tfrecord(records, [dict(TF_ROW, timestamp=b'2024-01-01 01:00:00')])
  files = [str(first), str(second), str(records)]
  one = parse_timestamp('2024-01-01 01:00:00')
  assert input_rows.find_rows(files, SYNTHETIC, 's1', {one}) == (
      f'; rows at {first}, line 4 and {second}, line 2 and {records}, record 1')
  assert input_rows.find_rows(files, SYNTHETIC, 's2', {one, one - 3600}) == f'; rows at {first}, line 3'
  assert input_rows.find_rows(files, SYNTHETIC, 's3', {one}) == ''


def test_each_series_last_time_is_read_again_as_the_files_write_it(tmp_path):
  """The examples keep an instant, not its UTC offset; the forecasts want both. Rows at
  other instants (after a split's end, say) are not taken; TFRecord keys may be numbers."""
  header = 'station,timestamp,load,region,capacity,price,temperature'
  row = lambda station, time: f'{station},{time},1.5,north,50,1.1,20'
  first, second = tmp_path / 'a.csv', tmp_path / 'b.csv'
  first.write_text('\n'.join([header, row('s1', '2024-03-31 01:00:00+01:00'),
                              row('s2', '2024-03-31 02:00:00Z'),
                              row('s1', '2024-03-31 03:00:00+02:00')]) + '\n')
  second.write_text('\n'.join([header, row('s1', '2024-03-31 00:00:00+01:00')]) + '\n')
  records = tmp_path / 'c.tfrecord'
  _tfrecord(records, [dict(TF_ROW, station=b's3', timestamp=b'2024-03-31 04:00:00+02:00'),
                      dict(TF_ROW, station=b's3', timestamp=b'2024-03-31 03:00:00+02:00'),
                      dict(TF_ROW, station=42, timestamp=b'2024-03-31 03:00:00+02:00')])
  files = [str(first), str(second), str(records)]
  instants = {key: parse_timestamp(time) for key, time in (
      ('s1', '2024-03-31 01:00:00Z'), ('s2', '2024-03-31 02:00:00Z'),
      ('s3', '2024-03-31 01:00:00Z'), ('42', '2024-03-31 01:00:00Z'),
      ('s4', '2024-03-31 01:00:00Z'))}
  assert input_rows.times_as_written(files, SYNTHETIC, instants) == {
      's1': '2024-03-31 03:00:00+02:00', 's2': '2024-03-31 02:00:00Z',
      's3': '2024-03-31 03:00:00+02:00', '42': '2024-03-31 03:00:00+02:00'}
  assert input_rows.find_rows(files, SYNTHETIC, '42', {instants['42']}) == (
      f'; rows at {records}, record 3')


def test_times_without_offsets_are_not_read_again(tmp_path):
  """Naive times are UTC, as the examples write them: nothing to look up."""
  data = tmp_path / 'a.csv'
  data.write_text('station,timestamp,load,region,capacity,price,temperature\n'
                  's1,2024-01-01 00:00:00,1.5,north,50,1.1,20\n'
                  's1,2024-01-01 01:00:00+01:00,1.5,north,50,1.1,20\n')
  records = tmp_path / 'b.tfrecord'
  _tfrecord(records, [dict(TF_ROW, timestamp=parse_timestamp('2024-01-01 05:00:00'))])
  assert input_rows.times_as_written([str(data), str(records)], SYNTHETIC,
                              {'s1': parse_timestamp('2024-01-01 00:00:00')}) == {}
