"""ETTh1 on the standard protocol of ../shared/data/README.md.

Test MSE and MAE of the z-scored target `OT` (mean and standard deviation of the train
rows) over every stride-1 test window, for the TFT the product's pipeline trains and for
naive forecasts of the same windows, and for NLinear's model fitted by least squares on the
train rows (`linear_baseline`). Univariate: `OT` alone (`etth1_univariate`);
multivariate: the six loads as observed inputs too (`etth1`); both with the data set's
own model settings (their spec files' `model`, `schema/specs/`). Each run of a setting, lookback and horizon
is its own pipeline run with the standard borders (rows 8640 / 11520 / 14400); training
stops early on the eval split, never on test.
"""

import dataclasses
import os
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

import numpy as np
import pandas as pd

from benchmarks import host, linear_baseline, metrics, pipeline_run
from benchmarks.report import forecaster, training_used
from schema.datasets import curated_schema_path, get_dataset
from schema.time_split import TimeSplit
from trainer_module import naive_forecasts

DATA_FILE = 'ETTh1.csv'
SETTINGS = {'univariate': 'etth1_univariate', 'multivariate': 'etth1'}
SEASON = 24  # seasonal-naive period, hours
PUBLISHED = {  # test MSE / MAE, univariate, lookback 336 (see the data README)
    96: {'DLinear': {'mse': 0.056, 'mae': 0.180}, 'NLinear': {'mse': 0.053, 'mae': 0.177}},
    24: {'Informer': {'mse': 0.098, 'mae': 0.247}},
}
TARGET_MSE = {96: 0.053, 24: 0.030}


class Configuration(NamedTuple):
  """One benchmarked configuration, run `repeats` times, with `ensemble_size` TFTs per run.
  Run r trains with seed r (`TrainingConfig.seed`): a rerun of the benchmark starts every
  run alike, and the repeats show how much the figures vary with the seed."""
  setting: str
  lookback: int
  horizon: int
  repeats: int = 1
  ensemble_size: int = 1


@dataclasses.dataclass(frozen=True)
class Plan:
  """The runs and the training budget of one benchmark pass.

  Attributes:
    configurations: what is run, each `repeats` times.
    model_overrides: TFTConfig fields changed from the 'local' preset, over the data
      set's own (`model_overrides`).
    train_steps: the Trainer's step budget (early stopping may use less).
    eval_stride: hours between eval windows (early stopping and the Evaluator).
    rows: None: the whole file with the standard borders; else only the first `rows`
      rows, split in halves and quarters (train, eval, test), for a smoke run.
  """
  configurations: Tuple[Configuration, ...]
  model_overrides: Mapping[str, Any]
  train_steps: int
  eval_stride: int
  rows: Optional[int] = None


FULL = Plan(
    # Lookback 336 is the published models' and is repeated, to compare with them.
    configurations=(Configuration('univariate', 336, 96, repeats=3),
                    # Averaging members cuts the run-to-run spread of single TFTs.
                    Configuration('univariate', 336, 96, repeats=2, ensemble_size=3),
                    Configuration('univariate', 336, 24, repeats=3),
                    Configuration('univariate', 168, 96), Configuration('univariate', 168, 24),
                    Configuration('multivariate', 336, 96),
                    Configuration('multivariate', 336, 24)),
    # Chosen on the eval split (h96, lookback 336, `benchmarks/etth1_tuning.py`) among
    # hidden 16-32, dropout 0.1-0.3, learning rate 3e-4-1e-3, batch 64-128, budgets of
    # 1500-3000 steps and patience 5-10; validation every 50 steps, strong dropout. With
    # patience 5 one run in three stopped after a lucky early evaluation.
    model_overrides={'hidden_size': 32, 'num_heads': 4, 'dropout': 0.3,
                     'learning_rate': 3e-4, 'batch_size': 64, 'max_epochs': 30,
                     'early_stopping_patience': 10},
    train_steps=1500, eval_stride=4)

QUICK = Plan(
    configurations=(Configuration('univariate', 48, 12),),
    model_overrides={'hidden_size': 8, 'num_heads': 1, 'batch_size': 32, 'max_epochs': 1},
    train_steps=2, eval_stride=12, rows=480)


def run(plan: Plan, data_dir: str, work_dir: str) -> Dict[str, Any]:
  """Runs every configuration of `plan`; returns the JSON-ready results."""
  data_file = host.data_file(os.path.join(data_dir, DATA_FILE), '--data-dir')
  time_split = get_dataset('etth1').split
  if plan.rows:
    data_file, time_split = _head(data_file, plan.rows, work_dir)
  targets = split_target(data_file, time_split)
  protocol = protocol_facts(data_file, targets)
  linear_fits = {window: linear_baseline.fit(*linear_baseline.sliding_windows(targets[0],
                                                                              *window))
                 for window in {(c.lookback, c.horizon) for c in plan.configurations}}
  runs = [_run_one(plan, configuration, repeat, data_file, time_split, protocol,
                   linear_fits[configuration.lookback, configuration.horizon], work_dir)
          for configuration in plan.configurations
          for repeat in range(1, configuration.repeats + 1)]
  return {'benchmark': 'etth1', 'protocol': protocol, 'published': PUBLISHED,
          'target_mse': TARGET_MSE, 'train_steps': plan.train_steps,
          'eval_stride': plan.eval_stride, 'runs': runs}


