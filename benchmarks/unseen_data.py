"""Real data sets outside the development suite, written as CSV files for `benchmarks.suite
--csv`: a check that the defaults hold on data nothing was tuned on.

They come from the `vega_datasets` package (BSD-3-Clause), which carries them in its wheel
(`pip install vega_datasets` in the project's venv; the project itself does not need it):

  city_temps.csv       hourly temperature (F) of Seattle and San Francisco in 2010, 2 series
                       of 8,759 hours (`seattle-temps`, `sf-temps`); horizon 24 hours
  us_employment.csv    US employees (thousands) by industry, monthly 2006 to 2015, 21 series
                       of 120 months (`us-employment`, without the nonfarm total and its
                       change); horizon 6 months
  seattle_weather.csv  Seattle's daily weather 2012 to 2015, one series of 1,461 days;
                       target the day's highest temperature (C); its `weather` column (sun,
                       rain, snow) is not known a week ahead, so the run removes it
                       (`seattle-weather`); horizon 7 days

  .venv/bin/python -m benchmarks.unseen_data /tmp/unseen
  .venv/bin/python -m benchmarks.suite --csv /tmp/unseen/city_temps.csv --target temp \\
      --horizon 24 --output /tmp/unseen/city_temps.json
"""

import argparse
import os
import sys
from typing import List, Optional

# Each file's name: its target, the horizon its domain asks for, and the answers to
# `init`'s CHECK lines (`benchmarks.suite --role`).
DATASETS = {'city_temps': ('temp', 24, ()), 'us_employment': ('employees', 6, ()),
            'seattle_weather': ('temp_max', 7, ('weather=none',))}


def write(directory: str) -> List[str]:
  """Writes each data set's CSV into `directory`; their paths."""
  try:
    import pandas as pd
    from vega_datasets import local_data
  except ImportError:
    raise SystemExit('needs the vega_datasets package: .venv/bin/pip install vega_datasets')
  os.makedirs(directory, exist_ok=True)
  temps = pd.concat([local_data.seattle_temps().assign(city='seattle'),
                     local_data.sf_temps().assign(city='san_francisco')])
  employment = local_data.us_employment().drop(columns=['nonfarm', 'nonfarm_change']).melt(
      id_vars='month', var_name='industry', value_name='employees')
  tables = {'city_temps': temps[['city', 'date', 'temp']],
            'us_employment': employment[['industry', 'month', 'employees']],
            'seattle_weather': local_data.seattle_weather()}
  paths = []
  for name, table in tables.items():
    paths.append(os.path.join(directory, f'{name}.csv'))
    table.to_csv(paths[-1], index=False)
  return paths


def main(argv: Optional[List[str]] = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('directory')
  args = parser.parse_args(argv)
  for path in write(args.directory):
    target, horizon, roles = DATASETS[os.path.splitext(os.path.basename(path))[0]]
    answers = f' --role {" ".join(roles)}' if roles else ''
    print(f'{path}: .venv/bin/python -m benchmarks.suite --csv {path} --target {target} '
          f'--horizon {horizon}{answers} --output {os.path.splitext(path)[0]}.json')


if __name__ == '__main__':
  main(sys.argv[1:])
