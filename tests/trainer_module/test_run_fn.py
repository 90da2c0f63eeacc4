"""run_fn on tiny real data: resuming an interrupted run, and the strategy wiring."""

import os
import time

import numpy as np
import pytest
import tensorflow as tf

from trainer_module import distribution, train

pytestmark = pytest.mark.slow(seconds=70)  # runs a pipeline or trains a model


def test_interrupted_run_resumes_from_its_last_backup(resumed_run):
  first, second = resumed_run.first, resumed_run.second
  # Backed up every second epoch: the epoch after the last backup is trained again.
  resumed_epoch = resumed_run.backed_up_after + 1

  assert first.epochs_begun == list(range(resumed_run.interrupted_after + 1))
  assert resumed_epoch < resumed_run.interrupted_after + 1
  assert second.epochs_begun == list(range(resumed_epoch, resumed_run.epochs))
  steps_per_epoch = resumed_run.fn_args.train_steps // resumed_run.epochs
  # The optimizer state came back with the weights: the learning-rate schedule continues.
  assert second.initial_iterations == resumed_epoch * steps_per_epoch
  for restored, backed_up in zip(second.initial_weights,
                                 first.weights_after_epoch[resumed_run.backed_up_after]):
    np.testing.assert_array_equal(restored, backed_up)


def test_completed_run_removes_its_backup_and_exports(resumed_run):
  backup = os.path.join(resumed_run.fn_args.model_run_dir, train.BACKUP_DIR)
  leftovers = [f for _, _, files in os.walk(backup) for f in files]
  assert not leftovers
  assert tf.saved_model.contains_saved_model(resumed_run.fn_args.serving_model_dir)


def test_environment_overrides_the_configured_distribution(resumed_run):
  assert resumed_run.fn_args.custom_config['distribution'] == 'tpu'
  strategy = resumed_run.second.model.distribute_strategy
  assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
  assert all(np.isfinite(resumed_run.second.losses))


def _seeded_run(tiny, kit, run_dir: str, seed: int):
  recorder = kit.Recorder()
  train.run_fn(kit.make_fn_args(tiny, run_dir, train_steps=4, overrides={'max_epochs': 2},
                                training={'seed': seed}), callbacks=[recorder])
  return recorder


def test_a_seeded_run_repeats_its_initialisation_and_training(tiny, kit, tmp_path):
  first = _seeded_run(tiny, kit, str(tmp_path / 'first'), seed=7)
  again = _seeded_run(tiny, kit, str(tmp_path / 'again'), seed=7)
  other = _seeded_run(tiny, kit, str(tmp_path / 'other'), seed=8)

  for weights, same in zip(first.initial_weights, again.initial_weights):
    np.testing.assert_array_equal(weights, same)
  # Same batches and dropout masks: the losses agree up to TensorFlow's kernels.
  np.testing.assert_allclose(again.losses, first.losses, rtol=1e-4)
  np.testing.assert_allclose(again.val_losses, first.val_losses, rtol=1e-4)
  assert any(not np.array_equal(a, b)
             for a, b in zip(first.initial_weights, other.initial_weights))
  assert not np.allclose(other.losses, first.losses, rtol=1e-4)


def test_explicit_tpu_without_one_fails_fast_before_training(fn_args_for, monkeypatch):
  monkeypatch.setenv('TFT_DISTRIBUTION', 'tpu')
  fn_args = fn_args_for(distribution='cpu')
  start = time.monotonic()

  with pytest.raises(distribution.HardwareNotFoundError, match="'tpu' was requested"):
    train.run_fn(fn_args)

  assert time.monotonic() - start < 60
  assert not os.path.exists(fn_args.model_run_dir)
  assert not os.path.exists(fn_args.serving_model_dir)


def test_the_bands_can_be_calibrated_on_the_period_before_the_eval_period_too(
    tiny, kit, tmp_path):
  from trainer_module import earlier_period, interval_calibration
  fn_args = kit.make_fn_args(tiny, str(tmp_path / 'run'), train_steps=4,
                             overrides={'max_epochs': 2, 'ensemble_size': 2},
                             training={'seed': 3, 'calibrate_on_the_period_before': True})
  train.run_fn(fn_args)

  report = interval_calibration.read(fn_args.serving_model_dir)
  period = earlier_period.of_eval_windows(tiny.eval_files, tiny.spec)
  assert report['earlier_windows'] == earlier_period.count(
      tiny.train_files, tiny.spec, period.windows())[0] > 0
  assert 0.0 <= report['earlier_coverage_before']['0.1:0.9'] <= 1.0
  assert all(np.isfinite(list(report['factors']['0.1:0.9'].values())))
  assert 'windows of the period before them pooled' in interval_calibration.describe(report)
