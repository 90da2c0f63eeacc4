"""Drift before training: a column whose distribution moved, a series whose level moved,
series that appeared or vanished; the policy warns or stops the run, naming them. A
column or level that moves no more than it does between stretches of the training rows
(a season) is not drift."""

import re

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
import tensorflow_data_validation as tfdv

from components import drift_check, input_rows
from schema import datasets
from schema.monitoring_policy import Monitoring

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)


def _rows(levels, hours, seed, season=lambda hour: 0.0):
  """Rows of each series at `levels` (series -> mean load) over `hours`; the temperature
  around 20 plus `season(hour)`."""
  rng = np.random.RandomState(seed)
  return [{'station': station, 'timestamp': str(pd.Timestamp('2024-01-01') +
                                                pd.Timedelta(hours=hour)),
           'load': f'{level + rng.normal(0, 1):.3f}', 'region': 'north', 'capacity': '50',
           'price': f'{1 + 0.1 * rng.uniform():.3f}',
           'temperature': f'{20 + season(hour) + rng.normal(0, 2):.2f}'}
          for station, level in levels.items() for hour in hours]


def _split(root, name, rows):
  """A split of ExampleGen's records and StatisticsGen's statistics of it."""
  examples = root / 'examples' / f'Split-{name}'
  examples.mkdir(parents=True)
  with tf.io.TFRecordWriter(str(examples / 'rows.gz'), tf.io.TFRecordOptions('GZIP')) as w:
    for row in rows:
      w.write(input_rows.parse_row(row, SPEC, 'x').SerializeToString())
  statistics = root / 'statistics' / f'Split-{name}'
  statistics.mkdir(parents=True)
  frame = pd.DataFrame(rows)
  for column in ('load', 'price', 'temperature'):
    frame[column] = frame[column].astype(float)
  stats = tfdv.generate_statistics_from_dataframe(frame)
  (statistics / 'FeatureStats.pb').write_bytes(stats.SerializeToString())


@pytest.fixture
def shifted(tmp_path):
  _split(tmp_path, 'train', _rows({'s1': 10.0, 's2': 30.0}, range(200), seed=1))
  _split(tmp_path, 'test', _rows({'s1': 10.0, 's2': 50.0, 's3': 10.0}, range(200, 260), seed=2))
  return str(tmp_path / 'statistics'), str(tmp_path / 'examples')


def test_a_shifted_level_and_a_new_series_are_reported_as_drift(shifted):
  statistics, examples = shifted
  report = drift_check.check(statistics, examples, SPEC, 'test', Monitoring())
  [s2, s1] = report['levels']
  assert (s2['series'], s2['drift'], s1['drift']) == ('s2', True, False)
  assert s2['newest_mean'] - s2['training_mean'] == pytest.approx(20, abs=0.5)
  assert s2['shift_in_std'] > 10
  assert report['appeared'] == ['s3'] and report['vanished'] == []
  load = next(c for c in report['columns'] if c['column'] == 'load')
  assert load['drift'] and load['measure'] == 'Jensen-Shannon divergence'
  price = next(c for c in report['columns'] if c['column'] == 'price')
  assert not price['drift']
  text = '\n'.join(report['findings'])
  assert re.search(r"'s2' from 30\.\d+ to 49\.\d+ \(2\d\.\d std, above 3 \(monitoring: "
                   r"max_level_shift; stretches of the training rows as long as the newest "
                   r"moved at most 0\.\d+ from the rest\)\)", text)
  assert "column 'load': Jensen-Shannon divergence" in text


def test_with_drift_fail_the_run_stops_naming_the_column_and_the_shift(shifted, caplog):
  statistics, examples = shifted
  report = drift_check.check(statistics, examples, SPEC, 'test', Monitoring(drift='fail'))
  with pytest.raises(drift_check.DataDriftError) as raised:
    drift_check.enforce(report, Monitoring(drift='fail'))
  message = str(raised.value)
  assert 'stops before training' in message and "column 'load'" in message
  assert re.search(r"'s2' from 30\.\d+ to 49\.\d+ \(2\d\.\d std, above 3 ", message)
  drift_check.enforce(report, Monitoring())  # warn: logged, the run goes on
  assert "Drift: column 'load'" in caplog.text


