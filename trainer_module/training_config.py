"""How the Trainer runs the training loop: the Trainer custom_config key 'training'.

Model hyperparameters live in `schema.hparams.TFTConfig` (custom_config key
'model_config'); this holds what belongs to the run on given hardware: execution,
learning-rate schedule shape and input-pipeline settings. Every field has a default, so
`custom_config` may omit the key. Imports no TensorFlow, so deployment configs can check it
quickly. Example:

  custom_config={'training': {'steps_per_execution': 32, 'scale_learning_rate': True}}
"""

import dataclasses
from typing import Any, Mapping, Optional

from common.suggestions import closest

CONFIG_KEY = 'training'
# The Trainer's optimizer step budget of a run (TFX TrainArgs.num_steps), locally and on
# Vertex: on the default data 600 left the validation loss falling
# (benchmarks/pages/default_data.md).
DEFAULT_TRAIN_STEPS = 1000
# Whether a run publishes its blessed model refit on every row (`trainer_module.refit`), so
# that the published model has seen the newest rows. On the default data and Stallion its
# backtest forecasts tied the judged model's, window by window (an earlier code's refit was
# ahead), for 22 to 37% of a run's time (benchmarks/pages/refit_gain.md).
DEFAULT_REFIT = True
# Training windows are cached in memory after the first epoch when their serialized size
# (uncompressed) is at most this; larger sets are re-read from the files every epoch.
DEFAULT_CACHE_MAX_BYTES = 1 << 30
DEFAULT_SHUFFLE_BUFFER = 10_000
# A run backs up (the model, the optimizer and the epoch) at the end of the first epoch by
# which this many steps have run since its last backup: a preempted run loses about as
# many steps at most, and runs of short epochs do not pay a checkpoint for each (on the
# tests' tiny runs the backups took a third of the training time).
DEFAULT_BACKUP_EVERY_STEPS = 200


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
  """Settings of a training run.

  Attributes:
    steps_per_execution: training steps run per call into the compiled train function.
      1 on CPU; larger values (e.g. 32-128) keep a TPU busy between host round trips.
    scale_learning_rate: scale TFTConfig.learning_rate linearly with the number of
      replicas, i.e. with the global batch over the per-replica batch (Goyal et al.
      2017), for learning rates tuned on one device.
    warmup_fraction: share of the training steps over which the learning rate rises
      linearly from 0 to its peak.
    final_learning_rate_fraction: after the warm-up the learning rate follows a cosine
      decay from its peak to this fraction of it at the last step.
    cache_max_bytes: training and evaluation windows whose serialized size is at most
      this are cached in memory after the first pass (default 1 GiB).
    shuffle_buffer: windows in the training shuffle buffer.
    warm_start: start from the weights of the last blessed model (the Trainer's
      `base_model`) when its architecture matches; False trains from scratch.
    seed: seeds the weights' initialisation, dropout and the shuffle of the training
      windows (`keras.utils.set_random_seed`), so a rerun on the same window files starts
      from the same weights and sees the same batches. TensorFlow's kernels are not
      bit-for-bit deterministic, so the trained weights still differ slightly. The
      windowing component writes windows in a fixed order, so a seeded rerun of the
      whole pipeline sees the same batches too. None (the default): fresh randomness in
      every run.
    calibrate_intervals: after training, move each end of each band of symmetric
      quantiles (P10 to P90) so that it leaves its nominal share of the eval windows'
      actuals beyond it (`trainer_module.interval_calibration`); the exported model
      serves the calibrated bands. The median is never changed.
    backup_every_steps: the steps between backups of an interrupted run's state
      (`keras.callbacks.BackupAndRestore`), rounded up to whole epochs; 1 backs up at
      the end of every epoch.
    calibrate_on_the_period_before: fit those factors on the eval windows and, pooled
      with them, on the period as long before the eval period, forecast by a copy of
      the model trained before it for the same epochs (`trainer_module.earlier_period`):
      two stretches of time rather than one. Trains the model a second time; off by
      default: on the development suite it did not bring the test coverage nearer 0.80
      (benchmarks/pages/calibration.md, "Two eval periods pooled").
  """

  steps_per_execution: int = 1
  scale_learning_rate: bool = False
  warmup_fraction: float = 0.05
  final_learning_rate_fraction: float = 0.1
  cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES
  shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER
  warm_start: bool = True
  seed: Optional[int] = None
  calibrate_intervals: bool = True
  calibrate_on_the_period_before: bool = False
  backup_every_steps: int = DEFAULT_BACKUP_EVERY_STEPS

  def __post_init__(self):
    for name in ('steps_per_execution', 'shuffle_buffer', 'backup_every_steps'):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"training config '{name}' must be an integer >= 1, got {value!r}")
    if not isinstance(self.scale_learning_rate, bool):
      raise ValueError("training config 'scale_learning_rate' must be true or false, got "
                       f'{self.scale_learning_rate!r}')
    for name in ('warm_start', 'calibrate_intervals', 'calibrate_on_the_period_before'):
      if not isinstance(getattr(self, name), bool):
        raise ValueError(f"training config '{name}' must be true or false, got "
                         f'{getattr(self, name)!r}')
    for name in ('warmup_fraction', 'final_learning_rate_fraction'):
      if not 0.0 <= getattr(self, name) <= 1.0:
        raise ValueError(f"training config '{name}' must lie in [0, 1], got "
                         f'{getattr(self, name)!r}')
    if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                  or self.seed < 0):
      raise ValueError("training config 'seed' must be an integer >= 0 or null (unseeded), "
                       f'got {self.seed!r}')
    if self.cache_max_bytes < 0:
      raise ValueError("training config 'cache_max_bytes' must be >= 0 (0 never caches), "
                       f'got {self.cache_max_bytes!r}')

  @classmethod
  def from_custom_config(cls, custom_config: Optional[Mapping[str, Any]]) -> 'TrainingConfig':
    """The config under `custom_config['training']`; defaults where absent.

    Raises:
      ValueError: the value is not a dict, has unknown keys or invalid values.
    """
    values = (custom_config or {}).get(CONFIG_KEY) or {}
    if not isinstance(values, Mapping):
      raise ValueError(f"Trainer custom_config[{CONFIG_KEY!r}] must be a dict of "
                       f'{[f.name for f in dataclasses.fields(cls)]}, got {values!r}')
    fields = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(fields))
    if unknown:
      hints = ''.join(f' ({key!r}: did you mean {match[0]!r}?)'
                      for key in unknown for match in [closest(key, fields)] if match)
      raise ValueError(f"unknown keys {unknown} in Trainer custom_config[{CONFIG_KEY!r}]"
                       f'{hints}; valid keys are {fields}')
    return cls(**values)
