"""MirroredStrategy for real, over a CPU split into two logical devices.

Logical devices can only be configured before TensorFlow initialises its
devices, so the training runs in a fresh interpreter: this file executed as a
script with the loss to train as its argument, which prints its results as JSON
on the last line of stdout.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PER_REPLICA_BATCH = 4
FEATURES = 3
STEPS = 6
STEPS_PER_EXECUTION = 3
HORIZON = 2
QUANTILES = (0.1, 0.5, 0.9)


# 'mse' on one output; the TFT's quantile loss with the squared P50, whose scale is
# the global batch's target std, on [HORIZON, 3] outputs.
@pytest.mark.parametrize('loss', ['mse', 'squared_quantile'])
def test_mirrored_training_on_two_cpus_matches_one_device(loss):
  completed = subprocess.run(
      [sys.executable, __file__, loss], cwd=REPO_ROOT, capture_output=True,
      text=True, timeout=120,
      env={**os.environ, 'PYTHONPATH': str(REPO_ROOT),
           'TF_CPP_MIN_LOG_LEVEL': '2'})
  assert completed.returncode == 0, completed.stderr[-3000:]
  results = json.loads(completed.stdout.strip().splitlines()[-1])

  assert results['replicas'] == 2
  assert results['global_batch'] == 2 * PER_REPLICA_BATCH
  assert results['per_replica_shapes'] == [[PER_REPLICA_BATCH, FEATURES]] * 2
  assert results['steps_per_epoch'] == STEPS
  if loss == 'squared_quantile':
    # The replicas' halves of a batch differ in spread, so a loss scaled by each
    # replica's own std would train differently from one device.
    first_batch_stds = results['first_batch_replica_target_stds']
    assert abs(first_batch_stds[0] - first_batch_stds[1]) > 0.1 * max(first_batch_stds)
  mirrored, one_device = results['mirrored'], results['one_device']
  # Training moved the weights, so matching them is not trivially true.
  assert not np.allclose(mirrored['weights'], results['initial_weights'],
                         atol=1e-3)
  np.testing.assert_allclose(mirrored['weights'], one_device['weights'],
                             rtol=1e-4, atol=1e-6)
  np.testing.assert_allclose(mirrored['losses'], one_device['losses'],
                             rtol=1e-4)


def _train_on_both_strategies(loss_name: str) -> dict:
  """Trains one model under 'cpu:mirrored' and under 'cpu' from equal starts.

  Args:
    loss_name: 'mse' or 'squared_quantile' (the TFT's `QuantileLoss` with the
      squared P50).

  Returns:
    Replica count, global batch, per-replica shapes and target stds of the first
    distributed batch, steps per epoch, initial weights, and each strategy's epoch
    losses and final weights.
  """
  # pylint: disable=g-import-not-at-top
  import tensorflow as tf
  import tf_keras as keras

  from trainer_module import distribution
  from trainer_module.tft.losses import QuantileLoss

  cpu, = tf.config.list_physical_devices('CPU')
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

  mirrored = distribution.make_strategy('cpu:mirrored')
  global_batch = distribution.global_batch_size(PER_REPLICA_BATCH, mirrored)
  rng = np.random.default_rng(0)
  # One example more than the full batches: drop_remainder must discard it.
  features = rng.normal(size=(STEPS * global_batch + 1, FEATURES))
  signal = np.tanh(features @ [0.5, -1.0, 2.0])
  if loss_name == 'mse':
    targets = signal[:, None] + 0.1 * rng.normal(size=(len(features), 1))
    loss = 'mse'
    output_layers = lambda: [keras.layers.Dense(1)]
  else:
    # Noise whose spread varies from example to example.
    noise = rng.normal(size=(len(features), HORIZON)) * rng.uniform(
        0.1, 2.0, size=(len(features), 1))
    targets = signal[:, None] + noise
    loss = QuantileLoss(QUANTILES, point_loss='squared')
    output_layers = lambda: [keras.layers.Dense(HORIZON * len(QUANTILES)),
                             keras.layers.Reshape((HORIZON, len(QUANTILES)))]
  dataset = tf.data.Dataset.from_tensor_slices(
      (features.astype('float32'), targets.astype('float32'))).batch(
          global_batch, drop_remainder=True)

  first_batch = next(iter(mirrored.experimental_distribute_dataset(dataset)))
  shapes, target_stds = mirrored.run(
      lambda x, y: (tf.shape(x), tf.math.reduce_std(y)), args=first_batch)
  per_replica_shapes = mirrored.experimental_local_results(shapes)
  per_replica_stds = mirrored.experimental_local_results(target_stds)

  def build_model():
    return keras.Sequential([
        keras.layers.Dense(8, activation='tanh', input_shape=(FEATURES,)),
        *output_layers(),
    ])

  keras.utils.set_random_seed(0)
  initial_weights = build_model().get_weights()

  def train(strategy):
    with strategy.scope():
      model = build_model()
      model.set_weights(initial_weights)
      # Several steps per call, as TPU runs train (the training config's
      # steps_per_execution): the all-reduce runs inside the compiled loop.
      model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss,
                    steps_per_execution=STEPS_PER_EXECUTION)
    history = model.fit(dataset, epochs=3, shuffle=False, verbose=0)
    return {
        'losses': history.history['loss'],
        'weights': _flat(model.get_weights()),
    }

  runs = {'mirrored': train(mirrored),
          'one_device': train(distribution.make_strategy('cpu'))}
  return {
      'replicas': mirrored.num_replicas_in_sync,
      'global_batch': global_batch,
      'per_replica_shapes': [shape.numpy().tolist()
                             for shape in per_replica_shapes],
      'first_batch_replica_target_stds': [float(std) for std in per_replica_stds],
      'initial_weights': _flat(initial_weights),
      'steps_per_epoch': int(dataset.cardinality()),
      **runs,
  }


def _flat(weights) -> list[float]:
  return np.concatenate([w.ravel() for w in weights]).tolist()


if __name__ == '__main__':
  print(json.dumps(_train_on_both_strategies(sys.argv[1])))