def test_rows_like_the_training_rows_are_not_drift(tmp_path):
  _split(tmp_path, 'train', _rows({'s1': 10.0, 's2': 30.0}, range(200), seed=1))
  _split(tmp_path, 'eval', _rows({'s1': 10.0, 's2': 30.0}, range(200, 260), seed=2))
  report = drift_check.check(str(tmp_path / 'statistics'), str(tmp_path / 'examples'),
                             SPEC, 'eval', Monitoring(drift='fail'))
  assert report['findings'] == []
  assert drift_check.describe(report) == [
      'none: the eval rows are like the training rows (max_drift 0.3, max_level_shift 3, or '
      'as far as 3 stretches of the training rows as long moved from the rest, where '
      'farther)']
  drift_check.enforce(report, Monitoring(drift='fail'))


def _seasonal(hour):
  """A temperature season of 120 hours: 24 degrees warmer at its peak than its trough."""
  return 12 * np.sin(2 * np.pi * hour / 120)


def test_a_season_the_training_rows_show_is_not_drift_and_a_move_beyond_it_is(tmp_path):
  _split(tmp_path / 'like', 'train', _rows({'s1': 10.0}, range(480), 1, _seasonal))
  _split(tmp_path / 'like', 'test', _rows({'s1': 10.0}, range(480, 540), 2, _seasonal))
  report = drift_check.check(str(tmp_path / 'like' / 'statistics'),
                             str(tmp_path / 'like' / 'examples'), SPEC, 'test', Monitoring())
  temperature = next(c for c in report['columns'] if c['column'] == 'temperature')
  # The newest half-season differs from the whole year by more than max_drift, and by no
  # more than the training rows' own stretches of 60 hours differ from the rest of them.
  assert temperature['value'] > 0.3 and report['training_stretches'] == 8
  assert temperature['within_training'] >= temperature['value']
  assert temperature['bound'] == temperature['within_training']
  assert not temperature['drift'] and report['findings'] == []

  hotter = lambda hour: _seasonal(hour) + (25 if hour >= 480 else 0)
  _split(tmp_path / 'hot', 'train', _rows({'s1': 10.0}, range(480), 1, hotter))
  _split(tmp_path / 'hot', 'test', _rows({'s1': 10.0}, range(480, 540), 2, hotter))
  report = drift_check.check(str(tmp_path / 'hot' / 'statistics'),
                             str(tmp_path / 'hot' / 'examples'), SPEC, 'test', Monitoring())
  temperature = next(c for c in report['columns'] if c['column'] == 'temperature')
  assert temperature['drift'] and temperature['value'] > temperature['within_training']
  [line] = report['findings']
  assert re.fullmatch(r"column 'temperature': Jensen-Shannon divergence [\d.]+ between the "
                      r"training and the newest rows, above 0\.\d+, the most a stretch of "
                      r"the training rows as long as the newest moved from the rest "
                      r"\(monitoring: max_drift 0\.3\)", line)


def test_a_level_is_judged_against_how_far_its_training_stretches_moved():
  hours = np.arange(400)
  seasonal = 10 + 5 * np.sin(2 * np.pi * hours / 100)  # a half-season's mean moves 1 std
  training = pd.DataFrame({'series': 's1', 'seconds': hours * 3600, 'load': seasonal})
  stretch = drift_check.training_stretches(training['seconds'].to_numpy(), 50)
  assert sorted(set(stretch)) == list(range(8))
  for level, drifted in ((13.0, False), (40.0, True)):  # 0.85 std and 8.5 std
    newest = pd.DataFrame({'series': 's1', 'seconds': (400 + hours[:50]) * 3600,
                           'load': level})
    [shift] = drift_check.level_shifts(training, stretch, newest, 'load', 0.5)
    assert shift['within_training'] == pytest.approx(1.0, abs=0.1)
    assert shift['bound'] == shift['within_training'] and shift['drift'] is drifted


def test_stretches_run_back_from_the_last_training_time_and_need_two():
  stretch = drift_check.training_stretches(np.arange(10) * 3600, 3)
  # From the end: hours 7-9, 4-6, 1-3; hour 0, a stretch cut short, is in none.
  assert list(stretch) == [-1, 2, 2, 2, 1, 1, 1, 0, 0, 0]
  assert set(drift_check.training_stretches(np.arange(10) * 3600, 6)) == {-1}
  assert set(drift_check.training_stretches(np.arange(10) * 3600, 0)) == {-1}
