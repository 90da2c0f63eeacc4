"""How often the drift check cries wolf: its findings on the suite's data, with the policy's
bounds alone and with the bounds sized from the training rows (`components.drift_check`).

None of the suite's data sets has a known break: a finding on them is a season or the
market's own swing, which a bound that names drift should let pass. Each data set goes
through `init` (as in `benchmarks.suite`), its rows are split by the drafted split
(`schema.split_placement`), and the drift check's own functions compare the judged period
(the newest rows) with the training rows: each column's distance and each series' level,
against the default policy's bound (`max_drift` 0.3, `max_level_shift` 3) and against the
sized bound. No model is trained.

  .venv/bin/python -m benchmarks.drift_bounds      # results/drift_bounds.json, ~2 min
"""

import argparse
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd
import tensorflow_data_validation as tfdv

from benchmarks import readme_tables, suite
from components import drift_check
from schema import dataset_file, split_placement
from schema.csv_values import real_value
from schema.dataset_spec import DType
from schema.features import series_key
from schema.monitoring_policy import Monitoring
from schema.time_split import judged_split

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'drift_bounds.json')


def split_rows(spec_path: str):
  """The spec's data as a table (`example_columns.frame`'s columns) and each row's split
  name."""
  dataset = dataset_file.load(spec_path)
  spec, split = dataset.spec, dataset.split
  raw = pd.read_csv(dataset.data_path, dtype=str, keep_default_na=False)
  seconds = np.array([spec.read_time(text) for text in raw[spec.time_column]], np.int64)
  keys = spec.series_key_columns
  series = np.array([series_key(list(values), spec)
                     for values in (raw[list(keys)].itertuples(index=False) if keys else [()] * len(raw))])
  ends = pd.Series(seconds).groupby(series).max().to_dict()
  index = split_placement.split_indices(seconds, split, (seconds.min(), seconds.max()), spec,
                                        series, ends)
  table = pd.DataFrame({'series': series, 'seconds': seconds})
  for name in drift_check.drift_columns(spec):
    column = raw[name]
    if spec.column(name).dtype == DType.CATEGORICAL:
      table[name] = column.where(column != '', None)
    else:
      where = f'{dataset.data_path}: column {name!r}'  # a value that is no number: named
      table[name] = np.array([real_value(text, where) for text in column], float)
  names = list(split.split_names) + ['after_end']
  return spec, table, np.array(names)[index]


def findings(spec_path: str) -> Dict[str, Any]:
  """The judged period against the training rows: each column's and level's figures and
  whether each bound names it drift."""
  spec, table, split_of = split_rows(spec_path)
  newest_split = judged_split(set(split_of) - {'after_end'})
  training = table[split_of == 'train'].reset_index(drop=True)
  newest = table[split_of == newest_split].reset_index(drop=True)
  policy = Monitoring()
  stretch = drift_check.training_stretches(training['seconds'].to_numpy(),
                                           newest['seconds'].nunique())
  within = drift_check.within_training(training, stretch, spec)
  names = drift_check.drift_columns(spec)
  distances = drift_check.column_distances(
      tfdv.generate_statistics_from_dataframe(training[names]),
      tfdv.generate_statistics_from_dataframe(newest[names]), spec)
  columns = [{'column': name, 'value': distance['value'], 'within_training': within.get(name),
              'policy_drift': distance['value'] > policy.max_drift,
              'sized_drift': distance['value'] > max(policy.max_drift, within.get(name, 0.0))}
             for name, distance in sorted(distances.items())]
  levels = drift_check.level_shifts(training, stretch, newest, spec.target_column,
                                    policy.max_level_shift)
  return {'newest_split': newest_split, 'newest_times': int(newest['seconds'].nunique()),
          'training_times': int(training['seconds'].nunique()),
          'training_stretches': int(len(np.unique(stretch[stretch >= 0]))),
          'columns': columns, 'series': len(levels),
          'levels_policy_drift': sum(s['shift_in_std'] > policy.max_level_shift
                                     for s in levels),
          'levels_sized_drift': sum(s['drift'] for s in levels),
          'largest_level_shift': max((s['shift_in_std'] for s in levels), default=None)}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--datasets', nargs='+', default=list(suite.DATASETS),
                      choices=list(suite.DATASETS))
  parser.add_argument('--output', default=RESULTS)
  args = parser.parse_args(argv)
  results = {}
  with tempfile.TemporaryDirectory() as work_dir:
    for name in args.datasets:
      directory = os.path.join(work_dir, name)
      os.makedirs(directory)
      results[name] = findings(suite.draft_spec(suite.DATASETS[name], directory))
      flagged = [c['column'] for c in results[name]['columns'] if c['policy_drift']]
      sized = [c['column'] for c in results[name]['columns'] if c['sized_drift']]
      print(f'{name}: columns drifted by the policy bound {flagged}, by the sized bound '
            f'{sized}; levels {results[name]["levels_policy_drift"]} / '
            f'{results[name]["levels_sized_drift"]} of {results[name]["series"]}', flush=True)
  readme_tables.write_results(args.output, {
      'benchmark': 'drift_bounds', 'command': 'python -m benchmarks.drift_bounds',
      'policy': Monitoring().to_dict(), 'datasets': results})
  return 0


if __name__ == '__main__':
  sys.exit(main())
