"""The gated residual network (GRN), the TFT's basic nonlinear block."""

import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.gating import GateAddNorm


@keras.utils.register_keras_serializable(package='tft')
class GatedResidualNetwork(keras.layers.Layer):
  """GRN(a, c) = LayerNorm(skip(a) + GLU(W1 ELU(W2 a + W3 c + b2) + b1)).

  skip(a) is a linear projection when the input width differs from `units`,
  otherwise the identity.

  Args:
    units: Output width.
    hidden_size: Width of the hidden layer; defaults to `units`.
    dropout_rate: Dropout before the gate during training.
  """

  def __init__(self, units: int, hidden_size: int | None = None,
               dropout_rate: float = 0.0, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.hidden_size = hidden_size or units
    self.dropout_rate = dropout_rate
    self.hidden_dense = keras.layers.Dense(self.hidden_size,
                                           name='hidden_dense')
    self.context_dense = keras.layers.Dense(self.hidden_size, use_bias=False,
                                            name='context_dense')
    self.output_dense = keras.layers.Dense(self.hidden_size,
                                           name='output_dense')
    self.skip_dense = keras.layers.Dense(units, name='skip_dense')
    self.gate_add_norm = GateAddNorm(units, dropout_rate, name='gate_add_norm')

  def build(self, input_shape):
    self.projects_skip = input_shape[-1] != self.units
    # Built now rather than on their first call: a variable selection network reads
    # their kernels to fold a real input's linear embedding into them.
    for dense in [self.hidden_dense] + ([self.skip_dense] if self.projects_skip else []):
      with tf.name_scope(dense.name):
        dense.build(input_shape)
    super().build(input_shape)

  def call(self, inputs, context=None, training=None):
    """Applies the GRN.

    Args:
      inputs: a [B, ..., I].
      context: Optional c [B, C], broadcast over the middle axes of a.
      training: Whether dropout is active.

    Returns:
      [B, ..., units].
    """
    skip = self.skip_dense(inputs) if self.projects_skip else inputs
    return self.from_projections(self.hidden_dense(inputs), skip, context, training)

  def from_projections(self, hidden, skip, context=None, training=None):
    """The GRN given the two linear maps of its input: hidden = W2 a + b2 and skip(a).

    Args:
      hidden: [B, ..., hidden_size].
      skip: [B, ..., units].
      context: Optional c [B, C], broadcast over the middle axes.
      training: Whether dropout is active.

    Returns:
      [B, ..., units].
    """
    if context is not None:
      context = self.context_dense(tf.cast(context, self.compute_dtype))
      # [B, hidden] -> [B, 1, ..., 1, hidden] to broadcast over time.
      middle_axes = [1] * (hidden.shape.rank - 2)
      hidden += tf.reshape(context, [-1, *middle_axes, self.hidden_size])
    hidden = self.output_dense(tf.nn.elu(hidden))
    return self.gate_add_norm((hidden, skip), training=training)

  def get_config(self):
    return {**super().get_config(), 'units': self.units,
            'hidden_size': self.hidden_size,
            'dropout_rate': self.dropout_rate}
