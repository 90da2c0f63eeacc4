"""`tft-predict`: forecasts from a published model for a CSV of recent rows.

The CSVs are written from the generated rows of the tiny data set; the expected
forecasts come from the model's own signatures on windows built here by hand.
"""

import csv
import datetime
import io
import math
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START
from serving import input_errors, predict, prediction, published_models
from trainer_module import export

pytestmark = pytest.mark.slow(seconds=70)  # runs a pipeline or trains a model

HOUR = 3600
QUANTILE_KEYS = ('p10', 'p50', 'p90')


def _time(seconds: int) -> str:
  return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
      '%Y-%m-%d %H:%M:%S')


def _csv_rows(tiny, station: str, start: int, history: int, horizon: int):
  """CSV rows of `station`: `history` rows before `start`, then `horizon` rows with the
  target and the observed temperature empty."""
  rows = []
  for step in range(-history, horizon):
    raw = tiny.raw_by_series[station][start + HOUR * step]
    known_only = step >= 0
    temperature = raw.get('temperature', [math.nan])[0]
    rows.append({
        'station': station, 'timestamp': _time(start + HOUR * step),
        'load': '' if known_only else repr(raw['load'][0]),
        'region': raw['region'][0].decode(), 'capacity': repr(raw['capacity'][0]),
        'price': repr(raw['price'][0]),
        'temperature': '' if known_only or math.isnan(temperature) else repr(temperature)})
  return rows


def _write_csv(rows, path, columns=None) -> str:
  columns = columns or list(rows[0])
  with open(path, 'w', newline='') as f:
    writer = csv.DictWriter(f, columns, extrasaction='ignore')
    writer.writeheader()
    writer.writerows(rows)
  return str(path)


def _raw_window(tiny, station: str, start: int) -> bytes:
  """The raw serving example of `station` forecasting from `start` (export's format)."""
  history, horizon = tiny.spec.encoder_steps, tiny.spec.horizon
  times = [start + HOUR * step for step in range(-history, horizon)]
  rows = [tiny.raw_by_series[station][t] for t in times]

  def floats(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))

  return tf.train.Example(features=tf.train.Features(feature={
      'station': tf.train.Feature(bytes_list=tf.train.BytesList(value=[station.encode()])),
      'region': tf.train.Feature(bytes_list=tf.train.BytesList(value=rows[history - 1]['region'])),
      'capacity': floats(rows[history - 1]['capacity']),
      'timestamp': tf.train.Feature(int64_list=tf.train.Int64List(value=times)),
      'price': floats([row['price'][0] for row in rows]),
      'temperature': floats([row.get('temperature', [math.nan])[0] for row in rows[:history]]),
      'load': floats([row['load'][0] for row in rows[:history]]),
  })).SerializeToString()


@pytest.fixture(scope='module')
def first_eval_windows(tiny):
  """{station: (forecast start, transformed window)} of each station's first eval window."""
  parsed = tf.io.parse_example(tf.constant(tiny.eval_windows), {
      SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
      FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)})
  found = {}
  for key, start, window in zip(parsed[SERIES_KEY].numpy()[:, 0],
                                parsed[FORECAST_START].numpy()[:, 0], tiny.eval_windows):
    if key.decode() not in found or start < found[key.decode()][0]:
      found[key.decode()] = (int(start), window)
  return found


@pytest.fixture(scope='module')
def good_rows(tiny, first_eval_windows):
  """Rows of both stations: more history than E, then the H horizon rows."""
  rows = []
  for station, (start, _) in sorted(first_eval_windows.items()):
    rows += _csv_rows(tiny, station, start, tiny.spec.encoder_steps + 5, tiny.spec.horizon)
  return rows


@pytest.fixture(scope='module')
def good_csv(good_rows, tmp_path_factory):
  return _write_csv(good_rows, tmp_path_factory.mktemp('predict') / 'recent.csv')


@pytest.fixture(scope='module')
def predicted(exported, good_csv):
  return prediction.predict(exported.serving_dir, good_csv)


