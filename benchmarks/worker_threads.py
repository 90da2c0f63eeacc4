"""Thread pools under a busy neighbour: what `make test`'s two workers do to each other.

Times a LightGBM fit (150 rounds of a median model on 100,000 rows x 30 features) and a
TFT training step (the default preset at the electricity window, E168 H24, batch 64),
each in a fresh process whose thread pools are as wide as the machine (the libraries'
defaults), one thread wide (`OMP_NUM_THREADS`, `TF_NUM_INTRAOP_THREADS`), or, for
LightGBM, with OpenMP's threads passive (`OMP_WAIT_POLICY`); alone, and beside busy loops
holding cores as the other test worker does. `tests/conftest.py` gives each test worker
its share of the cores from these figures (benchmarks/pages/dev_loop.md).

```bash
.venv/bin/python -m benchmarks.worker_threads   # writes results/worker_threads.json
```
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional

from benchmarks import host

OUTPUT = os.path.join(os.path.dirname(__file__), 'results', 'worker_threads.json')
SETTINGS = {'as wide as the machine': {},
            'one thread': {'OMP_NUM_THREADS': '1', 'TF_NUM_INTRAOP_THREADS': '1'},
            'OpenMP passive': {'OMP_WAIT_POLICY': 'PASSIVE'}}
WORK = {'lightgbm': ('as wide as the machine', 'one thread', 'OpenMP passive'),
        'tft_step': ('as wide as the machine', 'one thread')}
_TFT_STEPS = 20


def lightgbm_seconds() -> float:
  """Seconds of one LightGBM fit (150 rounds of a median model, 100,000 x 30 rows)."""
  import lightgbm  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  rng = np.random.default_rng(0)
  features = rng.normal(size=(100_000, 30)).astype(np.float32)
  label = features[:, 0] * 2 + rng.normal(size=100_000)
  started = time.perf_counter()
  lightgbm.train({'objective': 'quantile', 'alpha': 0.5, 'verbose': -1},
                 lightgbm.Dataset(features, label), num_boost_round=150)
  return time.perf_counter() - started


def tft_step_seconds() -> float:
  """Seconds of a TFT training step (the default preset, E168 H24), after its trace."""
  from benchmarks.tft_throughput import ELECTRICITY_LAYOUT, training_step  # pylint: disable=g-import-not-at-top
  from schema import hparams  # pylint: disable=g-import-not-at-top

  config = hparams.from_name(hparams.DEFAULT_PRESET)
  _, step, batches = training_step(ELECTRICITY_LAYOUT, config)
  float(step(batches)['loss'])
  started = time.perf_counter()
  for _ in range(_TFT_STEPS):
    logs = step(batches)
  float(logs['loss'])
  return (time.perf_counter() - started) / _TFT_STEPS


_MEASURE = {'lightgbm': lightgbm_seconds, 'tft_step': tft_step_seconds}


def timed_in_a_fresh_process(work: str, setting: str, busy_cores: int) -> float:
  """`work`'s seconds in a new process with `setting`'s environment, beside `busy_cores`
  busy loops."""
  loops = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
           for _ in range(busy_cores)]
  try:
    completed = subprocess.run(
        [sys.executable, '-m', 'benchmarks.worker_threads', '--measure', work],
        env={**os.environ, **SETTINGS[setting], 'TF_CPP_MIN_LOG_LEVEL': '2'},
        capture_output=True, text=True, check=True)
  finally:
    for loop in loops:
      loop.kill()
  return float(completed.stdout.strip().splitlines()[-1])


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('--measure', choices=sorted(_MEASURE), help=argparse.SUPPRESS)
  parser.add_argument('--repeats', type=int, default=3,
                      help='LightGBM fits per cell, the median reported (default: 3)')
  parser.add_argument('--output', default=OUTPUT)
  args = parser.parse_args(argv)
  if args.measure:  # the child: one measurement, printed
    print(_MEASURE[args.measure]())
    return 0
  cores = os.cpu_count() or 1
  figures: Dict[str, Dict[str, Dict[str, float]]] = {}
  for work, settings in WORK.items():
    repeats = args.repeats if work == 'lightgbm' else 1
    for busy in sorted({0, cores - 1, cores}):
      if work == 'tft_step' and busy != cores - 1:
        continue  # a step takes a trace of about 10 s: only beside the other worker
      for setting in settings:
        seconds = statistics.median(timed_in_a_fresh_process(work, setting, busy)
                                    for _ in range(repeats))
        figures.setdefault(work, {}).setdefault(f'{busy} cores busy', {})[setting] = round(
            seconds, 4)
        print(f'{work:<9} {busy} cores busy  {setting:<23} {seconds:8.4f} s', flush=True)
  result = {'host': host.description(), 'commit': host.commit(), 'cores': cores,
            'seconds': figures, 'lightgbm_repeats': args.repeats, 'tft_steps': _TFT_STEPS}
  os.makedirs(os.path.dirname(args.output), exist_ok=True)
  with open(args.output, 'w', encoding='utf-8') as f:
    json.dump(result, f, indent=2)
  print(f'wrote {args.output}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
