"""What `tft-predict` reads of a CSV before any model runs: every bad cell, row or file
named with its line and the fix, and no value silently moved or dropped
(`serving.csv_rows.read_series` and `serving.series_windows.build_window`; spec:
synthetic, E = 3, H = 2)."""

import dataclasses

import pytest

from schema import datasets
from serving import csv_rows, input_errors, predict, published_models, series_windows

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)
HEADER = ['station', 'timestamp', 'load', 'region', 'capacity', 'price', 'temperature']


def _rows(history=3, horizon=2, station='s1'):
  """CSV rows of one series: `history` hours with a load, then `horizon` without."""
  return [[station, f'2024-01-01 {hour:02d}:00:00', '' if hour >= history else '1.5',
           'north', '50', '1.1', '' if hour >= history else '20.0']
          for hour in range(history + horizon)]


def _write(tmp_path, rows, header=HEADER):
  path = tmp_path / 'recent.csv'
  path.write_text('\n'.join(','.join(row) for row in [header, *rows]) + '\n')
  return str(path)


def _window(tmp_path, rows):
  [(key_values, series)] = csv_rows.read_series(_write(tmp_path, rows), SPEC).items()
  return series_windows.build_window(key_values, series, SPEC)


def test_a_well_formed_series_makes_its_window(tmp_path):
  window = _window(tmp_path, _rows())
  assert window.key == 's1' and len(window.horizon_times) == 2


def test_a_series_spread_over_several_files_is_read_as_one_naming_each_rows_file(tmp_path):
  rows = _rows() + _rows(station='s2')
  first, second = tmp_path / 'span-1.csv', tmp_path / 'span-2.csv'
  for path, part in ((first, rows[:2] + rows[5:]), (second, rows[2:5])):
    path.write_text('\n'.join(','.join(row) for row in [HEADER, *part]) + '\n')

  series = csv_rows.read_inputs([str(second), str(first)], SPEC)

  assert {key: [(row.source, row.line) for row in found] for key, found in series.items()} == {
      ('s1',): [(str(first), 2), (str(first), 3), (str(second), 2), (str(second), 3),
                (str(second), 4)],
      ('s2',): [(str(first), line) for line in range(4, 9)]}
  assert series_windows.build_window(('s1',), series[('s1',)], SPEC).key == 's1'
  # A row in both files is named in each.
  second.write_text('\n'.join(','.join(row) for row in [HEADER, rows[1]]) + '\n')
  twice = csv_rows.read_inputs([str(first), str(second)], SPEC)[('s1',)]
  with pytest.raises(input_errors.TimeGridError, match=(
      f"series 's1' has two rows at 2024-01-01 01:00:00 \\({first} line 3 and {second} line "
      r'2\); keep one')):
    series_windows.build_window(('s1',), twice, SPEC)
  # One file: its rows name no file, as before.
  [(_, alone)] = csv_rows.read_inputs([_write(tmp_path, _rows())], SPEC).items()
  assert {row.source for row in alone} == {''}


def test_the_forecast_times_keep_the_utc_offset_their_rows_name(tmp_path):
  rows = _rows()
  for row, time in zip(rows, ['2024-01-01 01:00:00+01:00', '2024-01-01T02:00+01:00',
                              '2024-01-01 03:00:00+01:00', '2024-01-01 04:00:00+01:00',
                              '2024-01-01 04:00:00Z']):
    row[1] = time
  # The same instants as the naive rows (UTC), written in the offset the row names.
  assert _window(tmp_path, rows).horizon_times == ('2024-01-01 04:00:00+01:00',
                                                   '2024-01-01 04:00:00+00:00')
  assert _window(tmp_path, _rows()).horizon_times == ('2024-01-01 03:00:00',
                                                      '2024-01-01 04:00:00')


@pytest.mark.parametrize('column, value, message', [
    ('load', 'inf', r"line 4: column 'load' holds 'inf', which is not a finite number"),
    ('price', '1e39', r"line 6: column 'price' holds '1e39', which is beyond float32's "
     r'range \(3.4e38\), which the model computes in'),
    ('load', '"12,5"', r"line 4: column 'load' holds '12,5', which is not a number.*\(a "
     r"decimal comma: write 12.5\)"),
    ('load', '"1,250"', r"line 4: column 'load' holds '1,250', which is not a number.*write "
     r"decimals with '.' and no thousands separator"),
    ('station', '', r"line 4: key column 'station' is empty"),
])
def test_a_value_the_window_cannot_use_is_refused_at_its_line(tmp_path, column, value,
                                                              message):
  rows = _rows()
  row = 2 if column != 'price' else 4  # the last history row, or the last horizon row
  rows[row][HEADER.index(column)] = value
  with pytest.raises(input_errors.PredictionInputError, match=message):
    csv_rows.read_series(_write(tmp_path, rows), SPEC)


