"""Input embedding: every variable of an input group becomes a D-vector."""

from collections.abc import Sequence
from typing import NamedTuple

import tensorflow as tf
import tf_keras as keras


class RealInputs(NamedTuple):
  """Real variables by their embedding x_j w_j + b_j, without the D-wide vectors.

  Attributes:
    values: x [..., Vr].
    kernel: w [Vr, D].
    bias: b [Vr, D].
  """
  values: tf.Tensor
  kernel: tf.Tensor
  bias: tf.Tensor

  def followed_by(self, other: 'RealInputs') -> 'RealInputs':
    """These reals, then `other`'s (same leading axes)."""
    return RealInputs(*[tf.concat([mine, theirs], axis=-1 if index == 0 else 0)
                        for index, (mine, theirs) in enumerate(zip(self, other))])


@keras.utils.register_keras_serializable(package='tft')
class InputEmbedding(keras.layers.Layer):
  """Embeds categoricals with lookup tables and reals with linear maps.

  Real variable j maps to x_j * w_j + b_j, its own learned D-vectors.

  Args:
    cardinalities: Vocabulary size of each categorical variable; ids must lie
      in [0, cardinality).
    real_count: Number of real variables.
    units: Embedding width D.
  """

  def __init__(self, cardinalities: Sequence[int], real_count: int, units: int,
               **kwargs):
    super().__init__(**kwargs)
    self.cardinalities = tuple(cardinalities)
    self.real_count = real_count
    self.units = units

  def build(self, input_shape):
    self.tables = [
        self.add_weight(f'table_{index}', (cardinality, self.units),
                        initializer='uniform')
        for index, cardinality in enumerate(self.cardinalities)
    ]
    self.real_kernel = self.add_weight(
        'real_kernel', (self.real_count, self.units), initializer='glorot_uniform')
    self.real_bias = self.add_weight(
        'real_bias', (self.real_count, self.units), initializer='zeros')
    super().build(input_shape)

  def call(self, inputs, training=None):
    """Embeds one input group.

    Args:
      inputs: (categorical, real): int [..., Vc] and float [..., Vr], with the
        same leading axes (e.g. [B] or [B, T]).
      training: Unused.

    Returns:
      [..., Vc + Vr, D], categoricals first.
    """
    categorical, real = inputs
    if categorical.shape[-1] != len(self.cardinalities) or (
        real.shape[-1] != self.real_count):
      raise ValueError(
          f'{self.name}: expected {len(self.cardinalities)} categoricals and '
          f'{self.real_count} reals on the last axis, got shapes '
          f'{categorical.shape} and {real.shape}.')
    embedded = [
        tf.cast(tf.gather(table, categorical[..., index]), self.compute_dtype)
        for index, table in enumerate(self.tables)
    ]
    # [..., Vr, 1] * [Vr, D] -> [..., Vr, D]; also right for Vr = 0.
    reals = real[..., tf.newaxis] * self.real_kernel + self.real_bias
    stacked = [tf.stack(embedded, axis=-2)] if embedded else []
    return tf.concat(stacked + [reals], axis=-2)

  def real_inputs(self, real) -> RealInputs:
    """The reals of `real` [..., Vr] with this layer's kernel and bias."""
    return RealInputs(real, self.real_kernel, self.real_bias)

  def get_config(self):
    return {**super().get_config(), 'cardinalities': self.cardinalities,
            'real_count': self.real_count, 'units': self.units}
