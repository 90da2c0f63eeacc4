"""Calendar features on the local clock (`time_zone`) against UTC, on load that follows it.

Generated hourly load of a few areas in one zone (Europe/Berlin by default): a daily
profile by the local hour, lower on local weekends, with noise; its times are written
with their UTC offsets, as a local export is. Two scenarios, each a fresh pipeline run
(`benchmarks.pipeline_run`) with the calendar features in UTC and one with the spec's
`time_zone`, seeded alike, everything else the same:

- across a clock change: the eval weeks follow the spring clock change, the training
  weeks mostly precede it, so a UTC hour means another local hour in eval than in most
  of training;
- without one: the data end before it (the control: the two clocks differ by a constant
  hour, and either should serve alike).

  .venv/bin/python -m benchmarks.time_zone       # four runs: results/time_zone.json
"""

import argparse
import os
import sys
from typing import Any, Dict, List, Optional

import numpy as np
import pandas as pd

from benchmarks import host, pipeline_run, readme_tables
from pipeline.config import default_strides
from schema.dataset_file import Blessing
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.frequency import Frequency
from schema.time_split import TimeSplit

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'time_zone.json')
ZONE = 'Europe/Berlin'
AREAS = 6
FIRST_DAY, LAST_DAY = '2024-01-08', '2024-05-05'  # the clock moved on 2024-03-31
# Scenario: (eval_start, end); rows from `end` on are left out.
SCENARIOS = {'across a clock change': ('2024-04-08', None),
             'without one': ('2024-03-04', '2024-03-30')}
TRAIN_STEPS = 1000
SEED = 7
# Relative load by local hour: low at night, a morning and a higher evening peak.
_PROFILE = np.array([0.62, 0.58, 0.56, 0.55, 0.56, 0.62, 0.75, 0.90, 0.98, 0.97, 0.95, 0.94,
                     0.93, 0.92, 0.91, 0.92, 0.96, 1.05, 1.15, 1.18, 1.10, 0.95, 0.80, 0.70])


def generate(path: str, seed: int = 0) -> int:
  """Writes the load CSV (area, time with its UTC offset, load_mw) to `path`; its rows."""
  rng = np.random.default_rng(seed)
  times = pd.date_range(FIRST_DAY, LAST_DAY, freq='h', tz=ZONE, inclusive='left')
  local_hour, weekend = times.hour.to_numpy(), times.dayofweek.to_numpy() >= 5
  frames = []
  for area in range(AREAS):
    level = 80.0 + 30.0 * area
    load = level * _PROFILE[local_hour] * np.where(weekend, 0.85, 1.0)
    load += rng.normal(0.0, 0.03 * level, len(times))
    frames.append(pd.DataFrame({'area': f'area_{area}', 'time': [t.isoformat() for t in times],
                                'load_mw': np.round(load, 2)}))
  data = pd.concat(frames)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  data.to_csv(path, index=False)
  return len(data)


def spec(time_zone: Optional[str]) -> DatasetSpec:
  return DatasetSpec(
      name='local_clock', frequency=Frequency('hourly'), encoder_steps=168, horizon=24,
      calendar_features=('hour_of_day', 'day_of_week'), forecast_floor=0.0,
      time_zone=time_zone,
      columns=(Column('area', Role.SERIES_KEY, DType.CATEGORICAL),
               Column('time', Role.TIME, DType.CATEGORICAL),
               Column('load_mw', Role.TARGET, DType.REAL)))


def run_pair(scenario: str, eval_start: str, end: Optional[str], data_file: str,
             work_dir: str, train_steps: int) -> Dict[str, Any]:
  """The scenario's two runs, calendar in UTC and on the zone's clock; their eval figures."""
  runs = {}
  for clock, time_zone in (('UTC', None), (ZONE, ZONE)):
    split = TimeSplit(eval_start=eval_start, end=end)
    config = pipeline_run.new_config(
        os.path.join(work_dir, f'{eval_start}-{"utc" if time_zone is None else "local"}'),
        data_file, dataset=spec(time_zone), time_split=split, blessing=Blessing(),
        strides=default_strides(spec(time_zone), split), train_steps=train_steps,
        training_options={'seed': SEED})
    metrics = pipeline_run.run(config).eval_metrics
    naive = {name: value for name, value in metrics.items() if name.startswith('naive_mae_')}
    runs[clock] = {'mae': metrics['mean_absolute_error'],
                   'q_risk_p50': metrics['q_risk_p50'], 'q_risk_p90': metrics['q_risk_p90'],
                   'coverage_p10_p90': metrics['coverage_p10_p90'],
                   'eval_windows': int(metrics['example_count']),
                   'best_naive_mae': min(naive.values())}
    print(f'  {scenario}, calendar on {clock}: eval MAE {runs[clock]["mae"]:.3f} (best '
          f'naive {runs[clock]["best_naive_mae"]:.3f})', flush=True)
  return {'scenario': scenario, 'eval_start': eval_start, 'end': end, 'runs': runs}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--train-steps', type=int, default=TRAIN_STEPS)
  parser.add_argument('--work-dir', default=os.path.join(readme_tables.PROJECT_ROOT, 'runs',
                                                         'benchmarks', 'time_zone'))
  parser.add_argument('--output', default=RESULTS)
  args = parser.parse_args(argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # for the child processes
  data_file = os.path.join(args.work_dir, 'data', 'local_clock.csv')
  rows = generate(data_file)
  pairs = [run_pair(scenario, eval_start, end, data_file, args.work_dir, args.train_steps)
           for scenario, (eval_start, end) in SCENARIOS.items()]
  readme_tables.write_results(args.output, {
      'benchmark': 'time_zone', 'host': host.description(), 'zone': ZONE, 'areas': AREAS,
      'rows': rows, 'days': [FIRST_DAY, LAST_DAY], 'train_steps': args.train_steps,
      'seed': SEED, 'scenarios': pairs})
  return 0


if __name__ == '__main__':
  sys.exit(main())
