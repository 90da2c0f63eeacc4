"""The run's forecasts: each series' rows from ExampleGen's output, the horizon rows the
window needs, and the reasons a series is not forecast."""

import dataclasses

import pytest
import tensorflow as tf

from components import delivered_forecasts
from components import input_rows
from components import split_report
from schema import time_split
from schema import datasets, time_zones
from schema.dataset_spec import Role
from schema.frequency import Frequency
from serving import csv_rows, input_errors, prediction, published_models, series_windows
from trainer_module import training_period

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)
NO_KNOWN = dataclasses.replace(
    SPEC, name='no_known', columns=tuple(c for c in SPEC.columns if c.role != Role.KNOWN))


def _row(station, hour, load='1.5', temperature='20.0', price='1.1'):
  return {'station': station, 'timestamp': f'2024-01-01 {hour:02d}:00:00', 'load': load,
          'region': 'north', 'capacity': '50', 'price': price, 'temperature': temperature}


def test_series_are_read_back_from_examplegen_output_in_time_order(tmp_path):
  path = str(tmp_path / 'rows.gz')
  rows = [_row('s2', 1), _row('s1', 3), _row('s1', 2, temperature='')]
  with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions('GZIP')) as writer:
    for row in rows:
      writer.write(input_rows.parse_row(row, SPEC, 'x').SerializeToString())
  series = delivered_forecasts.series_from_examples([path], SPEC)
  assert sorted(series) == [('s1',), ('s2',)]
  s1 = series[('s1',)]
  assert [r.values['timestamp'] for r in s1] == ['2024-01-01 02:00:00', '2024-01-01 03:00:00']
  assert (s1[0].values['temperature'], s1[1].values['temperature']) == ('', '20.0')
  assert float(s1[0].values['load']) == 1.5 and s1[0].values['region'] == 'north'
  # The last rows only, when a window needs no more; data of one series has no key.
  assert delivered_forecasts.series_from_examples([path], SPEC, keep=1)[('s1',)] == s1[1:]
  keyless = dataclasses.replace(SPEC, columns=tuple(
      c for c in SPEC.columns if c.role != Role.SERIES_KEY))
  assert [row.seconds for row in delivered_forecasts.series_from_examples([path], keyless)[()]] == [
      1704067200 + 3600 * hour for hour in (1, 2, 3)]


def test_on_a_grid_of_days_the_times_read_back_and_forecast_are_dates(tmp_path):
  daily = dataclasses.replace(NO_KNOWN, frequency=Frequency('daily'),
                              calendar_features=('day_of_week',))
  path = str(tmp_path / 'rows.gz')
  with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions('GZIP')) as writer:
    for day in range(1, 5):
      row = {**_row('s1', 0), 'timestamp': f'2024-01-0{day}'}
      writer.write(input_rows.parse_row(row, daily, 'x').SerializeToString())
  rows = delivered_forecasts.series_from_examples([path], daily)[('s1',)]
  assert [row.values['timestamp'] for row in rows] == [f'2024-01-0{day}' for day in range(1, 5)]
  window = series_windows.build_window(('s1',), series_windows.with_horizon(rows, [], daily), daily)
  assert window.horizon_times == ('2024-01-05', '2024-01-06')
  # Sub-daily grids keep the time of day.
  assert delivered_forecasts.series_from_examples([path], NO_KNOWN)[('s1',)][0].values[
      'timestamp'] == '2024-01-01 00:00:00'


def _input_rows(spec, hours, station='s1', line=None):
  """Rows of the data (no line), or of a future file from `line` on."""
  return [csv_rows.InputRow(line and line + i, 1704067200 + 3600 * h, {
      c.name: v for c, v in zip(spec.columns, [station, f'2024-01-01 {h:02d}:00:00', '2.0',
                                               'north', '50', '1.0', '20.0'])
      if c in spec.columns}) for i, h in enumerate(hours)]


def test_without_known_columns_the_horizon_needs_only_the_grid():
  rows = _input_rows(NO_KNOWN, range(4))
  extended = series_windows.with_horizon(rows, [], NO_KNOWN)
  assert [r.values['timestamp'] for r in extended[4:]] == ['2024-01-01 04:00:00',
                                                           '2024-01-01 05:00:00']
  assert extended[4].values['station'] == 's1' and extended[4].values['load'] == ''
  window = series_windows.build_window(('s1',), extended, NO_KNOWN)
  assert window.horizon_times == ('2024-01-01 04:00:00', '2024-01-01 05:00:00')


