"""Runs the benchmarks; writes one JSON file per benchmark and their Markdown tables.

  .venv/bin/python -m benchmarks.run_all                 # everything: 75 to 150 min, by host
  .venv/bin/python -m benchmarks.run_all --only stallion
  .venv/bin/python -m benchmarks.run_all --quick         # smoke run: tiny data, 4 min

Benchmarks: `etth1` and `stallion` (accuracy, through the product's pipeline, see their
modules) and `speed` (throughput, memory, the pipeline on the default data). Results go
to `<results-dir>/<benchmark>.json`; `results.md` is rebuilt from every JSON there, and
the README tables from `benchmarks/results` (`benchmarks.readme_tables`).
Pipeline runs and their logs go under `--work-dir`, one fresh directory per run.
"""

import argparse
import datetime
import os
import sys
import time
from typing import Any, Dict, List, Optional

import tensorflow as tf

from benchmarks import etth1, host, readme_tables, report, speed, stallion

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = ('etth1', 'stallion', 'speed')


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--quick', action='store_true',
                      help='smoke run: the first rows of ETTh1, six Stallion series, tiny '
                      'models, a few steps; the figures mean nothing')
  parser.add_argument('--only', nargs='+', choices=BENCHMARKS, default=list(BENCHMARKS),
                      help='benchmarks to run (default: all)')
  parser.add_argument('--data-dir', default=host.SHARED_DATA_DIR,
                      help='directory of ETTh1.csv and stallion.csv (default: %(default)s)')
  parser.add_argument('--work-dir', help='pipeline runs and logs (default: '
                      'runs/benchmarks, or runs/benchmarks-quick with --quick)')
  parser.add_argument('--results-dir', help='JSON and Markdown results (default: '
                      'benchmarks/results, or runs/benchmarks-quick/results with --quick)')
  args = parser.parse_args(argv)
  work = os.path.join(PROJECT_ROOT, 'runs', 'benchmarks-quick' if args.quick else 'benchmarks')
  args.work_dir = os.path.abspath(args.work_dir or work)
  args.results_dir = os.path.abspath(args.results_dir or (
      os.path.join(work, 'results') if args.quick else
      os.path.join(PROJECT_ROOT, 'benchmarks', 'results')))
  return args


def run_benchmark(name: str, args: argparse.Namespace) -> Dict[str, Any]:
  work_dir = os.path.join(args.work_dir, name)
  if name == 'etth1':
    return etth1.run(etth1.QUICK if args.quick else etth1.FULL, args.data_dir, work_dir)
  if name == 'stallion':
    return stallion.run(stallion.QUICK if args.quick else stallion.FULL, args.data_dir,
                        work_dir)
  return speed.run(speed.QUICK if args.quick else speed.FULL, work_dir)


def machine_facts() -> Dict[str, Any]:
  """The machine and code a run measured."""
  return {
      'started': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
      **host.description(),
      'memory_gib': round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30),
      'load_average': os.getloadavg()[0], 'commit': host.commit(),
      'tensorflow': tf.__version__}


def write_report(results_dir: str) -> str:
  """Rebuilds the Markdown tables from every benchmark JSON in `results_dir`."""
  path = os.path.join(results_dir, readme_tables.REPORT_FILE)
  with open(path, 'w') as f:
    f.write(report.markdown(readme_tables.load_results(results_dir)) + '\n')
  return path


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # for the child processes
  os.makedirs(args.results_dir, exist_ok=True)
  machine = machine_facts()
  print(f'[benchmarks] {"quick" if args.quick else "full"} run of {", ".join(args.only)}; '
        f'runs and logs under {args.work_dir}', flush=True)
  for name in args.only:
    started = time.monotonic()
    print(f'[{name}] ...', flush=True)
    result = run_benchmark(name, args)
    result.update(quick=args.quick, machine=machine,
                  wall_seconds=round(time.monotonic() - started, 1))
    results_file = os.path.join(args.results_dir, f'{name}.json')
    readme_tables.write_results(results_file, result)
    print(f'[{name}] done in {result["wall_seconds"]:.0f} s', flush=True)
  print(f'[benchmarks] results in {write_report(args.results_dir)}', flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main())