def test_a_non_finite_value_where_missing_values_are_allowed_reads_as_missing(tmp_path):
  rows = _rows()
  rows[1][HEADER.index('temperature')] = 'inf'
  [series] = csv_rows.read_series(_write(tmp_path, rows), SPEC).values()
  assert series[1].values['temperature'] == ''


def test_a_missing_last_target_is_not_taken_for_the_start_of_the_horizon(tmp_path):
  rows = _rows(history=4)
  rows[3][HEADER.index('load')] = 'NA'  # the last history row, its temperature observed
  with pytest.raises(input_errors.PredictionInputError, match=r"line 5: 'load' has no value at "
                     r".* but the observed columns \['temperature'\] are not.*fill the target "
                     'or empty those columns'):
    _window(tmp_path, rows)


def test_rows_beyond_the_horizon_are_refused_with_both_fixes(tmp_path):
  with pytest.raises(input_errors.RowsAfterHorizonError, match=(
      r"series 's1' has 5 rows after its last 'load' value \(line 4, 2024-01-01 02:00:00\), "
      r"3 more than the 2 horizon rows the model forecasts: if 'load' is missing on line 5, "
      r"2024-01-01 03:00:00, a history row, fill it; if the rows after line 6, "
      r"2024-01-01 04:00:00 are beyond the horizon, leave them out")):
    _window(tmp_path, _rows(horizon=5))


@pytest.mark.parametrize('history', [3, 4])  # exactly E rows with a target, and more
def test_a_missing_last_target_without_observed_columns_is_refused_not_forecast_early(
    tmp_path, history):
  rows = _rows(history=history)
  for row in rows:
    row[HEADER.index('temperature')] = ''
  rows[history - 1][HEADER.index('load')] = ''  # the last history row's target, lost
  # Not "too little history" nor a forecast from the lost row's hour: the row is named.
  with pytest.raises(input_errors.RowsAfterHorizonError, match=(
      rf"series 's1' has 3 rows after its last 'load' value \(line {history}, .*if 'load' "
      rf"is missing on line {history + 1}, 2024-01-01 0{history - 1}:00:00, a history "
      'row, fill it')):
    _window(tmp_path, rows)


def test_a_target_filled_in_a_horizon_row_is_named_with_the_empty_one_before_it(tmp_path):
  rows = _rows(horizon=3)
  rows[4][HEADER.index('load')] = '2.0'
  with pytest.raises(input_errors.PredictionInputError, match=r"line 5: 'load' has no value .* "
                     r"before the last 'load' value \(line 6, .*empty that last one if its "
                     'row is a horizon row'):
    _window(tmp_path, rows)


def test_a_gap_in_too_short_a_history_is_named_rather_than_the_count(tmp_path):
  rows = _rows(history=4)
  del rows[1]  # 3 history rows, one hour missing among them
  with pytest.raises(input_errors.TimeGridError, match=r'rows at 2024-01-01 00:00:00 \(line 2\) '
                     r'and 2024-01-01 02:00:00 \(line 3\) are not consecutive.*; the '
                     r"target 'load' needs a value in every history row \(0 for a step with "
                     'nothing sold or measured'):
    _window(tmp_path, rows)


@pytest.mark.parametrize('content, message', [
    (b'', 'recent.csv is empty; give a header with the columns'),
    (b'station;timestamp;load\n', "looks separated by ';'"),
    (b'station,timestamp,load\ns\xf6,2024-01-01,1\n', r'recent.csv, line 2: byte 0xf6 is not '
     'UTF-8 text'),
])
def test_a_file_that_is_not_the_csv_asked_for_says_what_it_is(tmp_path, content, message):
  path = tmp_path / 'recent.csv'
  path.write_bytes(content)
  with pytest.raises(input_errors.PredictionInputError, match=message):
    csv_rows.read_series(str(path), SPEC)


def test_an_output_in_a_missing_directory_stops_before_any_model_is_loaded(tmp_path, capsys):
  code = predict.main(['--model-dir', str(tmp_path / 'no_model'), '--input', 'x.csv',
                       '--output', str(tmp_path / 'absent' / 'forecasts.csv')])
  assert code == 2
  assert 'absent does not exist; create it or write elsewhere' in capsys.readouterr().err


