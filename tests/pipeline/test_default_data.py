"""The generated default data set: deterministic and shaped as its spec declares."""

import filecmp

import numpy as np
import pandas as pd
import pytest

from pipeline import default_data
from schema.datasets import SYNTHETIC


@pytest.fixture(scope='module')
def frame(tmp_path_factory):
  path = tmp_path_factory.mktemp('data') / 'synthetic.csv'
  rows = default_data.generate(str(path), num_series=12, days=42, seed=0)
  table = pd.read_csv(path, parse_dates=['timestamp'])
  assert rows == len(table)
  return table


def test_same_seed_gives_identical_files_and_another_seed_differs(tmp_path):
  paths = [tmp_path / name for name in ('a.csv', 'b.csv', 'c.csv')]
  for path, seed in zip(paths, (3, 3, 4)):
    default_data.generate(str(path), num_series=3, days=3, seed=seed)
  assert filecmp.cmp(paths[0], paths[1], shallow=False)
  assert not filecmp.cmp(paths[0], paths[2], shallow=False)


def test_columns_are_the_declared_ones(frame):
  assert list(frame.columns) == [c.name for c in SYNTHETIC.columns]


def test_each_of_the_series_is_hourly_without_gaps(frame):
  assert frame['station'].nunique() == 12
  for _, series in frame.groupby('station'):
    steps = series['timestamp'].diff().dropna()
    assert (steps == pd.Timedelta(hours=1)).all()
    assert len(series) == 42 * 24


def test_static_attributes_are_constant_per_series(frame):
  per_series = frame.groupby('station')[['region', 'capacity']].nunique()
  assert (per_series == 1).all().all()
  assert frame['region'].nunique() > 1


def test_only_the_observed_covariate_has_missing_values(frame):
  missing = frame.isna().mean()
  assert set(missing[missing > 0].index) == {'temperature'}
  assert 0.005 < missing['temperature'] < 0.05


def _autocorrelation(values: np.ndarray, lag: int) -> float:
  return float(np.corrcoef(values[:-lag], values[lag:])[0, 1])


def test_load_has_daily_and_weekly_cycles(frame):
  load = frame[frame['station'] == 'station_00']['load'].to_numpy()
  daily = _autocorrelation(load, 24)
  half_day = _autocorrelation(load, 12)
  weekly = _autocorrelation(load, 168)
  three_days = _autocorrelation(load, 72)
  # Same hour a day later is similar, half a day later is not; weekends repeat weekly.
  assert daily > 0.5 and half_day < 0.0
  assert weekly > 0.9 and weekly > three_days + 0.5


def test_load_responds_to_the_known_price(frame):
  station = frame[frame['station'] == 'station_01']
  peak = station['timestamp'].dt.hour.between(17, 20)
  price_effect = station[peak]['price'].mean() - station[~peak]['price'].mean()
  assert price_effect > 0.2


def test_generate_rejects_empty_requests(tmp_path):
  with pytest.raises(ValueError, match='at least one series'):
    default_data.generate(str(tmp_path / 'x.csv'), num_series=0)


def test_the_future_file_holds_each_stations_known_price_for_the_next_hours(tmp_path):
  default_data.generate(str(tmp_path / 'data.csv'), num_series=2, days=3,
                        future_path=str(tmp_path / 'future.csv'), future_steps=30)
  data = pd.read_csv(tmp_path / 'data.csv', parse_dates=['timestamp'])
  future = pd.read_csv(tmp_path / 'future.csv', parse_dates=['timestamp'])
  assert list(future.columns) == list(data.columns)
  assert future['load'].isna().all() and future['temperature'].isna().all()
  for station, rows in future.groupby('station'):
    assert len(rows) == 30
    assert rows['timestamp'].iloc[0] == data['timestamp'].max() + pd.Timedelta(hours=1)
    assert (rows['timestamp'].diff().dropna() == pd.Timedelta(hours=1)).all()
    history = data[data['station'] == station]
    by_hour = history.groupby(history['timestamp'].dt.hour)['price'].first()
    np.testing.assert_allclose(rows['price'], by_hour[rows['timestamp'].dt.hour].to_numpy())
