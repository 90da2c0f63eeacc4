"""What the refit costs and gains: a backtest whose origins each also refit their TFT.

Runs `tft-pipeline backtest --refit --origins K`: at each origin the judged TFT (trained
before its eval period, its epoch chosen there) and its refit (the same epochs on every
row before the origin, the judged calibration) forecast the H steps after the origin,
which neither saw. Writes `results/refit_gain.json`: each model's MAE and coverage, the
paired comparison of the refit with the judged TFT (sign test over the windows), and
what the refit cost: the Refit's seconds against the Trainer's and the whole run's, per
origin, from each origin's metadata store. With `--with-run`, one plain run of the
pipeline first: what the backtest costs against it, with and without its refits.

  .venv/bin/python -m benchmarks.refit_gain                         # the default data
  .venv/bin/python -m benchmarks.refit_gain --dataset stallion --with-run --output \\
      benchmarks/results/refit_gain_stallion.json
"""

import json
import os
from typing import Any, Dict, List

from benchmarks import backtest_cost
from benchmarks.backtest_cost import TFT_PIPELINE, timed


def component_seconds(origin_dir: str, pipeline_name: str) -> Dict[str, float]:
  """Seconds per component of one origin's run, read from its metadata store."""
  from tfx import v1 as tfx
  from pipeline import run_summary

  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(origin_dir, 'metadata.sqlite'))
  summary = run_summary.latest_run_summary(metadata, pipeline_name)
  return {run.node_id: round(run.seconds, 1) for run in summary.components}


def measure(dataset: str, origins: int, options: List[str], work_dir: str,
            with_run: bool = False) -> Dict[str, Any]:
  """The refit backtest of `dataset`: its figures and what the refit cost per origin;
  `with_run`: and against one plain run."""
  run_seconds = None
  if with_run:
    run_seconds = timed([TFT_PIPELINE, '--dataset', dataset, *options, '--output-dir',
                         os.path.join(work_dir, 'run')], os.path.join(work_dir, 'run.log'))
  seconds = timed([TFT_PIPELINE, 'backtest', '--dataset', dataset, *options, '--refit',
                   '--origins', str(origins), '--output-dir', work_dir],
                  os.path.join(work_dir, 'backtest.log'))
  result = collect(dataset, origins, options, work_dir, seconds)
  if run_seconds is not None:
    refits = sum(cost['refit_seconds'] for cost in result['cost_by_origin'])
    result.update(run_seconds=round(run_seconds, 1),
                  backtest_over_run=round(seconds / run_seconds, 2),
                  backtest_without_refits_over_run=round((seconds - refits) / run_seconds, 2))
  return result


def collect(dataset: str, origins: int, options: List[str], work_dir: str,
            seconds: float) -> Dict[str, Any]:
  """The figures and costs of the refit backtest in `work_dir` (`measure`'s)."""
  out = os.path.join(work_dir, dataset, 'backtest')
  with open(os.path.join(out, 'summary.json'), encoding='utf-8') as f:
    summary = json.load(f)
  costs = []
  for number in summary['origins']:
    components = component_seconds(os.path.join(out, f'origin-{number}'),
                                   f'tft-{dataset}-backtest-{number}')
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
  parser = backtest_cost.arguments(__doc__.splitlines()[0], 'refit_gain.json')
  parser.add_argument('--with-run', action='store_true',
                      help='time one plain run of the pipeline first')
  args = parser.parse_args()
  result = backtest_cost.write_measured(args, lambda options, work_dir: measure(
      args.dataset, args.origins, options, work_dir, args.with_run))
  print(json.dumps({'mae': result['backtest']['mae'],
                    'refit_share_of_run': result['refit_share_of_run']}, indent=2))


if __name__ == '__main__':
  main()
