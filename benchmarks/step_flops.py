"""Matmul work of one training step: the project's TFT against pytorch-forecasting's.

Counts the floating-point operations of the matrix products (forward, input gradients and
weight gradients) in one training step at the paper's electricity size, the shapes that
`benchmarks/peer_comparison.py` times. The project's come from the graph of its Keras
train step, built with the LSTMs unrolled so that every step's matmuls are in it; the
peer's from `torch.utils.flop_counter.FlopCounterMode` around one step in `.peer-venv`
(`peer_tft_throughput.py --flops`), plus its LSTMs, whose fused kernel that counter does
not see, counted from their shapes. Element-wise work is not counted: the figure says how
much of a step's time the matmuls alone must take at a host's matmul rate.

  .venv/bin/python -m benchmarks.step_flops   # writes results/step_flops.json
"""

import argparse
import dataclasses
import datetime
import os
import sys
from typing import Dict, List, Optional

import tensorflow as tf

from benchmarks import host, peer_comparison, readme_tables
from benchmarks.tft_throughput import ELECTRICITY_LAYOUT, synthetic_batch
from schema import hparams
from trainer_module.tft.model import build_tft_model, compile_tft_model

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'step_flops.json')
_MATMUL_TYPES = ('MatMul', 'BatchMatMulV2', 'Einsum')


def _matmul_flops(operation: tf.Operation) -> int:
  """2 x the product of every index size a matmul, batched matmul or einsum ranges over."""
  if operation.type == 'MatMul':
    left, right = operation.inputs[0].shape, operation.inputs[1].shape
    rows = left[1] if operation.get_attr('transpose_a') else left[0]
    inner = left[0] if operation.get_attr('transpose_a') else left[1]
    columns = right[0] if operation.get_attr('transpose_b') else right[1]
    return 2 * rows * inner * columns
  if operation.type == 'BatchMatMulV2':
    left = operation.inputs[0].shape
    inner = left[-2] if operation.get_attr('adj_x') else left[-1]
    return 2 * operation.outputs[0].shape.num_elements() * inner
  sizes = {}
  for term, tensor in zip(operation.get_attr('equation').decode().split('->')[0].split(','),
                          operation.inputs):
    sizes.update(zip(term, tensor.shape.as_list()))
  product = 1
  for size in sizes.values():
    product *= size
  return 2 * product


def graph_matmul_flops(graph: tf.Graph) -> Dict[str, int]:
  """The matmul flops of each op type in `graph`, whose shapes must be static."""
  totals = {}
  for operation in graph.get_operations():
    if operation.type in _MATMUL_TYPES:
      totals[operation.type] = totals.get(operation.type, 0) + _matmul_flops(operation)
  return totals


def project_matmul_flops(config: hparams.TFTConfig) -> Dict[str, int]:
  """The project's matmul flops per training step (Keras' train step, LSTMs unrolled)."""
  config = dataclasses.replace(config, jit_compile=False, lstm_unroll=True)
  model = build_tft_model(ELECTRICITY_LAYOUT, config)
  compile_tft_model(model, config)
  batch = tf.nest.map_structure(tf.constant, synthetic_batch(ELECTRICITY_LAYOUT,
                                                             config.batch_size))
  graph = tf.function(model.train_step).get_concrete_function(batch).graph
  return graph_matmul_flops(graph)


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--peer-python', default=peer_comparison.PEER_PYTHON)
  parser.add_argument('--output', default=RESULTS)
  args = parser.parse_args(argv)
  peer_comparison.require_peer(args.peer_python)
  ours = project_matmul_flops(hparams.from_name('electricity'))
  peer = peer_comparison.run_peer_script(args.peer_python, ['--flops'])
  figures = {'project': ours, 'peer': peer,
             'project_gflop': round(sum(ours.values()) / 1e9, 1),
             'peer_gflop': round(sum(peer.values()) / 1e9, 1)}
  figures['peer_over_project'] = round(figures['peer_gflop'] / figures['project_gflop'], 2)
  print(f'matmul work per training step: project {figures["project_gflop"]} GFLOP, peer '
        f'{figures["peer_gflop"]} GFLOP (peer / project = {figures["peer_over_project"]})')
  readme_tables.write_results(args.output, {
      **figures, 'measured': datetime.date.today().isoformat(), 'commit': host.commit()})
  return 0


if __name__ == '__main__':
  sys.exit(main())
