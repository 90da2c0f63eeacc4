"""Where a training step's time goes: the TensorFlow Profiler's trace, summed by model block.

Trains the TFT at the paper's electricity size (`benchmarks/tft_throughput.py`'s model and
batch, no XLA) for a few warm-up steps, traces `--steps` more with
`tf.profiler.experimental`, and sums the duration of every TensorFlow op in the trace by the
block its name belongs to (forward and gradient ops alike: `gradient_tape/<model>/<layer>`).
Op time is summed over TensorFlow's threads, so a block's share of the total is the figure;
the wall time per step is printed beside it, and the op time of each op type too.

`--variable-grns matmuls-only` measures a bound instead of the model: every variable
selection network's per-variable GRNs keep their matmuls, biases and residual sum and lose
the rest of their element-wise work (ELU, dropout, the GLU's sigmoid and product, layer
normalization), so the wall time says how fast the step could be if that work cost nothing.

  .venv/bin/python -m benchmarks.step_profile --label before   # writes results/step_profile.json
"""

import argparse
import collections
import contextlib
import dataclasses
import datetime
import glob
import json
import os
import sys
import tempfile
import time
from typing import Dict, Iterator, List, Optional, Set, Tuple

import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

from benchmarks import host, readme_tables
from benchmarks.tft_throughput import ELECTRICITY_LAYOUT, synthetic_batch
from schema import hparams
from trainer_module.tft.grn import GatedResidualNetwork
from trainer_module.tft.model import build_tft_model, compile_tft_model

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'step_profile.json')
_OP_THREAD_PREFIX = 'tf_Compute'
_GRADIENT_SCOPE = 'gradient_tape'
_VARIABLE_GRN_PREFIX = 'variable_grn'  # the per-variable GRNs' names in a VSN
AS_BUILT, MATMULS_ONLY = 'as-built', 'matmuls-only'


def block_of(op_name: str, model_name: str, layer_names: Set[str]) -> str:
  """The model block an op belongs to, from its name scope ('<model>/history_vsn/...')."""
  path = op_name.split('/')
  if path[0] == _GRADIENT_SCOPE:
    path = path[1:]
  if path[0] != model_name:
    return 'optimizer' if path[0].startswith('Adam') else 'loss, metrics and the rest'
  if len(path) < 3 or path[1] not in layer_names:
    return 'slices and concatenations between blocks'
  layer, part = path[1], path[2]
  if layer.endswith('_vsn'):
    if part.startswith('variable_grn'):
      return f'{layer}: one GRN per variable'
    return f'{layer}: selection GRN' if part == 'selection_grn' else f'{layer}: the rest'
  if layer.endswith('_embedding'):
    return 'input embeddings'
  return layer


def op_milliseconds(trace_dir: str, model_name: str, layer_names: Set[str]
                    ) -> Tuple[Dict[str, float], Dict[str, float]]:
  """Summed duration (ms) of the traced TensorFlow ops of each block, and of each op type."""
  totals: Dict[str, float] = collections.Counter()
  by_type: Dict[str, float] = collections.Counter()
  for path in glob.glob(os.path.join(trace_dir, '**', '*.xplane.pb'), recursive=True):
    space = xplane_pb2.XSpace()
    with open(path, 'rb') as f:
      space.ParseFromString(f.read())
    for plane in space.planes:
      for line in plane.lines:
        if not line.name.startswith(_OP_THREAD_PREFIX):
          continue
        for event in line.events:
          name = plane.event_metadata[event.metadata_id].name
          # Ops are 'scope/name:Type'; the executor's own spans ('ExecutorState::Process')
          # contain the ops and are left out.
          if ':' in name and '::' not in name:
            op_name, op_type = name.rsplit(':', 1)
            block = block_of(op_name, model_name, layer_names)
            totals[block] += event.duration_ps / 1e9
            by_type[op_type] += event.duration_ps / 1e9
  return dict(totals), dict(by_type)


def _matmuls_only(grn, hidden, skip):
  """A per-variable GRN's matmuls, biases and residual sum, without its other element-wise
  work."""
  hidden = grn.output_dense(hidden)
  gate = grn.gate_add_norm.gate
  if not gate.gates_dense.built:  # its kernel is read, the layer never called
    gate.gates_dense.build(hidden.shape)
  return (skip + gate.values_dense(hidden) + tf.matmul(hidden, gate.gates_dense.kernel)
          + gate.gates_dense.bias)


