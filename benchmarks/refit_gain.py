"""What the refit costs and gains: a backtest whose origins each also refit their TFT.

Runs `tft-pipeline backtest --refit --origins K`: at each origin the judged TFT (trained
before its eval period, its epoch chosen there) and its refit (the same epochs on every
row before the origin, the judged calibration) forecast the H steps after the origin,
which neither saw. Writes `results/refit_gain.json`: each model's MAE and coverage, the
paired comparison of the refit with the judged TFT (sign test over the windows), and
what the refit cost: the Refit's seconds against the Trainer's and the whole run's, per
origin, from each origin's metadata store.

  .venv/bin/python -m benchmarks.refit_gain                         # the default data
  .venv/bin/python -m benchmarks.refit_gain --dataset stallion --output \\
      benchmarks/results/refit_gain_stallion.json
"""

import argparse
import json
import os
import tempfile
from typing import Any, Dict, List

from benchmarks import host, readme_tables
from benchmarks.backtest_cost import TFT_PIPELINE, timed


def component_seconds(origin_dir: str, pipeline_name: str) -> Dict[str, float]:
  """Seconds per component of one origin's run, read from its metadata store."""
  from tfx import v1 as tfx
  from pipeline import run_summary

  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(origin_dir, 'metadata.sqlite'))
  summary = run_summary.latest_run_summary(metadata, pipeline_name)
  return {run.node_id: round(run.seconds, 1) for run in summary.components}


def measure(dataset: str, origins: int, options: List[str], work_dir: str) -> Dict[str, Any]:
  """The refit backtest of `dataset`: its figures and what the refit cost per origin."""
  seconds = timed([TFT_PIPELINE, 'backtest', '--dataset', dataset, *options, '--refit',
                   '--origins', str(origins), '--output-dir', work_dir],
                  os.path.join(work_dir, 'backtest.log'))
  out = os.path.join(work_dir, dataset, 'backtest')
  with open(os.path.join(out, 'summary.json'), encoding='utf-8') as f:
    summary = json.load(f)
  costs = []
  for number in summary['origins']:
    components = component_seconds(os.path.join(out, f'origin-{number}'),
                                   f'{dataset}-backtest-{number}')
    costs.append({'origin': number, 'trainer_seconds': components['Trainer'],
                  'refit_seconds': components['Refit'],
                  'run_seconds': round(sum(components.values()), 1)})
  refit_share = sum(c['refit_seconds'] for c in costs) / sum(c['run_seconds'] for c in costs)
  return {
      'dataset': dataset, 'options': options, 'origins': origins,
      'backtest_seconds': round(seconds, 1), 'cost_by_origin': costs,
      'refit_share_of_run': round(refit_share, 3),
      'backtest': {key: summary[key] for key in ('windows', 'mae', 'mae_by_origin', 'coverage',
                                                 'best_naive', 'comparisons',
                                                 'origin_starts')},
  }


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--dataset', default='synthetic')
  parser.add_argument('--origins', type=int, default=3)
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--output', default=os.path.join(readme_tables.RESULTS_DIR,
                                                       'refit_gain.json'))
  parser.add_argument('--work-dir', help='keep the runs and their logs here (default: a '
                      'temporary directory, removed)')
  args = parser.parse_args()
  options = ['--seed', str(args.seed), '--no-warm-start']
  if args.work_dir:
    os.makedirs(args.work_dir, exist_ok=True)
    result = measure(args.dataset, args.origins, options, args.work_dir)
  else:
    with tempfile.TemporaryDirectory() as work_dir:
      result = measure(args.dataset, args.origins, options, work_dir)
  result.update(host=host.description(), commit=host.commit())
  with open(args.output, 'w', encoding='utf-8') as f:
    json.dump(result, f, indent=2)
  print(json.dumps({'mae': result['backtest']['mae'],
                    'refit_share_of_run': result['refit_share_of_run']}, indent=2))


if __name__ == '__main__':
  main()
