"""The Temporal Fusion Transformer model: five stages over the named input dict.

See the package docstring for the shape letters. Inputs (`inputs.INPUT_KEYS`):
static_categorical int [B, Sc], static_real [B, Sr], known_categorical int
[B, T, Kc], known_real [B, T, Kr], observed_real [B, E, Or], target_history
[B, E] in raw units. Outputs: quantiles [B, H, Q] in raw units, static_weights
[B, Vs], history_weights [B, E, Vh], future_weights [B, H, Vf] and attention
[B, H, T], all float32. With `TFTConfig.seasonal_lag` L the future variables end
with one more: the scaled target L steps before each horizon step.
"""

import dataclasses
from typing import NamedTuple

import tensorflow as tf
import tf_keras as keras

from schema.hparams import TFTConfig
from schema.hparams import check_seasonal_lag
from trainer_module.tft import inputs as tft_inputs
from trainer_module.tft.attention import InterpretableMultiHeadAttention
from trainer_module.tft.embedding import InputEmbedding
from trainer_module.tft.embedding import RealInputs
from trainer_module.tft.gating import GateAddNorm
from trainer_module.tft.grn import GatedResidualNetwork
from trainer_module.tft.highway import HistoryHighway
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.losses import QuantileLoss
from trainer_module.tft.losses import QuantileRisk
from trainer_module.tft.optimizer import FusedAdam
from trainer_module.tft.seq2seq import LSTMEncoderDecoder
from trainer_module.tft.static_encoder import StaticContexts
from trainer_module.tft.static_encoder import StaticCovariateEncoder
from trainer_module.tft.target import QuantileOutput
from trainer_module.tft.target import WindowTargetScaler
from trainer_module.tft.variable_selection import VariableSelectionNetwork

QUANTILES = 'quantiles'
STATIC_WEIGHTS = 'static_weights'
HISTORY_WEIGHTS = 'history_weights'
FUTURE_WEIGHTS = 'future_weights'
ATTENTION = 'attention'
# The embedding layers of categorical inputs: one table per static or known categorical,
# in the order of the layout's cardinalities.
STATIC_EMBEDDING, KNOWN_EMBEDDING = 'static_embedding', 'known_embedding'


class Embedded(NamedTuple):
  """One input group's variables: embeddings [..., V, D] and the reals among them."""
  vectors: tf.Tensor
  reals: RealInputs


