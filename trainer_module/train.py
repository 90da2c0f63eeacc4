"""The Trainer's entry point: trains the TFT on the windowed TFRecords and exports it.

`run_fn` reads these keys of the Trainer's `custom_config`:
  dataset_spec  DatasetSpec JSON (required).
  model_config  {'preset': name, 'overrides': {field: value}}: the model's
                hyperparameters (`schema.hparams.TFTConfig`).
  distribution  the distribution strategy, see `trainer_module.distribution`; the
                environment variable TFT_DISTRIBUTION overrides it; default 'auto'.
  training      run settings (`trainer_module.training_config.TrainingConfig`):
                steps_per_execution, scale_learning_rate, learning-rate warm-up and
                decay, in-memory cache bound, shuffle buffer, random seed.

The global batch is TFTConfig.batch_size per replica times the replicas. The model is
built and compiled under the strategy's scope; the input pipeline (already transformed
windows) and the export's Transform layer stay on the host. Training resumes from the
last finished epoch of an interrupted run with the same `model_run_dir`
(`keras.callbacks.BackupAndRestore`); `fn_args.base_model` warm-starts the weights
(`trainer_module.warm_start`), unless it was trained on rows of this run's eval period
(`trainer_module.training_period`, recorded with every model). Only the chief writes the
model (`trainer_module.cluster`).
With several workers in TF_CONFIG, they train as one under MultiWorkerMirroredStrategy
on the same global batches as one worker would (`_datasets`).
With `TFTConfig.ensemble_size` above 1 the members are trained one after the other, each
as above, and the model exported serves the mean of the members whose mean scores the
eval windows best (`tft.ensemble.TFTEnsemble`, `trainer_module.member_selection`).
With custom_config 'refit_of' (a judged model), the Trainer is the refit
(`trainer_module.refit`): each TFT trains for the epochs the judged one kept, without
validation or early stopping, and the judged model's calibration and members are served
(a member the judged model left out is not refit).
"""

import dataclasses
import gc
import logging
import math
import os
import time
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs

from common import progress_log
from schema import hparams, window_report
from schema.dataset_spec import DatasetSpec
from trainer_module import (cluster, distribution, earlier_period, epoch_progress, export,
                            interval_calibration, member_selection, refit, training_period,
                            training_plan, training_record, vocabularies, warm_start,
                            window_inputs)
from trainer_module.tft.ensemble import TFTEnsemble
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model, compile_tft_model
from trainer_module.training_config import TrainingConfig

BACKUP_DIR = 'backup'  # under fn_args.model_run_dir
_PROGRESS = progress_log.logger('Trainer')


def model_config_from(custom: Dict[str, Any]) -> hparams.TFTConfig:
  """A TFTConfig from `{'preset': name, 'overrides': {...}}`."""
  config = hparams.from_name(custom.get('preset', 'local'))
  overrides = custom.get('overrides', {})
  unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(config)})
  if unknown:
    raise ValueError(f'unknown model_config overrides {unknown}; valid fields are '
                     f'{[f.name for f in dataclasses.fields(config)]}')
  return dataclasses.replace(config, **overrides)


def learning_rate_schedule(
    peak: float, total_steps: int,
    training: TrainingConfig) -> keras.optimizers.schedules.LearningRateSchedule:
  """Linear warm-up from 0 to `peak`, then cosine decay to a fraction of it.

  A function of the optimizer's step count, which BackupAndRestore saves and restores,
  so a resumed run continues the schedule where it stopped.
  """
  warmup_steps = min(round(training.warmup_fraction * total_steps), total_steps - 1)
  decay_steps = max(1, total_steps - warmup_steps)
  if warmup_steps < 1:
    return keras.optimizers.schedules.CosineDecay(
        peak, decay_steps, alpha=training.final_learning_rate_fraction)
  return keras.optimizers.schedules.CosineDecay(
      0.0, decay_steps, alpha=training.final_learning_rate_fraction,
      warmup_target=peak, warmup_steps=warmup_steps)


