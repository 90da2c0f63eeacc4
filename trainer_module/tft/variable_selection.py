"""The variable selection network (VSN): instance-wise soft feature selection."""

from collections.abc import Sequence

import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.embedding import RealInputs
from trainer_module.tft.grn import GatedResidualNetwork


@keras.utils.register_keras_serializable(package='tft')
class VariableSelectionNetwork(keras.layers.Layer):
  """Weights each variable by a softmax and sums their processed embeddings.

  v = softmax(GRN_v(flatten(xi), c)) over the V variables;
  output = sum_j v_j * GRN_j(xi_j), with one GRN per variable.

  A real variable's embedding is linear in its value, so the first linear map of each
  GRN that reads it is too: given the values (`RealInputs`), those maps run on the
  values through folded kernels (w_j W, b_j W + b) instead of on the D-wide embeddings.
  The same function of the same weights; on the paper's electricity history (11 reals)
  it removes the largest matmuls of the step.

  Args:
    variable_count: V, the number of variables selected from.
    units: Output width D.
    dropout_rate: Dropout inside the GRNs during training.
    real_positions: Positions among the V variables of the reals that `RealInputs`
      describes, in its order.
  """

  def __init__(self, variable_count: int, units: int, dropout_rate: float = 0.0,
               real_positions: Sequence[int] = (), **kwargs):
    super().__init__(**kwargs)
    if variable_count < 1:
      raise ValueError(
          f'{self.name}: variable_count must be >= 1, got {variable_count}.')
    if sorted(set(real_positions)) != sorted(real_positions) or any(
        not 0 <= position < variable_count for position in real_positions):
      raise ValueError(
          f'{self.name}: real_positions must be distinct positions in '
          f'[0, {variable_count}), got {list(real_positions)}.')
    self.variable_count = variable_count
    self.units = units
    self.dropout_rate = dropout_rate
    self.real_positions = tuple(real_positions)
    self.other_positions = tuple(
        position for position in range(variable_count)
        if position not in self.real_positions)
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
    embedding_size = input_shape[-1]
    if embedding_size is None:
      raise ValueError(
          f'{self.name}: the embedding axis must have a static size, got '
          f'{input_shape}.')
    # Built now: the folded maps read their kernels before any call.
    with tf.name_scope(self.selection_grn.name):
      self.selection_grn.build(
          tf.TensorShape([None, self.variable_count * embedding_size]))
    for grn in self.variable_grns:
      with tf.name_scope(grn.name):
        grn.build(tf.TensorShape([None, embedding_size]))
    super().build(input_shape)

  def call(self, inputs, context=None, training=None, reals=None):
    """Selects variables.

    Args:
      inputs: Embedded variables [B, V, D] (static) or [B, T, V, D] (temporal).
      context: Optional static context [B, C].
      training: Whether dropout is active.
      reals: Optional `RealInputs` of the variables at `real_positions`, whose
        embeddings in `inputs` they must give; the first maps then fold.

    Returns:
      (selected [B, units] or [B, T, units],
       weights [B, V] or [B, T, V], float32, summing to 1 over V).
    """
    embedding_size = inputs.shape[-1]
    leading_shape = tf.shape(inputs)[:-2]
    if reals is not None and self.real_positions:
      reals = RealInputs(*[tf.cast(part, self.compute_dtype) for part in reals])
    else:
      reals = None
    logits = self._selection_logits(inputs, reals, context, training)
    weights = tf.nn.softmax(tf.cast(logits, tf.float32))  # [..., V]

    # The per-variable GRNs run on 2-D [N, D] rows (N = B or B * T), where
    # matmul, bias and activation fuse and each slice stays cache-sized.
    variables = tf.unstack(
        tf.reshape(inputs, [-1, self.variable_count, embedding_size]), axis=1)
    variable_weights = tf.unstack(
        tf.cast(tf.reshape(weights, [-1, self.variable_count, 1]),
                self.compute_dtype), axis=1)
    real_index = {position: index for index, position in enumerate(self.real_positions)}
    real_rows = None if reals is None else tf.reshape(
        reals.values, [-1, len(self.real_positions)])
    processed = []
    for position, (grn, variable) in enumerate(zip(self.variable_grns, variables)):
      if reals is None or position not in real_index:
        processed.append(grn(variable, training=training))
        continue
      with tf.name_scope(grn.name):
        index = slice(real_index[position], real_index[position] + 1)
        hidden = _folded_dense(grn.hidden_dense, real_rows[:, index], reals.kernel[index],
                               reals.bias[index])
        processed.append(grn.from_projections(hidden, variable, training=training))
    selected = tf.add_n([
        output * weight for output, weight in zip(processed, variable_weights)
    ])  # [N, units]
    selected = tf.reshape(
        selected, tf.concat([leading_shape, [self.units]], axis=0))
    selected.set_shape(inputs.shape[:-2].concatenate(self.units))
    return selected, weights

  def _selection_logits(self, inputs, reals, context, training):
    """GRN_v(flatten(xi), c): [..., V]."""
    grn = self.selection_grn
    if reals is None:
      embedding_size = inputs.shape[-1]
      flat = tf.reshape(inputs, tf.concat(
          [tf.shape(inputs)[:-2], [self.variable_count * embedding_size]], axis=0))
      flat.set_shape(
          inputs.shape[:-2].concatenate(self.variable_count * embedding_size))
      return grn(flat, context=context, training=training)
    with tf.name_scope(grn.name):
      others = (tf.gather(inputs, self.other_positions, axis=-2)  # [..., V - Vr, D]
                if self.other_positions else None)
      hidden, skip = [self._split_dense(dense, others, reals)
                      for dense in (grn.hidden_dense, grn.skip_dense)]
      return grn.from_projections(hidden, skip, context, training)

  def _split_dense(self, dense, others, reals):
    """dense(flatten(embeddings)) [..., O], with the reals' rows of its kernel folded."""
    kernel = tf.reshape(tf.cast(dense.kernel, self.compute_dtype),
                        [self.variable_count, -1, dense.units])  # [V, D, O]
    outputs = _folded_dense(dense, reals.values, reals.kernel, reals.bias,
                            tf.gather(kernel, self.real_positions))
    if self.other_positions:
      other_kernel = tf.reshape(tf.gather(kernel, self.other_positions), [-1, dense.units])
      flat = tf.reshape(others, [-1, other_kernel.shape[0]])
      outputs += tf.reshape(tf.matmul(flat, other_kernel), tf.shape(outputs))
    return outputs

  def get_config(self):
    return {**super().get_config(), 'variable_count': self.variable_count,
            'units': self.units, 'dropout_rate': self.dropout_rate,
            'real_positions': self.real_positions}


