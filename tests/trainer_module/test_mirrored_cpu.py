"""MirroredStrategy for real, over a CPU split into two logical devices.

Logical devices can only be configured before TensorFlow initialises its
devices, so the training runs in a fresh interpreter: this file executed as a
script with the case to train as its argument, which prints its results as JSON
on the last line of stdout.
"""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow(seconds=130)  # runs a pipeline or trains a model

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PER_REPLICA_BATCH = 4
STEPS = 6
# Several steps per call, as TPU runs train (the training config's
# steps_per_execution): cross-replica work runs inside the compiled loop.
STEPS_PER_EXECUTION = 3
HORIZON = 2
QUANTILES = (0.1, 0.5, 0.9)
# 'mse': a small dense model. 'squared_quantile': the TFT's quantile loss with the
# squared P50, whose scale is the global batch's target std, on a dense model.
# 'tft': the TFT itself (history highway, squared P50) on random windows.
CASES = ('mse', 'squared_quantile', 'tft')


@pytest.mark.parametrize('case', CASES)
def test_mirrored_training_on_two_cpus_matches_one_device(case):
  completed = subprocess.run(
      [sys.executable, __file__, case], cwd=REPO_ROOT, capture_output=True,
      text=True, timeout=300,
      env={**os.environ, 'PYTHONPATH': str(REPO_ROOT),
           'TF_CPP_MIN_LOG_LEVEL': '2'})
  assert completed.returncode == 0, completed.stderr[-3000:]
  results = json.loads(completed.stdout.strip().splitlines()[-1])

  assert results['replicas'] == 2
  assert results['global_batch'] == 2 * PER_REPLICA_BATCH
  assert results['per_replica_batches'] == [PER_REPLICA_BATCH] * 2
  assert results['steps_per_epoch'] == STEPS
  # The replicas' halves of a batch differ in spread, so a loss scaled by each
  # replica's own std would train differently from one device.
  first_batch_stds = results['first_batch_replica_target_stds']
  assert abs(first_batch_stds[0] - first_batch_stds[1]) > 0.1 * max(first_batch_stds)
  mirrored, one_device = results['mirrored'], results['one_device']
  # Training moved the weights, so matching them is not trivially true.
  assert not np.allclose(mirrored['weights'], results['initial_weights'],
                         atol=1e-3)
  np.testing.assert_allclose(mirrored['weights'], one_device['weights'],
                             rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(mirrored['losses'], one_device['losses'],
                             rtol=1e-4)


def _train_on_both_strategies(case: str) -> dict:
  """Trains one model under 'cpu:mirrored' and under 'cpu' from equal starts.

  Args:
    case: One of `CASES`.

  Returns:
    Replica count, global batch, per-replica batch sizes and target stds of the
    first distributed batch, steps per epoch, initial weights, and each
    strategy's epoch losses and final weights.
  """
  # pylint: disable=g-import-not-at-top
  import tensorflow as tf
  import tf_keras as keras

  from trainer_module import distribution

  cpu, = tf.config.list_physical_devices('CPU')
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

  mirrored = distribution.make_strategy('cpu:mirrored')
  global_batch = PER_REPLICA_BATCH * mirrored.num_replicas_in_sync
  # One example more than the full batches: drop_remainder must discard it.
  inputs, targets, build_and_compile = _case(case, STEPS * global_batch + 1)
  dataset = tf.data.Dataset.from_tensor_slices((inputs, targets)).batch(
      global_batch, drop_remainder=True)

  first_batch = next(iter(mirrored.experimental_distribute_dataset(dataset)))
  sizes, target_stds = mirrored.run(
      lambda x, y: (tf.shape(tf.nest.flatten(y)[0])[0],
                    tf.math.reduce_std(tf.nest.flatten(y)[0])),
      args=first_batch)

  keras.utils.set_random_seed(0)
  initial_weights = build_and_compile().get_weights()

  def train(strategy):
    with strategy.scope():
      model = build_and_compile()
      model.set_weights(initial_weights)
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
      'per_replica_batches': [
          int(size) for size in mirrored.experimental_local_results(sizes)],
      'first_batch_replica_target_stds': [
          float(std) for std in mirrored.experimental_local_results(target_stds)],
      'initial_weights': _flat(initial_weights),
      'steps_per_epoch': int(dataset.cardinality()),
      **runs,
  }


