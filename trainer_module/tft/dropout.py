"""Dropout that draws 16 random bits per element instead of a 32-bit float.

Keras' `Dropout` draws one float per element; at the paper's electricity size its random
numbers were about a tenth of a CPU training step. Here one 32-bit draw decides two
elements: each keeps its value, scaled by 1 / (1 - rate), when its 16 bits are at least
round(rate * 2^16), so the rate is exact to 2^-17. The draw is seeded like Keras' (from
the global and op seeds, through one small stateful op per call) and has no variables,
so checkpoints are the same as with Keras' layer.
"""

import numpy as np
import tensorflow as tf
import tf_keras as keras

_BITS = 16
_INT64_MAX = np.iinfo(np.int64).max


@keras.utils.register_keras_serializable(package='tft')
class BitDropout(keras.layers.Layer):
  """Sets each input element to 0 with probability `rate` during training, and scales
  the others by 1 / (1 - rate).

  Args:
    rate: The fraction of elements dropped, in [0, 1).
  """

  def __init__(self, rate: float, **kwargs):
    super().__init__(**kwargs)
    if not 0.0 <= rate < 1.0 or round(rate * (1 << _BITS)) >= 1 << _BITS:
      raise ValueError(f'{self.name}: rate must be in [0, 1 - 2^-{_BITS + 1}), got {rate}.')
    self.rate = rate
    self.supports_masking = True

  def call(self, inputs, training=None):
    if training is None:
      training = keras.backend.learning_phase()
    if self.rate == 0.0:
      return inputs
    return tf.__internal__.smart_cond.smart_cond(
        training, lambda: self._dropped(inputs), lambda: tf.identity(inputs))

  def _dropped(self, inputs):
    size = tf.size(inputs)
    seed = tf.random.uniform([2], maxval=_INT64_MAX, dtype=tf.int64)
    draws = tf.random.stateless_uniform([(size + 1) // 2], seed, dtype=tf.int32,
                                        minval=None, maxval=None)
    bits = tf.reshape(tf.bitcast(draws, tf.uint16), [-1])[:size]
    threshold = tf.constant(round(self.rate * (1 << _BITS)), tf.uint16)
    keep = tf.reshape(bits >= threshold, tf.shape(inputs))
    return inputs * (tf.cast(keep, inputs.dtype) * (1.0 / (1.0 - self.rate)))

  def get_config(self):
    return {**super().get_config(), 'rate': self.rate}
