"""The project's default data set: synthetic hourly load of several stations.

Deterministic for a given seed. Each station's load has a trend, a daily and a weekly
cycle, a response to a known-future price and to an observed temperature, and noise.
Columns follow `schema.datasets.SYNTHETIC`; some temperature readings are missing.
"""

import csv
import datetime
import os
from typing import Optional

import numpy as np

from schema.datasets import SYNTHETIC

REGIONS = ('north', 'south', 'east')
START = datetime.datetime(2024, 1, 1)
MISSING_TEMPERATURE_SHARE = 0.02


def generate(path: str, num_series: int = 12, days: int = 100, seed: int = 0,
             future_path: Optional[str] = None, future_steps: int = 0) -> int:
  """Writes the default data set as CSV to `path` and returns the number of rows.

  With `future_path`, also writes the `future_steps` hours after the data there: the
  known price of each station, the load and temperature empty (the forecast's input).
  """
  if num_series < 1 or days < 1:
    raise ValueError(f'need at least one series and one day, got num_series={num_series}, '
                     f'days={days}')
  rng = np.random.RandomState(seed)
  hours = np.arange(days * 24)
  hour_of_day = hours % 24
  day_of_week = (hours // 24 + START.weekday()) % 7
  timestamps = [(START + datetime.timedelta(hours=int(h))).isoformat(sep=' ') for h in hours]
  columns = [c.name for c in SYNTHETIC.columns]
  rows = 0
  futures = []
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(columns)
    for series in range(num_series):
      region = REGIONS[series % len(REGIONS)]
      capacity = 50.0 + 10.0 * series
      daily = np.sin(2 * np.pi * (hour_of_day - 6 - series % 4) / 24)
      weekly = np.where(day_of_week >= 5, -0.25, 0.05)
      temperature = (10 + 8 * np.sin(2 * np.pi * (hours / 24 - 20) / 365) +
                     4 * np.sin(2 * np.pi * (hour_of_day - 9) / 24) + rng.normal(0, 1, hours.size))
      price_offset = rng.uniform(-0.1, 0.1, 1)
      price = _price(hour_of_day, price_offset)
      trend = 1.0 + rng.uniform(-0.2, 0.4) * hours / hours.size
      load = capacity * trend * (0.6 + 0.2 * daily + weekly - 0.3 * (price - 1.0)
                                 + 0.01 * np.abs(temperature - 15))
      load = load + rng.normal(0, 0.02 * capacity, hours.size)
      missing = rng.uniform(size=hours.size) < MISSING_TEMPERATURE_SHARE
      for h in range(hours.size):
        writer.writerow([
            f'station_{series:02d}', timestamps[h], f'{load[h]:.4f}', region, f'{capacity:.1f}',
            f'{price[h]:.4f}', '' if missing[h] else f'{temperature[h]:.3f}'])
        rows += 1
      futures.append((f'station_{series:02d}', region, capacity, price_offset))
  if future_path:
    _write_future(future_path, columns, futures, days, future_steps)
  return rows


def _price(hour_of_day: np.ndarray, offset: np.ndarray) -> np.ndarray:
  """The known-future price: a peak from 17:00 to 21:00, a per-station offset."""
  return 1.0 + 0.3 * (hour_of_day >= 17) * (hour_of_day < 21) + offset


def _write_future(path: str, columns, stations, days: int, steps: int) -> None:
  hours = days * 24 + np.arange(steps)
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(columns)
    for station, region, capacity, offset in stations:
      price = _price(hours % 24, offset)
      for hour, value in zip(hours, price):
        moment = START + datetime.timedelta(hours=int(hour))
        writer.writerow([station, moment.isoformat(sep=' '), '', region, f'{capacity:.1f}',
                         f'{value:.4f}', ''])