def build_and_compile(layout: InputLayout, config: hparams.TFTConfig,
                      training: TrainingConfig, plan: training_plan.Plan, name: str,
                      on_tpu: bool) -> keras.Model:
  """A TFT and its optimizer; call under `strategy.scope()`."""
  model = build_tft_model(layout, config, name, on_tpu=on_tpu)
  compile_tft_model(
      model, config, learning_rate_schedule(plan.peak_learning_rate, plan.total_steps, training),
      steps_per_execution=training.steps_per_execution)
  return model


def member_names(config: hparams.TFTConfig) -> List[str]:
  """The names of the model's TFTs: one, or an ensemble's members."""
  if config.ensemble_size == 1:
    return ['temporal_fusion_transformer']
  return [f'member_{index}' for index in range(config.ensemble_size)]


class BackupAndRestore(keras.callbacks.BackupAndRestore):
  """`keras.callbacks.BackupAndRestore` that backs up at the end of every
  `every_epochs`-th epoch and also accepts a OneDeviceStrategy.

  tf_keras backs up every epoch or every N batches; the latter mid-epoch, through batch
  hooks that every step then pays for. Counting whole epochs keeps every worker of a
  multi-worker run deciding alike (the backup is a collective save).

  tf_keras 2.16 refuses OneDeviceStrategy (the factory's 'cpu' and CPU 'auto') by an
  allow-list only: its backup, a CheckpointManager over the model (with the optimizer)
  and the epoch counters, has nothing multi-device about it. The trainer tests resume a
  run under OneDeviceStrategy.
  """

  def __init__(self, backup_dir: str, every_epochs: int):
    super().__init__(backup_dir)
    self._supported_strategies += (tf.distribute.OneDeviceStrategy,)
    self._every_epochs = every_epochs

  def on_epoch_end(self, epoch, logs=None):
    if (epoch + 1) % self._every_epochs == 0:
      self._backup(epoch=epoch)


def _datasets(fn_args: FnArgs, spec: DatasetSpec, plan: training_plan.Plan,
              training: TrainingConfig, train_bytes: int, eval_bytes: int, eval_windows: int,
              workers: int):
  """The training and validation datasets (host input pipeline, already transformed).

  With several workers, every worker reads every window in the same order and keeps its
  replicas' share of each global batch (tf.data's DATA auto-sharding): the global
  batches are those one worker would train on, whatever the number of window files.
  """
  seed = _shuffle_seed(fn_args, training, workers)
  train = window_inputs.make_training_dataset(
      fn_args.train_files, spec, plan.global_batch,
      cache=window_inputs.should_cache(train_bytes, training.cache_max_bytes, 'Training'),
      shuffle_buffer=training.shuffle_buffer, seed=seed)
  # The validation loss (early stopping) covers every eval window, as the Evaluator does.
  evaluation = window_inputs.make_dataset(
      fn_args.eval_files, spec, plan.eval_batch, shuffle=False,
      cache=window_inputs.should_cache(eval_bytes, training.cache_max_bytes, 'Evaluation'),
      record_count=eval_windows)
  return _sharded(train, workers), _sharded(evaluation, workers)


def _shuffle_seed(fn_args: FnArgs, training: TrainingConfig, workers: int) -> Optional[int]:
  """The training config's seed; with several workers and none, one they all agree on."""
  if workers > 1 and training.seed is None:
    return shared_shuffle_seed(fn_args.model_run_dir)
  return training.seed


def _sharded(dataset: tf.data.Dataset, workers: int) -> tf.data.Dataset:
  """With several workers, each keeps its replicas' share of every global batch."""
  if workers == 1:
    return dataset
  options = tf.data.Options()
  options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
  return dataset.with_options(options)


def shared_shuffle_seed(model_run_dir: str) -> int:
  """A shuffle seed all workers of one run agree on without talking: from the run's
  directory, which they share and which differs from run to run."""
  return zlib.crc32(model_run_dir.encode())


