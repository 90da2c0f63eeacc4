"""Static covariate encoders: four context vectors from the static variables."""

from typing import NamedTuple

import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.grn import GatedResidualNetwork


class StaticContexts(NamedTuple):
  """The four static contexts, each [B, D]."""
  selection: tf.Tensor  # c_s: context of the temporal variable selection
  enrichment: tf.Tensor  # c_e: context of the static enrichment
  state_h: tf.Tensor  # c_h: initial hidden state of the LSTM encoder
  state_c: tf.Tensor  # c_c: initial cell state of the LSTM encoder


@keras.utils.register_keras_serializable(package='tft')
class StaticCovariateEncoder(keras.layers.Layer):
  """Four GRNs turn the selected static embedding into the static contexts.

  Args:
    units: Width D of each context.
    dropout_rate: Dropout inside the GRNs during training.
  """

  def __init__(self, units: int, dropout_rate: float = 0.0, **kwargs):
    super().__init__(**kwargs)
    self.units = units
    self.dropout_rate = dropout_rate
    self.context_grns = {
        name: GatedResidualNetwork(units, dropout_rate=dropout_rate,
                                   name=f'{name}_grn')
        for name in StaticContexts._fields
    }

  def call(self, inputs, training=None):
    """Maps the selected static embedding [B, D] to `StaticContexts`."""
    return StaticContexts(**{
        name: grn(inputs, training=training)
        for name, grn in self.context_grns.items()
    })

  def get_config(self):
    return {**super().get_config(), 'units': self.units,
            'dropout_rate': self.dropout_rate}
