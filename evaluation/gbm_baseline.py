"""A global gradient-boosted model on the run's own windows: what a practitioner would fit
before a TFT, scored beside it.

One LightGBM model per quantile the TFT forecasts (P10, P50, P90 by default) over every
series and horizon step (direct multi-horizon: a row per window and step h), trained on
the training windows the TFT trains on (at most about `DEFAULT_MAX_TRAINING_ROWS` rows:
beyond, one in k windows, drawn by a hash of the window's position, so that every phase of
the day or week keeps its share), each stopped early on its pinball loss on the eval
windows as the TFT is. Rows are weighted by their window's scale, so that the losses are
in original units (the median's: the MAE). The forecasts are served as the TFT's are
(`trainer_module.export.served_quantiles`): each band's ends moved by factors fitted on
the eval windows when the TFT's are (`trainer_module.interval_calibration`), put in order
from the median out, raised to the spec's `forecast_floor`; then scored on the eval
windows and on the held-out test windows, which nothing here chose on: the median's MAE,
each quantile's q-risk and the outer band's coverage, in original units. The naive
forecasts of the same windows are scored by the same code, a check that the windows are
the Evaluator's.

A row's inputs come from its window alone, the model's inputs after Transform:
- the step h;
- the target history centred on its mean and divided by its std, of which: its last
  `lag_count` values; for each seasonal period p of the grid that fits in the history,
  the value at the target step's phase in the history's last period (the seasonal naive
  forecast of step h), the mean of that phase over the history's whole periods, and the
  mean and std of the last p values; and the history's mean and std themselves;
- the known inputs at the target step (calendar features included), the observed inputs'
  last value and mean over the history, the static inputs; categoricals as LightGBM
  categoricals.
The label is the target step's value on the history's scale.
"""

import dataclasses
import io
import math
import os
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import lightgbm
import numpy as np
import tensorflow as tf

from common import progress_log
from schema.dataset_spec import DatasetSpec
from schema.features import Group, features_in
from schema.time_split import EVAL_SPLIT, TRAINING_SPLIT
from schema.window_layout import TARGET_HISTORY
from evaluation import metrics
from trainer_module import (earlier_period, export, interval_calibration, naive_forecasts,
                            window_inputs)
from schema import hparams

DEFAULT_MAX_TRAINING_ROWS = 200_000  # windows x horizon steps
DEFAULT_QUANTILES = hparams.TFTConfig.quantiles  # the TFT's
MAX_ROUNDS = 1000
EARLY_STOPPING_ROUNDS = 50
PARAMS = {'objective': 'quantile', 'learning_rate': 0.05, 'num_leaves': 31,
          'min_child_samples': 20, 'verbosity': -1,
          # The same model from the same rows and thread count; LightGBM's docs: its
          # deterministic option needs force_col_wise or force_row_wise.
          'deterministic': True, 'force_col_wise': True}
_MIN_SCALE = 1e-3  # relative to max(1, |mean|), as the TFT's WindowTargetScaler
PROGRESS = progress_log.logger('GbmBaseline')  # the component's, too


@dataclasses.dataclass
class Windows:
  """Windows as the model reads them: `inputs` by input group (`window_inputs.model_inputs`),
  `label` [N, H] in original units."""
  inputs: Dict[str, np.ndarray]
  label: np.ndarray

  def __len__(self) -> int:
    return len(self.label)


@dataclasses.dataclass
class Table:
  """One row per window and horizon step: the model's features, the label on each window's
  scale, and what maps a forecast back to original units."""
  features: np.ndarray  # [N * H, F] float32
  names: List[str]
  categorical: List[str]
  label: np.ndarray  # [N * H]
  location: np.ndarray  # [N * H]
  scale: np.ndarray  # [N * H]


def lag_count(spec: DatasetSpec) -> int:
  """History values taken as they are: a horizon's worth, or the shortest season if
  longer, within the history."""
  return min(spec.encoder_steps, max([spec.horizon] + _periods(spec)[:1]))


def _periods(spec: DatasetSpec) -> List[int]:
  """The seasonal periods of the naive forecasts, shortest first."""
  return sorted(naive_forecasts.periods_for(spec.frequency.seasons, spec.encoder_steps))


