"""run_fn the TPU way (XLA, several steps per execution), warm-started from a base model.

One run covers both because training is the slow part of these tests; each test checks
one property. Warm starts that cannot happen are tested without training.
"""

import dataclasses
import json
import logging
import shutil
import types

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from schema.time_split import format_time, parse_timestamp
from trainer_module import (model_format, train, training_period, training_record, vocabularies,
                            warm_start, window_inputs)
from trainer_module.tft.model import STATIC_EMBEDDING, build_tft_model

pytestmark = pytest.mark.slow(seconds=150)  # runs a pipeline or trains a model

STEPS_PER_EXECUTION = 2
EPOCHS = 2


@pytest.fixture(scope='module')
def xla_run(tiny, resumed_run, kit, tmp_path_factory):
  """A jit-compiled run with 2 steps per execution, warm-started from `resumed_run`."""
  fn_args = kit.make_fn_args(
      tiny, str(tmp_path_factory.mktemp('xla')), train_steps=EPOCHS * STEPS_PER_EXECUTION,
      overrides={'jit_compile': True, 'max_epochs': EPOCHS},
      training={'steps_per_execution': STEPS_PER_EXECUTION},
      base_model=resumed_run.fn_args.serving_model_dir)
  recorder = kit.Recorder()
  with kit.logged_messages() as messages:
    train.run_fn(fn_args, callbacks=[recorder])
  return types.SimpleNamespace(fn_args=fn_args, recorder=recorder, messages=messages)


def test_xla_run_trains_and_exports(xla_run):
  model = xla_run.recorder.model
  assert model.jit_compile is True
  assert len(xla_run.recorder.losses) == EPOCHS
  assert all(np.isfinite(xla_run.recorder.losses + xla_run.recorder.val_losses))
  assert tf.saved_model.contains_saved_model(xla_run.fn_args.serving_model_dir)
  # How it trained is recorded beside it, the epoch kept that of the lowest eval loss.
  [record] = training_record.read(xla_run.fn_args.serving_model_dir)
  assert (record['epochs_run'], record['epochs_planned'], record['steps_per_epoch']) == (
      EPOCHS, EPOCHS, STEPS_PER_EXECUTION)
  assert record['best_val_loss'] == min(xla_run.recorder.val_losses)


def test_steps_per_execution_runs_several_steps_per_call(xla_run):
  # Keras reports batch ends once per execution: 2 steps per epoch, 1 call.
  assert xla_run.recorder.model.steps_per_execution.numpy() == STEPS_PER_EXECUTION
  assert dict(xla_run.recorder.batch_ends_per_epoch) == {epoch: 1 for epoch in range(EPOCHS)}


def test_warm_start_begins_from_the_base_model_weights(xla_run, resumed_run):
  base_weights = resumed_run.second.model.get_weights()
  started_from = xla_run.recorder.initial_weights

  assert len(started_from) == len(base_weights)
  for got, want in zip(started_from, base_weights):
    np.testing.assert_array_equal(got, want)
  assert any('Warm start: initialised every weight' in m for m in xla_run.messages)


@pytest.fixture(scope='module')
def base(tiny, resumed_run, kit):
  return kit.warm_start_base(tiny, resumed_run.fn_args)


def test_warm_start_with_another_architecture_keeps_the_fresh_weights(base, caplog, tmp_path):
  wider = dataclasses.replace(base.config, hidden_size=2 * base.config.hidden_size)
  model = build_tft_model(base.layout, wider)
  fresh = model.get_weights()

  with caplog.at_level(logging.INFO):
    outcome = warm_start.restore(model, base.layout, wider, base.path)
  assert not outcome

  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert any('architecture differs' in m and 'hidden_size: base 8 vs now 16' in m
             for m in caplog.messages)
  # The same sentence travels with the exported model, for the run summary.
  assert outcome.message.startswith(f'not possible from {base.path}: the architecture differs')
  model_format.write(str(tmp_path))
  warm_start.write_outcome(str(tmp_path), outcome)
  assert warm_start.read_outcome(str(tmp_path)) == outcome
  with pytest.raises(model_format.ModelFormatError, match='train and export it again'):
    warm_start.read_outcome(str(tmp_path / 'older'))


@pytest.mark.parametrize('option, other_value', [
    # Same weight shapes, but the weights forecast around another level.
    ('target_location', lambda value: 'last' if value == 'mean' else 'mean'),
    # Another set of weights, and the network's path learnt without (or with) it.
    ('history_highway', lambda value: not value),
    # One more future input, with its own embedding and GRN.
    ('seasonal_lag', lambda value: 4 if value == 0 else 0),
])
def test_warm_start_refuses_another_forecast_structure(base, caplog, option, other_value):
  value = getattr(base.config, option)
  other = other_value(value)
  config = dataclasses.replace(base.config, **{option: other})
  model = build_tft_model(base.layout, config)

  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, base.layout, config, base.path)

  assert any(f'{option}: base {value} vs now {other}' in m for m in caplog.messages)


