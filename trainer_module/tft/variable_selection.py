"""The variable selection network (VSN): instance-wise soft feature selection."""

import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.grn import GatedResidualNetwork


@keras.utils.register_keras_serializable(package='tft')
class VariableSelectionNetwork(keras.layers.Layer):
  """Weights each variable by a softmax and sums their processed embeddings.

  v = softmax(GRN_v(flatten(xi), c)) over the V variables;
  output = sum_j v_j * GRN_j(xi_j), with one GRN per variable.

  Args:
    variable_count: V, the number of variables selected from.
    units: Output width D.
    dropout_rate: Dropout inside the GRNs during training.
  """

  def __init__(self, variable_count: int, units: int, dropout_rate: float = 0.0,
               **kwargs):
    super().__init__(**kwargs)
    if variable_count < 1:
      raise ValueError(
          f'{self.name}: variable_count must be >= 1, got {variable_count}.')
    self.variable_count = variable_count
    self.units = units
    self.dropout_rate = dropout_rate
    self.selection_grn = GatedResidualNetwork(
        variable_count, hidden_size=units, dropout_rate=dropout_rate,
        name='selection_grn')
    self.variable_grns = [
        GatedResidualNetwork(units, dropout_rate=dropout_rate,
                             name=f'variable_grn_{index}')
        for index in range(variable_count)
    ]

  def build(self, input_shape):
    if len(input_shape) not in (3, 4) or input_shape[-2] != self.variable_count:
      raise ValueError(
          f'{self.name}: inputs must be [B, V={self.variable_count}, D] or '
          f'[B, T, V={self.variable_count}, D], got {input_shape}.')
    if input_shape[-1] is None:
      raise ValueError(
          f'{self.name}: the embedding axis must have a static size, got '
          f'{input_shape}.')
    super().build(input_shape)

  def call(self, inputs, context=None, training=None):
    """Selects variables.

    Args:
      inputs: Embedded variables [B, V, D] (static) or [B, T, V, D] (temporal).
      context: Optional static context [B, C].
      training: Whether dropout is active.

    Returns:
      (selected [B, units] or [B, T, units],
       weights [B, V] or [B, T, V], float32, summing to 1 over V).
    """
    embedding_size = inputs.shape[-1]
    leading_shape = tf.shape(inputs)[:-2]
    flat = tf.reshape(inputs, tf.concat(
        [leading_shape, [self.variable_count * embedding_size]], axis=0))
    flat.set_shape(
        inputs.shape[:-2].concatenate(self.variable_count * embedding_size))
    logits = self.selection_grn(flat, context=context, training=training)
    weights = tf.nn.softmax(tf.cast(logits, tf.float32))  # [..., V]

    # The per-variable GRNs run on 2-D [N, D] slices (N = B or B * T), where
    # matmul, bias and activation fuse and each slice stays cache-sized.
    variables = tf.unstack(
        tf.reshape(inputs, [-1, self.variable_count, embedding_size]), axis=1)
    variable_weights = tf.unstack(
        tf.cast(tf.reshape(weights, [-1, self.variable_count, 1]),
                self.compute_dtype), axis=1)
    selected = tf.add_n([
        grn(variable, training=training) * weight
        for grn, variable, weight in zip(
            self.variable_grns, variables, variable_weights)
    ])  # [N, units]
    selected = tf.reshape(
        selected, tf.concat([leading_shape, [self.units]], axis=0))
    selected.set_shape(inputs.shape[:-2].concatenate(self.units))
    return selected, weights

  def get_config(self):
    return {**super().get_config(), 'variable_count': self.variable_count,
            'units': self.units, 'dropout_rate': self.dropout_rate}
