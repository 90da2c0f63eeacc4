"""The sizes of a training run, derived once from the data and the settings: the global
and validation batches, the steps per epoch, the epochs and the peak learning rate.
"""

import dataclasses
import math

from tfx.components.trainer.fn_args_utils import FnArgs

from schema import hparams
from trainer_module import distribution
from trainer_module.training_config import TrainingConfig


@dataclasses.dataclass(frozen=True)
class Plan:
  """Sizes of a training run, derived once."""
  global_batch: int
  eval_batch: int
  steps_per_epoch: int
  epochs: int
  peak_learning_rate: float

  @property
  def total_steps(self) -> int:
    return self.steps_per_epoch * self.epochs


def steps_per_epoch(train_steps: int, max_epochs: int) -> int:
  """Steps between validations: the step budget spread over the epochs, at least 1."""
  return max(1, math.ceil(train_steps / max_epochs))


def plan(config: hparams.TFTConfig, training: TrainingConfig, fn_args: FnArgs,
         replicas: int, train_windows: int, eval_windows: int) -> Plan:
  """Batches, steps and the peak learning rate; raises ValueError when data is short."""
  global_batch = config.batch_size * replicas
  if train_windows < global_batch:
    if train_windows < replicas:
      fix = f'train on {train_windows} or fewer replicas, or give more data'
    else:
      fix = (f'set a smaller batch (model: {{batch_size: '
             f'{hparams.largest_batch_within(train_windows // replicas)}}} in the spec file), '
             'a training stride of 1 if it is larger, or give more data (longer series, or '
             'a shorter encoder_steps)')
    raise ValueError(f'only {train_windows} training windows, fewer than one global batch '
                     f'of {global_batch} ({config.batch_size} per replica x {replicas} '
                     f'replicas): {fix}')
  peak = config.learning_rate
  if training.scale_learning_rate:
    peak = distribution.scaled_learning_rate(config.learning_rate, global_batch,
                                             reference_batch=config.batch_size)
  return Plan(global_batch=global_batch,
               eval_batch=eval_batch_size(eval_windows, global_batch, replicas),
               steps_per_epoch=steps_per_epoch(fn_args.train_steps, config.max_epochs),
               epochs=config.max_epochs, peak_learning_rate=peak)


def eval_batch_size(eval_windows: int, global_batch: int, replicas: int) -> int:
  """The validation batch: at most one global batch, split evenly over the replicas, and
  as even as the batch count allows, so that filling up the last batch
  (`window_inputs.make_dataset`) repeats few windows."""
  batches = math.ceil(eval_windows / global_batch)
  return math.ceil(eval_windows / batches / replicas) * replicas
