"""Reading rows by the spec and assigning them to splits by time."""

import pytest

from components import time_series_example_gen as gen
from schema.datasets import SYNTHETIC
from schema.time_split import TimeSplit, parse_timestamp

ROW = {'station': 's1', 'timestamp': '2024-01-01 05:00:00', 'load': '3.5', 'region': 'north',
       'capacity': '50', 'price': '1.1', 'temperature': ''}


def test_parse_row_types_values_and_leaves_allowed_missing_values_out():
  example = gen.parse_row(ROW, SYNTHETIC, 'f.csv, line 2')
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
    gen.parse_row(dict(ROW, **{column: value}), SYNTHETIC, 'f.csv, line 2')


def test_missing_declared_column_names_the_file_and_the_column(tmp_path):
  path = tmp_path / 'data.csv'
  path.write_text('station,timestamp,load\ns1,2024-01-01,1\n')
  with pytest.raises(ValueError, match=r"data.csv: columns \['region', 'capacity', 'price', "
                     r"'temperature'\] are missing; dataset spec 'synthetic' declares them"):
    gen.read_header(str(path), SYNTHETIC)


def test_rows_with_the_wrong_field_count_are_an_error(tmp_path):
  path = tmp_path / 'data.csv'
  path.write_text(','.join(ROW) + '\n' + ','.join(ROW.values()) + '\ns1,2024\n')
  with pytest.raises(ValueError, match='line 3: 2 fields, but the header has 7'):
    list(gen.read_csv_examples(str(path), SYNTHETIC))


def _example_at(timestamp):
  return gen.parse_row(dict(ROW, timestamp=timestamp), SYNTHETIC, 'x')


def test_split_by_timestamps_with_test_and_end():
  split = TimeSplit(eval_start='2024-01-10', test_start='2024-01-20', end='2024-01-30')
  names = split.split_names + (gen.AFTER_END,)
  assigned = [names[gen.split_index(_example_at(day), SYNTHETIC, split, None)]
              for day in ('2024-01-09 23:00', '2024-01-10', '2024-01-19 23:00', '2024-01-20',
                          '2024-01-29 23:00', '2024-01-30')]
  assert assigned == ['train', 'eval', 'eval', 'test', 'test', gen.AFTER_END]


def test_split_by_fraction_of_the_time_range():
  split = TimeSplit(eval_start=0.75)
  time_range = (parse_timestamp('2024-01-01'), parse_timestamp('2024-01-05'))
  assert gen.split_index(_example_at('2024-01-03 23:00'), SYNTHETIC, split, time_range) == 0
  assert gen.split_index(_example_at('2024-01-04'), SYNTHETIC, split, time_range) == 1


@pytest.mark.parametrize('kwargs, message', [
    ({'eval_start': 1.5}, 'strictly between 0 and 1'),
    ({'eval_start': 'soon'}, "cannot parse 'soon'"),
])
def test_bad_time_splits_raise(kwargs, message):
  with pytest.raises(ValueError, match=message):
    TimeSplit(**kwargs)


def test_empty_split_is_an_error(tmp_path):
  with pytest.raises(ValueError, match=r"leaves splits \['eval'\] empty"):
    gen.write_split_report([('train', 5)], str(tmp_path / 'r.json'), TimeSplit(eval_start=0.5))
