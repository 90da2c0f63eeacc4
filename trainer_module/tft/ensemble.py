"""An ensemble of independently trained TFTs that serves the mean of their outputs.

Each member is a whole `TemporalFusionTransformer` trained on its own (its own
initialisation, optimizer and early stopping, `trainer_module.train`); the ensemble only
averages, over every member or over those `keep` names (the Trainer keeps the members
whose mean scores the eval windows best, `trainer_module.member_selection`). The mean of
ordered quantile forecasts is ordered, and the mean selection weights and attention still
sum to 1, so the ensemble has the same outputs, shapes and meaning as one member (see
`model`).
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
    # Each member's share of the mean: 1/M each, or 1/k for the k members kept. Not a
    # layer's weight, so the warm-start checkpoint (the members' layers) leaves it out.
    self.member_weights = self.add_weight(
        name='member_weights', shape=(len(members),), trainable=False,
        initializer=keras.initializers.Constant(1.0 / len(members)))

  def keep(self, kept: Sequence[int]) -> None:
    """Serves the mean of the members at the indices `kept` only."""
    if not kept or any(not 0 <= index < len(self.members) for index in kept):
      raise ValueError(f'members to keep must be some of 0..{len(self.members) - 1}, got '
                       f'{list(kept)}')
    self.member_weights.assign([1.0 / len(set(kept)) if index in kept else 0.0
                                for index in range(len(self.members))])

  @property
  def config(self) -> TFTConfig:
    """The members' hyperparameters (one `TFTConfig` for all)."""
    return self.members[0].config

  @tf.autograph.experimental.do_not_convert
  def call(self, inputs, training=None):
    """The mean over the members kept of each output."""
    outputs = [member(inputs, training=training) for member in self.members]
    shares = tf.unstack(self.member_weights)
    return {key: tf.add_n([tf.cast(share, output[key].dtype) * output[key]
                           for share, output in zip(shares, outputs)])
            for key in outputs[0]}
