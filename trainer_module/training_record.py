"""How a model's training went, recorded beside it for the run summary.

Per TFT trained in the run (an ensemble's members in order): the epochs run of those
planned, the steps of each, the epoch whose weights were kept (early stopping keeps
those of the lowest eval loss), and for an ensemble's member left out of the mean served
(`trainer_module.member_selection`) `left_out`. A run resumed from its backup records the
epochs after the resumption only. Written as `assets.extra/training_record.json`.
"""

import json
import os
from typing import Dict, List, Optional, Sequence

import tensorflow as tf

from trainer_module import model_format

RECORD_FILE = os.path.join('assets.extra', 'training_record.json')


def of_fit(epochs: Sequence[int], val_losses: Sequence[float], epochs_planned: int,
           steps_per_epoch: int, member: Optional[int] = None,
           refit: bool = False) -> Dict[str, object]:
  """The record of one `fit`: its History's `epoch` (0-based) and `val_loss` lists;
  `member` numbers an ensemble's member (from 1); `refit` marks a refit's
  (`trainer_module.refit`: no validation, its epochs the judged model's)."""
  record = {'epochs_run': int(epochs[-1]) + 1 if epochs else 0,
            'epochs_planned': int(epochs_planned), 'steps_per_epoch': int(steps_per_epoch)}
  if member is not None:
    record['member'] = int(member)
  if refit:
    record['refit'] = True
  if val_losses:
    best = min(range(len(val_losses)), key=lambda index: val_losses[index])
    record.update(best_epoch=int(epochs[best]) + 1, best_val_loss=float(val_losses[best]))
  return record


def of_judged_member(member: int, epochs_planned: int,
                     steps_per_epoch: int) -> Dict[str, object]:
  """The record of a refit's ensemble member that the judged model left out of its mean:
  not trained, its judged weights kept (a warm start from the refit model still finds
  every member)."""
  return {'epochs_run': 0, 'epochs_planned': int(epochs_planned),
          'steps_per_epoch': int(steps_per_epoch), 'member': int(member), 'refit': True,
          'left_out': True}


def with_members_kept(records: List[Dict[str, object]],
                      kept: Sequence[int]) -> List[Dict[str, object]]:
  """`records` with `left_out` on the members (numbered from 1) not at the indices `kept`."""
  return [dict(record, left_out=True) if record['member'] - 1 not in kept else record
          for record in records]


def kept_members(records: Sequence[Dict[str, object]]) -> List[int]:
  """The indices of an ensemble's members the model serves the mean of."""
  return [record['member'] - 1 for record in records if not record.get('left_out')]


def write(model_dir: str, records: List[Dict[str, object]]) -> None:
  """Records `records` (`of_fit`'s, one per TFT trained) in an exported model's directory."""
  path = os.path.join(model_dir, RECORD_FILE)
  tf.io.gfile.makedirs(os.path.dirname(path))
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump(records, f, indent=2)


def read(model_dir: str) -> List[Dict[str, object]]:
  """The records of an exported model.

  Raises:
    model_format.ModelFormatError: the model is in another format than this pipeline reads.
  """
  model_format.check(model_dir)
  with tf.io.gfile.GFile(os.path.join(model_dir, RECORD_FILE)) as f:
    return json.load(f)


def describe(records: Sequence[Dict[str, object]]) -> str:
  """'stopped early after 4 of 20 epochs of 50 steps, the weights of epoch 1 kept (the
  lowest eval loss)', an ensemble's members trained in the run one after the other; ''
  with no record."""
  return '; '.join((f"member {record['member']}: " if 'member' in record else '')
                   + describe_one(record) for record in records)


def describe_one(record: Dict[str, object]) -> str:
  """'all 20 epochs of 50 steps, the weights of epoch 20 kept (the lowest eval loss)';
  a refit's 'refit on every period: 8 epochs of 50 steps, as the judged model kept', or
  for a member the judged model left out, that it was not refit."""
  run, planned = record['epochs_run'], record['epochs_planned']
  if record.get('refit') and record.get('left_out'):
    return ('left out of the mean served, as in the judged model: not refit, its judged '
            'weights kept')
  if record.get('refit'):
    return (f"refit on every period: {run} epochs of {record['steps_per_epoch']} steps, as "
            'the judged model kept')
  course = (f'stopped early after {run} of {planned} epochs' if run < planned
            else f'all {planned} epochs')
  text = f"{course} of {record['steps_per_epoch']} steps"
  if 'best_epoch' in record:
    text += f", the weights of epoch {record['best_epoch']} kept (the lowest eval loss)"
  if record.get('left_out'):
    text += ', left out of the mean served (the others score the eval windows better)'
  return text