class TemporalFusionTransformer(keras.Model):
  """TFT forecasting the horizon of each window from its history.

  Args:
    layout: Window lengths and input group widths.
    config: Hyperparameters.
  """

  def __init__(self, layout: InputLayout, config: TFTConfig, **kwargs):
    # No autocast: the raw target history must reach the scaler in float32.
    super().__init__(autocast=False, **kwargs)
    self.layout = layout
    self.config = config
    size, dropout = config.hidden_size, config.dropout

    self.target_scaler = WindowTargetScaler(config.target_location,
                                            name='target_scaler')
    self.static_embedding = InputEmbedding(
        layout.static_cardinalities, layout.static_real_count, size,
        name=STATIC_EMBEDDING)
    self.known_embedding = InputEmbedding(
        layout.known_cardinalities, layout.known_real_count, size,
        name=KNOWN_EMBEDDING)
    self.observed_embedding = InputEmbedding(
        (), 1 + layout.observed_real_count, size, name='observed_embedding')

    static_categoricals = len(layout.static_cardinalities)
    known_categoricals = len(layout.known_cardinalities)
    observed_reals = 1 + layout.observed_real_count  # the target history leads
    self.static_vsn = VariableSelectionNetwork(
        layout.static_variable_count, size, dropout,
        real_positions=range(static_categoricals, layout.static_variable_count),
        name='static_vsn')
    self.static_encoder = StaticCovariateEncoder(size, dropout,
                                                 name='static_encoder')

    # History variables: the observed reals, then the known inputs.
    self.history_vsn = VariableSelectionNetwork(
        layout.history_variable_count, size, dropout,
        real_positions=[*range(observed_reals), *range(
            observed_reals + known_categoricals, layout.history_variable_count)],
        name='history_vsn')
    # The target a season before each horizon step follows the known inputs.
    check_seasonal_lag(config.seasonal_lag, layout.encoder_steps, layout.horizon)
    self.seasonal_lag_embedding = (
        InputEmbedding((), 1, size, name='seasonal_lag_embedding')
        if config.seasonal_lag else None)
    future_variables = layout.future_variable_count + (1 if config.seasonal_lag else 0)
    # Without future inputs the decoder LSTM runs on its state alone.
    self.future_vsn = (
        VariableSelectionNetwork(
            future_variables, size, dropout,
            real_positions=range(known_categoricals, future_variables),
            name='future_vsn')
        if future_variables else None)
    self.lstm = LSTMEncoderDecoder(size, unroll=config.lstm_unroll,
                                   name='lstm')
    self.lstm_gate = GateAddNorm(size, dropout, name='lstm_gate')

    self.enrichment_grn = GatedResidualNetwork(size, dropout_rate=dropout,
                                               name='enrichment_grn')
    self.attention = InterpretableMultiHeadAttention(
        config.num_heads, dropout, name='attention')
    self.attention_gate = GateAddNorm(size, dropout, name='attention_gate')
    self.positionwise_grn = GatedResidualNetwork(size, dropout_rate=dropout,
                                                 name='positionwise_grn')
    self.output_gate = GateAddNorm(size, name='output_gate')
    self.quantile_output = QuantileOutput(config.quantile_count,
                                          name='quantile_output')
    self.history_highway = (
        HistoryHighway(layout.horizon, name='history_highway')
        if config.history_highway else None)

  # Neither the model nor Keras' training and evaluation steps have
  # tensor-dependent Python control flow. Skipping AutoGraph conversion (which
  # then also skips it for every layer, the loss, the metrics and the
  # optimizer's per-variable updates) makes the first trace about twice as fast.
  @tf.autograph.experimental.do_not_convert
  def train_step(self, data):
    return super().train_step(data)

  @tf.autograph.experimental.do_not_convert
  def test_step(self, data):
    return super().test_step(data)

  @tf.autograph.experimental.do_not_convert
  def call(self, inputs, training=None):
    """Forecasts quantiles for a batch of windows (see the module docstring)."""
    tft_inputs.check_inputs(inputs, self.layout)
    scaled_target, location, scale = self.target_scaler(
        inputs[tft_inputs.TARGET_HISTORY])
    static, history, future = self.embed(inputs, scaled_target)
    static_weights, contexts = self._encode_static(static, training)
    temporal, history_weights, future_weights = self._encode_temporal(
        history, future, contexts, training)
    decoded, attention = self._decode(temporal, contexts.enrichment, training)
    return {
        QUANTILES: self.quantile_output(
            (decoded, self._baseline(scaled_target, location, scale), scale)),
        STATIC_WEIGHTS: static_weights,
        HISTORY_WEIGHTS: history_weights,
        FUTURE_WEIGHTS: future_weights,
        ATTENTION: attention,
    }

  def embed(self, inputs, scaled_target):
    """Returns the `Embedded` static [B, Vs, D], history [B, E, Vh, D] and future
    [B, H, Vf, D] variables."""
    encoder_steps = self.layout.encoder_steps
    static_real = inputs[tft_inputs.STATIC_REAL]
    static = self.static_embedding((
        tf.cast(inputs[tft_inputs.STATIC_CATEGORICAL], tf.int32), static_real))
    known_categorical = tf.cast(inputs[tft_inputs.KNOWN_CATEGORICAL], tf.int32)
    known_real = inputs[tft_inputs.KNOWN_REAL]
    # Slicing the raw inputs, not their embeddings, keeps big tensors out of
    # the slice gradients; both halves share the known embedding.
    known_history_real = known_real[:, :encoder_steps]
    future_real = known_real[:, encoder_steps:]
    known_history = self.known_embedding((
        known_categorical[:, :encoder_steps], known_history_real))
    future = self.known_embedding((known_categorical[:, encoder_steps:], future_real))
    # The target history is an observed real too; it leads the history.
    observed_reals = tf.concat([
        scaled_target[..., tf.newaxis],
        tf.cast(inputs[tft_inputs.OBSERVED_REAL], tf.float32)], axis=-1)
    observed = self.observed_embedding((
        tf.zeros_like(observed_reals[..., :0], tf.int32), observed_reals))
    history = tf.concat([observed, known_history], axis=2)
    future_reals = self.known_embedding.real_inputs(future_real)
    if self.seasonal_lag_embedding is not None:
      # Horizon step h reads the scaled target at history position E + h - L.
      start = encoder_steps - self.config.seasonal_lag
      seasonal = scaled_target[:, start:start + self.layout.horizon, tf.newaxis]
      empty = tf.zeros_like(seasonal[..., :0], tf.int32)
      future = tf.concat([future, self.seasonal_lag_embedding((empty, seasonal))], axis=2)
      future_reals = future_reals.followed_by(
          self.seasonal_lag_embedding.real_inputs(seasonal))
    return (
        Embedded(static, self.static_embedding.real_inputs(static_real)),
        Embedded(history, self.observed_embedding.real_inputs(observed_reals).followed_by(
            self.known_embedding.real_inputs(known_history_real))),
        Embedded(future, future_reals))

  def _encode_static(self, static: Embedded, training):
    """Returns static weights [B, Vs] and the four `StaticContexts`."""
    selected, weights = self.static_vsn(static.vectors, reals=static.reals,
                                        training=training)
    return weights, self.static_encoder(selected, training=training)

  def _encode_temporal(self, history: Embedded, future: Embedded,
                       contexts: StaticContexts, training):
    """Selects variables and runs the LSTMs.

    Returns:
      (temporal features [B, T, D] after the gated skip,
       history weights [B, E, Vh], future weights [B, H, Vf]).
    """
    history_selected, history_weights = self.history_vsn(
        history.vectors, context=contexts.selection, reals=history.reals,
        training=training)
    if self.future_vsn is None:
      future_selected = tf.zeros(
          [tf.shape(history.vectors)[0], self.layout.horizon, self.config.hidden_size],
          history_selected.dtype)
      future_weights = tf.zeros([tf.shape(history.vectors)[0], self.layout.horizon, 0])
    else:
      future_selected, future_weights = self.future_vsn(
          future.vectors, context=contexts.selection, reals=future.reals,
          training=training)
    lstm_outputs = self.lstm(
        (history_selected, future_selected, contexts.state_h, contexts.state_c),
        training=training)
    selected = tf.concat([history_selected, future_selected], axis=1)
    temporal = self.lstm_gate((lstm_outputs, selected), training=training)
    return temporal, history_weights, future_weights

  def _decode(self, temporal, enrichment_context, training):
    """Enriches, attends and processes the horizon positions.

    Returns:
      (decoded features [B, H, D], attention [B, H, T]).
    """
    encoder_steps = self.layout.encoder_steps
    enriched = self.enrichment_grn(temporal, context=enrichment_context,
                                   training=training)  # [B, T, D]
    horizon_enriched = enriched[:, encoder_steps:]
    attended, attention = self.attention((horizon_enriched, enriched),
                                         training=training)
    attended = self.attention_gate((attended, horizon_enriched),
                                   training=training)
    decoded = self.positionwise_grn(attended, training=training)
    decoded = self.output_gate((decoded, temporal[:, encoder_steps:]),
                               training=training)
    return decoded, attention

  def _baseline(self, scaled_target, location, scale):
    """What the quantile head's output is added to: [B, 1], or [B, H] with the
    history highway's linear forecast."""
    if self.history_highway is None:
      return location
    return location + scale * self.history_highway(scaled_target)

  def get_config(self):
    return {'name': self.name, 'layout': dataclasses.asdict(self.layout),
            'config': dataclasses.asdict(self.config)}

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(InputLayout(**config['layout']), TFTConfig(**config['config']),
               name=config['name'])


