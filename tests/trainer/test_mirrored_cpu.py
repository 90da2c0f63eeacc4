"""MirroredStrategy for real, over a CPU split into two logical devices.

Logical devices can only be configured before TensorFlow initialises its
devices, so the training runs in a fresh interpreter: this file executed as a
script, which prints its results as JSON on the last line of stdout.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PER_REPLICA_BATCH = 4
FEATURES = 3
STEPS = 6


def test_mirrored_training_on_two_cpus_matches_one_device():
  completed = subprocess.run(
      [sys.executable, __file__], cwd=REPO_ROOT, capture_output=True,
      text=True, timeout=120,
      env={**os.environ, 'PYTHONPATH': str(REPO_ROOT),
           'TF_CPP_MIN_LOG_LEVEL': '2'})
  assert completed.returncode == 0, completed.stderr[-3000:]
  results = json.loads(completed.stdout.strip().splitlines()[-1])

  assert results['replicas'] == 2
  assert results['global_batch'] == 2 * PER_REPLICA_BATCH
  assert results['per_replica_shapes'] == [[PER_REPLICA_BATCH, FEATURES]] * 2
  assert results['steps_per_epoch'] == STEPS
  mirrored, one_device = results['mirrored'], results['one_device']
  # Training moved the weights, so matching them is not trivially true.
  assert not np.allclose(mirrored['weights'], results['initial_weights'],
                         atol=1e-3)
  np.testing.assert_allclose(mirrored['weights'], one_device['weights'],
                             rtol=1e-4, atol=1e-6)
  np.testing.assert_allclose(mirrored['losses'], one_device['losses'],
                             rtol=1e-4)


def _train_on_both_strategies() -> dict:
  """Trains one model under 'cpu:mirrored' and under 'cpu' from equal starts.

  Returns:
    Replica count, global batch, per-replica shapes of the first distributed
    batch, steps per epoch, initial weights, and each strategy's epoch losses
    and final weights.
  """
  # pylint: disable=g-import-not-at-top
  import tensorflow as tf
  import tf_keras as keras

  from trainer_module import distribution

  cpu, = tf.config.list_physical_devices('CPU')
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

  mirrored = distribution.make_strategy('cpu:mirrored')
  global_batch = distribution.global_batch_size(PER_REPLICA_BATCH, mirrored)
  rng = np.random.default_rng(0)
  # One example more than the full batches: drop_remainder must discard it.
  features = rng.normal(size=(STEPS * global_batch + 1, FEATURES))
  targets = np.tanh(features @ [0.5, -1.0, 2.0]) + 0.1 * rng.normal(
      size=len(features))
  dataset = tf.data.Dataset.from_tensor_slices(
      (features.astype('float32'), targets.astype('float32')[:, None])).batch(
          global_batch, drop_remainder=True)

  first_batch = next(iter(mirrored.experimental_distribute_dataset(dataset)))
  per_replica_shapes = mirrored.experimental_local_results(
      mirrored.run(lambda x, y: tf.shape(x), args=first_batch))

  def build_model():
    return keras.Sequential([
        keras.layers.Dense(8, activation='tanh', input_shape=(FEATURES,)),
        keras.layers.Dense(1),
    ])

  keras.utils.set_random_seed(0)
  initial_weights = build_model().get_weights()

  def train(strategy):
    with strategy.scope():
      model = build_model()
      model.set_weights(initial_weights)
      model.compile(optimizer=keras.optimizers.Adam(0.05), loss='mse')
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
      'initial_weights': _flat(initial_weights),
      'steps_per_epoch': int(dataset.cardinality()),
      **runs,
  }


def _flat(weights) -> list[float]:
  return np.concatenate([w.ravel() for w in weights]).tolist()


if __name__ == '__main__':
  print(json.dumps(_train_on_both_strategies()))