def model_overrides(plan: Plan, setting: str) -> Dict[str, Any]:
  """The TFTConfig fields of one setting: the data set's own, then the plan's."""
  return {**get_dataset(SETTINGS[setting]).model_overrides, **plan.model_overrides}


def split_target(data_file: str, time_split: TimeSplit) -> Tuple[np.ndarray, ...]:
  """OT of the train, eval and test rows."""
  frame = pd.read_csv(data_file, usecols=['date', 'OT'], parse_dates=['date'])
  eval_start, test_start, end = (pd.Timestamp(b) for b in (
      time_split.eval_start, time_split.test_start, time_split.end))
  return (frame[frame.date < eval_start].OT.to_numpy(),
          frame[(frame.date >= eval_start) & (frame.date < test_start)].OT.to_numpy(),
          frame[(frame.date >= test_start) & (frame.date < end)].OT.to_numpy())


def protocol_facts(data_file: str, targets: Tuple[np.ndarray, ...]) -> Dict[str, Any]:
  """Rows per split and the train rows' mean and std of OT (population std, ddof 0), from
  the OT of the train, eval and test rows (`split_target`)."""
  train, evaluation, test = targets
  return {'data': os.path.basename(data_file), 'train_rows': len(train),
          'eval_rows': len(evaluation), 'test_rows': len(test),
          'target_mean': float(train.mean()), 'target_std': float(train.std(ddof=0))}


def _run_one(plan: Plan, configuration: Configuration, repeat: int, data_file: str,
             time_split: TimeSplit, protocol: Dict[str, Any], linear_fit: np.ndarray,
             work_dir: str) -> Dict[str, Any]:
  setting, lookback, horizon, _, ensemble_size = configuration
  dataset = get_dataset(SETTINGS[setting])
  config = pipeline_run.new_config(
      os.path.join(work_dir, f'etth1-{setting}-l{lookback}-h{horizon}-e{ensemble_size}-'
                   f'{repeat}'), data_file,
      dataset=dataset.spec.with_window(lookback, horizon), time_split=time_split,
      blessing=dataset.blessing,
      strides={'train': 1, 'eval': plan.eval_stride, 'test': 1},
      model_overrides={**model_overrides(plan, setting), 'ensemble_size': ensemble_size},
      train_steps=plan.train_steps,
      training_options={'warm_start': False, 'seed': repeat},
      schema_file=curated_schema_path(dataset.spec.name))
  result = pipeline_run.run(config, score_split='test')
  scored = result.scored
  expected = protocol['test_rows'] - horizon + 1
  if len(scored.actual) != expected:
    raise RuntimeError(f'{len(scored.actual)} test windows, but the protocol has {expected} '
                       f'(every stride-1 window of the {protocol["test_rows"]} test rows); '
                       f'see {config.pipeline_root}')
  scale = protocol['target_std']
  model = metrics.point_errors(scored.forecasts[0.5], scored.actual, scale)
  model['product_test_mae'] = result.product_test_mae(model['mae'], scale)
  naive = {name: metrics.point_errors(forecast, scored.actual, scale)
           for name, forecast in naive_forecasts.naive_forecasts(
               scored.history, horizon, [SEASON]).items()}
  linear = metrics.point_errors(linear_baseline.forecast(linear_fit, scored.history),
                                scored.actual, scale)
  training = result.training(config)
  print(f'  ETTh1 {forecaster(ensemble_size)} {setting} lookback {lookback} h{horizon}, '
        f'run {repeat}: MSE {model["mse"]:.4f} MAE {model["mae"]:.4f} (repeat-last '
        f'{naive["repeat_last"]["mse"]:.4f} / {naive["repeat_last"]["mae"]:.4f}, NLinear '
        f'least squares {linear["mse"]:.4f} / {linear["mae"]:.4f}); '
        f'{training_used(training)}, {result.seconds:.0f} s', flush=True)
  return {'setting': setting, 'lookback': lookback, 'horizon': horizon, 'repeat': repeat,
          'seed': repeat, 'ensemble_size': ensemble_size,
          'test_windows': len(scored.actual), 'model': model, 'naive': naive, 'linear': linear,
          'training': training, 'model_config': dataclasses.asdict(config.model_config),
          'pipeline': result.summary()}


def _head(data_file: str, rows: int, work_dir: str) -> Tuple[str, TimeSplit]:
  """The first `rows` rows in a file under `work_dir`, split 1/2, 1/4, 1/4 by time."""
  frame = pd.read_csv(data_file, nrows=rows)
  path = os.path.join(work_dir, 'data', f'ETTh1-first-{rows}.csv')
  os.makedirs(os.path.dirname(path), exist_ok=True)
  frame.to_csv(path, index=False)
  dates = frame.date
  last = pd.Timestamp(dates.iloc[-1]) + pd.Timedelta(hours=1)
  return path, TimeSplit(eval_start=dates.iloc[rows // 2],
                         test_start=dates.iloc[rows * 3 // 4], end=str(last))