@pytest.mark.parametrize('output, message', [
    ('.', 'is a directory; name a file in it'),
    ('recent.csv', 'is the input file {tmp}/recent.csv, which the forecasts would overwrite'),
    ('future.csv', 'is the input file future.csv, which the forecasts would overwrite'),
])
def test_an_output_that_cannot_take_the_forecasts_stops_before_any_model_is_loaded(
    tmp_path, capsys, monkeypatch, output, message):
  monkeypatch.chdir(tmp_path)
  input_path = _write(tmp_path, _rows())
  (tmp_path / 'future.csv').write_text('station,timestamp\n')
  code = predict.main(['--model-dir', str(tmp_path / 'no_model'), '--input', input_path,
                       '--future', 'future.csv', '--output', output])
  assert code == 2
  assert (f'tft-predict: error: --output {output}: {message.format(tmp=tmp_path)}'
          in capsys.readouterr().err)
  assert (tmp_path / 'recent.csv').read_text().startswith('station,timestamp')
  assert (tmp_path / 'future.csv').read_text() == 'station,timestamp\n'


def test_a_missing_column_written_another_way_is_pointed_at(tmp_path):
  header = [' load' if name == 'load' else name for name in HEADER]
  with pytest.raises(input_errors.MissingColumnsError, match=r"columns \['load'\] are missing; "
                     r"' load' may be 'load'; the model was trained"):
    csv_rows.read_series(_write(tmp_path, _rows(), header), SPEC)


def test_a_future_file_needs_only_the_key_time_and_known_columns(tmp_path):
  history = csv_rows.read_series(_write(tmp_path, _rows(horizon=0)), SPEC)
  future_path = tmp_path / 'future.csv'
  future_path.write_text('timestamp,station,price\n2024-01-01 03:00:00,s1,1.3\n'
                         '2024-01-01 04:00:00,s1,1.4\n')
  future = csv_rows.read_series(str(future_path), SPEC, future=True)
  rows = series_windows.rows_with_horizon(('s1',), history[('s1',)], future[('s1',)], SPEC,
                                      str(future_path))
  window = series_windows.build_window(('s1',), rows, SPEC)
  feature = window.example.features.feature
  assert list(feature['price'].float_list.value) == pytest.approx([1.1, 1.1, 1.1, 1.3, 1.4])
  assert list(feature['region'].bytes_list.value) == [b'north']  # from the history


def test_a_future_row_off_the_grid_is_named_not_reported_missing(tmp_path):
  future_path = tmp_path / 'future.csv'
  future_path.write_text('timestamp,station,price\n2024-01-01 03:00:00,s1,1.3\n'
                         '2024-01-01 04:30:00,s1,1.4\n')
  with pytest.raises(input_errors.PredictionInputError, match=(
      f"{future_path}, line 3: column 'timestamp' holds '2024-01-01 04:30:00', which is not "
      r"on the model's hourly time grid \(every hour from 00:00 UTC\); the future rows must "
      "be at the grid's steps after each series' last row: align the times")):
    csv_rows.read_series(str(future_path), SPEC, future=True)
  # With --skip-bad-series, that series is left out, named with the reason.
  skipped = []
  assert csv_rows.read_series(str(future_path), SPEC, future=True,
                                on_bad_series=lambda key, why: skipped.append(key)) == {}
  assert skipped == [('s1',)]


def test_a_csv_of_another_data_set_is_not_taken_for_misspellings(tmp_path):
  path = _write(tmp_path, [['N', '1', '2024-01-01', '3']], ['region', 'store', 'day', 'sales'])
  with pytest.raises(input_errors.MissingColumnsError) as error:
    csv_rows.read_series(path, SPEC)
  assert str(error.value).startswith(
      f"{path}: 6 of the 7 columns it needs of dataset spec 'synthetic', on which the model "
      "was trained, are missing: ['station', 'timestamp', 'load', 'capacity', 'price', "
      "'temperature']. Is this the model of another data set?")


@pytest.mark.parametrize('column, value, written', [
    ('region', 'south', "'region' is 'north' at line 2 but 'south' at line 5"),
    ('capacity', '60', "'capacity' is '50' at line 2 but '60' at line 5"),
])
def test_a_static_value_that_changes_within_a_series_is_refused(tmp_path, column, value,
                                                                written):
  rows = _rows()
  rows[3][HEADER.index(column)] = value  # the first horizon row (line 5)
  with pytest.raises(input_errors.PredictionInputError,
                     match=f"series 's1': static column {written}; a static column holds "
                     'one value per series: make it constant'):
    _window(tmp_path, rows)


def test_a_static_value_written_another_way_or_left_empty_in_a_horizon_row_is_kept(tmp_path):
  rows = _rows()
  rows[3][HEADER.index('capacity')] = '50.0'
  rows[4][HEADER.index('region')] = ''
  features = _window(tmp_path, rows).example.features.feature
  assert features['capacity'].float_list.value == [50]
  assert features['region'].bytes_list.value == [b'north']


def _model_knowing(tmp_path, regions):
  """A model directory whose only asset is the 'region' vocabulary."""
  assets = tmp_path / 'model' / 'assets'
  assets.mkdir(parents=True)
  (assets / 'region').write_text(''.join(f'{region}\n' for region in regions))
  return str(tmp_path / 'model')


