"""run_fn with an ensemble of two TFTs: interrupted in the second member, resumed,
exported as the mean of its members, warm-started from, and refit."""

import dataclasses
import logging
import os
import shutil
import types
from typing import Dict, List

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from common import progress_log
from trainer_module import export, refit, train, training_record, warm_start, window_inputs
from trainer_module.tft.ensemble import TFTEnsemble
from trainer_module.tft.model import build_tft_model

pytestmark = pytest.mark.slow(seconds=65)  # runs a pipeline or trains a model

EPOCHS = 2
MEMBERS = ('member_0', 'member_1')


class _MemberRecorder(keras.callbacks.Callback):
  """Epochs begun and final weights per member, and the members themselves."""

  def __init__(self):
    super().__init__()
    self.epochs_begun: Dict[str, List[int]] = {}
    self.final_weights: Dict[str, list] = {}
    self.models: Dict[str, keras.Model] = {}

  def on_epoch_begin(self, epoch, logs=None):
    self.epochs_begun.setdefault(self.model.name, []).append(epoch)
    self.models[self.model.name] = self.model

  def on_train_end(self, logs=None):
    self.final_weights[self.model.name] = self.model.get_weights()


class _Interrupted(Exception):
  pass


class _InterruptMember(keras.callbacks.Callback):
  """Raises `_Interrupted` at the end of `epoch` of the member called `name`."""

  def __init__(self, name: str, epoch: int):
    super().__init__()
    self.name, self.epoch = name, epoch

  def on_epoch_end(self, epoch, logs=None):
    if self.model.name == self.name and epoch == self.epoch:
      raise _Interrupted(f'{self.name} interrupted after epoch {epoch}')


@pytest.fixture(scope='module')
def ensemble_run(tiny, kit, tmp_path_factory):
  fn_args = kit.make_fn_args(
      tiny, str(tmp_path_factory.mktemp('ensemble')), train_steps=2 * EPOCHS,
      overrides={'ensemble_size': len(MEMBERS), 'max_epochs': EPOCHS,
                 'early_stopping_patience': EPOCHS},
      training={'backup_every_steps': 1})  # a backup after every epoch
  first, second = _MemberRecorder(), _MemberRecorder()
  with pytest.raises(_Interrupted):
    train.run_fn(fn_args, callbacks=[first, _InterruptMember(MEMBERS[1], 0)])
  with kit.logged_messages(progress_log.ROOT) as progress:
    train.run_fn(fn_args, callbacks=[second])
  return types.SimpleNamespace(fn_args=fn_args, first=first, second=second,
                               progress=progress)


def test_a_resumed_ensemble_keeps_its_trained_members_and_resumes_the_interrupted_one(
    ensemble_run):
  first, second = ensemble_run.first, ensemble_run.second

  assert first.epochs_begun == {MEMBERS[0]: [0, 1], MEMBERS[1]: [0]}
  assert second.epochs_begun == {MEMBERS[1]: [1]}
  run_dir = ensemble_run.fn_args.model_run_dir
  assert not os.path.exists(os.path.join(run_dir, train.BACKUP_DIR))
  for name in MEMBERS:
    assert os.listdir(os.path.join(run_dir, name, 'validation'))
  # The record names the member the resumed attempt trained, its epochs counted from 1.
  [record] = training_record.read(ensemble_run.fn_args.serving_model_dir)
  assert (record['member'], record['epochs_run'], record['epochs_planned']) == (2, EPOCHS,
                                                                                EPOCHS)
  # What the resumed attempt said of its members, in order.
  said = [m for m in ensemble_run.progress if m.startswith('member')]
  assert said[0].startswith('member 1 of 2: trained before the interruption, loaded from ')
  assert said[1].startswith(f'member 2 of 2, epoch 2/{EPOCHS}: loss ')
  assert said[2] == (f'member 2 of 2 trained: all {EPOCHS} epochs of 2 steps, the weights '
                     f'of epoch {record["best_epoch"]} kept (the lowest eval loss)')


def test_the_exported_ensemble_serves_the_mean_of_the_members_it_kept(tiny, ensemble_run):
  first, second = ensemble_run.first, ensemble_run.second
  windows = tf.constant(tiny.eval_windows)
  inputs, _ = window_inputs.parse_windows(windows, tiny.spec)
  # member_0 was loaded, not trained, by the second attempt: its weights are the ones
  # the first attempt finished with.
  member_0 = first.models[MEMBERS[0]]
  member_0.set_weights(first.final_weights[MEMBERS[0]])
  forecasts = [model(inputs, training=False)[window_inputs.QUANTILES_OUTPUT].numpy()
               for model in (member_0, second.models[MEMBERS[1]])]

  served = tf.saved_model.load(ensemble_run.fn_args.serving_model_dir).signatures[
      export.EVAL_SIGNATURE](examples=windows)

  assert not np.allclose(forecasts[0], forecasts[1])
  # The members whose mean scores the eval windows best, as the Trainer said.
  [said] = [m for m in ensemble_run.progress if m.startswith('ensemble: members served: ')]
  kept = [int(number) - 1 for number in
          said[len('ensemble: members served: '):].split(' of ')[0].split(', ')]
  assert kept in ([0], [1], [0, 1])
  np.testing.assert_allclose(served['p50'], np.mean([forecasts[i] for i in kept],
                                                    axis=0)[..., 1], rtol=1e-5, atol=1e-5)


