"""A linear forecast from the scaled target history, beside the TFT's own."""

import tensorflow as tf
import tf_keras as keras


@keras.utils.register_keras_serializable(package='tft')
class HistoryHighway(keras.layers.Layer):
  """Maps the scaled target history linearly to one value per horizon step.

  LSTNet's autoregressive highway (Lai et al. 2018): a linear component in
  parallel with the network keeps the forecast tied to the recent history's
  level and shape, which the network's nonlinear path follows less closely
  when the level or amplitude drifts. On a history centred on its last value
  it is NLinear (Zeng et al. 2023). The kernel starts at zero, so the model
  starts as the plain TFT. Computed in float32 whatever the global policy.

  Args:
    horizon: H.
  """

  def __init__(self, horizon: int, **kwargs):
    kwargs['dtype'] = 'float32'
    super().__init__(**kwargs)
    self.horizon = horizon

  def build(self, input_shape):
    encoder_steps = tf.TensorShape(input_shape)[-1]
    self.kernel = self.add_weight('kernel', (encoder_steps, self.horizon),
                                  initializer='zeros')
    super().build(input_shape)

  def call(self, inputs, training=None):
    """Forecasts linearly.

    Args:
      inputs: Scaled target history [B, E] (`WindowTargetScaler`'s output).
      training: Unused.

    Returns:
      [B, H] float32, in the history's scaled units.
    """
    return tf.einsum('be,eh->bh', inputs, self.kernel)  # [B, E] x [E, H]

  def get_config(self):
    return {**super().get_config(), 'horizon': self.horizon}