def test_forecasts_equal_the_models_on_the_same_windows(tiny, exported, first_eval_windows,
                                                        predicted):
  stations = sorted(first_eval_windows)
  horizon = tiny.spec.horizon
  assert list(predicted[0]) == ['station', 'timestamp', prediction.HORIZON_STEP,
                                *QUANTILE_KEYS]
  assert [(row['station'], row['timestamp'], row[prediction.HORIZON_STEP])
          for row in predicted] == [
              (station, _time(first_eval_windows[station][0] + HOUR * step), step + 1)
              for station in stations for step in range(horizon)]
  loaded = tf.saved_model.load(exported.version_dir)
  raw = loaded.signatures[export.SERVING_SIGNATURE](examples=tf.constant(
      [_raw_window(tiny, station, first_eval_windows[station][0]) for station in stations]))
  transformed = loaded.signatures[export.EVAL_SIGNATURE](examples=tf.constant(
      [first_eval_windows[station][1] for station in stations]))
  for key in QUANTILE_KEYS:
    forecasts = np.array([row[key] for row in predicted]).reshape(len(stations), horizon)
    np.testing.assert_allclose(forecasts, raw[key].numpy(), rtol=1e-6)
    # The same windows as the Windowing component cuts, through the Evaluator's signature.
    np.testing.assert_allclose(forecasts, transformed[key].numpy(), rtol=1e-4, atol=1e-3)


def test_the_forecast_columns_are_known_without_forecasting(exported, predicted, tiny):
  # The header of a run's forecasts.csv when no series could be forecast.
  model_dir = published_models.resolve_model_dir(exported.serving_dir)
  assert prediction.forecast_columns(model_dir, tiny.spec) == list(predicted[0])


def test_command_prints_or_writes_the_forecasts(exported, good_csv, predicted, tmp_path,
                                               capsys):
  output = tmp_path / 'forecasts.csv'

  code = predict.main(['--model-dir', exported.serving_dir, '--input', good_csv,
                       '--output', str(output)])

  assert code == 0
  captured = capsys.readouterr()
  assert 'tft-predict:' not in captured.err  # nothing to warn of
  assert captured.out == (f'tft-predict: wrote {len(predicted)} forecast rows (2 series) to '
                          f'{output}\n')
  assert predict.main(['--model-dir', exported.serving_dir, '--input', good_csv]) == 0
  printed = capsys.readouterr().out  # without --output, the CSV itself
  assert output.read_text() == printed
  written = list(csv.DictReader(io.StringIO(printed)))
  assert [row['timestamp'] for row in written] == [row['timestamp'] for row in predicted]
  for key in QUANTILE_KEYS:
    np.testing.assert_allclose([float(row[key]) for row in written],
                               [row[key] for row in predicted], atol=1e-4)


def test_the_command_reads_a_series_spread_over_several_files(exported, good_rows, predicted,
                                                              tmp_path, capsys):
  # Each file a span of time: the older rows of every series, then the newer.
  middle = len(good_rows) // 4
  older = [row for row in good_rows if row['timestamp'] < good_rows[middle]['timestamp']]
  newer = [row for row in good_rows if row['timestamp'] >= good_rows[middle]['timestamp']]
  paths = [_write_csv(rows, tmp_path / name) for rows, name in ((newer, 'span-2.csv'),
                                                                (older, 'span-1.csv'))]

  code = predict.main(['--model-dir', exported.serving_dir, '--input', *paths])

  assert code == 0
  written = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
  assert sorted((row['station'], row['timestamp']) for row in written) == sorted(
      (row['station'], row['timestamp']) for row in predicted)


def test_the_horizon_rows_may_come_from_a_future_file(exported, good_rows, good_csv, predicted,
                                                      tmp_path, capsys):
  history = _write_csv([row for row in good_rows if row['load']], tmp_path / 'history.csv')
  future = _write_csv([row for row in good_rows if not row['load']], tmp_path / 'future.csv')

  assert prediction.predict(exported.serving_dir, history, future_path=future) == predicted
  code = predict.main(['--model-dir', exported.serving_dir, '--input', history,
                       '--future', future])
  assert code == 0
  assert capsys.readouterr().out == _printed(predicted)

  with pytest.raises(input_errors.MissingFutureRowsError,
                     match=r'or give them in a future file \(tft-predict --future FILE\)'):
    prediction.predict(exported.serving_dir, history)
  with pytest.raises(input_errors.PredictionInputError,
                     match='and a future file gives the horizon: if it is a history row'):
    prediction.predict(exported.serving_dir, good_csv, future_path=future)
  first = good_rows[0]['station']
  only_first = _write_csv([row for row in good_rows if row['load'] and row['station'] == first],
                          tmp_path / 'first.csv')
  # A future file of more series than the history's (one for the whole company): the
  # others are named once, not an error.
  notes = []
  rows = prediction.predict(exported.serving_dir, only_first, future_path=future,
                            warn=notes.append)
  assert {row['station'] for row in rows} == {first}
  assert notes == [f"{future}: series ['station_01'] is in the future file only, not in "
                   f'{only_first}: not forecast']
  # With --skip-bad-series, a series whose future rows cannot be read is left out once.
  bad_future = [dict(row, price='x') if row['station'] == 'station_01' else row
                for row in good_rows if not row['load']]
  not_forecast = []
  rows = prediction.predict(exported.serving_dir, history, skip_bad_series=True,
                            warn=lambda note: None, not_forecast=not_forecast,
                            future_path=_write_csv(bad_future, tmp_path / 'bad_future.csv'))
  expected = [row for row in predicted if row['station'] == 'station_00']
  assert [row['timestamp'] for row in rows] == [row['timestamp'] for row in expected]
  for key in QUANTILE_KEYS:  # one window in the batch instead of two: rounding may differ
    np.testing.assert_allclose([row[key] for row in rows], [row[key] for row in expected],
                               rtol=1e-5)
  [left_out] = not_forecast
  assert left_out['station'] == 'station_01'
  assert "bad_future.csv, line" in left_out[prediction.REASON]
  header_only = _write_csv([], tmp_path / 'empty.csv', columns=list(good_rows[0]))
  with pytest.raises(input_errors.PredictionInputError,
                     match=r'has no rows; give each series its 4 horizon rows, the known '
                     'columns filled'):
    prediction.predict(exported.serving_dir, history, future_path=header_only)