def test_known_columns_come_from_the_future_rows_or_the_series_is_listed():
  rows = _input_rows(SPEC, range(4))
  future = [dataclasses.replace(r, values=dict(r.values, load='', temperature=''))
            for r in _input_rows(SPEC, [4, 5])]
  extended = series_windows.with_horizon(rows, future, SPEC)
  assert extended[-2:] == future
  with pytest.raises(input_errors.MissingFutureRowsError,
                     match=r"known columns \['price'\] have no values for 1 of the 2 steps "
                     r'after the last row \(2024-01-01 03:00:00\), from 2024-01-01 05:00:00'):
    series_windows.with_horizon(rows, future[:1], SPEC)


def test_tft_predict_takes_the_horizon_from_a_future_file_or_adds_it_without_known_columns():
  history = _input_rows(SPEC, range(4), line=2)
  future = [dataclasses.replace(r, values=dict(r.values, load='', temperature=''))
            for r in _input_rows(SPEC, [4, 5], line=6)]
  # Given a future file, the history's H next steps come from it.
  assert series_windows.rows_with_horizon(('s1',), history, future, SPEC) == history + future
  # Without one, the rows are taken as given: with their horizon rows, or too few.
  assert series_windows.rows_with_horizon(('s1',), history + future, None, SPEC) == (
      history + future)
  assert series_windows.rows_with_horizon(('s1',), history, None, SPEC) == history
  # A model without known columns needs no horizon rows: the steps are added.
  plain = _input_rows(NO_KNOWN, range(4), line=2)
  extended = series_windows.rows_with_horizon(('s1',), plain, None, NO_KNOWN)
  assert extended[:4] == plain and len(extended) == 6 and extended[4].line is None
  assert series_windows.rows_with_horizon(('s1',), plain + extended[4:], None, NO_KNOWN) == (
      extended)
  # So a future file has nothing to give it, and the commands say so.
  assert 'leave --future out' in series_windows.future_file_unused(NO_KNOWN)
  assert series_windows.future_file_unused(SPEC) is None
  with pytest.raises(input_errors.PredictionInputError,
                     match=r"series 's1' ends with a row without a 'load' value \(line 7, "
                     r'2024-01-01 05:00:00\), and a future file gives the horizon: if it is '
                     'a history row, fill its target'):
    series_windows.rows_with_horizon(('s1',), history + future, future, SPEC)
  # The future rows are a future file's: named as such, and they leave the target empty.
  in_file = [dataclasses.replace(row, source='future.csv') for row in future]
  in_file[1] = dataclasses.replace(in_file[1], values=dict(in_file[1].values, load='3.0'))
  with pytest.raises(input_errors.PredictionInputError,
                     match=r"series 's1', future.csv line 7: the future row at 2024-01-01 "
                     r"05:00:00 holds values of \['load'\], which a horizon row leaves empty"):
    series_windows.rows_with_horizon(('s1',), history, in_file, SPEC)
  with pytest.raises(input_errors.MissingFutureRowsError,
                     match=r"series 's1': the known columns \['price'\] have no values for 1 "
                     r'of the 2 steps .* \(--future FILE of tft-pipeline or tft-predict'):
    series_windows.rows_with_horizon(('s1',), history, in_file[:1], SPEC)
  # When a future file was given, the fix is to complete it.
  with pytest.raises(input_errors.MissingFutureRowsError,
                     match=r'of the 2 steps .*: add its rows at those steps to the future '
                     'file future.csv$'):
    series_windows.rows_with_horizon(('s1',), history, in_file[:1], SPEC, 'future.csv')


def test_the_reasons_name_the_future_file_lines_and_no_line_for_rows_of_the_data():
  data = _input_rows(SPEC, [0, 1, 3, 4])  # 02:00 missing among the last E rows
  future = [dataclasses.replace(r, values=dict(r.values, load='', temperature=''))
            for r in _input_rows(SPEC, [5, 6], line=2)]
  with pytest.raises(input_errors.TimeGridError, match=(
      r"series 's1': rows at 2024-01-01 01:00:00 and 2024-01-01 03:00:00 are not "
      'consecutive hourly steps')):
    series_windows.build_window(('s1',), series_windows.with_horizon(data, future, SPEC), SPEC)
  future[1].values['region'] = 'south'
  with pytest.raises(input_errors.PredictionInputError, match=(
      "static column 'region' is 'north' in the data but 'south' at line 3; ")):
    series_windows.build_window(('s1',), series_windows.with_horizon(data, future, SPEC), SPEC)
  future[1].values['region'], future[1].values['price'] = 'north', ''
  with pytest.raises(input_errors.PredictionInputError, match=(
      r"series 's1', line 3: column 'price' has no value at 2024-01-01 06:00:00")):
    series_windows.build_window(('s1',), series_windows.with_horizon(_input_rows(SPEC, range(5)),
                                                              future, SPEC), SPEC)


