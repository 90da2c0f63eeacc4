"""Each TFT block alone: shapes, config round trips and its defining behaviour."""

import numpy as np
import pytest
import tensorflow as tf

from trainer_module.tft.attention import InterpretableMultiHeadAttention
from trainer_module.tft.embedding import InputEmbedding
from trainer_module.tft.gating import GateAddNorm
from trainer_module.tft.gating import GatedLinearUnit
from trainer_module.tft.grn import GatedResidualNetwork
from trainer_module.tft.highway import HistoryHighway
from trainer_module.tft.seq2seq import LSTMEncoderDecoder
from trainer_module.tft.static_encoder import StaticCovariateEncoder
from trainer_module.tft.target import QuantileOutput
from trainer_module.tft.target import WindowTargetScaler
from trainer_module.tft.variable_selection import VariableSelectionNetwork

B, E, H, V, D = 3, 5, 2, 4, 8
T = E + H


def _normal(*shape, seed=0):
  return tf.constant(np.random.default_rng(seed).normal(size=shape),
                     tf.float32)


def _assert_config_round_trip(layer, inputs, **call_kwargs):
  """Rebuilds `layer` from its config, copies weights, compares outputs."""
  expected = layer(inputs, **call_kwargs)
  clone = type(layer).from_config(layer.get_config())
  clone(inputs, **call_kwargs)
  clone.set_weights(layer.get_weights())
  assert clone.get_config() == layer.get_config()
  tf.nest.map_structure(np.testing.assert_allclose,
                        clone(inputs, **call_kwargs), expected)


def test_gated_linear_unit_matches_its_formula():
  x = _normal(B, T, 6)
  glu = GatedLinearUnit(D, dropout_rate=0.5)
  outputs = glu(x)
  values = glu.values_dense.kernel.numpy()
  gates = glu.gates_dense.kernel.numpy()
  expected = (x.numpy() @ values) / (1 + np.exp(-(x.numpy() @ gates)))
  assert outputs.shape == (B, T, D)
  np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-6)
  _assert_config_round_trip(glu, x)


def test_gate_add_norm_normalises_the_gated_sum():
  x, skip = _normal(B, T, 6), _normal(B, T, D, seed=1)
  outputs = GateAddNorm(D)((x, skip))
  assert outputs.shape == (B, T, D)
  np.testing.assert_allclose(np.mean(outputs, axis=-1), 0.0, atol=1e-5)
  np.testing.assert_allclose(np.std(outputs, axis=-1), 1.0, atol=1e-2)
  _assert_config_round_trip(GateAddNorm(D, dropout_rate=0.1), (x, skip))


def test_grn_projects_skip_and_uses_context():
  a, context = _normal(B, T, 6), _normal(B, 5, seed=1)
  grn = GatedResidualNetwork(D, hidden_size=12, dropout_rate=0.1)
  with_context = grn(a, context=context)
  assert with_context.shape == (B, T, D)
  assert not np.allclose(with_context, grn(a, context=context * 2.0))
  _assert_config_round_trip(grn, a, context=context)


def test_grn_keeps_width_without_context():
  a = _normal(B, D)
  grn = GatedResidualNetwork(D)
  assert grn(a).shape == (B, D)
  _assert_config_round_trip(grn, a)


def test_input_embedding_looks_up_and_projects():
  categorical = tf.constant([[[0, 2], [1, 0]]], tf.int32)  # [1, 2, 2]
  real = _normal(1, 2, 3)
  embedding = InputEmbedding((2, 3), 3, D)
  outputs = embedding((categorical, real))
  assert outputs.shape == (1, 2, 5, D)
  np.testing.assert_allclose(outputs[0, 0, 1], embedding.tables[1][2])
  np.testing.assert_allclose(
      outputs[0, 1, 2 + 1],
      real[0, 1, 1] * embedding.real_kernel[1] + embedding.real_bias[1],
      rtol=1e-6)
  _assert_config_round_trip(embedding, (categorical, real))


def test_input_embedding_handles_empty_groups():
  empty = InputEmbedding((), 0, D)
  outputs = empty((tf.zeros([B, T, 0], tf.int32), tf.zeros([B, T, 0])))
  assert outputs.shape == (B, T, 0, D)
  reals_only = InputEmbedding((), 2, D)
  assert reals_only((tf.zeros([B, 0], tf.int32), _normal(B, 2))).shape == (
      B, 2, D)


def test_input_embedding_rejects_wrong_widths():
  with pytest.raises(ValueError, match='expected 1 categoricals and 2 reals'):
    InputEmbedding((3,), 2, D)((tf.zeros([B, 1], tf.int32), _normal(B, 3)))


