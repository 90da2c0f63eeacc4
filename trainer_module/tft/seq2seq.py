"""Locality enhancement: an LSTM encoder over history, a decoder over the horizon."""

import tensorflow as tf
import tf_keras as keras


@keras.utils.register_keras_serializable(package='tft')
class LSTMEncoderDecoder(keras.layers.Layer):
  """The paper's sequence-to-sequence layer.

  The encoder starts from the static contexts (c_h, c_c); the decoder starts
  from the encoder's final state. Both are causal, so output t depends only on
  inputs at steps <= t.

  Both are `RNN(LSTMCell)`, the same computation as `layers.LSTM` without its
  backend-selection wrapper (which only serves cuDNN): under XLA that wrapper
  turns every input and weight into a compile-time constant, so each training
  step recompiles. Without it XLA compiles once, and the CPU speed is the same.

  Args:
    units: LSTM width D.
    unroll: Unroll both LSTMs (can pay off on TPU for short windows).
  """

  def __init__(self, units: int, unroll: bool = False, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.unroll = unroll
    self.encoder = keras.layers.RNN(
        keras.layers.LSTMCell(units), return_sequences=True,
        return_state=True, unroll=unroll, name='encoder')
    self.decoder = keras.layers.RNN(
        keras.layers.LSTMCell(units), return_sequences=True, unroll=unroll,
        name='decoder')

  def call(self, inputs, training=None):
    """Encodes and decodes.

    Args:
      inputs: (history [B, E, D], future [B, H, D], state_h [B, D],
        state_c [B, D]).
      training: Passed to the LSTMs.

    Returns:
      [B, T, units], encoder outputs followed by decoder outputs.
    """
    history, future, state_h, state_c = inputs
    encoded, final_h, final_c = self.encoder(
        history, initial_state=[state_h, state_c], training=training)
    decoded = self.decoder(future, initial_state=[final_h, final_c],
                           training=training)
    return tf.concat([encoded, decoded], axis=1)

  def get_config(self):
    return {**super().get_config(), 'units': self.units, 'unroll': self.unroll}