def _printed(rows) -> str:
  stream = io.StringIO()
  prediction.write_forecasts(rows, stream)
  return stream.getvalue()


def _drop_column(rows):
  return [{k: v for k, v in row.items() if k != 'price'} for row in rows]


def _short_history(rows):
  first_01 = next(i for i, row in enumerate(rows) if row['station'] == 'station_01')
  return rows[:first_01] + rows[first_01 + 6:]  # 17 - 6 = 11 history rows, E = 12


def _short_horizon(rows):
  last_00 = max(i for i, row in enumerate(rows) if row['station'] == 'station_00')
  return rows[:last_00] + rows[last_00 + 1:]  # 3 horizon rows, H = 4


def _rows_after_horizon(rows):
  last_01 = max(i for i, row in enumerate(rows) if row['station'] == 'station_01')
  end = datetime.datetime.strptime(rows[last_01]['timestamp'], '%Y-%m-%d %H:%M:%S').replace(
      tzinfo=datetime.timezone.utc).timestamp()
  later = [{**rows[last_01], 'timestamp': _time(int(end) + HOUR * step)} for step in (1, 2)]
  return rows[:last_01 + 1] + later + rows[last_01 + 1:]  # 6 rows after the history, H = 4


def _unknown_series(rows):
  return [{**row, 'station': 'station_99'} if row['station'] == 'station_01' else row
          for row in rows]


def _off_grid(rows):
  moved = dict(rows[10])
  moved['timestamp'] = moved['timestamp'][:-5] + '30:00'
  return rows[:10] + [moved] + rows[11:]


def _gap(rows):
  return rows[:10] + rows[11:]  # an hour missing inside station_00's last 12 history rows


def _duplicate(rows):
  return rows[:10] + [rows[10]] + rows[10:]


def _empty_known_value(rows):
  last_00 = max(i for i, row in enumerate(rows) if row['station'] == 'station_00')
  return rows[:last_00] + [{**rows[last_00], 'price': ''}] + rows[last_00 + 1:]


@pytest.mark.parametrize('mutate, error, message', [
    (_drop_column, input_errors.MissingColumnsError, r"\['price'\] are missing"),
    (_short_history, input_errors.TooLittleHistoryError,
     r"'station_01' has 11 rows with a 'load' value; the model needs the last 12"),
    (_short_horizon, input_errors.MissingFutureRowsError,
     r"'station_00' has 3 rows after its last 'load' value .* forecasts 4 steps"),
    (_rows_after_horizon, input_errors.RowsAfterHorizonError,
     r"'station_01' has 6 rows after its last 'load' value .*, 2 more than the 4 horizon rows"),
    (_unknown_series, input_errors.UnknownSeriesError,
     r"in.csv: series \['station_99'\] is not among the 2"),
    (_off_grid, input_errors.TimeGridError, r"'station_00', line 12: .* not on the model's hourly"),
    (_gap, input_errors.TimeGridError, r"'station_00': rows at .* are not consecutive hourly"),
    (_duplicate, input_errors.TimeGridError,
     r"in.csv: series 'station_00' has two rows at .* \(lines 12 and 13\)"),
    (_empty_known_value, input_errors.PredictionInputError, r"column 'price' has no value"),
])
def test_bad_input_gets_its_own_error(exported, good_rows, tmp_path, mutate, error,
                                      message):
  path = _write_csv(mutate(good_rows), tmp_path / 'in.csv')

  with pytest.raises(error, match=message):
    prediction.predict(exported.serving_dir, path)