def _case(case: str, examples: int):
  """Returns inputs, targets and a function that builds and compiles the model."""
  rng = np.random.default_rng(0)
  # Noise whose spread varies from example to example.
  noise_scale = rng.uniform(0.1, 2.0, size=(examples, 1))
  if case == 'tft':
    return _tft_case(rng, noise_scale)
  return _dense_case(case, rng, noise_scale)


def _tft_case(rng, noise_scale):
  """Random windows for a small TFT with the history highway and the squared P50."""
  # pylint: disable=g-import-not-at-top
  from schema.hparams import TFTConfig
  from trainer_module.tft.inputs import InputLayout, input_signature
  from trainer_module.tft.model import build_tft_model, loss_and_metrics
  from trainer_module.tft.optimizer import FusedAdam

  examples = len(noise_scale)
  layout = InputLayout(
      encoder_steps=6, horizon=HORIZON, static_cardinalities=(4,),
      static_real_count=0, known_cardinalities=(), known_real_count=1,
      observed_real_count=1)
  config = TFTConfig(hidden_size=8, num_heads=2, dropout=0.0, learning_rate=1e-2,
                     quantiles=QUANTILES, history_highway=True, point_loss='squared')
  inputs = {
      key: (rng.integers(0, 4, size=(examples, *spec.shape[1:])).astype(np.int32)
            if spec.dtype.is_integer
            else rng.normal(size=(examples, *spec.shape[1:])).astype(np.float32))
      for key, spec in input_signature(layout).items()}
  signal = inputs['target_history'][:, -1:] + inputs['known_real'][:, -HORIZON:, 0]
  targets = {'quantiles': (signal + noise_scale * rng.normal(
      size=(examples, HORIZON))).astype(np.float32)}

  def build_and_compile():  # as the Trainer compiles it
    model = build_tft_model(layout, config)
    model.compile(optimizer=FusedAdam(config.learning_rate, clipnorm=config.clipnorm),
                  steps_per_execution=STEPS_PER_EXECUTION, **loss_and_metrics(config))
    return model

  return inputs, targets, build_and_compile


def _dense_case(case, rng, noise_scale):
  """Three features for a small dense model trained with 'mse' or the quantile loss."""
  # pylint: disable=g-import-not-at-top
  import tf_keras as keras

  from trainer_module.tft.losses import QuantileLoss

  examples = len(noise_scale)
  features = rng.normal(size=(examples, 3)).astype(np.float32)
  signal = np.tanh(features @ [0.5, -1.0, 2.0])[:, None]
  if case == 'mse':
    targets = signal + noise_scale * rng.normal(size=(examples, 1))
    loss, outputs = 'mse', lambda: [keras.layers.Dense(1)]
  else:
    targets = signal + noise_scale * rng.normal(size=(examples, HORIZON))
    loss = QuantileLoss(QUANTILES, point_loss='squared')
    outputs = lambda: [keras.layers.Dense(HORIZON * len(QUANTILES)),
                       keras.layers.Reshape((HORIZON, len(QUANTILES)))]

  def build_and_compile():
    model = keras.Sequential([
        keras.layers.Dense(8, activation='tanh', input_shape=(3,)), *outputs()])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss,
                  steps_per_execution=STEPS_PER_EXECUTION)
    return model

  return features, targets.astype(np.float32), build_and_compile


def _flat(weights) -> list[float]:
  return np.concatenate([w.ravel() for w in weights]).tolist()


if __name__ == '__main__':
  print(json.dumps(_train_on_both_strategies(sys.argv[1])))
