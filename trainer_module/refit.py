"""The refit: a judged model's training run again on every row, for the budget it chose.

Once the Evaluator has judged a model on its held-out windows, the refit Trainer trains a
model of the same architecture on the windows of every period the run holds (Windowing's
`refit` split) for the steps the judged model's kept weights had (its best epoch times its
steps per epoch, under the same learning-rate schedule), without early stopping, and
serves the judged model's interval calibration and, for an ensemble, the mean of the
members it kept: there is no unseen window left to choose or calibrate on. Only those
members are refit; the others keep their judged weights (served with weight 0, they only
give a later warm start a counterpart for every member). The Pusher
then publishes the refit model on the judged model's blessing.
The Trainer custom_config key 'refit_of' names the judged model's directory.
"""

import dataclasses
from typing import Dict, List, Mapping, Optional

from trainer_module import interval_calibration, training_record

CONFIG_KEY = 'refit_of'  # Trainer custom_config: the judged model's serving directory


@dataclasses.dataclass(frozen=True)
class Budget:
  """What a refit trains for: the epochs of each TFT (an ensemble's members in order),
  the judged run's planned epochs and steps per epoch (the learning-rate schedule), the
  judged model's calibration report (None: it served its own bands) and an ensemble's
  members it served the mean of (indices; None for one TFT)."""
  judged_model: str
  epochs: List[int]
  epochs_planned: int
  steps_per_epoch: int
  calibration: Optional[Dict[str, object]]
  kept_members: Optional[List[int]] = None

  def refits(self, member: int) -> bool:
    """Whether the TFT at index `member` is refit: one TFT, or a member served."""
    return self.kept_members is None or member in self.kept_members


def budget_of(custom_config: Mapping[str, object]) -> Optional[Budget]:
  """The refit's budget from the judged model the custom_config names; None when the
  Trainer is no refit.

  Raises:
    ValueError: the judged model has no record of its kept epochs.
    model_format.ModelFormatError: the judged model is of another format version.
  """
  judged = custom_config.get(CONFIG_KEY)
  if not judged:
    return None
  records = training_record.read(judged)
  if not records or any('best_epoch' not in record for record in records):
    raise ValueError(
        f'the judged model in {judged} does not record the epoch whose weights it kept for '
        'every TFT (an ensemble member trained before an interruption has no record), so '
        'the refit cannot train for its budget; rerun the pipeline, or turn the refit off')
  return Budget(judged_model=judged,
                epochs=[int(record['best_epoch']) for record in records],
                epochs_planned=int(records[0]['epochs_planned']),
                steps_per_epoch=int(records[0]['steps_per_epoch']),
                calibration=interval_calibration.read(judged),
                kept_members=(training_record.kept_members(records)
                              if 'member' in records[0] else None))