def _initialise(model: keras.Model, layout: InputLayout, config: hparams.TFTConfig,
                training: TrainingConfig, fn_args: FnArgs, strategy: tf.distribute.Strategy,
                spec: DatasetSpec, transform_output: tft.TFTransformOutput,
                eval_start: Optional[str]) -> warm_start.Outcome:
  """Warm-starts from the base model, unless a backup will resume an interrupted run
  or the training config turns warm starts off; returns how training begins."""
  backup = os.path.join(fn_args.model_run_dir, BACKUP_DIR)
  if tf.io.gfile.exists(backup):
    logging.info('Resuming an interrupted run from its backup in %s (BackupAndRestore); '
                 'no warm start.', backup)
    return warm_start.Outcome(False, f'resumed an interrupted run from its backup in '
                              f'{backup}')
  if not training.warm_start:
    logging.info('Training from scratch: warm_start is off in the training config.')
    return warm_start.Outcome(False, 'trained from scratch: warm_start is off in the '
                              'training config')
  return warm_start.restore(model, layout, config, fn_args.base_model,
                            _checkpoint_options(distribution.save_options(strategy)),
                            run_vocabularies=vocabularies.of_model(
                                transform_output.transform_savedmodel_dir),
                            table_vocabularies=window_inputs.table_vocabularies(spec),
                            eval_start=eval_start)


class NonFiniteLossError(RuntimeError):
  """Training produced a NaN or infinite loss; nothing is exported."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
  """Raises NonFiniteLossError at the first NaN or infinite training or validation loss,
  so the run fails instead of exporting a broken model."""

  def on_train_batch_end(self, batch, logs=None):
    self._check(logs, 'loss', f'training batch {batch}')

  def on_epoch_end(self, epoch, logs=None):
    self._check(logs, 'val_loss', f'the validation after epoch {epoch + 1}')

  @staticmethod
  def _check(logs, key: str, where: str) -> None:
    value = (logs or {}).get(key)
    if value is not None and not math.isfinite(float(value)):
      raise NonFiniteLossError(
          f'the {key} became {float(value)} at {where}; training stopped and no model '
          'is exported. Check the input data for extreme values (the target and the '
          'real covariates, e.g. with the StatisticsGen output), and lower the learning '
          'rate (model: {learning_rate: ...}) if the data is clean')


def _callbacks(backup_dir: str, log_dir: str, config: hparams.TFTConfig,
               extra: Sequence[keras.callbacks.Callback], early_stopping: bool,
               backup_every_epochs: int) -> list:
  """The callbacks of one TFT's training."""
  # BackupAndRestore comes next: at the end of an epoch its backup is written before
  # any later callback can stop the run, and after a non-finite loss stopped it.
  callbacks = [StopOnNonFiniteLoss(), BackupAndRestore(backup_dir, backup_every_epochs)]
  if early_stopping:
    callbacks.append(keras.callbacks.EarlyStopping(
        patience=config.early_stopping_patience, restore_best_weights=True))
  if cluster.is_chief():
    callbacks.append(keras.callbacks.TensorBoard(log_dir=log_dir))
  return callbacks + list(extra)


