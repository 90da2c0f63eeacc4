"""The whole TFT: contract, causality, training, XLA, bfloat16 and SavedModel."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from schema.hparams import TFTConfig
from trainer_module.tft.inputs import input_signature
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model
from trainer_module.tft.model import compile_tft_model
from trainer_module.tft.model import TemporalFusionTransformer

E, H, BATCH = 12, 4, 8
CONFIG = TFTConfig(hidden_size=8, num_heads=2)
# Every group populated, with several categoricals.
FULL_LAYOUT = InputLayout(
    encoder_steps=E, horizon=H, static_cardinalities=(3, 2),
    static_real_count=1, known_cardinalities=(24, 7), known_real_count=2,
    observed_real_count=2)
# The smallest useful layout keeps the compiled tests quick.
SMALL_LAYOUT = InputLayout(
    encoder_steps=E, horizon=H, static_cardinalities=(BATCH,),
    static_real_count=0, known_cardinalities=(), known_real_count=1,
    observed_real_count=0)


def _windows(layout, seed=0):
  """Returns random inputs and [B, H] targets for BATCH windows."""
  rng = np.random.default_rng(seed)
  inputs = {}
  for key, spec in input_signature(layout, BATCH).items():
    if spec.dtype.is_integer:
      cardinalities = (layout.static_cardinalities if key.startswith('static')
                       else layout.known_cardinalities)
      ids = [rng.integers(0, c, size=spec.shape[:-1]) for c in cardinalities]
      inputs[key] = np.stack(ids, axis=-1).astype(np.int32) if ids else (
          np.zeros(spec.shape, np.int32))
    else:
      inputs[key] = rng.normal(size=spec.shape).astype(np.float32)
  inputs['target_history'] = 50.0 + 5.0 * inputs['target_history']
  targets = 50.0 + 5.0 * rng.normal(size=(BATCH, layout.horizon))
  return inputs, targets.astype(np.float32)


def _sine_windows(layout):
  """Returns windows of phase-shifted sines, one series id per window."""
  steps = np.arange(layout.total_steps)
  phases = np.linspace(0.0, np.pi, BATCH)[:, np.newaxis]
  series = 100.0 + 10.0 * np.sin(2 * np.pi * steps / 6 + phases)
  inputs = {
      'static_categorical': np.arange(BATCH, dtype=np.int32)[:, np.newaxis],
      'static_real': np.zeros([BATCH, 0], np.float32),
      'known_categorical': np.zeros([BATCH, layout.total_steps, 0], np.int32),
      'known_real': np.tile(np.sin(2 * np.pi * steps / 6)[:, np.newaxis],
                            [BATCH, 1, 1]).astype(np.float32),
      'observed_real': np.zeros([BATCH, layout.encoder_steps, 0], np.float32),
      'target_history': series[:, :layout.encoder_steps].astype(np.float32),
  }
  return inputs, series[:, layout.encoder_steps:].astype(np.float32)


@pytest.fixture(scope='module')
def full_model():
  return build_tft_model(FULL_LAYOUT, CONFIG)


def test_outputs_have_the_contract_shapes_and_dtypes(full_model):
  inputs, _ = _windows(FULL_LAYOUT)
  outputs = full_model(inputs)
  assert {key: tuple(value.shape) for key, value in outputs.items()} == {
      'quantiles': (BATCH, H, 3),
      'static_weights': (BATCH, 3),
      'history_weights': (BATCH, E, 1 + 2 + 4),
      'future_weights': (BATCH, H, 4),
      'attention': (BATCH, H, E + H),
  }
  assert all(value.dtype == tf.float32 for value in outputs.values())


def test_each_groups_reals_are_the_embeddings_at_their_vsns_positions(full_model):
  """What the variable selection networks fold must be the reals they also receive as
  embeddings, in the same order."""
  inputs, _ = _windows(FULL_LAYOUT)
  inputs = {key: tf.constant(value) for key, value in inputs.items()}
  scaled_target, _, _ = full_model.target_scaler(inputs['target_history'])
  groups = full_model.embed(inputs, scaled_target)
  vsns = (full_model.static_vsn, full_model.history_vsn, full_model.future_vsn)
  assert [len(vsn.real_positions) for vsn in vsns] == [1, 1 + 2 + 2, 2]
  for group, vsn in zip(groups, vsns):
    reals = group.reals
    rebuilt = reals.values[..., tf.newaxis] * reals.kernel + reals.bias
    np.testing.assert_allclose(
        tf.gather(group.vectors, vsn.real_positions, axis=-2), rebuilt, rtol=1e-6)


def test_interpretation_weights_are_distributions(full_model):
  outputs = full_model(_windows(FULL_LAYOUT)[0])
  for key in ('static_weights', 'history_weights', 'future_weights',
              'attention'):
    np.testing.assert_allclose(tf.reduce_sum(outputs[key], -1), 1.0,
                               rtol=1e-5, err_msg=key)
  for h in range(H):
    np.testing.assert_array_equal(outputs['attention'][:, h, E + h + 1:], 0.0)


def test_forecast_at_step_h_ignores_known_inputs_after_it(full_model):
  inputs, _ = _windows(FULL_LAYOUT)
  outputs = full_model(inputs)
  changed_inputs = dict(inputs)
  changed_inputs['known_real'] = inputs['known_real'].copy()
  changed_inputs['known_real'][:, E + 2] += 3.0
  changed_inputs['known_categorical'] = inputs['known_categorical'].copy()
  changed_inputs['known_categorical'][:, E + 2] = 0
  changed = full_model(changed_inputs)
  for key in ('quantiles', 'attention'):
    np.testing.assert_allclose(changed[key][:, :2], outputs[key][:, :2],
                               rtol=1e-5, atol=1e-6, err_msg=key)
  assert not np.allclose(changed['quantiles'][:, 2:], outputs['quantiles'][:, 2:])


def test_every_history_step_can_reach_the_forecast(full_model):
  inputs, _ = _windows(FULL_LAYOUT)
  outputs = full_model(inputs)
  changed_inputs = dict(inputs)
  changed_inputs['observed_real'] = inputs['observed_real'].copy()
  changed_inputs['observed_real'][:, 0] += 3.0
  assert not np.allclose(full_model(changed_inputs)['quantiles'],
                         outputs['quantiles'])


def test_forecasts_follow_the_units_of_the_target(full_model):
  inputs, _ = _windows(FULL_LAYOUT)
  outputs = full_model(inputs)
  rescaled_inputs = dict(inputs)
  rescaled_inputs['target_history'] = 1000.0 + 10.0 * inputs['target_history']
  np.testing.assert_allclose(
      full_model(rescaled_inputs)['quantiles'],
      1000.0 + 10.0 * outputs['quantiles'], rtol=1e-4)


@pytest.mark.parametrize('location, expected', [
    ('mean', lambda history: history.mean(axis=1)),
    ('last', lambda history: history[:, -1]),
])
def test_a_zero_output_head_forecasts_the_target_location(location, expected):
  model = build_tft_model(FULL_LAYOUT, dataclasses.replace(
      CONFIG, target_location=location))
  model.quantile_output.set_weights(
      [np.zeros_like(w) for w in model.quantile_output.get_weights()])
  inputs, _ = _windows(FULL_LAYOUT)
  quantiles = model(inputs)['quantiles'].numpy()
  np.testing.assert_allclose(
      quantiles, np.broadcast_to(
          expected(inputs['target_history'])[:, None, None], quantiles.shape),
      rtol=1e-5)


def test_the_history_highway_adds_a_linear_forecast_of_the_scaled_history():
  config = dataclasses.replace(CONFIG, target_location='last',
                               history_highway=True)
  model = build_tft_model(FULL_LAYOUT, config)
  model.quantile_output.set_weights(
      [np.zeros_like(w) for w in model.quantile_output.get_weights()])
  kernel = np.random.default_rng(2).normal(size=(E, H)).astype(np.float32)
  model.history_highway.set_weights([kernel])
  inputs, _ = _windows(FULL_LAYOUT)
  history = inputs['target_history'].astype(np.float64)
  last = history[:, -1:]
  scale = history.std(axis=1, keepdims=True)
  expected = last + scale * (((history - last) / scale) @ kernel)  # [B, H]

  quantiles = model(inputs)['quantiles'].numpy()

  np.testing.assert_allclose(
      quantiles, np.broadcast_to(expected[..., None], quantiles.shape),
      rtol=1e-4)


@pytest.mark.parametrize('lag', [8, E])  # E: the first history step for step 0
def test_the_seasonal_lag_input_is_the_scaled_target_a_season_before_each_step(lag):
  config = dataclasses.replace(CONFIG, seasonal_lag=lag, target_location='last')
  model = build_tft_model(FULL_LAYOUT, config)
  inputs, _ = _windows(FULL_LAYOUT)
  history = inputs['target_history'].astype(np.float64)
  scale = history.std(axis=1)
  inputs = {key: tf.constant(value) for key, value in inputs.items()}
  scaled_target, _, _ = model.target_scaler(inputs['target_history'])
  _, _, future = model.embed(inputs, scaled_target)

  # The known reals, then step h's target lag steps before it, centred and scaled.
  assert model.future_vsn.real_positions == (2, 3, 4)
  for h in range(H):
    np.testing.assert_allclose(future.reals.values[:, h, -1],
                               (history[:, E + h - lag] - history[:, -1]) / scale,
                               rtol=1e-4, atol=1e-6)
  rebuilt = future.reals.values[..., tf.newaxis] * future.reals.kernel + future.reals.bias
  np.testing.assert_allclose(tf.gather(future.vectors, (2, 3, 4), axis=-2), rebuilt,
                             rtol=1e-6)
  weights = model(inputs)['future_weights']
  assert weights.shape == (BATCH, H, FULL_LAYOUT.future_variable_count + 1)
  np.testing.assert_allclose(tf.reduce_sum(weights, -1), 1.0, rtol=1e-5)


def test_without_known_inputs_the_seasonal_lag_is_the_only_future_input():
  layout = dataclasses.replace(SMALL_LAYOUT, known_real_count=0)
  model = build_tft_model(layout, dataclasses.replace(CONFIG, seasonal_lag=H))
  inputs, _ = _windows(layout)
  np.testing.assert_allclose(model(inputs)['future_weights'], np.ones([BATCH, H, 1]))


@pytest.mark.parametrize('lag', [H - 1, E + 1])
def test_a_seasonal_lag_outside_the_window_is_refused(lag):
  with pytest.raises(ValueError, match=f'seasonal_lag {lag} must lie between the '
                                       f'horizon \\({H}\\) and the encoder steps'):
    build_tft_model(SMALL_LAYOUT, dataclasses.replace(CONFIG, seasonal_lag=lag))


def test_empty_groups_are_supported():
  layout = dataclasses.replace(
      SMALL_LAYOUT, static_cardinalities=(1,), known_real_count=0)
  outputs = build_tft_model(layout, CONFIG)(_windows(layout)[0])
  assert outputs['quantiles'].shape == (BATCH, H, 3)
  assert outputs['static_weights'].shape == (BATCH, 1)
  assert outputs['history_weights'].shape == (BATCH, E, 1)
  assert outputs['future_weights'].shape == (BATCH, H, 0)


@pytest.mark.parametrize('change, message', [
    (lambda x: x.pop('target_history'), r"missing \['target_history'\]"),
    (lambda x: x.update(series_id=x['static_categorical']),
     r"unknown \['series_id'\]"),
    (lambda x: x.update(target_history=x['target_history'][..., None]),
     "'target_history' must have rank 2"),
    # Observations only exist over the encoder: no future values can leak.
    (lambda x: x.update(observed_real=np.zeros([BATCH, E + H, 2], np.float32)),
     "'observed_real' must have shape"),
])
def test_malformed_inputs_are_rejected(full_model, change, message):
  inputs, _ = _windows(FULL_LAYOUT)
  change(inputs)
  with pytest.raises(ValueError, match=message):
    full_model(inputs)


def test_model_config_round_trip(full_model):
  inputs, _ = _windows(FULL_LAYOUT)
  clone = TemporalFusionTransformer.from_config(full_model.get_config())
  clone(inputs)
  clone.set_weights(full_model.get_weights())
  np.testing.assert_allclose(clone(inputs)['quantiles'],
                             full_model(inputs)['quantiles'])


@pytest.fixture(scope='module')
def trained_model():
  """A small model fitted to 8 sine windows, with its loss history."""
  # Seeded: from some initial weights the loss plateaus for a while (one unseeded
  # run ended at 0.12 of its start); seeds 0-3 end at 0.016-0.035.
  keras.utils.set_random_seed(0)
  config = dataclasses.replace(CONFIG, dropout=0.0, learning_rate=1e-2)
  model = build_tft_model(SMALL_LAYOUT, config)
  compile_tft_model(model, config)
  inputs, targets = _sine_windows(SMALL_LAYOUT)
  history = model.fit(inputs, {'quantiles': targets}, batch_size=BATCH,
                      epochs=150, verbose=0)
  return model, history.history['loss']


def test_model_overfits_a_tiny_batch(trained_model):
  _, losses = trained_model
  assert losses[-1] <= 0.1 * losses[0], (losses[0], losses[-1])


@pytest.mark.slow(seconds=90)  # the file's worker time
def test_saved_model_gives_the_same_forecasts(trained_model, tmp_path):
  model, _ = trained_model
  serve = tf.function(lambda inputs: model(inputs, training=False),
                      input_signature=[input_signature(SMALL_LAYOUT)])
  # A plain root tracking the variables, as the Trainer's export saves it
  # (`trainer_module.export`): a Keras root would trace every layer again.
  root = tf.Module()
  root.model_variables = list(model.variables)
  tf.saved_model.save(root, str(tmp_path), signatures={'serving_default': serve})
  inputs, _ = _sine_windows(SMALL_LAYOUT)
  restored = tf.saved_model.load(str(tmp_path)).signatures['serving_default']
  outputs = restored(**{key: tf.constant(value)
                        for key, value in inputs.items()})
  np.testing.assert_allclose(outputs['quantiles'],
                             model(inputs)['quantiles'], rtol=1e-5)


def _train_one_step(config):
  model = build_tft_model(SMALL_LAYOUT, config)
  compile_tft_model(model, config)
  inputs, targets = _windows(SMALL_LAYOUT)
  logs = model.train_on_batch(inputs, {'quantiles': targets},
                              return_dict=True)
  return model, logs


@pytest.mark.slow(seconds=90)  # the file's worker time
# Each setting's values in one of two compilations (about 30 s each); the default model
# (the history highway, the pinball loss, float32) compiles in `test_xla_and_warm_start`.
@pytest.mark.parametrize('history_highway, point_loss, precision',
                         [(False, 'pinball', 'float32'), (True, 'squared', 'mixed_bfloat16')])
def test_training_step_compiles_with_xla(history_highway, point_loss, precision):
  model, logs = _train_one_step(dataclasses.replace(
      CONFIG, jit_compile=True, history_highway=history_highway, point_loss=point_loss,
      precision=precision))
  assert np.isfinite(logs['loss'])
  assert model.loss['quantiles'].point_loss == point_loss
  assert model.history_vsn.compute_dtype == precision.replace('mixed_', '')


def test_training_step_runs_under_mixed_bfloat16():
  model, logs = _train_one_step(dataclasses.replace(CONFIG, history_highway=True,
                                                    precision='mixed_bfloat16'))
  assert np.isfinite(logs['loss'])
  assert model.history_vsn.compute_dtype == 'bfloat16'
  assert model.history_vsn.variable_grns[0].hidden_dense.kernel.dtype == tf.float32
  assert model.history_highway.compute_dtype == 'float32'
  outputs = model(_windows(SMALL_LAYOUT)[0])
  assert all(value.dtype == tf.float32 for value in outputs.values())
  # Only this model: the process's policy is as it was.
  assert keras.mixed_precision.global_policy().name == 'float32'


@pytest.mark.parametrize('precision, on_tpu, policy', [
    ('auto', True, 'mixed_bfloat16'), ('auto', False, 'float32'),
    ('float32', True, 'float32'), ('mixed_bfloat16', False, 'mixed_bfloat16')])
def test_auto_precision_is_bfloat16_on_tpus_only(precision, on_tpu, policy):
  config = dataclasses.replace(CONFIG, precision=precision)
  assert config.dtype_policy(on_tpu) == policy


def test_an_unknown_precision_is_refused():
  with pytest.raises(ValueError, match="precision must be one of .*'float16'"):
    dataclasses.replace(CONFIG, precision='float16')
