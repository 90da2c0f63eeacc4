"""Windowing one series: exact windows, gaps, split membership, strides, duplicates."""

import dataclasses
import datetime
import math

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

from components.window_builder import Row, RowsError, build_windows, sum_counts
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.features import SERIES_KEY, transformed_name
from schema.frequency import Frequency
from schema.window_layout import (FORECAST_START, TARGET_FUTURE, TARGET_HISTORY, WINDOW_MASK,
                                  raw_window_feature_spec, segment_feature_spec,
                                  window_feature_spec)

SPEC = DatasetSpec(
    name='hand', frequency=Frequency.HOURLY, encoder_steps=3, horizon=2,
    columns=(Column('id', Role.SERIES_KEY, DType.CATEGORICAL),
             Column('t', Role.TIME, DType.CATEGORICAL), Column('y', Role.TARGET),
             Column('size', Role.STATIC), Column('price', Role.KNOWN),
             Column('temp', Role.OBSERVED)))
START = int(datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
HOUR = 3600


def _rows(hours, split_of=lambda hour: 'train'):
  """Row h has target 100 + h, price 10 + h, temperature 20 + h, size 7."""
  return [Row(seconds=START + h * HOUR, split=split_of(h), values={
      transformed_name('y'): 100.0 + h, transformed_name('size'): 7.0,
      transformed_name('price'): 10.0 + h, transformed_name('temp'): 20.0 + h,
      transformed_name('series_id'): 1}) for h in hours]


def _rows_with_raw(hours, split_of):
  """`_rows` with their raw values; the temperature is missing at hour 4."""
  return [dataclasses.replace(row, raw={
      'id': b'a', 'y': 100.0 + h, 'size': 7.0, 'price': 10.0 + h,
      'temp': float('nan') if h == 4 else 20.0 + h})
          for h, row in zip(hours, _rows(hours, split_of))]


def _parse(serialized):
  return {name: value.numpy().tolist() for name, value in
          tf.io.parse_single_example(serialized, window_feature_spec(SPEC)).items()}


def test_windows_hold_the_exact_values_of_their_steps():
  windows, counts = build_windows('a', _rows(range(7)), SPEC, {'train': 1})
  assert counts == {'series': 1, 'rows': 7, 'windows_train': 3, 'longest_series_steps': 7,
                    'longest_train_steps': 7}
  first = _parse(windows[0][1])
  assert first[TARGET_HISTORY] == [100.0, 101.0, 102.0]
  assert first[TARGET_FUTURE] == [103.0, 104.0]
  assert first[transformed_name('price')] == [10.0, 11.0, 12.0, 13.0, 14.0]
  assert first[transformed_name('temp')] == [20.0, 21.0, 22.0]  # encoder only
  assert first[transformed_name('size')] == [7.0]
  assert first[SERIES_KEY] == [b'a']
  assert first[FORECAST_START] == [START + 3 * HOUR]
  last = _parse(windows[-1][1])
  assert last[TARGET_FUTURE] == [105.0, 106.0]


def test_rows_in_any_order_give_the_same_windows():
  in_order, _ = build_windows('a', _rows(range(7)), SPEC, {'train': 1})
  shuffled, _ = build_windows('a', _rows([3, 0, 6, 1, 5, 2, 4]), SPEC, {'train': 1})
  assert [_parse(w) for _, w in in_order] == [_parse(w) for _, w in shuffled]
  assert len(in_order) == 3


def test_a_gap_skips_the_windows_that_cover_it_instead_of_shifting():
  hours = [h for h in range(12) if h != 6]
  windows, counts = build_windows('a', _rows(hours), SPEC, {'train': 1})
  # Windows start at hours 0..7; those starting at 2..6 cover hour 6, including the one
  # whose first forecast step is the missing hour.
  assert counts['windows_train'] == 3
  assert counts['windows_skipped_gap'] == 5
  starts = [_parse(w)[TARGET_HISTORY][0] - 100 for _, w in windows]
  assert starts == [0.0, 1.0, 7.0]


def test_a_window_belongs_to_the_split_of_its_forecast_steps():
  split_of = lambda hour: 'train' if hour < 6 else 'eval'
  windows, counts = build_windows('a', _rows(range(10), split_of), SPEC,
                                  {'train': 1, 'eval': 1})
  by_split = {}
  for split, serialized in windows:
    parsed = _parse(serialized)
    forecast_hours = [v - 100 for v in parsed[TARGET_FUTURE]]
    by_split.setdefault(split, []).append(forecast_hours)
  assert by_split['train'] == [[3.0, 4.0], [4.0, 5.0]]
  # History may come from the train period; forecasts never straddle the boundary.
  assert by_split['eval'] == [[6.0, 7.0], [7.0, 8.0], [8.0, 9.0]]
  assert counts['windows_skipped_crossing_split'] == 1


def test_strides_align_forecast_starts_on_the_time_grid():
  windows, counts = build_windows('a', _rows(range(20)), SPEC, {'train': 4})
  forecast_starts = [(_parse(w)[FORECAST_START][0] - START) // HOUR for _, w in windows]
  first_step = Frequency.HOURLY.step_of(START)
  assert all((first_step + h) % 4 == 0 for h in forecast_starts)
  assert len(forecast_starts) == counts['windows_train'] == 4


def test_a_series_shorter_than_a_window_is_counted_not_windowed():
  windows, counts = build_windows('a', _rows(range(4)), SPEC, {'train': 1})
  assert windows == []
  assert counts == {'series': 1, 'rows': 4, 'series_too_short': 1, 'rows_in_short_series': 4,
                    'longest_series_steps': 4}


def test_the_counts_keep_the_longest_span_of_each_split_over_the_series():
  split_of = lambda hour: 'train' if hour < 6 else 'eval'
  _, first = build_windows('a', _rows(range(10), split_of), SPEC, {'train': 1, 'eval': 1})
  _, second = build_windows('b', _rows([0, 1, 2, 3, 4, 5, 7], split_of), SPEC,
                            {'train': 1, 'eval': 1})
  assert (first['longest_train_steps'], first['longest_eval_steps']) == (6, 4)
  # The missing hour 6, the first of eval, counts in the split of the hour before it.
  assert (second['longest_train_steps'], second['longest_eval_steps']) == (7, 1)
  total = sum_counts([first, second])
  assert total['longest_series_steps'] == 10 and total['longest_train_steps'] == 7
  assert total['longest_eval_steps'] == 4 and total['series'] == 2 and total['rows'] == 17


def test_duplicate_time_steps_are_an_error_naming_series_and_time():
  with pytest.raises(ValueError, match=r"series 'a' has more than one row at 2024-01-01 02:00"
                     r'.*same time of a series\)$'):
    build_windows('a', _rows([0, 1, 2, 2, 3, 4, 5]), SPEC, {'train': 1})
  # Without a key, the likelier cause is a key the spec leaves out.
  keyless = dataclasses.replace(SPEC, columns=tuple(
      column for column in SPEC.columns if column.role != Role.SERIES_KEY))
  with pytest.raises(ValueError, match=r'the spec declares no series key: if the rows belong '
                     'to several series, give their key columns role: series_key'):
    build_windows('a', _rows([0, 1, 2, 2, 3, 4, 5]), keyless, {'train': 1})


def test_monthly_grid_counts_calendar_months():
  jan = int(datetime.datetime(2017, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
  mar = int(datetime.datetime(2017, 3, 1, tzinfo=datetime.timezone.utc).timestamp())
  assert Frequency.MONTHLY.step_of(mar) - Frequency.MONTHLY.step_of(jan) == 2


@pytest.mark.parametrize('frequency, moment', [
    (Frequency.HOURLY, datetime.datetime(2024, 1, 1, 10, 30)),
    (Frequency.DAILY, datetime.datetime(2024, 1, 1, 6)),
    (Frequency.MONTHLY, datetime.datetime(2024, 1, 15)),
])
def test_timestamps_off_the_grid_are_an_error(frequency, moment):
  seconds = int(moment.replace(tzinfo=datetime.timezone.utc).timestamp())
  with pytest.raises(ValueError, match=f'not on the {frequency.value} grid'):
    frequency.step_of(seconds)


def test_off_grid_rows_name_the_series():
  rows = _rows(range(7))
  rows[2] = Row(seconds=rows[2].seconds + 60, split='train', values=rows[2].values)
  with pytest.raises(ValueError, match="series 'a': 2024-01-01 02:01:00 is not on the hourly"):
    build_windows('a', rows, SPEC, {'train': 1})


def test_sampling_keeps_a_deterministic_share_of_windows():
  rows = _rows(range(2000))
  full, _ = build_windows('a', rows, SPEC, {'train': 1})
  kept, counts = build_windows('a', rows, SPEC, {'train': 1}, {'train': 0.25})
  again, _ = build_windows('a', list(reversed(rows)), SPEC, {'train': 1}, {'train': 0.25})
  assert counts['windows_train'] + counts['windows_sampled_out'] == len(full)
  assert 0.2 < len(kept) / len(full) < 0.3
  assert [_parse(w) for _, w in kept] == [_parse(w) for _, w in again]


def test_a_static_value_that_changes_within_a_series_names_the_series_and_column():
  rows = _rows(range(7))
  rows[2] = Row(rows[2].seconds, 'train', {**rows[2].values, transformed_name('size'): 8.0})
  with pytest.raises(RowsError, match=r"series 'a': static column 'size' is one value from "
                     r'its first row \(2024-01-01 00:00\) but another at 2024-01-01 02:00; a '
                     'static column holds one value per series') as raised:
    build_windows('a', rows, SPEC, {'train': 1})
  # The first row and the one that changes, for Windowing to find in the input files.
  assert raised.value.times == {START, START + 2 * HOUR}


def test_training_segments_store_each_row_about_twice_with_a_mask_of_their_windows():
  window = SPEC.window_length  # 5
  segments, counts = build_windows('a', _rows(range(100)), SPEC, {'train': 1},
                                   segment_splits=('train',))
  assert counts['windows_train'] == 96  # starts 0 .. 95
  assert counts['segments_train'] == len(segments) == 20  # one per 5 starts
  parsed = [tf.io.parse_single_example(serialized, segment_feature_spec(SPEC))
            for _, serialized in segments]
  assert sum(len(p[transformed_name('y')]) for p in parsed) <= 2 * 100
  first, last = parsed[0], parsed[-1]
  assert first[WINDOW_MASK].numpy().tolist() == [1] * window
  assert first[FORECAST_START].numpy().tolist() == [
      START + (k + SPEC.encoder_steps) * HOUR for k in range(window)]
  assert first[transformed_name('y')].numpy().tolist() == [100.0 + h for h in range(9)]
  # The last segment starts at 95: one window, then steps past the series' end hold 0.
  assert last[WINDOW_MASK].numpy().tolist() == [1, 0, 0, 0, 0]
  assert last[FORECAST_START].numpy().tolist() == [START + 98 * HOUR, 0, 0, 0, 0]
  assert last[transformed_name('y')].numpy().tolist() == [195, 196, 197, 198, 199, 0, 0, 0, 0]


def test_eval_windows_hold_the_raw_columns_as_the_serving_signature_reads_them():
  rows = _rows_with_raw(range(9), lambda hour: 'train' if hour < 5 else 'eval')
  built, counts = build_windows('a', rows, SPEC, {'train': 1, 'eval': 2},
                                segment_splits=('train',))
  [eval_window] = [serialized for split, serialized in built if split == 'eval']
  raw = {name: value.numpy().tolist() for name, value in tf.io.parse_single_example(
      eval_window, raw_window_feature_spec(SPEC)).items()}
  first = (_parse(eval_window)[FORECAST_START][0] - START) // HOUR - SPEC.encoder_steps  # 3
  hours = list(range(first, first + SPEC.window_length))
  assert raw['t'] == [START + h * HOUR for h in hours]
  assert raw['price'] == [10.0 + h for h in hours]
  assert raw['y'] == [100.0 + h for h in hours[:3]]  # the history only
  assert raw['temp'][0] == 23.0 and math.isnan(raw['temp'][1]) and raw['temp'][2] == 25.0
  assert raw['size'] == [7.0] and raw['id'] == [b'a']
  # Training segments hold no raw columns: only the Evaluator reads them.
  segments = [serialized for split, serialized in built if split == 'train']
  assert counts['segments_train'] == len(segments) > 0
  assert all('price' not in tf.train.Example.FromString(segment).features.feature
             for segment in segments)


def test_the_window_fields_are_names_no_column_may_take():
  fields = set(window_feature_spec(SPEC)) | set(segment_feature_spec(SPEC))
  assert not fields & set(raw_window_feature_spec(SPEC))
  for field in fields:
    with pytest.raises(ValueError, match='reserved'):
      dataclasses.replace(SPEC, columns=SPEC.columns + (Column(field, Role.KNOWN),))


def test_inits_count_of_training_windows_is_the_builders():
  from pipeline.draft.window import training_windows  # pylint: disable=import-outside-toplevel

  hours = [h for h in range(40) if h not in (7, 8, 19, 30)]  # gaps
  eval_start = 33
  _, counts = build_windows('a', _rows(hours, lambda h: 'train' if h < eval_start else 'eval'),
                            SPEC, {'train': 1})
  drafted = training_windows(np.array(hours), pd.Series([0] * len(hours)),
                                        SPEC.encoder_steps + SPEC.horizon, eval_start)
  assert (drafted, counts['windows_train']) == (15, 15)  # 3 + 6 + 6 + 0, runs before 33
