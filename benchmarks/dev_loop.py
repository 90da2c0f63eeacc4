"""The developer's loop timed in a fresh clone: set-up, `make test-fast`, `make run`, `make test`.

Clones this repository's HEAD beside it (so `../shared` resolves as in CI), runs each
command there in order, and writes `results/dev_loop.json`: the wall time of each, the
tests passed, the default run's MAE beside the best naive forecast, each component's
seconds and each training's first and second epoch (the first builds the step); the clone is
removed afterwards. pip's download cache is whatever this machine has: a cold cache adds
the downloads to the set-up.

  .venv/bin/python -m benchmarks.dev_loop           # set-up, test-fast, run: about 6 min
  .venv/bin/python -m benchmarks.dev_loop --full    # and the full suite, CI's command
"""

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

from benchmarks import host, readme_tables

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'dev_loop.json')
# The commands in the order a new user meets them; CI runs `bash .ci/run`, i.e. `make test`.
STEPS = {'set-up': ['bash', 'scripts/setup_env.sh'], 'make test-fast': ['make', 'test-fast'],
         'make run': ['make', 'run'], 'make test': ['bash', '.ci/run']}
_PYTEST_SUMMARY = re.compile(r'=+ (?P<counts>[^=]*?) in (?P<seconds>[\d.]+)s')
_NUMBER = r'[\d.]+(?:e[+-]\d+)?'  # as '.4g' prints it
_COMPONENT_LINE = re.compile(r'^\[pipeline\] (?P<name>\S+) done in (?P<seconds>[\d.]+) s$', re.M)
# The first and second epoch of each training (the Trainer's, then the Refit's).
_EPOCH_LINE = re.compile(r'^\[Trainer\] epoch (?P<epoch>[12])/\d+: .*?(?P<seconds>[\d.]+) s'
                         r'(?: \(the first epoch also builds the training step\))?$', re.M)
_NAIVE_LINE = re.compile(rf'MAE beside [\w ]*?the naive forecasts: model (?P<model>{_NUMBER}) '
                         rf'(?:\| LightGBM (?P<gbm>{_NUMBER}) )?.*?'
                         rf'(?P<naive>\w+) (?P<naive_mae>{_NUMBER}) \(best naive\)')


def run_step(name: str, clone: str, log_dir: str) -> Dict[str, Any]:
  """Runs one command in `clone`; its wall time and what its output says."""
  log_path = os.path.join(log_dir, name.replace(' ', '_') + '.log')
  print(f'[dev-loop] {name}: {" ".join(STEPS[name])} (log: {log_path})', flush=True)
  started = time.monotonic()
  with open(log_path, 'w') as log:
    completed = subprocess.run(STEPS[name], cwd=clone, stdout=log, stderr=subprocess.STDOUT,
                               check=False)
  seconds = round(time.monotonic() - started, 1)
  with open(log_path) as f:
    output = f.read()
  if completed.returncode:
    raise SystemExit(f'[dev-loop] {name} failed (exit {completed.returncode}) after '
                     f'{seconds:.0f} s; the end of its output:\n{output[-3000:]}')
  step = {'command': ' '.join(STEPS[name]), 'seconds': seconds}
  tests = _PYTEST_SUMMARY.findall(output)
  if tests:
    counts, pytest_seconds = tests[-1]
    step.update(tests=counts.strip(), pytest_seconds=float(pytest_seconds))
  components = {name: float(seconds) for name, seconds in _COMPONENT_LINE.findall(output)}
  if components:
    step['components'] = components
  epochs = _EPOCH_LINE.findall(output)
  if epochs:
    step['first_epochs'] = [float(seconds) for epoch, seconds in epochs if epoch == '1']
    step['second_epochs'] = [float(seconds) for epoch, seconds in epochs if epoch == '2']
  naive = _NAIVE_LINE.search(output)
  if naive:
    step.update(eval_mae=float(naive['model']), best_naive=naive['naive'],
                best_naive_mae=float(naive['naive_mae']))
    if naive['gbm']:
      step['lightgbm_mae'] = float(naive['gbm'])
  print(f'[dev-loop] {name}: {seconds:.0f} s', flush=True)
  return step


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--full', action='store_true', help='also `make test` (CI\'s command)')
  parser.add_argument('--clone', default=os.path.join(os.path.dirname(PROJECT_ROOT),
                                                      'dev-loop-clone'),
                      help='where to clone (default: %(default)s; removed afterwards)')
  parser.add_argument('--output', default=RESULTS)
  args = parser.parse_args(argv)
  if os.path.exists(args.clone):
    raise SystemExit(f'{args.clone} exists: remove it or pass another --clone')
  subprocess.run(['git', 'clone', '--quiet', PROJECT_ROOT, args.clone], check=True)
  commit = host.commit(args.clone)
  log_dir = os.path.join(PROJECT_ROOT, 'runs', 'dev_loop')
  os.makedirs(log_dir, exist_ok=True)
  names = [name for name in STEPS if args.full or name != 'make test']
  try:
    steps = {name: run_step(name, args.clone, log_dir) for name in names}
  finally:
    shutil.rmtree(args.clone, ignore_errors=True)
  readme_tables.write_results(args.output, {
      'measured': datetime.date.today().isoformat(), 'commit': commit,
      'host': host.description(), 'steps': steps})
  return 0


if __name__ == '__main__':
  sys.exit(main())
