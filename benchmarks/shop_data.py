"""The own-data test's shop data: daily sales of six stores in two regions.

Unlike the built-in sets: daily rows, other column names, two key columns (store numbers
repeat across regions), a known promotion flag, an observed column with missing values
written as 'NA' and empty, a decimal static column, and a UTF-8 byte-order mark (Excel's
export). `tests/pipeline/test_own_data.py` runs it end to end; `benchmarks.suite` scores it.
"""

import csv
import datetime

import numpy as np

HEADER = ['day', 'region_code', 'store_no', 'floor_m2', 'promo_flag', 'footfall',
          'units_sold']
DAYS = 200
FIRST_DAY = datetime.date(2023, 1, 2)
WEEKLY = (1.0, 0.9, 0.95, 1.0, 1.2, 1.5, 0.6)  # Monday to Sunday
STORES = [(region, store) for region in ('N', 'S') for store in (1, 2, 3)]
HORIZON = 7  # init's default for daily data


def level(region, store):
  """A store's mean daily sales before its weekly cycle and promotions."""
  return 50 + 20 * store + (10 if region == 'S' else 0)


def area(region, store):
  """A store's floor area in square metres (the static decimal column)."""
  return 100.5 * store + (50 if region == 'S' else 0)


def write_sales(path):
  """Daily sales: a weekly cycle, promotions that lift sales by 60%, noise."""
  rng = np.random.RandomState(3)
  with open(path, 'w', newline='', encoding='utf-8-sig') as f:
    writer = csv.writer(f)
    writer.writerow(HEADER)
    for region, store in STORES:
      for offset in range(DAYS):
        day = FIRST_DAY + datetime.timedelta(days=offset)
        promo = int(rng.uniform() < 0.2)
        units = (level(region, store) * WEEKLY[day.weekday()] * (1.6 if promo else 1.0)
                 + rng.normal(0, 2))
        footfall = rng.choice(['NA', '', f'{3 * units + rng.normal(0, 5):.1f}'],
                              p=[0.05, 0.02, 0.93])
        writer.writerow([day.isoformat(), region, store, area(region, store), promo,
                         footfall, f'{units:.2f}'])


def write_future(path):
  """The known column over the 7 days after the data: a promotion on the third."""
  with open(path, 'w', newline='') as f:
    writer = csv.writer(f)
    writer.writerow(HEADER)
    for region, store in STORES:
      for step in range(1, HORIZON + 1):
        day = FIRST_DAY + datetime.timedelta(days=DAYS - 1 + step)
        writer.writerow([day.isoformat(), region, store, area(region, store),
                         int(step == 3), '', ''])