def _train(members: Sequence[keras.Model], config: hparams.TFTConfig, fn_args: FnArgs,
           plan: training_plan.Plan, train: tf.data.Dataset, evaluation: tf.data.Dataset,
           extra: Sequence[keras.callbacks.Callback], options: tf.train.CheckpointOptions,
           backup_every_steps: int, budget: Optional[refit.Budget] = None
           ) -> List[Dict[str, object]]:
  """Trains the TFTs one after the other; returns how each trained in this attempt
  (`training_record`; none for an ensemble member trained before an interruption).
  A refit's `budget` gives each TFT its epochs, trained without validation; an
  ensemble's member the judged model left out of its mean is not refit but keeps its
  judged weights.

  One TFT backs up to `model_run_dir/backup` and logs to `model_run_dir`. An ensemble
  member backs up to `backup/<member name>` and logs to `model_run_dir/<member name>`;
  the chief keeps its trained weights in `backup/<member name>-trained` until every
  member is trained, so a resumed run loads the members already trained, resumes the
  interrupted one and trains the rest.
  """
  backups = os.path.join(fn_args.model_run_dir, BACKUP_DIR)
  backup_every_epochs = math.ceil(backup_every_steps / plan.steps_per_epoch)
  records = []

  def fit(member: keras.Model, backup_dir: str, log_dir: str,
          number: Optional[int] = None) -> None:
    label = f'member {number} of {len(members)}' if number else None
    epochs = budget.epochs[(number or 1) - 1] if budget else plan.epochs
    progress = epoch_progress.EpochProgress(_PROGRESS, epochs, label)
    history = member.fit(train, validation_data=None if budget else evaluation, epochs=epochs,
                         steps_per_epoch=plan.steps_per_epoch, verbose=0,
                         callbacks=[progress, *_callbacks(backup_dir, log_dir, config, extra,
                                                          budget is None,
                                                          backup_every_epochs)])
    records.append(training_record.of_fit(history.epoch, history.history.get('val_loss', []),
                                          plan.epochs, plan.steps_per_epoch, member=number,
                                          refit=budget is not None))
    _PROGRESS.info('%s trained: %s', label or 'model', training_record.describe_one(records[-1]))
    _release_traced_functions(member)

  if len(members) == 1:
    fit(members[0], backups, fn_args.model_run_dir)
    return records
  for index, member in enumerate(members, start=1):
    if budget is not None and not budget.refits(index - 1):
      # Served with weight 0: refitting it would cost a member's training for nothing.
      warm_start.read_member(member, budget.judged_model, options)
      records.append(training_record.of_judged_member(index, plan.epochs,
                                                      plan.steps_per_epoch))
      _PROGRESS.info('member %d of %d: left out of the mean the judged model serves, so '
                     'not refit (its judged weights kept)', index, len(members))
      continue
    trained = os.path.join(backups, f'{member.name}-trained')
    if tf.io.gfile.exists(trained + '.index'):
      warm_start.weights_checkpoint(member).read(trained, options=options).assert_consumed()
      _PROGRESS.info('member %d of %d: trained before the interruption, loaded from %s',
                     index, len(members), trained)
      continue
    fit(member, os.path.join(backups, member.name),
        os.path.join(fn_args.model_run_dir, member.name), number=index)
    if cluster.is_chief():
      warm_start.weights_checkpoint(member).write(trained, options=options)
  if cluster.is_chief():
    tf.io.gfile.rmtree(backups)
  return records


def _release_traced_functions(model: keras.Model) -> None:
  """Drops the training and validation functions `fit` traced and keeps, so that the
  next ensemble member and the export reuse their memory (TensorFlow keeps it from the
  system: tensorflow/tensorflow#62854)."""
  model.train_function = model.test_function = model.predict_function = None
  gc.collect()


def _eval_forecasts(models: Sequence[keras.Model], evaluation: tf.data.Dataset,
                    eval_windows: int) -> Tuple[np.ndarray, np.ndarray]:
  """Each model's quantile forecasts [M, N, H, Q] of the `eval_windows` eval windows and
  their actuals [N, H]. `evaluation` holds the windows once, then the first again to fill
  its last batch; those are left out."""
  # One pass, so that forecasts and actuals pair up whatever order the files are read in;
  # a plain call, since `predict_on_batch` runs `steps_per_execution` batches per call.
  batches = [([model(features, training=False)[window_inputs.QUANTILES_OUTPUT].numpy()
               for model in models], labels[window_inputs.QUANTILES_OUTPUT].numpy())
             for features, labels in evaluation]
  forecasts = np.stack([np.concatenate([outputs[index] for outputs, _ in batches])
                        for index in range(len(models))])[:, :eval_windows]
  return forecasts, np.concatenate([labels for _, labels in batches])[:eval_windows]


def choose_members(model: TFTEnsemble, config: hparams.TFTConfig,
                   evaluation: tf.data.Dataset, eval_windows: int) -> List[int]:
  """The members (indices) whose mean scores the eval windows best
  (`member_selection`); logs the choice. `evaluation` as for `calibrate`."""
  forecasts, actual = _eval_forecasts(model.members, evaluation, eval_windows)
  loss_of = member_selection.mean_loss(forecasts, actual, config.quantiles)
  everyone = range(len(model.members))
  kept = member_selection.greedy_selection(loss_of, len(model.members))
  _PROGRESS.info(
      "ensemble: members served: %s of %d (their mean's eval loss %.4g; every member's "
      'mean %.4g; each alone %s)', ', '.join(str(index + 1) for index in kept),
      len(model.members), loss_of(kept), loss_of(everyone),
      ', '.join(f'{loss_of([index]):.4g}' for index in everyone))
  return kept