@pytest.mark.parametrize('shape', [(B, V, D), (B, T, V, D)])
def test_variable_selection_weights_sum_to_one(shape):
  inputs, context = _normal(*shape), _normal(B, D, seed=1)
  vsn = VariableSelectionNetwork(V, D, dropout_rate=0.1)
  selected, weights = vsn(inputs, context=context)
  assert selected.shape == shape[:-2] + (D,)
  assert weights.shape == shape[:-1]
  assert weights.dtype == tf.float32
  np.testing.assert_allclose(tf.reduce_sum(weights, -1), 1.0, rtol=1e-6)
  _, other_weights = vsn(inputs, context=context + 1.0)
  assert not np.allclose(weights, other_weights)
  _assert_config_round_trip(vsn, inputs, context=context)


@pytest.mark.parametrize('shape, real_positions', [
    ((B, T), (0, 2, 3)),  # a categorical among the reals, as in the history
    ((B,), (0, 1, 2, 3)),  # reals only, as the electricity data's history
])
def test_variable_selection_folds_real_embeddings_into_the_same_function(shape,
                                                                          real_positions):
  embedding = InputEmbedding((5,) * (V - len(real_positions)), len(real_positions), D)
  categorical = tf.zeros(shape + (V - len(real_positions),), tf.int32) + 2
  real = _normal(*shape, len(real_positions))
  order = [*[p for p in range(V) if p not in real_positions], *real_positions]
  context = _normal(B, D, seed=1)
  vsn = VariableSelectionNetwork(V, D, real_positions=real_positions)

  with tf.GradientTape(persistent=True) as tape:
    vectors = embedding((categorical, real))  # categoricals first
    reals = embedding.real_inputs(real)
    vectors = tf.gather(vectors, np.argsort(order), axis=-2)  # reals at their positions
    plain = vsn(vectors, context=context)
    folded = vsn(vectors, context=context, reals=reals)
  for plain_output, folded_output in zip(plain, folded):
    np.testing.assert_allclose(folded_output, plain_output, rtol=1e-5, atol=1e-5)
  # The same gradients reach the embedding's and the GRNs' weights.
  weights = embedding.trainable_variables + vsn.trainable_variables
  pairs = list(zip(tape.gradient(plain[0], weights), tape.gradient(folded[0], weights)))
  # The two paths sum in another order, so float32 error grows with the size of the
  # gradients (up to about 9 here); a wrong fold differs by far more.
  scale = max(np.abs(tf.convert_to_tensor(gradient)).max() for gradient, _ in pairs
              if gradient is not None)
  for plain_gradient, folded_gradient in pairs:
    assert (plain_gradient is None) == (folded_gradient is None)
    if plain_gradient is None:  # a variable GRN's context map: it gets no context
      continue
    np.testing.assert_allclose(tf.convert_to_tensor(folded_gradient),
                               tf.convert_to_tensor(plain_gradient), rtol=1e-4,
                               atol=1e-5 * max(1.0, scale))
  _assert_config_round_trip(vsn, vectors, context=context, reals=reals)


def test_variable_selection_rejects_bad_real_positions():
  with pytest.raises(ValueError, match=r'distinct positions in \[0, 4\), got \[1, 4\]'):
    VariableSelectionNetwork(V, D, real_positions=(1, 4))


def test_variable_selection_rejects_wrong_variable_count():
  with pytest.raises(ValueError, match=r'\[B, T, V=3, D\]'):
    VariableSelectionNetwork(3, D)(_normal(B, T, V, D))


def test_static_covariate_encoder_gives_four_distinct_contexts():
  encoder = StaticCovariateEncoder(D, dropout_rate=0.1)
  contexts = encoder(_normal(B, D))
  assert contexts._fields == ('selection', 'enrichment', 'state_h', 'state_c')
  assert all(context.shape == (B, D) for context in contexts)
  assert not np.allclose(contexts.state_h, contexts.state_c)
  _assert_config_round_trip(encoder, _normal(B, D))


def test_lstm_encoder_decoder_is_causal():
  history, future = _normal(B, E, D), _normal(B, H, D, seed=1)
  state_h, state_c = _normal(B, D, seed=2), _normal(B, D, seed=3)
  lstm = LSTMEncoderDecoder(D)
  outputs = lstm((history, future, state_h, state_c))
  assert outputs.shape == (B, T, D)
  changed_future = tf.tensor_scatter_nd_add(future, [[0, 1]], [tf.ones(D)])
  changed = lstm((history, changed_future, state_h, state_c))
  np.testing.assert_allclose(changed[:, :E + 1], outputs[:, :E + 1])
  assert not np.allclose(changed[0, E + 1:], outputs[0, E + 1:])
  changed_state = lstm((history, future, state_h + 1.0, state_c))
  assert not np.allclose(changed_state[:, 0], outputs[:, 0])
  _assert_config_round_trip(lstm, (history, future, state_h, state_c))