@contextlib.contextmanager
def variable_grns_as_matmuls_only() -> Iterator[None]:
  """Within it, GRNs named `variable_grn*` run `_matmuls_only`; the others are unchanged."""
  as_built = GatedResidualNetwork.from_projections

  def from_projections(grn, hidden, skip, context=None, training=None):
    if grn.name.startswith(_VARIABLE_GRN_PREFIX):
      return _matmuls_only(grn, hidden, skip)  # per-variable GRNs have no context
    return as_built(grn, hidden, skip, context, training)

  GatedResidualNetwork.from_projections = from_projections
  try:
    yield
  finally:
    GatedResidualNetwork.from_projections = as_built


def _per_step(totals: Dict[str, float], steps: int) -> Dict[str, float]:
  return {name: round(ms / steps, 1)
          for name, ms in sorted(totals.items(), key=lambda item: -item[1])}


def profile(steps: int, warmup: int, variable_grns: str = AS_BUILT) -> Dict[str, object]:
  """Traces `steps` training steps after `warmup`; the op time of each block per step.

  With `variable_grns` MATMULS_ONLY the model is built and trained under
  `variable_grns_as_matmuls_only`.
  """
  with (variable_grns_as_matmuls_only() if variable_grns == MATMULS_ONLY
        else contextlib.nullcontext()):
    return _profile_model(steps, warmup)


def _profile_model(steps: int, warmup: int) -> Dict[str, object]:
  config = dataclasses.replace(hparams.from_name('electricity'), jit_compile=False)
  model = build_tft_model(ELECTRICITY_LAYOUT, config)
  compile_tft_model(model, config)
  iterator = iter(tf.data.Dataset.from_tensors(
      synthetic_batch(ELECTRICITY_LAYOUT, config.batch_size)).repeat())
  train_step = model.make_train_function()
  for _ in range(warmup):
    logs = train_step(iterator)
  float(logs['loss'])
  with tempfile.TemporaryDirectory() as trace_dir:
    tf.profiler.experimental.start(trace_dir)
    started = time.perf_counter()
    for _ in range(steps):
      logs = train_step(iterator)
    float(logs['loss'])  # waits for the last step
    seconds = time.perf_counter() - started
    tf.profiler.experimental.stop()
    blocks, op_types = op_milliseconds(trace_dir, model.name,
                                       {layer.name for layer in model.layers})
  per_step = _per_step(blocks, steps)
  return {'parameter_count': model.count_params(), 'steps': steps,
          'wall_ms_per_step': round(1000 * seconds / steps, 1),
          'op_ms_per_step': round(sum(per_step.values()), 1), 'blocks_op_ms': per_step,
          'op_types_op_ms': _per_step(op_types, steps)}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--label', required=True,
                      help='name of this profile in the results, e.g. before or after')
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--warmup', type=int, default=3)
  parser.add_argument('--output', default=RESULTS)
  parser.add_argument('--variable-grns', choices=[AS_BUILT, MATMULS_ONLY], default=AS_BUILT,
                      help=f'{MATMULS_ONLY}: a bound, the per-variable GRNs without their '
                      'element-wise work (see above)')
  args = parser.parse_args(argv)
  figures = profile(args.steps, args.warmup, args.variable_grns)
  figures.update(measured=datetime.date.today().isoformat(), commit=host.commit(),
                 host=host.description(), variable_grns=args.variable_grns)
  results = {'profiles': {}}
  if os.path.exists(args.output):
    with open(args.output) as f:
      results = json.load(f)
  results['profiles'][args.label] = figures
  readme_tables.write_results(args.output, results)
  print(f'{args.label}: {figures["wall_ms_per_step"]} ms per step (wall), '
        f'{figures["op_ms_per_step"]} ms of ops')
  for table, heading in (('blocks_op_ms', 'by block'), ('op_types_op_ms', 'by op type')):
    print(f'{heading}:')
    for name, ms in figures[table].items():
      print(f'  {ms:8.1f} ms  {100 * ms / figures["op_ms_per_step"]:4.1f}%  {name}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
