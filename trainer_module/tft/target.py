"""Per-window target scaling and the quantile output head (original units)."""

import tensorflow as tf
import tf_keras as keras


@keras.utils.register_keras_serializable(package='tft')
class WindowTargetScaler(keras.layers.Layer):
  """Standardises each window's target history by its own mean and std.

  Computed in float32 whatever the global policy: raw targets can be large.

  Args:
    min_scale: Floor of the scale, relative to max(1, |mean|), so that a flat
      history does not divide by zero.
  """

  def __init__(self, min_scale: float = 1e-3, **kwargs):
    kwargs['dtype'] = 'float32'
    super().__init__(**kwargs)
    self.min_scale = min_scale

  def call(self, inputs, training=None):
    """Scales the target history.

    Args:
      inputs: Target history [B, E], raw units.
      training: Unused.

    Returns:
      (scaled [B, E], location [B, 1], scale [B, 1]), all float32.
    """
    location, variance = tf.nn.moments(inputs, axes=[1], keepdims=True)
    floor = self.min_scale * tf.maximum(tf.abs(location), 1.0)
    scale = tf.maximum(tf.sqrt(variance), floor)
    return (inputs - location) / scale, location, scale

  def get_config(self):
    return {**super().get_config(), 'min_scale': self.min_scale}


@keras.utils.register_keras_serializable(package='tft')
class QuantileOutput(keras.layers.Layer):
  """Projects decoder features to quantiles and maps them to original units.

  Computed in float32 whatever the global policy.

  Args:
    quantile_count: Q.
  """

  def __init__(self, quantile_count: int, **kwargs):
    kwargs['dtype'] = 'float32'
    super().__init__(**kwargs)
    self.quantile_count = quantile_count

  def build(self, input_shape):
    features_shape = tf.TensorShape(input_shape[0])
    self.kernel = self.add_weight(
        'kernel', (features_shape[-1], self.quantile_count),
        initializer='glorot_uniform')
    self.bias = self.add_weight('bias', (self.quantile_count,),
                                initializer='zeros')
    super().build(input_shape)

  def call(self, inputs, training=None):
    """Forecasts quantiles.

    Args:
      inputs: (features [B, H, D], location [B, 1], scale [B, 1]) with location
        and scale from `WindowTargetScaler`.
      training: Unused.

    Returns:
      Quantiles [B, H, Q], float32, original units.
    """
    features, location, scale = inputs
    scaled = tf.einsum('bhd,dq->bhq', features, self.kernel) + self.bias
    return location[:, :, tf.newaxis] + scale[:, :, tf.newaxis] * scaled

  def get_config(self):
    return {**super().get_config(), 'quantile_count': self.quantile_count}