def build_tft_model(layout: InputLayout, config: TFTConfig,
                    name: str = 'temporal_fusion_transformer',
                    on_tpu: bool = False) -> TemporalFusionTransformer:
  """Creates a TFT and its weights (under the current distribution scope).

  Args:
    layout: Window lengths and input group widths.
    config: Hyperparameters.
    name: The model's name (an ensemble's members need distinct ones).
    on_tpu: Whether it trains under a TPU strategy (`config.precision` 'auto').

  Returns:
    A built, uncompiled model; see `compile_tft_model`.
  """
  # Layers take the global policy when they are created: set it for this model only.
  previous = keras.mixed_precision.global_policy()
  keras.mixed_precision.set_global_policy(config.dtype_policy(on_tpu))
  try:
    model = TemporalFusionTransformer(layout, config, name=name)
    model(_example_inputs(layout), training=False)
  finally:
    keras.mixed_precision.set_global_policy(previous)
  return model


def compile_tft_model(model: TemporalFusionTransformer, config: TFTConfig,
                      learning_rate=None, steps_per_execution: int = 1) -> None:
  """Compiles with Adam (`FusedAdam`), the quantile loss and q-risk metrics from `config`.

  Call it under the same distribution scope as `build_tft_model`. Labels must
  be a dict {'quantiles': y} with y [B, H] in raw units; the interpretation
  outputs get no loss.

  Args:
    model: A built model.
    config: Its hyperparameters.
    learning_rate: A float or a `LearningRateSchedule` (e.g. the Trainer's
      `train.learning_rate_schedule`); None: constant `config.learning_rate`.
    steps_per_execution: Training steps per call of the compiled step.
  """
  if learning_rate is None:
    learning_rate = config.learning_rate
  optimizer = FusedAdam(learning_rate, clipnorm=config.clipnorm)
  # Creating the slot variables now, not while tracing the first training
  # step, cuts that trace time by more than half.
  optimizer.build(model.trainable_variables)
  model.compile(optimizer=optimizer, steps_per_execution=steps_per_execution,
                jit_compile=config.jit_compile, **loss_and_metrics(config))
  # Keras would create the loss and metric variables while tracing the first
  # training step, and a step that creates variables is traced twice; create
  # them now instead.
  predictions = model(_example_inputs(model.layout))
  model.compiled_loss.build(predictions)
  model.compiled_metrics.build(predictions, {  # labels of the quantiles only
      name: tf.zeros([1, model.layout.horizon]) if name == QUANTILES else None
      for name in predictions})


def loss_and_metrics(config: TFTConfig) -> dict:
  """`compile` arguments: the quantile loss and a q-risk per quantile, on the
  `quantiles` output."""
  return {'loss': {QUANTILES: QuantileLoss(config.quantiles, config.point_loss)},
          'metrics': {QUANTILES: [QuantileRisk(q, config.quantiles)
                                  for q in config.quantiles]}}


def _example_inputs(layout: InputLayout) -> dict[str, tf.Tensor]:
  """Returns a batch of one all-zero window."""
  return {
      key: tf.zeros([1, *spec.shape[1:]], spec.dtype)
      for key, spec in tft_inputs.input_signature(layout).items()
  }
