"""Drift before training: a column whose distribution moved, a series whose level moved,
series that appeared or vanished; the policy warns or stops the run, naming them."""

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


def _rows(levels, hours, seed):
  """Rows of each series at `levels` (series -> mean load) over `hours`."""
  rng = np.random.RandomState(seed)
  return [{'station': station, 'timestamp': str(pd.Timestamp('2024-01-01') +
                                                pd.Timedelta(hours=hour)),
           'load': f'{level + rng.normal(0, 1):.3f}', 'region': 'north', 'capacity': '50',
           'price': f'{1 + 0.1 * rng.uniform():.3f}', 'temperature': f'{rng.normal(20, 2):.2f}'}
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
  assert re.search(r"'s2' from 30\.\d+ to 49\.\d+ \(2\d\.\d std\)", text)
  assert 'max_level_shift' in text
  assert "column 'load': Jensen-Shannon divergence" in text


def test_with_drift_fail_the_run_stops_naming_the_column_and_the_shift(shifted, caplog):
  statistics, examples = shifted
  report = drift_check.check(statistics, examples, SPEC, 'test', Monitoring(drift='fail'))
  with pytest.raises(drift_check.DataDriftError) as raised:
    drift_check.enforce(report, Monitoring(drift='fail'))
  message = str(raised.value)
  assert 'stops before training' in message and "column 'load'" in message
  assert re.search(r"'s2' from 30\.\d+ to 49\.\d+ \(2\d\.\d std\)", message)
  drift_check.enforce(report, Monitoring())  # warn: logged, the run goes on
  assert "Drift: column 'load'" in caplog.text


def test_rows_like_the_training_rows_are_not_drift(tmp_path):
  _split(tmp_path, 'train', _rows({'s1': 10.0, 's2': 30.0}, range(200), seed=1))
  _split(tmp_path, 'eval', _rows({'s1': 10.0, 's2': 30.0}, range(200, 260), seed=2))
  report = drift_check.check(str(tmp_path / 'statistics'), str(tmp_path / 'examples'),
                             SPEC, 'eval', Monitoring(drift='fail'))
  assert report['findings'] == []
  drift_check.enforce(report, Monitoring(drift='fail'))
