"""Per-window target scaling and the quantile output head (original units)."""

import tensorflow as tf
import tf_keras as keras

from schema.hparams import TARGET_LOCATIONS


@keras.utils.register_keras_serializable(package='tft')
class WindowTargetScaler(keras.layers.Layer):
  """Centres each window's target history and divides it by its own std.

  Computed in float32 whatever the global policy: raw targets can be large.

  Args:
    location: 'mean' centres on the history's mean; 'last' on its last value,
      so that the model forecasts the change from now on (as NLinear does),
      which holds up better when the level drifts between training and
      forecast periods.
    min_scale: Floor of the scale, relative to max(1, |location|), so that a
      flat history does not divide by zero.
  """

  def __init__(self, location: str = 'mean', min_scale: float = 1e-3,
               **kwargs):
    if location not in TARGET_LOCATIONS:
      raise ValueError(f'target location must be one of {TARGET_LOCATIONS}, '
                       f'got {location!r}.')
    kwargs['dtype'] = 'float32'
    super().__init__(**kwargs)
    self.location = location
    self.min_scale = min_scale

  def call(self, inputs, training=None):
    """Scales the target history.

    Args:
      inputs: Target history [B, E], raw units.
      training: Unused.

    Returns:
      (scaled [B, E], location [B, 1], scale [B, 1]), all float32.
    """
    mean, variance = tf.nn.moments(inputs, axes=[1], keepdims=True)
    location = mean if self.location == 'mean' else inputs[:, -1:]
    floor = self.min_scale * tf.maximum(tf.abs(location), 1.0)
    scale = tf.maximum(tf.sqrt(variance), floor)
    return (inputs - location) / scale, location, scale

  def get_config(self):
    return {**super().get_config(), 'location': self.location,
            'min_scale': self.min_scale}


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
      inputs: (features [B, H, D], baseline [B, 1] or [B, H], scale [B, 1]):
        the quantiles are baseline + scale * projection. The baseline is the
        location of `WindowTargetScaler`, plus the history highway's forecast
        when the model has one.
      training: Unused.

    Returns:
      Quantiles [B, H, Q], float32, original units.
    """
    features, baseline, scale = inputs
    scaled = tf.einsum('bhd,dq->bhq', features, self.kernel) + self.bias
    return baseline[:, :, tf.newaxis] + scale[:, :, tf.newaxis] * scaled

  def get_config(self):
    return {**super().get_config(), 'quantile_count': self.quantile_count}