def forecast_the_earlier_period(layout: InputLayout, config: hparams.TFTConfig,
                                training: TrainingConfig, plan: training_plan.Plan,
                                fn_args: FnArgs, spec: DatasetSpec,
                                strategy: tf.distribute.Strategy,
                                trained: Sequence[Dict[str, object]], workers: int
                                ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
  """The quantile forecasts [N, H, Q] and actuals [N, H] of the training windows of the
  period before the eval period (`earlier_period`), by a copy of the judged model trained
  on the windows whose targets end before it, for the epochs each TFT kept, as the refit
  trains (an ensemble: the mean of every member). None, and the reason logged, where
  there is no such period or no window before it."""
  epochs = [record.get('best_epoch') for record in trained]
  period = earlier_period.of_eval_windows(fn_args.eval_files, spec)
  if len(epochs) != config.ensemble_size or None in epochs or period is None:
    _PROGRESS.info('the intervals are calibrated on the eval windows alone: %s',
                   'no eval window' if period is None else
                   'a member trained before an interruption has no record of its epochs')
    return None
  windows, before = period.windows(), period.training_windows()
  forecast_count, train_count = earlier_period.count(fn_args.train_files, spec, windows,
                                                     before)
  if not forecast_count or not train_count:
    _PROGRESS.info('the intervals are calibrated on the eval windows alone: the training '
                   'period holds %s windows of the period before the eval period and %s '
                   'before it', f'{forecast_count:,}', f'{train_count:,}')
    return None
  _PROGRESS.info('calibrating on the period before the eval period too: its %s windows '
                 'forecast by a copy of the model trained on the %s windows before it for '
                 '%s epochs', f'{forecast_count:,}', f'{train_count:,}',
                 ' and '.join(map(str, epochs)))
  train = _sharded(window_inputs.make_training_dataset(
      fn_args.train_files, spec, plan.global_batch, shuffle_buffer=training.shuffle_buffer,
      seed=_shuffle_seed(fn_args, training, workers), only=before), workers)
  with strategy.scope():
    copies = [build_and_compile(layout, config, training, plan, f'earlier_{name}',
                                distribution.is_tpu(strategy))
              for name in member_names(config)]
  for number, (copy, epochs_kept) in enumerate(zip(copies, epochs), start=1):
    label = 'the period before' + (f', member {number} of {len(copies)}'
                                   if len(copies) > 1 else '')
    copy.fit(train, epochs=epochs_kept, steps_per_epoch=plan.steps_per_epoch, verbose=0,
             callbacks=[epoch_progress.EpochProgress(_PROGRESS, epochs_kept, label),
                        StopOnNonFiniteLoss()])
    _release_traced_functions(copy)
  model = copies[0] if len(copies) == 1 else TFTEnsemble(copies, name='earlier_ensemble')
  batches = [(model(features, training=False)[window_inputs.QUANTILES_OUTPUT].numpy(),
              label.numpy())
             for features, label in window_inputs.windows_in_order(
                 fn_args.train_files, spec, segments=True, batch_size=plan.eval_batch,
                 only=windows)]
  return (np.concatenate([forecasts for forecasts, _ in batches]),
          np.concatenate([actual for _, actual in batches]))


def calibrate(model: keras.Model, config: hparams.TFTConfig, evaluation: tf.data.Dataset,
              eval_windows: int, forecast_floor: Optional[float],
              earlier: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> Dict[str, object]:
  """Interval factors from every eval window and, if given, the `earlier` period's
  forecasts and actuals (`forecast_the_earlier_period`), pooled (`interval_calibration`);
  the coverage before them (of each period) and of the bands served after them on the
  eval windows (with the forecast floor), and the share of eval steps whose quantiles,
  the model's or the calibrated ones, were out of order (served in order).
  `evaluation` holds the `eval_windows` windows once, then the first again to fill its
  last batch; those are left out."""
  _PROGRESS.info('calibrating the intervals on the %s eval windows%s', f'{eval_windows:,}',
                 '' if earlier is None else
                 f' and the {len(earlier[1]):,} windows of the period before')
  [forecasts], actual = _eval_forecasts([model], evaluation, eval_windows)
  pooled = ((forecasts, actual) if earlier is None else
            (np.concatenate([forecasts, earlier[0]]), np.concatenate([actual, earlier[1]])))
  factors = interval_calibration.fit(*pooled, config.quantiles)
  calibrated = export.served_quantiles(
      tf.constant(forecasts), config.quantiles, factors, forecast_floor).numpy()
  report = {'factors': factors, 'eval_windows': int(actual.shape[0]),
            'eval_coverage_before': interval_calibration.coverage(
                forecasts, actual, config.quantiles),
            'eval_coverage_after': interval_calibration.coverage(
                calibrated, actual, config.quantiles),
            'eval_out_of_order': interval_calibration.out_of_order(
                forecasts, interval_calibration.apply(
                    tf.constant(forecasts), config.quantiles, factors).numpy())}
  if earlier is not None:
    report.update(earlier_windows=int(earlier[1].shape[0]),
                  earlier_coverage_before=interval_calibration.coverage(
                      *earlier, config.quantiles))
  logging.info('Interval calibration on %d eval windows%s: factors %s; coverage %s before, '
               '%s after.', report['eval_windows'],
               f" and {report['earlier_windows']} of the period before" if earlier else '',
               factors, report['eval_coverage_before'], report['eval_coverage_after'])
  return report


def _export(model: keras.Model, layout: InputLayout, config: hparams.TFTConfig,
            spec: DatasetSpec, transform_output: tft.TFTransformOutput, fn_args: FnArgs,
            strategy: tf.distribute.Strategy, calibration: Optional[Dict[str, object]],
            started: warm_start.Outcome, eval_start: Optional[str],
            trained: List[Dict[str, object]]) -> None:
  """Writes the SavedModel, the warm-start checkpoint, how training `started` and went,
  and the period it was trained on, if known and before `eval_start` (not a refit's:
  scratch copies off the chief)."""
  path = cluster.write_dir(fn_args.serving_model_dir)
  options = distribution.save_options(strategy)
  if cluster.is_chief():
    _PROGRESS.info('exporting the model with its Transform graph')
  started_export = time.monotonic()
  export.save_model(model, layout, spec, config.quantiles, transform_output, path, options,
                    calibration)
  warm_start.save(model, layout, config, path, _checkpoint_options(options))
  warm_start.write_outcome(path, started)
  training_record.write(path, trained)
  if eval_start is not None and not any(record.get('refit') for record in trained):
    training_period.write(path, eval_start)
  if path != fn_args.serving_model_dir:
    tf.io.gfile.rmtree(path)
  else:
    logging.info('Exported the model to %s (signatures %r over raw windows, %r over '
                 'transformed windows).', path, export.SERVING_SIGNATURE,
                 export.EVAL_SIGNATURE)
    _PROGRESS.info('exported in %.1f s', time.monotonic() - started_export)


def _artifact_dir(file_patterns: Sequence[str]) -> str:
  """The artifact directory of a split's file patterns (`<uri>/Split-train/*`)."""
  return os.path.dirname(os.path.dirname(file_patterns[0]))


def _checkpoint_options(options: tf.saved_model.SaveOptions) -> tf.train.CheckpointOptions:
  return tf.train.CheckpointOptions(experimental_io_device=options.experimental_io_device)


def run_fn(fn_args: FnArgs, callbacks: Sequence[keras.callbacks.Callback] = ()) -> None:
  """Trains the TFT and exports it. Called by the TFX Trainer.

  Args:
    fn_args: the Trainer's arguments; see the module docstring for custom_config.
    callbacks: Keras callbacks run after the built-in ones (TFX passes none; tests use
      them to observe or interrupt training).

  Raises:
    ValueError: the configuration or the data does not allow training; the message
      says what to change.
    distribution.HardwareNotFoundError: the requested accelerator is not there.
  """
  custom_config = fn_args.custom_config or {}
  if 'dataset_spec' not in custom_config:
    raise ValueError("the Trainer's custom_config has no 'dataset_spec'; pass "
                     "custom_config={'dataset_spec': spec.to_json(), ...}")
  spec = DatasetSpec.from_json(custom_config['dataset_spec'])
  config = model_config_from(custom_config.get('model_config', {}))
  training = TrainingConfig.from_custom_config(custom_config)
  strategy = distribution.strategy_from_config(custom_config)
  transform_graph = fn_args.transform_graph_path or fn_args.transform_output
  if not transform_graph:
    raise ValueError('the Trainer has no transform graph; wire transform_graph='
                     "transform.outputs['transform_graph'] into the Trainer")
  transform_output = tft.TFTransformOutput(transform_graph)
  layout = window_inputs.input_layout(spec, transform_output)

  eval_start = window_report.eval_start_of(_artifact_dir(fn_args.train_files))
  train_windows, train_bytes = window_inputs.training_window_stats(fn_args.train_files)
  eval_windows, eval_bytes = window_inputs.record_stats(fn_args.eval_files)
  if eval_windows == 0:
    raise ValueError('no evaluation windows; move the eval split boundary earlier')
  plan = training_plan.plan(config, training, fn_args, strategy.num_replicas_in_sync,
                            train_windows, eval_windows)
  budget = refit.budget_of(custom_config)
  if budget is not None:
    # The judged run's schedule, so that its kept epoch's steps see the same rates.
    plan = dataclasses.replace(plan, epochs=budget.epochs_planned,
                               steps_per_epoch=budget.steps_per_epoch)
  logging.info('Training on %d windows (%d eval, in validation batches of %d) with %s on '
               '%d replicas: global batch %d, %d epochs of %d steps, peak learning rate '
               '%g; %s; %s; %s', train_windows, eval_windows, plan.eval_batch,
               type(strategy).__name__, strategy.num_replicas_in_sync,
               plan.global_batch, plan.epochs, plan.steps_per_epoch,
               plan.peak_learning_rate, layout, config, training)

  replicas = (f' over {strategy.num_replicas_in_sync} replicas'
              if strategy.num_replicas_in_sync > 1 else '')
  if budget is None:
    _PROGRESS.info('%d epochs of %d steps (global batch %d%s) on %s training windows, '
                   'each epoch checked on the %s eval windows', plan.epochs,
                   plan.steps_per_epoch, plan.global_batch, replicas, f'{train_windows:,}',
                   f'{eval_windows:,}')
  else:
    _PROGRESS.info('refit on the %s windows of every period: %s epochs of %d steps (global '
                   'batch %d%s), the epochs whose weights the judged model kept, of %d '
                   'planned', f'{train_windows:,}', ' and '.join(
                       str(epochs) for index, epochs in enumerate(budget.epochs)
                       if budget.refits(index)),
                   plan.steps_per_epoch, plan.global_batch, replicas, plan.epochs)
  if training.seed is not None:
    keras.utils.set_random_seed(training.seed)
  workers = cluster.worker_count()
  train, evaluation = _datasets(fn_args, spec, plan, training, train_bytes, eval_bytes,
                                eval_windows, workers)
  with strategy.scope():
    members = [build_and_compile(layout, config, training, plan, name,
                                 distribution.is_tpu(strategy))
               for name in member_names(config)]
    model = members[0] if len(members) == 1 else TFTEnsemble(members, name='tft_ensemble')
    started = _initialise(model, layout, config, training, fn_args, strategy, spec,
                          transform_output, eval_start)
  trained = _train(members, config, fn_args, plan, train, evaluation, callbacks,
                   _checkpoint_options(distribution.save_options(strategy)),
                   training.backup_every_steps, budget)
  if isinstance(model, TFTEnsemble):
    kept = (budget.kept_members if budget is not None
            else choose_members(model, config, evaluation, eval_windows))
    model.keep(kept)
    trained = training_record.with_members_kept(trained, kept)
  if budget is not None:
    calibration = budget.calibration
  elif training.calibrate_intervals:
    earlier = (forecast_the_earlier_period(layout, config, training, plan, fn_args, spec,
                                           strategy, trained, workers)
               if training.calibrate_on_the_period_before else None)
    calibration = calibrate(model, config, evaluation, eval_windows, spec.forecast_floor,
                            earlier)
  else:
    calibration = None
  _export(model, layout, config, spec, transform_output, fn_args, strategy, calibration,
          started, eval_start, trained)
  if workers > 1:
    _wait_for_every_worker(strategy)


def _wait_for_every_worker(strategy: tf.distribute.Strategy) -> None:
  """Returns once every worker has exported: a worker then finds the chief's model, as
  TFX's Trainer checks when `run_fn` returns (a collective sum, as a barrier)."""
  strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)),
                  axis=None)
