"""The developer's loop timed in a fresh clone: set-up, `make test-fast`, `make run`, `make test`.

Clones this repository's HEAD beside it (so `../shared` resolves as in CI), runs each
command there in order, and writes `results/dev_loop.json`: the wall time of each, the
tests passed, the default run's MAE beside the best naive forecast, each component's
seconds and each training's first and second epoch (the first builds the step), and of
each test command its slowest test files (pytest's JUnit report: the seconds of a file's
tests and fixtures on its worker); the clone is removed afterwards. pip's download cache is whatever this machine has: a cold cache adds
the downloads to the set-up.

  .venv/bin/python -m benchmarks.dev_loop           # set-up, test-fast, run: about 6 min
  .venv/bin/python -m benchmarks.dev_loop --full    # and the full suite, CI's command
"""

import argparse
import collections
import datetime
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
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
SLOWEST_TEST_FILES = 8  # recorded per test command


def run_step(name: str, clone: str, log_dir: str) -> Dict[str, Any]:
  """Runs one command in `clone`; its wall time and what its output says."""
  log_path = os.path.join(log_dir, name.replace(' ', '_') + '.log')
  junit_path = os.path.join(log_dir, name.replace(' ', '_') + '.xml')
  if os.path.exists(junit_path):
    os.remove(junit_path)
  print(f'[dev-loop] {name}: {" ".join(STEPS[name])} (log: {log_path})', flush=True)
  started = time.monotonic()
  # The Makefile's test commands pass PYTEST_ARGS on to pytest.
  environment = {**os.environ, 'PYTEST_ARGS': f'--junitxml={junit_path}'}
  with open(log_path, 'w') as log:
    completed = subprocess.run(STEPS[name], cwd=clone, stdout=log, stderr=subprocess.STDOUT,
                               check=False, env=environment)
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
  if os.path.exists(junit_path):
    step['slowest_test_files'] = slowest_test_files(junit_path, SLOWEST_TEST_FILES)
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


def slowest_test_files(junit_path: str, count: int) -> Dict[str, float]:
  """The `count` test files whose tests (with their fixtures) took longest on their
  worker, by pytest's JUnit report: {path: seconds}, the slowest first."""
  seconds = collections.Counter()
  for case in ElementTree.parse(junit_path).iter('testcase'):
    parts = case.get('classname').split('.')
    module = next(i for i, part in enumerate(parts) if part.startswith('test_'))
    seconds['/'.join(parts[:module + 1]) + '.py'] += float(case.get('time'))
  return {path: round(total, 1) for path, total in seconds.most_common(count)}


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