@pytest.fixture(scope='module')
def ensemble_base(tiny, ensemble_run, kit):
  return kit.warm_start_base(tiny, ensemble_run.fn_args)


def test_an_ensemble_warm_starts_each_member_from_the_base_ensemble(ensemble_base,
                                                                     ensemble_run):
  members = [build_tft_model(ensemble_base.layout, ensemble_base.config, name)
             for name in train.member_names(ensemble_base.config)]

  assert warm_start.restore(TFTEnsemble(members), ensemble_base.layout,
                            ensemble_base.config, ensemble_base.path)

  trained = [ensemble_run.first.final_weights[MEMBERS[0]],
             ensemble_run.second.models[MEMBERS[1]].get_weights()]
  for member, weights in zip(members, trained):
    for got, want in zip(member.get_weights(), weights):
      np.testing.assert_array_equal(got, want)


def test_a_single_model_does_not_warm_start_from_an_ensemble(ensemble_base, caplog):
  config = dataclasses.replace(ensemble_base.config, ensemble_size=1)
  model = build_tft_model(ensemble_base.layout, config)

  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, ensemble_base.layout, config, ensemble_base.path)

  assert any('ensemble_size: base 2 vs now 1' in m for m in caplog.messages)


def test_a_refit_trains_only_the_members_the_judged_model_serves(tiny, ensemble_run, kit,
                                                                 tmp_path):
  """The judged ensemble served member 1 alone: the refit trains member 1 for its kept
  epochs, keeps member 2's judged weights untrained and serves member 1's forecasts."""
  judged = str(tmp_path / 'judged')
  shutil.copytree(ensemble_run.fn_args.serving_model_dir, judged)
  steps = ensemble_run.fn_args.train_steps // EPOCHS
  training_record.write(judged, [
      {'epochs_run': EPOCHS, 'epochs_planned': EPOCHS, 'steps_per_epoch': steps,
       'member': 1, 'best_epoch': EPOCHS, 'best_val_loss': 1.0},
      {'epochs_run': EPOCHS, 'epochs_planned': EPOCHS, 'steps_per_epoch': steps,
       'member': 2, 'best_epoch': 1, 'best_val_loss': 2.0, 'left_out': True}])
  fn_args = kit.make_fn_args(
      tiny, str(tmp_path / 'refit'), train_steps=ensemble_run.fn_args.train_steps,
      overrides={'ensemble_size': len(MEMBERS), 'max_epochs': EPOCHS})
  fn_args.custom_config[refit.CONFIG_KEY] = judged
  recorder = _MemberRecorder()

  with kit.logged_messages(progress_log.ROOT) as progress:
    train.run_fn(fn_args, callbacks=[recorder])

  assert recorder.epochs_begun == {MEMBERS[0]: list(range(EPOCHS))}
  assert ('member 2 of 2: left out of the mean the judged model serves, so not refit (its '
          'judged weights kept)') in progress
  base = kit.warm_start_base(tiny, fn_args)
  from_judged, untrained = (build_tft_model(base.layout, base.config, MEMBERS[1])
                            for _ in range(2))
  warm_start.read_member(from_judged, judged)
  warm_start.read_member(untrained, fn_args.serving_model_dir)
  for got, want in zip(untrained.get_weights(), from_judged.get_weights()):
    np.testing.assert_array_equal(got, want)
  refit_records = training_record.read(fn_args.serving_model_dir)
  assert training_record.kept_members(refit_records) == [0]
  assert training_record.describe_one(refit_records[1]) == (
      'left out of the mean served, as in the judged model: not refit, its judged weights '
      'kept')
  windows = tf.constant(tiny.eval_windows)
  inputs, _ = window_inputs.parse_windows(windows, tiny.spec)
  alone = recorder.models[MEMBERS[0]](inputs, training=False)[window_inputs.QUANTILES_OUTPUT]
  served = tf.saved_model.load(fn_args.serving_model_dir).signatures[export.EVAL_SIGNATURE](
      examples=windows)
  np.testing.assert_allclose(served['p50'], alone.numpy()[..., 1], rtol=1e-5, atol=1e-5)


def test_a_member_the_judged_model_lacks_is_named_in_the_error(tiny, ensemble_run, kit):
  base = kit.warm_start_base(tiny, ensemble_run.fn_args)
  stranger = build_tft_model(base.layout, base.config, 'member_5')

  with pytest.raises(ValueError, match="no weights for every layer of the ensemble member "
                                       "'member_5'.*rerun the pipeline, or turn the refit off"):
    warm_start.read_member(stranger, ensemble_run.fn_args.serving_model_dir)
