"""What a backtest of K origins costs against one run of the pipeline, and what it finds.

Runs `tft-pipeline` once and `tft-pipeline backtest --origins K` on the same data and
options, one after the other in fresh output directories, and writes
`results/backtest_cost.json`: each command's wall time, their ratio, the one run's
held-out test MAE beside the backtest's figures (MAE per model, the comparisons and their
sign tests), with the host and commit.

  .venv/bin/python -m benchmarks.backtest_cost                      # the default data
  .venv/bin/python -m benchmarks.backtest_cost --dataset stallion --output \\
      benchmarks/results/backtest_cost_stallion.json
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List

from benchmarks import host, readme_tables

TFT_PIPELINE = os.path.join(os.path.dirname(sys.executable), 'tft-pipeline')
_TEST_MAE = re.compile(r'MAE beside [\w ]*?the naive forecasts: model (?P<model>[\d.e+-]+)'
                       r'(?: \| LightGBM (?P<gbm>[\d.e+-]+))?')


def timed(command: List[str], log_path: str) -> float:
  """Runs `command`, its output into `log_path`; its wall time in seconds.

  Raises:
    SystemExit: the command failed, naming its log.
  """
  started = time.monotonic()
  with open(log_path, 'w', encoding='utf-8') as log:
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
  if done.returncode:
    raise SystemExit(f'{" ".join(command)} exited {done.returncode}; see {log_path}')
  return time.monotonic() - started


def measure(dataset: str, origins: int, options: List[str], work_dir: str) -> Dict[str, Any]:
  """One run and one backtest of `dataset` with `options`; their times and figures."""
  base = [TFT_PIPELINE, '--dataset', dataset, *options]
  run_seconds = timed([*base, '--output-dir', os.path.join(work_dir, 'run')],
                      os.path.join(work_dir, 'run.log'))
  with open(os.path.join(work_dir, 'run.log'), encoding='utf-8') as f:
    held_out = _TEST_MAE.search(f.read())
  backtest_seconds = timed(
      [TFT_PIPELINE, 'backtest', '--dataset', dataset, *options, '--origins', str(origins),
       '--output-dir', os.path.join(work_dir, 'backtest')],
      os.path.join(work_dir, 'backtest.log'))
  with open(os.path.join(work_dir, 'backtest', dataset, 'backtest', 'summary.json'),
            encoding='utf-8') as f:
    summary = json.load(f)
  return {
      'dataset': dataset, 'options': options, 'origins': origins,
      'run_seconds': round(run_seconds, 1), 'backtest_seconds': round(backtest_seconds, 1),
      'backtest_over_run': round(backtest_seconds / run_seconds, 2),
      'run_test_mae': {'tft': float(held_out['model']),
                       'lightgbm': float(held_out['gbm']) if held_out['gbm'] else None}
      if held_out else None,
      'backtest': {key: summary[key] for key in ('windows', 'mae', 'coverage', 'best_naive',
                                                 'comparisons', 'origin_starts')},
  }


def arguments(description: str, output_name: str) -> argparse.ArgumentParser:
  """The flags of a backtest benchmark: the data set, origins, seed, output and work dir."""
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument('--dataset', default='synthetic')
  parser.add_argument('--origins', type=int, default=3)
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--output', default=os.path.join(readme_tables.RESULTS_DIR, output_name))
  parser.add_argument('--work-dir', help='keep the runs and their logs here (default: a '
                      'temporary directory, removed)')
  return parser


def write_measured(args: argparse.Namespace,
                   measure_in: Callable[[List[str], str], Dict[str, Any]]) -> Dict[str, Any]:
  """`measure_in(options, work_dir)` in `args.work_dir` (else a temporary directory), the
  host and commit added, written to `args.output`; returns the result."""
  options = ['--seed', str(args.seed), '--no-warm-start']
  if args.work_dir:
    os.makedirs(args.work_dir, exist_ok=True)
    result = measure_in(options, args.work_dir)
  else:
    with tempfile.TemporaryDirectory() as work_dir:
      result = measure_in(options, work_dir)
  result.update(host=host.description(), commit=host.commit())
  with open(args.output, 'w', encoding='utf-8') as f:
    json.dump(result, f, indent=2)
  return result


def main() -> None:
  args = arguments(__doc__.splitlines()[0], 'backtest_cost.json').parse_args()
  result = write_measured(args, lambda options, work_dir: measure(
      args.dataset, args.origins, options, work_dir))
  print(json.dumps({key: result[key] for key in ('run_seconds', 'backtest_seconds',
                                                 'backtest_over_run')}))


if __name__ == '__main__':
  main()
