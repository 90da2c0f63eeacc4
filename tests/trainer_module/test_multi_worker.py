"""Multi-worker training for real: two `run_fn` processes on the loopback interface.

TF_CONFIG names a chief and a worker, as Vertex AI sets it for a worker pool of two
replicas. Each runs `run_fn` in a fresh interpreter (this file as a script, given its
FnArgs as JSON), since MultiWorkerMirroredStrategy must be built before TensorFlow
initialises; it prints what it trained as JSON on the last line of stdout. A one-worker
run on the same global batches (16 windows: 8 per worker against 16 on one) from the
same warm-start weights must end with the same weights.
"""

import json
import os
import socket
import subprocess
import pathlib
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs

from trainer_module import train, warm_start

pytestmark = pytest.mark.slow(seconds=100)  # trains models

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PER_WORKER_BATCH = 8
WORKERS = 2
TRAIN_STEPS = 6
TRAINING = {'seed': 11, 'scale_learning_rate': False}  # the same learning rate in both
FN_ARGS_FIELDS = ('train_files', 'eval_files', 'train_steps', 'transform_graph_path',
                  'serving_model_dir', 'model_run_dir', 'base_model', 'custom_config')


class Record(keras.callbacks.Callback):
  """What a worker trained: its strategy, replicas and epoch losses."""

  def __init__(self):
    super().__init__()
    self.losses, self.val_losses = [], []

  def on_epoch_end(self, epoch, logs=None):
    self.losses.append(float(logs['loss']))
    self.val_losses.append(float(logs['val_loss']))

  def summary(self) -> dict:
    strategy = self.model.distribute_strategy
    return {'multi_worker_mirrored': isinstance(strategy,
                                                tf.distribute.MultiWorkerMirroredStrategy),
            'replicas': strategy.num_replicas_in_sync,
            'losses': self.losses, 'val_losses': self.val_losses}


def _free_ports(count: int) -> list:
  sockets = [socket.socket() for _ in range(count)]
  for s in sockets:
    s.bind(('localhost', 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


def _train_on_two_workers(fn_args: FnArgs) -> list:
  """Runs `run_fn` as the chief and a worker of one cluster; returns their summaries."""
  chief_port, worker_port = _free_ports(WORKERS)
  cluster = {'chief': [f'localhost:{chief_port}'], 'worker': [f'localhost:{worker_port}']}
  arguments = json.dumps({field: getattr(fn_args, field) for field in FN_ARGS_FIELDS})
  environ = {key: value for key, value in os.environ.items() if key != 'TFT_DISTRIBUTION'}
  processes = [
      subprocess.Popen(
          [sys.executable, __file__, arguments], cwd=REPO_ROOT, text=True,
          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
          env={**environ, 'PYTHONPATH': str(REPO_ROOT), 'TF_CPP_MIN_LOG_LEVEL': '2',
               'TF_CONFIG': json.dumps({'cluster': cluster,
                                        'task': {'type': task, 'index': 0}})})
      for task in ('chief', 'worker')]
  try:
    outputs = [process.communicate(timeout=600) for process in processes]
  finally:  # a worker that failed leaves the other waiting for it
    for process in processes:
      process.kill()
  for process, (_, stderr) in zip(processes, outputs):
    assert process.returncode == 0, stderr[-4000:]
  return [json.loads(stdout.strip().splitlines()[-1]) for stdout, _ in outputs]


def _checkpoint_weights(saved_model_dir: str) -> dict:
  reader = tf.train.load_checkpoint(warm_start.checkpoint_path(saved_model_dir))
  return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
          if name != '_CHECKPOINTABLE_OBJECT_GRAPH'}


def test_two_workers_train_the_weights_one_worker_trains_on_the_same_batches(
    tiny, kit, tmp_path):
  base = kit.make_fn_args(tiny, str(tmp_path / 'base'), train_steps=2)
  train.run_fn(base)
  common = dict(train_steps=TRAIN_STEPS, training=TRAINING, distribution='cpu',
                base_model=base.serving_model_dir)
  two = kit.make_fn_args(tiny, str(tmp_path / 'two'),
                         overrides={'batch_size': PER_WORKER_BATCH}, **common)
  one = kit.make_fn_args(tiny, str(tmp_path / 'one'),
                         overrides={'batch_size': WORKERS * PER_WORKER_BATCH}, **common)

  chief, worker = _train_on_two_workers(two)
  recorded = Record()
  train.run_fn(one, callbacks=[recorded])
  alone = recorded.summary()

  for summary in (chief, worker):
    assert summary['multi_worker_mirrored']
    assert summary['replicas'] == WORKERS
    assert summary['export_found']
    np.testing.assert_allclose(summary['losses'], alone['losses'], rtol=1e-4)
    np.testing.assert_allclose(summary['val_losses'], alone['val_losses'], rtol=1e-4)
  two_workers, one_worker = (_checkpoint_weights(args.serving_model_dir)
                             for args in (two, one))
  initial = _checkpoint_weights(base.serving_model_dir)
  assert sorted(two_workers) == sorted(one_worker) == sorted(initial)
  # Training moved the weights, so matching them is not trivially true.
  assert any(not np.allclose(two_workers[name], initial[name], atol=1e-3)
             for name in initial)
  for name, weights in one_worker.items():
    np.testing.assert_allclose(two_workers[name], weights, rtol=1e-4, atol=1e-5,
                               err_msg=name)
  # Only the chief wrote the model; the worker's scratch copy is gone.
  exported = pathlib.Path(two.serving_model_dir)
  assert (exported / 'saved_model.pb').exists()
  assert not [p.name for p in exported.parent.iterdir() if p.name.startswith('.scratch')]


if __name__ == '__main__':
  record = Record()
  fn_args = FnArgs(**json.loads(sys.argv[1]))
  train.run_fn(fn_args, callbacks=[record])
  # TFX's Trainer fails a worker whose run_fn returns before the model is there.
  chief_export = os.path.join(fn_args.serving_model_dir, warm_start.WARM_START_DIR)
  print(json.dumps({**record.summary(), 'export_found': os.path.isdir(chief_export)}))