def test_attention_is_causal_and_rows_sum_to_one():
  memory = _normal(B, T, D)
  attention_layer = InterpretableMultiHeadAttention(num_heads=2,
                                                    dropout_rate=0.1)
  outputs, attention = attention_layer((memory[:, E:], memory))
  assert outputs.shape == (B, H, D)
  assert attention.shape == (B, H, T)
  np.testing.assert_allclose(tf.reduce_sum(attention, -1), 1.0, rtol=1e-6)
  # Query h sits at position E + h and sees positions <= E + h only.
  for h in range(H):
    np.testing.assert_array_equal(attention[:, h, E + h + 1:], 0.0)
    assert np.all(attention[:, h, :E + h + 1] > 0.0)
  changed_memory = tf.tensor_scatter_nd_add(memory, [[0, E + 1]], [tf.ones(D)])
  changed_outputs, _ = attention_layer((memory[:, E:], changed_memory))
  np.testing.assert_allclose(changed_outputs[:, 0], outputs[:, 0], rtol=1e-6)
  assert not np.allclose(changed_outputs[0, 1], outputs[0, 1])
  _assert_config_round_trip(attention_layer, (memory[:, E:], memory))


def test_attention_rejects_width_not_divisible_by_heads():
  with pytest.raises(ValueError, match='multiple of num_heads=3'):
    InterpretableMultiHeadAttention(3)((_normal(B, H, D), _normal(B, T, D)))


def test_target_scaler_standardises_each_window():
  history = tf.constant([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]])
  scaled, location, scale = WindowTargetScaler()(history)
  np.testing.assert_allclose(location, [[2.5], [5.0]])
  np.testing.assert_allclose(scale, [[np.sqrt(1.25)], [5e-3]], rtol=1e-6)
  np.testing.assert_allclose(scaled[0], (history[0] - 2.5) / np.sqrt(1.25),
                             rtol=1e-6)
  np.testing.assert_array_equal(scaled[1], 0.0)
  _assert_config_round_trip(WindowTargetScaler(min_scale=1e-2), history)


def test_target_scaler_can_centre_on_the_last_value():
  history = tf.constant([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]])
  scaled, location, scale = WindowTargetScaler('last')(history)
  np.testing.assert_allclose(location, [[4.0], [5.0]])
  np.testing.assert_allclose(scale, [[np.sqrt(1.25)], [5e-3]], rtol=1e-6)
  np.testing.assert_allclose(scaled[0], (history[0] - 4.0) / np.sqrt(1.25),
                             rtol=1e-6)
  assert scaled[0, -1] == 0.0
  _assert_config_round_trip(WindowTargetScaler('last'), history)


def test_target_scaler_rejects_an_unknown_location():
  with pytest.raises(ValueError, match="one of \\('mean', 'last'\\)"):
    WindowTargetScaler('median')


def test_history_highway_is_a_linear_map_that_starts_at_zero():
  history = _normal(B, E)
  highway = HistoryHighway(H)
  np.testing.assert_array_equal(highway(history), np.zeros([B, H]))
  kernel = np.random.default_rng(1).normal(size=(E, H)).astype(np.float32)
  highway.set_weights([kernel])
  np.testing.assert_allclose(highway(history), history.numpy() @ kernel,
                             rtol=1e-5, atol=1e-6)
  _assert_config_round_trip(highway, history)


def test_quantile_output_adds_a_per_step_baseline():
  features = _normal(B, H, D)
  baseline = _normal(B, H, seed=1)
  scale = tf.fill([B, 1], 10.0)
  head = QuantileOutput(3)
  scaled = head((features, tf.zeros([B, 1]), tf.ones([B, 1])))
  np.testing.assert_allclose(head((features, baseline, scale)),
                             baseline.numpy()[..., None] + 10.0 * scaled,
                             rtol=1e-5, atol=1e-5)


def test_quantile_output_maps_back_to_original_units():
  features = _normal(B, H, D)
  location, scale = tf.fill([B, 1], 100.0), tf.fill([B, 1], 10.0)
  head = QuantileOutput(3)
  quantiles = head((features, location, scale))
  scaled = head((features, tf.zeros([B, 1]), tf.ones([B, 1])))
  assert quantiles.shape == (B, H, 3)
  np.testing.assert_allclose(quantiles, 100.0 + 10.0 * scaled, rtol=1e-5)
  _assert_config_round_trip(head, (features, location, scale))