def test_unknown_series_are_forecast_when_allowed(exported, good_rows, tmp_path):
  path = _write_csv(_unknown_series(good_rows), tmp_path / 'in.csv')

  notes = []
  rows = prediction.predict(exported.serving_dir, path, allow_unknown_series=True,
                            warn=notes.append)

  unknown = [row for row in rows if row['station'] == 'station_99']
  assert len(unknown) == 4
  assert all(np.isfinite(row['p50']) for row in unknown)
  # Named all the same: a misspelt key would otherwise be forecast as a new series.
  assert notes == [f"{path}: series ['station_99'] is not among the 2 series the model was "
                   "trained on: forecast with the model's out-of-vocabulary series "
                   'embedding (as one series never seen), from the rows given']


@pytest.mark.parametrize('steps_earlier, warned', [(4, True), (3, False)])
def test_a_series_forecast_into_the_others_past_is_named(tiny, exported, first_eval_windows,
                                                         tmp_path, steps_earlier, warned):
  spec = tiny.spec
  start, _ = first_eval_windows['station_00']
  early = start - HOUR * steps_earlier  # the horizon is 4 steps
  rows = (_csv_rows(tiny, 'station_00', start, spec.encoder_steps, spec.horizon)
          + _csv_rows(tiny, 'station_01', early, spec.encoder_steps, spec.horizon))
  path = _write_csv(rows, tmp_path / 'in.csv')
  notes = []

  forecasts = prediction.predict(exported.serving_dir, path, warn=notes.append)

  assert forecasts[-spec.horizon]['timestamp'] == _time(early)  # forecast all the same
  assert notes == ([f"{path}: series 'station_01' is forecast from {_time(early)}, 4 steps "
                    f'before the newest forecasts begin ({_time(start)}): its rows end early, '
                    'so the whole forecast lies in the past of the others; give its recent '
                    'rows for a forecast from now, or ignore this for a backtest']
                   if warned else [])


def test_a_series_that_ended_early_without_future_rows_is_named_as_ended(
    tiny, exported, first_eval_windows, tmp_path):
  spec = tiny.spec
  start, _ = first_eval_windows['station_00']
  ended = start - HOUR * spec.horizon  # its rows end a horizon before the other's
  history = (_csv_rows(tiny, 'station_00', start, spec.encoder_steps, 0)
             + _csv_rows(tiny, 'station_01', ended, spec.encoder_steps, 0))
  future = _csv_rows(tiny, 'station_00', start, 0, spec.horizon)  # the current series only
  paths = (_write_csv(history, tmp_path / 'history.csv'),
           _write_csv(future, tmp_path / 'future.csv'))
  expected = (f"series 'station_01' ends at {_time(ended - HOUR)}, 4 steps before the newest "
              f'rows ({_time(start - HOUR)}), so its 4-step forecast would lie wholly in the '
              f'past: give its rows up to {_time(start - HOUR)}, or leave it out of the input')
  with pytest.raises(input_errors.StaleSeriesError, match=re.escape(f'{paths[0]}: {expected}')):
    prediction.predict(exported.serving_dir, paths[0], future_path=paths[1])
  not_forecast = []
  rows = prediction.predict(exported.serving_dir, paths[0], future_path=paths[1],
                            skip_bad_series=True, warn=lambda note: None,
                            not_forecast=not_forecast)
  assert {row['station'] for row in rows} == {'station_00'}
  assert not_forecast == [{'station': 'station_01', prediction.REASON: expected}]


def test_a_category_the_model_never_saw_is_forecast_with_a_warning(exported, good_rows,
                                                                  tmp_path, capsys):
  rows = [{**row, 'region': 'nowhere'} if row['station'] == 'station_01' else row
          for row in good_rows]
  path = _write_csv(rows, tmp_path / 'in.csv')

  code = predict.main(['--model-dir', exported.serving_dir, '--input', path])

  captured = capsys.readouterr()
  assert code == 0
  assert ("tft-predict: warning: column 'region' holds 'nowhere', a value the model was not "
          f"trained on (series 'station_01', {path} line") in captured.err
  assert {row['station'] for row in csv.DictReader(io.StringIO(captured.out))} == {
      'station_00', 'station_01'}


def _not_a_number(rows):
  first_01 = next(i for i, row in enumerate(rows) if row['station'] == 'station_01')
  return rows[:first_01] + [{**rows[first_01], 'price': 'n/a'}] + rows[first_01 + 1:]


