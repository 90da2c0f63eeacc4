"""Gating blocks: the gated linear unit and the gate + add & norm step."""

import tf_keras as keras

from trainer_module.tft.dropout import BitDropout


@keras.utils.register_keras_serializable(package='tft')
class GatedLinearUnit(keras.layers.Layer):
  """GLU(x) = (x W + b) * sigmoid(x W_g + b_g), with dropout on x.

  Args:
    units: Output width.
    dropout_rate: Dropout on the inputs during training.
  """

  def __init__(self, units: int, dropout_rate: float = 0.0, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.dropout_rate = dropout_rate
    self.dropout = BitDropout(dropout_rate)
    self.values_dense = keras.layers.Dense(units, name='values_dense')
    self.gates_dense = keras.layers.Dense(units, activation='sigmoid',
                                          name='gates_dense')

  def call(self, inputs, training=None):
    """Maps [..., I] to [..., units]."""
    inputs = self.dropout(inputs, training=training)
    return self.values_dense(inputs) * self.gates_dense(inputs)

  def get_config(self):
    return {**super().get_config(), 'units': self.units,
            'dropout_rate': self.dropout_rate}


@keras.utils.register_keras_serializable(package='tft')
class GateAddNorm(keras.layers.Layer):
  """LayerNorm(skip + GLU(x)): the paper's gated skip connection.

  Args:
    units: Width of the output and of `skip`.
    dropout_rate: Dropout on x before the GLU during training.
  """

  def __init__(self, units: int, dropout_rate: float = 0.0, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.dropout_rate = dropout_rate
    self.gate = GatedLinearUnit(units, dropout_rate, name='gate')
    self.norm = keras.layers.LayerNormalization(name='norm')

  def call(self, inputs, training=None):
    """Gates, adds and normalises.

    Args:
      inputs: (x [..., I], skip [..., units]).
      training: Whether dropout is active.

    Returns:
      [..., units].
    """
    x, skip = inputs
    return self.norm(skip + self.gate(x, training=training))

  def get_config(self):
    return {**super().get_config(), 'units': self.units,
            'dropout_rate': self.dropout_rate}