def test_warm_start_rolls_back_weights_that_do_not_fit(base, tmp_path, caplog):
  # The recorded architecture matches, but the checkpoint lacks a layer: the restore
  # assigns the other layers, then fails; nothing may stay changed.
  model_format.write(str(tmp_path))
  directory = tmp_path / warm_start.WARM_START_DIR
  directory.mkdir(parents=True)
  (directory / 'architecture.json').write_text(
      json.dumps(warm_start.architecture(base.layout, base.config)))
  other = build_tft_model(base.layout, base.config)
  tf.train.Checkpoint(**{layer.name: layer for layer in other.layers
                         if layer.name != 'quantile_output'}).write(str(directory / 'weights'))
  model = build_tft_model(base.layout, base.config)
  fresh = model.get_weights()

  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, base.layout, base.config, str(tmp_path))

  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert any('do not fit this model' in m for m in caplog.messages)


def test_the_run_records_its_training_period_and_a_base_that_saw_eval_rows_is_not_used(
    tiny, base, xla_run):
  # Both runs record the eval start their windows report; the second warm-started.
  assert training_period.trained_before(base.path) == tiny.eval_start
  assert training_period.trained_before(xla_run.fn_args.serving_model_dir) == tiny.eval_start
  earlier = format_time(parse_timestamp(tiny.eval_start) - 3600)  # the eval start moved back
  model = build_tft_model(base.layout, base.config)
  fresh = model.get_weights()

  outcome = warm_start.restore(model, base.layout, base.config, base.path,
                               eval_start=earlier)

  assert not outcome
  assert outcome.message == (
      f"not possible from {base.path}: it was trained on rows before {tiny.eval_start}, and "
      f"this run's eval period begins earlier ({earlier}), so it has learned some of the eval "
      'windows; training from a fresh initialisation')
  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert warm_start.restore(model, base.layout, base.config, base.path,
                            eval_start=tiny.eval_start)


def test_warm_start_from_a_model_of_another_format_says_why_and_reads_nothing_of_it(
    base, tmp_path, caplog):
  """A copy of the base whose format file names another version (an export by an older or
  newer pipeline): its checkpoint and architecture would load, but are not read."""
  older = tmp_path / 'older'
  shutil.copytree(base.path, older)
  (older / model_format.FORMAT_FILE).write_text(json.dumps({'model_format': 0}))
  model = build_tft_model(base.layout, base.config)
  fresh = model.get_weights()

  with caplog.at_level(logging.INFO):
    outcome = warm_start.restore(model, base.layout, base.config, str(older))
    no_format = warm_start.restore(model, base.layout, base.config, str(tmp_path / 'none'))

  assert not outcome and not no_format
  assert outcome.message == (
      f'not possible from {older}: its {model_format.FORMAT_FILE} names model format 0, and '
      f'this pipeline reads format {model_format.VERSION}; training from a fresh '
      'initialisation')
  assert f'it has no {model_format.FORMAT_FILE}' in no_format.message
  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert warm_start.restore(model, base.layout, base.config, base.path)  # the original reads


def test_warm_start_moves_embedding_rows_when_the_vocabularies_number_values_otherwise(
    base, tiny, caplog):
  run_vocabularies = vocabularies.of_model(
      tft.TFTransformOutput(tiny.transform_dir).transform_savedmodel_dir)
  assert run_vocabularies == vocabularies.of_model(base.path)  # the base's own Transform
  assert len(run_vocabularies['series_key']) == 2
  reordered = {name: values[::-1] for name, values in run_vocabularies.items()}
  model = build_tft_model(base.layout, base.config)

  with caplog.at_level(logging.INFO):
    assert warm_start.restore(model, base.layout, base.config, base.path,
                              run_vocabularies=reordered,
                              table_vocabularies=window_inputs.table_vocabularies(tiny.spec))

  saved = tf.train.load_checkpoint(warm_start.checkpoint_path(base.path)).get_tensor(
      f'{STATIC_EMBEDDING}/table_0/.ATTRIBUTES/VARIABLE_VALUE')
  rows = model.get_layer(STATIC_EMBEDDING).tables[0].numpy()
  np.testing.assert_array_equal(rows[:3], saved[[1, 0, 2]])  # swapped; then the OOV row
  assert any('its embedding rows matched by value (' in m and
             'series_key: 2 of 2 values from the base, 0 new' in m for m in caplog.messages)
