"""The Trainer's entry point: trains the TFT on the windowed TFRecords and exports it.

The Trainer's `custom_config` holds `dataset_spec` (DatasetSpec JSON) and `model_config`
({'preset': name, 'overrides': {field: value}}, see `trainer_module.hparams`).
"""

import dataclasses
import logging
import math
from typing import Any, Dict

import tensorflow_transform as tft
import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs

from schema.dataset_spec import DatasetSpec
from trainer_module import export, hparams, window_inputs
from trainer_module.tft.losses import QuantileLoss
from trainer_module.tft.model import build_tft_model


def model_config_from(custom: Dict[str, Any]) -> hparams.TFTConfig:
  """A TFTConfig from `{'preset': name, 'overrides': {...}}`."""
  config = hparams.from_name(custom.get('preset', 'local'))
  overrides = custom.get('overrides', {})
  unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(config)})
  if unknown:
    raise ValueError(f'unknown model_config overrides {unknown}; valid fields are '
                     f'{[f.name for f in dataclasses.fields(config)]}')
  return dataclasses.replace(config, **overrides)


def _check_enough_windows(count: int, batch_size: int) -> None:
  if count < batch_size:
    raise ValueError(f'only {count} training windows, fewer than one batch of {batch_size}; '
                     'lower the batch size or the stride, or provide more data')


def run_fn(fn_args: FnArgs) -> None:
  """Called by the TFX Trainer."""
  spec = DatasetSpec.from_json(fn_args.custom_config['dataset_spec'])
  config = model_config_from(fn_args.custom_config.get('model_config', {}))
  layout = window_inputs.input_layout(spec, tft.TFTransformOutput(fn_args.transform_output))
  train_windows = window_inputs.count_records(fn_args.train_files)
  eval_windows = window_inputs.count_records(fn_args.eval_files)
  _check_enough_windows(train_windows, config.batch_size)
  if eval_windows == 0:
    raise ValueError('no evaluation windows; move the eval split boundary earlier')
  steps_per_epoch = max(1, math.ceil(fn_args.train_steps / config.max_epochs))
  logging.info('Training on %d windows (%d eval) for up to %d steps: %s, %s', train_windows,
               eval_windows, fn_args.train_steps, layout, config)

  train = window_inputs.make_dataset(fn_args.train_files, spec, config.batch_size,
                                     shuffle=True, repeat=True)
  # Validation loss (for early stopping) uses whole batches of at most the eval set's size;
  # the Evaluator scores every eval window.
  evaluation = window_inputs.make_dataset(fn_args.eval_files, spec,
                                          min(config.batch_size, eval_windows), shuffle=False)
  model = build_tft_model(layout, config)
  model.compile(
      optimizer=keras.optimizers.Adam(config.learning_rate, clipnorm=config.clipnorm),
      loss={window_inputs.QUANTILES_OUTPUT: QuantileLoss(config.quantiles)},
      jit_compile=config.jit_compile)
  model.fit(
      train, validation_data=evaluation, epochs=config.max_epochs,
      steps_per_epoch=steps_per_epoch, verbose=2,
      callbacks=[
          keras.callbacks.EarlyStopping(patience=config.early_stopping_patience,
                                        restore_best_weights=True),
          keras.callbacks.TensorBoard(log_dir=fn_args.model_run_dir),
      ])
  export.save_model(model, spec, config.quantiles, fn_args.serving_model_dir)
