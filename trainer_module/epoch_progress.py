"""One line per epoch of training, in place of Keras' own (which repeats the loss under
each output's name and every metric for both splits): the epoch, the training and eval
losses, the lowest eval loss so far when this one is not (since the resumption, in a run
resumed from its backup), and the epoch's time."""

import logging
import time
from typing import Optional

import tf_keras as keras


class EpochProgress(keras.callbacks.Callback):
  """Logs 'epoch 3/20: loss 0.0541, eval loss 0.0476, 6.1 s' to `progress` at the end of
  each epoch ('eval loss 0.0493 (lowest 0.0476, epoch 3)' when it is not the lowest);
  `member` names an ensemble member ('member 2 of 3') before the epoch."""

  def __init__(self, progress: logging.Logger, epochs: int, member: Optional[str] = None):
    super().__init__()
    self._progress = progress
    self._epochs = epochs
    self._prefix = f'{member}, ' if member else ''
    self._started = 0.0
    self._lowest = (float('inf'), 0)  # eval loss, epoch
    self._first = True

  def on_epoch_begin(self, epoch, logs=None):
    self._started = time.monotonic()

  def on_epoch_end(self, epoch, logs=None):
    logs = logs or {}
    parts = [f'loss {_number(logs.get("loss"))}']
    eval_loss = logs.get('val_loss')
    if eval_loss is not None:
      if float(eval_loss) < self._lowest[0]:
        self._lowest = (float(eval_loss), epoch + 1)
        parts.append(f'eval loss {_number(eval_loss)}')
      else:
        parts.append(f'eval loss {_number(eval_loss)} (lowest {_number(self._lowest[0])}, '
                     f'epoch {self._lowest[1]})')
    parts.append(f'{time.monotonic() - self._started:.1f} s'
                 + (' (the first epoch also builds the training step)' if self._first else ''))
    self._first = False
    self._progress.info('%sepoch %d/%d: %s', self._prefix, epoch + 1, self._epochs,
                        ', '.join(parts))


def _number(value) -> str:
  """Four significant digits, or '?' when Keras logged none."""
  return '?' if value is None else f'{float(value):.4g}'