def test_a_series_that_ended_a_horizon_before_the_newest_rows_is_not_forecast():
  rows = _input_rows(SPEC, range(4))  # the last row at 03:00, the horizon 2 steps
  newest = rows[-1].seconds
  assert series_windows.stale_series_error('s1', rows, newest, SPEC) is None
  assert series_windows.stale_series_error('s1', rows, newest + 3600, SPEC) is None
  error = series_windows.stale_series_error('s1', rows, newest + 2 * 3600, SPEC)
  assert isinstance(error, input_errors.PredictionInputError)
  assert str(error) == ("series 's1' ends at 2024-01-01 03:00:00, 2 steps before the newest "
                        'rows (2024-01-01 05:00:00), so its 2-step forecast would lie wholly in '
                        'the past: give its rows up to 2024-01-01 05:00:00, or leave it out of '
                        'the data')


def test_a_short_or_new_series_is_not_forecast_and_the_reason_says_when_it_will_be(
    monkeypatch):
  monkeypatch.setattr(published_models, 'series_vocabulary', lambda _: {'known', 'short'})
  monkeypatch.setattr(training_period, 'trained_before', lambda _: '2024-01-01 02:00:00')
  monkeypatch.setattr(prediction, 'forecast_rows', lambda _, windows, spec: [
      {'station': w.key, 'timestamp': time, 'horizon_step': step, 'p50': 1.0}
      for w in windows for step, time in enumerate(w.horizon_times, start=1)])
  monkeypatch.setattr(series_windows, 'unseen_categories', lambda *args, **kwargs: [])
  series = {(station,): _input_rows(NO_KNOWN, hours, station) for station, hours in [
      ('known', range(4)), ('short', range(2, 4)), ('new', range(4)),
      ('new_short', range(3, 4))]}

  result = delivered_forecasts.make_forecasts('model', series, {}, NO_KNOWN)

  assert [(row['station'], row['horizon_step']) for row in result.rows] == [
      ('known', 1), ('known', 2)]
  # Beside each row, the naive forecasts of the same history (hours 1 to 3: load 2.0).
  assert [row['naive_repeat_last'] for row in result.naive] == [2.0, 2.0]
  reasons = {key[0]: (type(error), str(error)) for key, error in result.not_forecast}
  assert reasons['short'] == (input_errors.TooLittleHistoryError, (
      "series 'short' has 2 rows with a 'load' value, fewer than the model's history length "
      'E (3): it is forecast once it has 3'))
  # A new series that is also short: the length first, then what else it takes.
  assert reasons['new_short'][1].endswith(
      'it is forecast once it has 3 and a model trained on its rows is blessed')
  assert reasons['new'] == (input_errors.UnknownSeriesError, (
      "series 'new' is not among the series the forecasting model was trained on: its rows "
      "start after that model's training period (which ended where its eval period began, "
      "2024-01-01 02:00:00); it is forecast once a run's eval period begins after its first "
      "rows and that run's model is blessed"))


def test_a_series_only_in_the_future_file_is_listed_not_dropped():
  series = {('s1',): _input_rows(SPEC, range(4))}
  future = {('s1',): _input_rows(SPEC, [4, 5]), ('s9',): _input_rows(SPEC, [4, 5], 's9')}
  [(key, error)] = series_windows.future_only_series(series, future, SPEC)
  assert key == ('s9',) and isinstance(error, input_errors.PredictionInputError)
  assert str(error) == ("series 's9' has rows in the future file but none in the data: add "
                        'its rows to the data, or remove it from the future file')


def test_recent_rows_whose_header_repeats_a_name_are_refused(tmp_path):
  path = tmp_path / 'recent.csv'
  row = _row('s1', 1)
  path.write_text(','.join([*row, 'load']) + '\n' + ','.join([*row.values(), '9']) + '\n')
  with pytest.raises(input_errors.PredictionInputError,
                     match=r"recent.csv: the header names 'load' twice \(columns 3 and 8\)"):
    csv_rows.read_series(str(path), SPEC)


