"""Training throughput of the TFT at the paper's electricity size.

Times forward + backward + optimizer steps (the compiled Keras train function
that `fit` runs) on one synthetic batch after warm-up, with and without XLA.

  .venv/bin/python -m benchmarks.tft_throughput --steps 20 --output throughput.json

Run as a module: the `benchmarks` package then loads first and asks for TensorFlow's
oneDNN kernels as the pipeline does (`common/cpu_kernels.py`); run as a file,
TensorFlow keeps its own default, which on an AVX2 CPU is the slower Eigen kernels.
"""

import argparse
import dataclasses
import json
import os
import time

import numpy as np
import tensorflow as tf

from schema import hparams
from trainer_module.tft import inputs as tft_inputs
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model
from trainer_module.tft.model import compile_tft_model

# Electricity as in the paper: one id, 7 observed reals, 3 calendar reals.
ELECTRICITY_LAYOUT = InputLayout(
    encoder_steps=hparams.PAPER_WINDOWS['electricity'].encoder_steps,
    horizon=hparams.PAPER_WINDOWS['electricity'].horizon,
    static_cardinalities=(1,), static_real_count=0, known_cardinalities=(),
    known_real_count=3, observed_real_count=7)


def synthetic_batch(layout: InputLayout, batch_size: int, seed: int = 0):
  """Returns (features, labels) for one batch of random windows."""
  rng = np.random.default_rng(seed)
  features = {}
  for key, spec in tft_inputs.input_signature(layout, batch_size).items():
    if spec.dtype.is_integer:
      features[key] = np.zeros(spec.shape, np.int32)
    else:
      features[key] = rng.normal(size=spec.shape).astype(np.float32)
  labels = rng.normal(size=(batch_size, layout.horizon)).astype(np.float32)
  return features, {'quantiles': labels}


def training_step(layout: InputLayout, config: hparams.TFTConfig, learning_rate=None):
  """(model, its training step function, an iterator over one synthetic batch repeated),
  compiled as `compile_tft_model` does with `learning_rate`; the step not yet traced."""
  model = build_tft_model(layout, config)
  compile_tft_model(model, config, learning_rate)
  batch = synthetic_batch(layout, config.batch_size)
  return (model, model.make_train_function(),
          iter(tf.data.Dataset.from_tensors(batch).repeat()))


def measure(layout: InputLayout, config: hparams.TFTConfig, steps: int,
            warmup: int) -> dict:
  """Times `steps` training steps after `warmup` steps; returns the figures."""
  model, train_step, iterator = training_step(layout, config)

  start = time.perf_counter()
  for _ in range(warmup):
    logs = train_step(iterator)
  float(logs['loss'])
  warmup_seconds = time.perf_counter() - start

  start, cpu_start = time.perf_counter(), time.process_time()
  for _ in range(steps):
    logs = train_step(iterator)
  float(logs['loss'])  # Waits for the last step.
  seconds = time.perf_counter() - start
  # CPU time of this process: shows how much other jobs slowed the wall time.
  cpu_seconds = time.process_time() - cpu_start
  return {
      'jit_compile': config.jit_compile,
      'parameter_count': model.count_params(),
      'warmup_steps': warmup,
      'warmup_seconds': round(warmup_seconds, 2),
      'steps': steps,
      'seconds_per_step': round(seconds / steps, 4),
      'cpu_seconds_per_step': round(cpu_seconds / steps, 4),
      'windows_per_second': round(steps * config.batch_size / seconds, 1),
  }


def matmul_gflops(rows: int, width: int, repeats: int = 20, rounds: int = 3) -> float:
  """This host's float32 rate (GFLOPS, best of `rounds`) for [rows, width] x [width, width]
  matmuls, the shape of a per-variable GRN's at the electricity size (B * E rows).

  Each matmul reads its own input, so that none is merged with another as a repeat.
  """
  rng = np.random.default_rng(0)
  inputs = [tf.constant(rng.normal(size=(rows, width)), tf.float32) for _ in range(repeats)]
  kernel = tf.constant(rng.normal(size=(width, width)), tf.float32)
  products = tf.function(lambda: [tf.matmul(x, kernel) for x in inputs])
  products()
  best = float('inf')
  for _ in range(rounds):
    start = time.perf_counter()
    outputs = products()
    float(outputs[-1][0, 0])
    best = min(best, time.perf_counter() - start)
  return round(2 * rows * width * width * repeats / best / 1e9, 1)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--steps', type=int, default=20,
                      help='timed steps without XLA (default: %(default)s)')
  parser.add_argument('--warmup', type=int, default=3,
                      help='untimed steps first, including tracing '
                      '(default: %(default)s)')
  parser.add_argument('--xla', action=argparse.BooleanOptionalAction,
                      default=True,
                      help='also measure with jit_compile=True (slow on CPU: '
                      'long compile, few steps)')
  parser.add_argument('--xla-steps', type=int, default=2,
                      help='timed steps with XLA (default: %(default)s)')
  parser.add_argument('--batch-size', type=int, default=None,
                      help='override the preset batch size')
  parser.add_argument('--precision', choices=[precision for precision in hparams.PRECISIONS
                                                 if precision != 'auto'], default='float32',
                      help='the model\'s dtype policy (mixed_bfloat16 is faster than '
                      'float32 on some CPUs with AVX-512 BF16)')
  parser.add_argument('--output', help='write the figures as JSON here')
  args = parser.parse_args()

  config = dataclasses.replace(hparams.from_name('electricity'), precision=args.precision)
  if args.batch_size:
    config = dataclasses.replace(config, batch_size=args.batch_size)
  modes = {'no_xla': (dataclasses.replace(config, jit_compile=False),
                      args.steps)}
  if args.xla:
    modes['xla'] = (dataclasses.replace(config, jit_compile=True),
                    args.xla_steps)

  report = {
      'layout': dataclasses.asdict(ELECTRICITY_LAYOUT),
      'config': dataclasses.asdict(config),
      'cpu_count': os.cpu_count(),
      'load_average_at_start': os.getloadavg(),
      'tensorflow': tf.__version__,
      'modes': {},
  }
  for mode, (mode_config, steps) in modes.items():
    figures = measure(ELECTRICITY_LAYOUT, mode_config, steps, args.warmup)
    report['modes'][mode] = figures
    print(f'{mode}: {figures["parameter_count"]:,} parameters, '
          f'{figures["windows_per_second"]} windows/s '
          f'({figures["seconds_per_step"]} s/step, '
          f'{figures["cpu_seconds_per_step"]} CPU s/step over {steps} steps; '
          f'warm-up {figures["warmup_seconds"]} s)', flush=True)
  if args.output:
    with open(args.output, 'w') as f:
      json.dump(report, f, indent=2)


if __name__ == '__main__':
  main()