@pytest.mark.parametrize('mutate, message', [
    (_short_history, "series 'station_01' has 11 rows with a 'load' value"),
    (_not_a_number, r"series 'station_01': .*in.csv, line \d+: column 'price'"),
    (_unknown_series, r"series \['station_99'\] is not among the 2 series"),
])
def test_with_skip_bad_series_the_other_series_are_forecast(exported, good_rows, predicted,
                                                            tmp_path, mutate, message):
  path = _write_csv(mutate(good_rows), tmp_path / 'in.csv')
  notes, not_forecast = [], []

  rows = prediction.predict(exported.serving_dir, path, skip_bad_series=True,
                            warn=notes.append, not_forecast=not_forecast)

  expected = [row for row in predicted if row['station'] == 'station_00']
  assert [row['timestamp'] for row in rows] == [row['timestamp'] for row in expected]
  for key in QUANTILE_KEYS:  # batches of another size round the last digits otherwise
    np.testing.assert_allclose([row[key] for row in rows], [row[key] for row in expected],
                               rtol=1e-5)
  [note] = notes
  assert note.startswith(f'{path}: not forecast: ') and re.search(message, note)
  [left_out] = not_forecast
  station = 'station_99' if mutate is _unknown_series else 'station_01'
  assert list(left_out) == ['station', prediction.REASON] and left_out['station'] == station
  assert left_out[prediction.REASON].startswith(f"series '{station}'")


def test_the_command_lists_the_series_it_left_out_and_says_so_by_its_exit_code(
    exported, good_rows, tmp_path, capsys):
  path = _write_csv(_short_history(good_rows), tmp_path / 'in.csv')
  output = tmp_path / 'forecasts.csv'

  code = predict.main(['--model-dir', exported.serving_dir, '--input', path, '--output',
                       str(output), '--skip-bad-series'])

  assert code == predict.PARTIAL == 3
  assert {row['station'] for row in csv.DictReader(output.open())} == {'station_00'}
  [left_out] = list(csv.DictReader((tmp_path / 'forecasts.not_forecast.csv').open()))
  assert left_out['station'] == 'station_01'
  assert "has 11 rows with a 'load' value" in left_out['reason']
  assert (f'tft-predict: 1 series not forecast, listed in {tmp_path}/forecasts.not_forecast.csv'
          in capsys.readouterr().err)
  # A later run that leaves nothing out exits 0 and leaves no list from the earlier one.
  code = predict.main(['--model-dir', exported.serving_dir, '--input',
                       _write_csv(good_rows, tmp_path / 'good.csv'), '--output', str(output),
                       '--skip-bad-series'])
  assert code == 0
  assert not (tmp_path / 'forecasts.not_forecast.csv').exists()


def test_with_skip_bad_series_no_series_left_is_an_error(exported, good_rows, tmp_path):
  path = _write_csv([{**row, 'station': 'station_99'} for row in good_rows], tmp_path / 'in.csv')

  with pytest.raises(input_errors.PredictionInputError, match='no series could be forecast'):
    prediction.predict(exported.serving_dir, path, skip_bad_series=True, warn=lambda _: None)
  # Nor when no series could even be read.
  unreadable = _write_csv([{**row, 'capacity': 'x'} for row in good_rows], tmp_path / 'bad.csv')
  with pytest.raises(input_errors.PredictionInputError, match='no series could be forecast'):
    prediction.predict(exported.serving_dir, unreadable, skip_bad_series=True,
                       warn=lambda _: None)


def _fake_model(directory):
  os.makedirs(directory)
  open(os.path.join(directory, published_models.SAVED_MODEL_FILE), 'w').close()


def test_the_newest_integer_version_is_used(tmp_path):
  for name in ('99', '1700000000', '.staging-1800000000', 'latest', '1800000000-old'):
    _fake_model(tmp_path / name)
  os.makedirs(tmp_path / '1900000000')  # being written: no saved_model.pb yet

  assert published_models.resolve_model_dir(str(tmp_path)) == str(tmp_path / '1700000000')
  assert published_models.resolve_model_dir(str(tmp_path / '99')) == str(tmp_path / '99')


def test_no_model_is_an_error(good_csv, tmp_path, capsys):
  (tmp_path / 'serving' / '.staging-1').mkdir(parents=True)
  path = good_csv

  with pytest.raises(published_models.ModelNotFoundError, match='no version subdirectory'):
    prediction.predict(str(tmp_path / 'serving'), path)
  with pytest.raises(published_models.ModelNotFoundError, match='does not exist'):
    prediction.predict(str(tmp_path / 'elsewhere'), path)
  assert predict.main(['--model-dir', str(tmp_path / 'serving'), '--input', path]) == 2
  assert 'holds no saved_model.pb' in capsys.readouterr().err