def test_the_steps_the_run_adds_keep_the_utc_offset_of_the_last_row_in_the_data():
  """Examples give UTC times; with the last row's time as the data writes it, the
  forecast steps are written in its offset, a time given for another instant is not
  taken."""
  series = {('s1',): _input_rows(NO_KNOWN, range(4)), ('s2',): _input_rows(NO_KNOWN, range(4))}
  assert delivered_forecasts.last_instants(series, NO_KNOWN) == {'s1': 1704067200 + 3 * 3600,
                                                         's2': 1704067200 + 3 * 3600}
  written = {'s1': '2024-01-01 05:00:00+02:00', 's2': '2024-01-01 03:00:00+01:00'}
  kept = delivered_forecasts.with_last_times_as_written(series, written, NO_KNOWN)
  assert kept[('s1',)][-1].values['timestamp'] == '2024-01-01 05:00:00+02:00'
  assert kept[('s2',)] == series[('s2',)]  # 03:00+01:00 is 02:00 UTC, not the newest row
  assert kept[('s1',)][:-1] == series[('s1',)][:-1]
  window = series_windows.build_window(
      ('s1',), series_windows.with_horizon(kept[('s1',)], [], NO_KNOWN), NO_KNOWN)
  assert window.horizon_times == ('2024-01-01 06:00:00+02:00', '2024-01-01 07:00:00+02:00')


def test_with_a_time_zone_the_steps_the_run_adds_are_written_as_the_data_writes_times():
  """On the zone's clock where the data are written on it, across a clock change too
  (Berlin moved from +01:00 to +02:00 at 01:00 UTC on 2024-03-31); in the data's own UTC
  offset or naive UTC where they are not, whatever clock the calendar reads."""
  zoned = dataclasses.replace(NO_KNOWN, calendar_features=('hour_of_day',),
                              time_zone='Europe/Berlin')
  last = time_split.parse_timestamp('2024-03-30 23:00:00')

  def added_steps(last_time, spec=zoned):
    rows = [csv_rows.InputRow(None, last + 3600 * (h - 3), {
        'station': 's1', 'timestamp': last_time if h == 3 else '', 'load': '2.0',
        'region': 'north', 'capacity': '50', 'temperature': '1.0'}) for h in range(4)]
    return [r.values['timestamp'] for r in series_windows.with_horizon(rows, [], spec)[4:]]

  assert added_steps('2024-03-31 00:00:00+01:00') == ['2024-03-31 01:00:00+01:00',
                                                      '2024-03-31 03:00:00+02:00']
  assert added_steps('2024-03-30 23:00:00+00:00') == ['2024-03-31 00:00:00+00:00',
                                                      '2024-03-31 01:00:00+00:00']
  assert added_steps('2024-03-30 23:00:00') == ['2024-03-31 00:00:00', '2024-03-31 01:00:00']
  new_york = dataclasses.replace(zoned, time_zone='America/New_York')  # -04:00 then
  assert added_steps('2024-03-30 19:00:00-04:00', new_york) == ['2024-03-30 20:00:00-04:00',
                                                                '2024-03-30 21:00:00-04:00']
  assert added_steps('2024-03-30 23:00:00+00:00', new_york) == ['2024-03-31 00:00:00+00:00',
                                                                '2024-03-31 01:00:00+00:00']


def test_times_written_on_a_zones_clock_are_told_from_utc_and_other_offsets():
  berlin = 'Europe/Berlin'
  winter = time_split.parse_timestamp('2024-01-15 11:00:00')
  assert time_zones.writes_on_clock('2024-01-15 12:00:00+01:00', winter, berlin)
  assert not time_zones.writes_on_clock('2024-01-15 13:00:00+02:00', winter, berlin)
  assert not time_zones.writes_on_clock('2024-01-15 11:00:00', winter, berlin)
  assert not time_zones.writes_on_clock('2024-01-15 11:00:00Z', winter, berlin)
  assert not time_zones.writes_on_clock('2024-01-15 11:00:00+00:00', winter, 'Europe/London')


def test_forecast_gen_reads_the_times_again_from_the_files_examplegen_lists(tmp_path, caplog):
  from components import forecast_gen  # pylint: disable=import-outside-toplevel
  from schema.time_split import TimeSplit  # pylint: disable=import-outside-toplevel
  data = tmp_path / 'data.csv'
  data.write_text('station,timestamp,load,region,capacity,price,temperature\n'
                  's1,2024-01-01 05:00:00+02:00,1.5,north,50,1.1,20\n')
  examples = tmp_path / 'examples'
  examples.mkdir()
  split_report.write_split_report(
      [('train', 1), ('eval', 1)], str(examples / split_report.SPLIT_REPORT_FILE),
      TimeSplit(eval_start=0.5), spans=[0], files=[str(data)], spec=SPEC,
      time_range=(1704070800, 1704070800))
  written = forecast_gen.times_as_written_or_utc
  instants = {'s1': time_split.parse_timestamp('2024-01-01 03:00:00')}
  assert written(str(examples), SPEC, instants) == {'s1': '2024-01-01 05:00:00+02:00'}
  data.unlink()  # gone since: the forecasts are written in UTC, with a warning
  assert written(str(examples), SPEC, instants) == {}
  assert 'could not be read again' in caplog.text and 'written in UTC' in caplog.text
