"""An ensemble of independently trained TFTs that serves the mean of their outputs.

Each member is a whole `TemporalFusionTransformer` trained on its own (its own
initialisation, optimizer and early stopping, `trainer_module.train`); the ensemble only
averages. The mean of ordered quantile forecasts is ordered, and the mean selection
weights and attention still sum to 1, so the ensemble has the same outputs, shapes and
meaning as one member (see `model`).
"""

from collections.abc import Sequence

import tensorflow as tf
import tf_keras as keras

from schema.hparams import TFTConfig
from trainer_module.tft.model import TemporalFusionTransformer


class TFTEnsemble(keras.Model):
  """The member-wise mean of the outputs of `members`.

  Args:
    members: Built TFTs of one layout; their names must differ (a checkpoint of the
      ensemble names each member's weights by it).
  """

  def __init__(self, members: Sequence[TemporalFusionTransformer], **kwargs):
    super().__init__(autocast=False, **kwargs)
    names = [member.name for member in members]
    if len(members) < 2 or len(set(names)) != len(names):
      raise ValueError(f'an ensemble needs at least 2 members with distinct names, got '
                       f'{names}')
    if any(member.config != members[0].config for member in members):
      raise ValueError(f'the members {names} must share one TFTConfig')
    self.members = list(members)

  @property
  def config(self) -> TFTConfig:
    """The members' hyperparameters (one `TFTConfig` for all)."""
    return self.members[0].config

  @tf.autograph.experimental.do_not_convert
  def call(self, inputs, training=None):
    """The mean over the members of each output."""
    outputs = [member(inputs, training=training) for member in self.members]
    return {key: tf.add_n([output[key] for output in outputs]) / len(outputs)
            for key in outputs[0]}
