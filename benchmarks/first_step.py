"""How long until the first training step has run, and where that time goes.

Each model in a process of its own (`benchmarks.child`), built as the Trainer builds it
(`build_tft_model`, `compile_tft_model` with a warm-up-and-cosine schedule,
`train.learning_rate_schedule`), on one synthetic batch at the paper's electricity window
(E168 H24, 10 inputs): the build (layers, slot variables, the loss's and metrics' first
call), the training step's trace (Python and Keras building its graph, whose op count is
recorded), the first call (Grappler's passes, the kernels' set-up, one step) and a later
step. The first three are what a run waits before its first step has trained.

  .venv/bin/python -m benchmarks.first_step          # writes results/first_step.json
"""

import argparse
import os
import tempfile
import time
from typing import Dict, List, Optional

from benchmarks import child, host, readme_tables

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'first_step.json')
# (label, preset): the default preset of a run without a model_config, and the paper's size.
MODELS = (('the default preset (hidden 16)', 'local'),
          ('the electricity preset (hidden 160, the paper\'s)', 'electricity'))
_LATER_STEPS = 10


def measure(preset: str) -> Dict[str, float]:
  """The build, trace, first-call and later-step seconds of `preset`'s model and its
  training step's op count (run it in a fresh process: `child.call`)."""
  # pylint: disable=g-import-not-at-top
  from benchmarks.tft_throughput import ELECTRICITY_LAYOUT, training_step
  from schema import hparams
  from trainer_module import train
  from trainer_module.training_config import TrainingConfig

  config = hparams.from_name(preset)
  started = time.perf_counter()
  schedule = train.learning_rate_schedule(config.learning_rate, 1000, TrainingConfig())
  model, step, iterator = training_step(ELECTRICITY_LAYOUT, config, schedule)
  built = time.perf_counter()
  graph = step.get_concrete_function(iterator).graph
  traced = time.perf_counter()
  float(step(iterator)['loss'])
  called = time.perf_counter()
  for _ in range(_LATER_STEPS):
    logs = step(iterator)
  float(logs['loss'])
  return {'build_seconds': round(built - started, 2),
          'trace_seconds': round(traced - built, 2),
          'first_call_seconds': round(called - traced, 2),
          'first_step_ready_seconds': round(called - started, 2),
          'later_step_seconds': round((time.perf_counter() - called) / _LATER_STEPS, 4),
          'step_graph_ops': len(graph.get_operations()),
          'trainable_variables': len(model.trainable_variables),
          'parameter_count': model.count_params()}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--output', default=RESULTS, help='the results file (default: %(default)s)')
  args = parser.parse_args(argv)
  result = {'host': host.description(), 'commit': host.commit(),
            'load_average_at_start': os.getloadavg()[0], 'models': {}}
  for label, preset in MODELS:
    log_path = os.path.join(tempfile.gettempdir(), f'first_step_{preset}.log')
    figures, peak_mib = child.call(measure, preset, log_path=log_path)
    result['models'][label] = {'preset': preset, **figures, 'peak_rss_mib': peak_mib}
    print(f'{label}: ' + ', '.join(f'{key} {value}' for key, value in figures.items()))
  readme_tables.write_results(args.output, result)
  return 0


if __name__ == '__main__':
  raise SystemExit(main())