def table(windows: Windows, spec: DatasetSpec) -> Table:
  """The rows of `windows`, window by window, steps 1 to H within each."""
  history = windows.inputs[TARGET_HISTORY].astype(np.float64)
  count, encoder = history.shape
  horizon = spec.horizon
  location = history.mean(axis=1, keepdims=True)
  scale = np.maximum(history.std(axis=1, keepdims=True),
                     _MIN_SCALE * np.maximum(np.abs(location), 1.0))
  scaled = ((history - location) / scale).astype(np.float32)
  # Columns of one value per window [N] or per step [N, H].
  columns: Dict[str, np.ndarray] = {'step': np.broadcast_to(np.arange(1, horizon + 1),
                                                            (count, horizon)),
                                    'history_mean': location[:, 0],
                                    'history_std': scale[:, 0]}
  for lag in range(lag_count(spec)):
    columns[f'target_lag_{lag + 1}'] = scaled[:, encoder - 1 - lag]
  steps = np.arange(horizon)
  for period in _periods(spec):
    same_phase = encoder - period + steps % period  # [H]: the seasonal naive forecast's
    columns[f'seasonal_{period}'] = scaled[:, same_phase]
    cycles = [same_phase - cycle * period for cycle in range(encoder // period)]
    columns[f'phase_mean_{period}'] = np.mean([scaled[:, index] for index in cycles], axis=0)
    columns[f'mean_last_{period}'] = scaled[:, -period:].mean(axis=1)
    columns[f'std_last_{period}'] = scaled[:, -period:].std(axis=1)
  categorical = []
  for group in Group:
    values = windows.inputs[group.value]
    for index, feature in enumerate(features_in(spec, group)):
      if group in (Group.STATIC_CATEGORICAL, Group.STATIC_REAL):
        columns[feature.name] = values[:, index]
      elif group == Group.OBSERVED_REAL:
        columns[f'{feature.name}_last'] = values[:, -1, index]
        columns[f'{feature.name}_mean'] = values[:, :, index].mean(axis=1)
      else:  # known: the value at the target step
        columns[feature.name] = values[:, encoder:, index]
      if group.is_categorical:
        categorical.append(feature.name)
  # Filled a column at a time: no float64 copy of the whole table.
  features = np.empty([count * horizon, len(columns)], np.float32)
  for position, values in enumerate(columns.values()):
    features[:, position] = (np.repeat(values, horizon) if values.ndim == 1
                             else values.reshape(-1))
  label = (windows.label - location) / scale
  return Table(features=features, names=list(columns), categorical=categorical,
               label=label.reshape(-1), location=np.repeat(location[:, 0], horizon),
               scale=np.repeat(scale[:, 0], horizon))


def fit(train: Table, evaluation: Optional[Table], quantile: float = 0.5, seed: int = 1,
        threads: int = 0, rounds: Optional[int] = None) -> lightgbm.Booster:
  """The model of `quantile`, stopped when the eval rows' pinball loss has not fallen for
  `EARLY_STOPPING_ROUNDS` rounds (the best round kept) or after `rounds` (default
  `MAX_ROUNDS`); without `evaluation`, trained for `rounds`. `threads` 0: LightGBM's
  default."""
  config = {**PARAMS, 'alpha': quantile, 'seed': seed, 'num_threads': threads}
  # A row's pinball loss in original units is its scale times that on the window's scale:
  # weighted by it, the loss (and the early stopping) is in original units.
  mean_scale = float(np.mean(train.scale))
  dataset = lambda rows, **kwargs: lightgbm.Dataset(
      rows.features, rows.label, weight=rows.scale / mean_scale, feature_name=rows.names,
      categorical_feature=rows.categorical, **kwargs)
  train_set = dataset(train)
  rounds = rounds or MAX_ROUNDS
  if evaluation is None:
    return lightgbm.train(config, train_set, num_boost_round=rounds)
  return lightgbm.train(config, train_set, num_boost_round=rounds,
                        valid_sets=[dataset(evaluation, reference=train_set)],
                        callbacks=[lightgbm.early_stopping(EARLY_STOPPING_ROUNDS,
                                                           verbose=False)])


def _rounds(model: lightgbm.Booster) -> int:
  """The rounds kept: the best one's, or all when early stopping did not stop it."""
  return model.best_iteration or model.current_iteration()


def capped(model: lightgbm.Booster) -> bool:
  """Whether `model` ran to MAX_ROUNDS: early stopping did not stop it."""
  return model.current_iteration() >= MAX_ROUNDS


def course(model: lightgbm.Booster) -> str:
  """'156 rounds (stopped early)' or '1,000 rounds: the cap, not stopped early (the best
  round 987 kept)'."""
  if capped(model):
    return (f'{MAX_ROUNDS:,} rounds: the cap, not stopped early (the best round '
            f'{_rounds(model):,} kept)')
  return f'{_rounds(model):,} rounds (stopped early)'


def forecast(models: Sequence[lightgbm.Booster], rows: Table, horizon: int) -> np.ndarray:
  """The models' forecasts [N, H, Q] in original units, as they come."""
  return np.stack([
      (model.predict(rows.features, num_iteration=model.best_iteration or None) * rows.scale
       + rows.location).reshape(-1, horizon) for model in models], axis=-1)


def served(forecasts: np.ndarray, quantiles: Sequence[float],
           factors: interval_calibration.BandFactors,
           floor: Optional[float] = None) -> np.ndarray:
  """`forecasts` [N, H, Q] as the TFT's are served: bands moved by `factors`, in order from
  the median out, at or above `floor` if one is given."""
  return export.served_quantiles(tf.constant(forecasts), quantiles, factors, floor).numpy()


def naive_maes(windows: Windows, spec: DatasetSpec) -> Dict[str, float]:
  """The MAE of each naive forecast the Evaluator scores, on `windows`."""
  return naive_forecasts.naive_maes(windows.inputs[TARGET_HISTORY], windows.label,
                                    _periods(spec))


def _mae(forecasts: np.ndarray, actual: np.ndarray) -> float:
  return float(np.mean(np.abs(forecasts - actual.astype(np.float64))))


def one_in(available_windows: int, horizon: int,
           max_training_rows: int = DEFAULT_MAX_TRAINING_ROWS) -> int:
  """k such that one in k of `available_windows` training windows stays within about
  `max_training_rows` rows of `horizon` steps each.

  Raises:
    ValueError: `max_training_rows` is below one.
  """
  if max_training_rows < 1:
    raise ValueError(f'max_training_rows must be at least 1, got {max_training_rows}')
  return max(1, math.ceil(available_windows * horizon / max_training_rows))


def compare(train: Windows, evaluation: Windows, spec: DatasetSpec,
            quantiles: Sequence[float] = DEFAULT_QUANTILES, calibrate: bool = True,
            seed: int = 1, threads: int = 0,
            scored: Optional[Mapping[str, Windows]] = None,
            judged: str = EVAL_SPLIT,
            earlier: Optional[Tuple[Windows, Windows]] = None) -> Dict[str, object]:
  """Fits a model per quantile on `train`, stopped early on `evaluation`, calibrates the
  bands on `evaluation` if `calibrate`, and scores them and the naive forecasts on each
  split of `scored` (by default the eval windows alone), as the Evaluator scores the TFT;
  a JSON-ready record: the figures of every scored split under 'by_split', and those of
  `judged` (the split the run is judged on) at the top level too. With `earlier` (the
  training windows before the period before the eval period, and that period's:
  `trainer_module.earlier_period`), the bands are calibrated on both periods pooled, as
  the Trainer calibrates the TFT's: the earlier period forecast by models of the same
  rounds trained before it."""
  return compare_and_forecast(train, evaluation, spec, quantiles, calibrate, seed, threads,
                              scored, judged, earlier)[0]


def compare_and_forecast(train: Windows, evaluation: Windows, spec: DatasetSpec,
                         quantiles: Sequence[float] = DEFAULT_QUANTILES,
                         calibrate: bool = True, seed: int = 1, threads: int = 0,
                         scored: Optional[Mapping[str, Windows]] = None,
                         judged: str = EVAL_SPLIT,
                         earlier: Optional[Tuple[Windows, Windows]] = None
                         ) -> Tuple[Dict[str, object], Dict[str, np.ndarray]]:
  """`compare`'s record, and the served forecasts [N, H, Q] of each scored split's
  windows, in their order."""
  scored = {EVAL_SPLIT: evaluation} if scored is None else dict(scored)
  empty = [name for name, windows in scored.items() if not len(windows)]
  if not len(train) or not len(evaluation) or empty or judged not in scored:
    raise ValueError(f'the gradient-boosted baseline needs training, eval and scored '
                     f'windows; got {len(train)} training and {len(evaluation)} eval '
                     f'windows, and scored splits {sorted(scored)} ({empty} empty; the run '
                     f'is judged on {judged})')
  started = time.monotonic()
  train_rows, eval_rows = table(train, spec), table(evaluation, spec)
  PROGRESS.info('fitting a model per quantile on %s rows (%s windows x %d steps), each '
                 'stopped once its loss on the %s eval windows stops falling (at most %s '
                 'rounds)', f'{len(train_rows.label):,}', f'{len(train):,}', spec.horizon,
                 f'{len(evaluation):,}', f'{MAX_ROUNDS:,}')
  models = []
  for q in quantiles:
    fitted = time.monotonic()
    models.append(fit(train_rows, eval_rows, quantile=q, seed=seed, threads=threads))
    PROGRESS.info('%s: %s, %.1f s', export.quantile_key(q).upper(), course(models[-1]),
                   time.monotonic() - fitted)
  eval_forecasts = forecast(models, eval_rows, spec.horizon)
  pooled = (eval_forecasts, evaluation.label)
  if calibrate and earlier is not None:
    pooled = _pooled_with_the_earlier_period(pooled, models, earlier, spec, quantiles, seed,
                                             threads)
  factors = interval_calibration.fit(*pooled, quantiles) if calibrate else {}
  # The eval windows' forecasts serve twice: for the calibration and for their figures.
  forecasts = {
      name: served(eval_forecasts if windows is evaluation
                   else forecast(models, table(windows, spec), spec.horizon),
                   quantiles, factors, spec.forecast_floor)
      for name, windows in scored.items()}
  by_split = {name: _figures(forecasts[name], windows, spec, quantiles)
              for name, windows in scored.items()}
  median = export.median_index(quantiles)
  importance = models[median].feature_importance(importance_type='gain')
  ranked = sorted(zip(train_rows.names, importance), key=lambda item: -item[1])
  return {
      'model': 'LightGBM, global, one model per quantile over all series and steps',
      'lightgbm': lightgbm.__version__,
      'quantiles': list(quantiles),
      **by_split[judged],
      'scored_split': judged,
      'by_split': by_split,
      'interval_factors': factors if calibrate else None,
      'calibration_windows': len(pooled[1]) if calibrate else 0,
      'eval_windows': len(evaluation),
      'training_windows': len(train),
      'training_rows': len(train_rows.label),
      'rounds': {export.quantile_key(q): _rounds(model) for q, model in zip(quantiles, models)},
      'capped': [export.quantile_key(q) for q, model in zip(quantiles, models) if capped(model)],
      'params': {**PARAMS, 'seed': seed, 'max_rounds': MAX_ROUNDS,
                 'early_stopping_rounds': EARLY_STOPPING_ROUNDS},
      'top_features': [name for name, gain in ranked[:10] if gain > 0],
      'seconds': round(time.monotonic() - started, 1),
  }, forecasts


def _pooled_with_the_earlier_period(
    pooled: Tuple[np.ndarray, np.ndarray], models: Sequence[lightgbm.Booster],
    earlier: Tuple[Windows, Windows], spec: DatasetSpec, quantiles: Sequence[float],
    seed: int, threads: int) -> Tuple[np.ndarray, np.ndarray]:
  """The eval forecasts and actuals `pooled` with the earlier period's, forecast by a model
  per quantile of the rounds `models` kept, trained on the windows before it; `pooled`
  alone where either holds no window."""
  before, period = earlier
  if not len(before) or not len(period):
    PROGRESS.info('bands calibrated on the eval windows alone: %s training windows before '
                  'the period before the eval period, %s of it', f'{len(before):,}',
                  f'{len(period):,}')
    return pooled
  started = time.monotonic()
  before_rows = table(before, spec)
  copies = [fit(before_rows, None, quantile=q, seed=seed, threads=threads,
                rounds=_rounds(model)) for q, model in zip(quantiles, models)]
  PROGRESS.info('bands calibrated on the eval windows and the %s of the period before, '
                'forecast by models of the same rounds trained on the %s windows before '
                'it, %.1f s', f'{len(period):,}', f'{len(before):,}',
                time.monotonic() - started)
  return (np.concatenate([pooled[0], forecast(copies, table(period, spec), spec.horizon)]),
          np.concatenate([pooled[1], period.label]))


def _figures(forecasts: np.ndarray, windows: Windows, spec: DatasetSpec,
             quantiles: Sequence[float]) -> Dict[str, object]:
  """The scores of served `forecasts` [N, H, Q] on `windows`, and the naive forecasts'."""
  point = forecasts[..., export.median_index(quantiles)]
  return {
      'mae': _mae(point, windows.label),
      'mae_by_step': [_mae(point[:, step], windows.label[:, step])
                      for step in range(spec.horizon)],
      'q_risk': {export.quantile_key(q): metrics.q_risk(forecasts[..., i], windows.label, q)
                 for i, q in enumerate(quantiles)},
      'coverage': interval_calibration.coverage(forecasts, windows.label, quantiles),
      'naive_mae': naive_maes(windows, spec),
      'scored_windows': len(windows),
  }


def run(windows_uri: str, spec: DatasetSpec, available: int,
        quantiles: Sequence[float] = DEFAULT_QUANTILES, calibrate: bool = True,
        max_training_rows: int = DEFAULT_MAX_TRAINING_ROWS, seed: int = 1,
        scored_splits: Sequence[str] = (EVAL_SPLIT,), judged: str = EVAL_SPLIT,
        forecasts_path: Optional[str] = None,
        calibrate_on_the_period_before: bool = False) -> Dict[str, object]:
  """`compare` on a Windowing output of `available` training windows: trained on its
  'train' windows (about one in k beyond `max_training_rows` rows), stopped early (and
  calibrated if `calibrate`, with the period before the eval period if
  `calibrate_on_the_period_before`, as the Trainer) on 'eval', scored on each of
  `scored_splits`; with
  `forecasts_path`, the `judged` split's served forecasts and actuals are written there
  (`write_forecasts`), for a backtest to score them window by window."""
  pattern = lambda split: [os.path.join(windows_uri, f'Split-{split}', '*')]
  k = one_in(available, spec.horizon, max_training_rows)
  PROGRESS.info('reading %s of the %s training windows, and the %s windows',
                 'all' if k == 1 else f'one in {k}', f'{available:,}',
                 ' and '.join(scored_splits))
  read = lambda split, **kwargs: read_windows(window_inputs.windows_in_order(
      pattern(split), spec, **kwargs))
  evaluation = read(EVAL_SPLIT, segments=False)
  scored = {split: evaluation if split == EVAL_SPLIT else read(split, segments=False)
            for split in scored_splits}
  period = (earlier_period.of_eval_windows(pattern(EVAL_SPLIT), spec)
            if calibrate and calibrate_on_the_period_before else None)
  earlier = None if period is None else (
      read(TRAINING_SPLIT, segments=True, one_in=k, only=period.training_windows()),
      read(TRAINING_SPLIT, segments=True, only=period.windows()))
  result, forecasts = compare_and_forecast(
      read(TRAINING_SPLIT, segments=True, one_in=k), evaluation, spec, quantiles, calibrate,
      seed=seed, scored=scored, judged=judged, earlier=earlier)
  if forecasts_path:
    write_forecasts(forecasts_path, forecasts[judged], scored[judged].label, quantiles)
  return {**result, 'training_windows_available': available}


def write_forecasts(path: str, forecasts: np.ndarray, actual: np.ndarray,
                    quantiles: Sequence[float]) -> None:
  """Served forecasts [N, H, Q] with the actuals [N, H] of the same windows, in the order
  `window_inputs.windows_in_order` reads them, as a NumPy archive."""
  archive = io.BytesIO()  # a zip archive needs a file it can seek in; GFile may not be one
  np.savez(archive, forecasts=forecasts, actual=actual, quantiles=np.asarray(quantiles))
  with tf.io.gfile.GFile(path, 'wb') as f:
    f.write(archive.getvalue())


def read_forecasts(path: str) -> Dict[str, np.ndarray]:
  """What `write_forecasts` wrote: 'forecasts', 'actual' and 'quantiles'."""
  with tf.io.gfile.GFile(path, 'rb') as f:
    return dict(np.load(io.BytesIO(f.read())))


def read_windows(batches) -> Windows:
  """`Windows` from an iterable of (inputs, label) batches of tensors."""
  inputs: Dict[str, List[np.ndarray]] = {}
  labels = []
  for batch_inputs, label in batches:
    for name, values in batch_inputs.items():
      inputs.setdefault(name, []).append(values.numpy())
    labels.append(label.numpy())
  if not labels:
    return Windows(inputs={}, label=np.zeros([0, 0], np.float32))
  return Windows(inputs={name: np.concatenate(parts) for name, parts in inputs.items()},
                 label=np.concatenate(labels))