def _folded_dense(dense, values, real_kernel, real_bias, dense_kernel=None):
  """dense applied to the concatenated embeddings x_j w_j + b_j of some reals.

  sum_j (x_j w_j + b_j) W_j + b = x (w_j W_j)_j + (sum_j b_j W_j + b).

  Args:
    dense: A built `Dense` layer (its bias is added).
    values: x [..., Vr].
    real_kernel: w [Vr, D].
    real_bias: b [Vr, D].
    dense_kernel: W split by real [Vr, D, O]; default: `dense.kernel` as [1, D, O].

  Returns:
    [..., O].
  """
  if dense_kernel is None:
    dense_kernel = tf.cast(dense.kernel, values.dtype)[tf.newaxis]
  folded_kernel = tf.einsum('rd,rdo->ro', real_kernel, dense_kernel)
  folded_bias = tf.einsum('rd,rdo->o', real_bias, dense_kernel)
  if dense.use_bias:
    folded_bias += tf.cast(dense.bias, values.dtype)
  # A 2-D matmul: its gradient is much faster on CPU than a batched einsum's.
  outputs = tf.matmul(tf.reshape(values, [-1, values.shape[-1]]), folded_kernel)
  outputs = tf.reshape(outputs, tf.concat([tf.shape(values)[:-1], [-1]], axis=0))
  outputs.set_shape(values.shape[:-1].concatenate(folded_kernel.shape[-1]))
  return outputs + folded_bias