def _in_region(region, station):
  rows = _rows(station=station)
  for row in rows:
    row[HEADER.index('region')] = region
  return rows


def test_a_category_the_model_never_saw_is_named_with_a_series_and_its_line(tmp_path):
  model_dir = _model_knowing(tmp_path, ['north', 'south'])
  windows = [_window(tmp_path, _in_region(region, station))
             for region, station in [('north', 's1'), ('south', 's2')]]
  assert series_windows.unseen_categories(windows, model_dir, SPEC) == []

  windows += [_window(tmp_path, _in_region('nort', station)) for station in ('s3', 's4')]
  [note] = series_windows.unseen_categories(windows, model_dir, SPEC)
  assert note.startswith("column 'region' holds 'nort', a value the model was not trained "
                         "on (series 's3', line 4; 1 more series)")
  [note] = series_windows.unseen_categories(windows, model_dir, SPEC, input_name='recent.csv')
  assert "(series 's3', recent.csv line 4; 1 more series)" in note
  # The window keeps each value's row: its line, and its file if it is a future file's.
  assert ('region', 'nort', 4, '') in windows[2].categories
  in_future = dataclasses.replace(windows[2], categories=(('region', 'nort', 3,
                                                            'future.csv'),))
  [note] = series_windows.unseen_categories([in_future], model_dir, SPEC, input_name='recent.csv')
  assert "(series 's3', future.csv line 3)" in note


def test_a_series_with_a_cell_that_cannot_be_read_can_be_left_out_by_itself(tmp_path):
  rows = _rows(station='s1') + _rows(station='s2')
  rows[6][HEADER.index('load')] = 'abc'  # s2's second row, line 8
  path = _write(tmp_path, rows)
  with pytest.raises(input_errors.PredictionInputError, match='line 8'):
    csv_rows.read_series(path, SPEC)

  left_out = []
  series = csv_rows.read_series(path, SPEC, lambda *left: left_out.append(left))

  assert list(series) == [('s1',)] and len(series[('s1',)]) == 5
  [(key, why)] = left_out
  assert key == ('s2',) and why.startswith(f"series 's2': {path}, line 8: column 'load'")


def test_a_row_without_its_key_stops_even_when_bad_series_are_left_out(tmp_path):
  rows = _rows()
  rows[1][HEADER.index('station')] = ''
  with pytest.raises(input_errors.PredictionInputError, match="line 3: key column 'station'"):
    csv_rows.read_series(_write(tmp_path, rows), SPEC, lambda key, why: None)


def test_the_paths_a_run_prints_lead_to_its_model(tmp_path):
  runs = tmp_path / 'runs'
  version = runs / 'synthetic' / 'serving_model' / '1700000000'
  artifact = runs / 'synthetic' / 'pipeline_root' / 'Trainer' / 'model' / '10'
  for directory in (version, artifact / 'Format-Serving'):
    directory.mkdir(parents=True)
    (directory / published_models.SAVED_MODEL_FILE).write_bytes(b'')
  resolve = published_models.resolve_model_dir

  assert resolve(str(runs / 'synthetic')) == str(version)  # the data set's run directory
  assert resolve(str(artifact)) == str(artifact / 'Format-Serving')  # the summary's model:
  with pytest.raises(published_models.ModelNotFoundError) as error:
    resolve(str(runs))
  assert str(error.value) == (
      f"{runs} holds the runs of data sets ['synthetic']; pass one's serving directory, e.g. "
      f"{runs / 'synthetic' / 'serving_model'}")


def test_a_run_that_published_nothing_says_so_with_its_verdict_and_its_model(tmp_path):
  run = tmp_path / 'runs' / 'shop'
  run.mkdir(parents=True)
  model = run / 'pipeline_root' / 'Trainer' / 'model' / '9'
  (run / 'run_summary.txt').write_text(
      'Pipeline run summary\n'
      f'  model:       {model}\n'
      '  blessed:     no, on the test windows (held out: nothing chose on them): ...\n'
      "    because the test MAE is 1.021 times the best naive forecast's, above 1\n"
      '  pushed to:   not pushed (model not blessed)\n')
  with pytest.raises(published_models.ModelNotFoundError) as error:
    published_models.resolve_model_dir(str(run / 'serving_model'))
  assert str(error.value) == (
      f'no model of shop has been blessed yet, so none is published in {run / "serving_model"}; '
      f'the last run ({run / "run_summary.txt"}) says: blessed: no, on the test windows '
      "(held out: nothing chose on them): ... (because the test MAE is 1.021 times the best "
      "naive forecast's, above 1). To forecast with that run's model anyway, unblessed, pass "
      f'--model-dir {model}')
  with pytest.raises(published_models.ModelNotFoundError, match='does not exist'):
    published_models.resolve_model_dir(str(tmp_path / 'elsewhere' / 'serving_model'))
