"""Stallion on the protocol of pytorch-forecasting's TFT tutorial (../shared/data/README.md).

The last 6 months of all 350 series are the forecast horizon, with 36 months of history
(the TFT's windows read the last `encoder_steps` of them, the spec's 12; the naive
interval all 36): MAE of the median forecast, q-risk P50 and P90 and the share of actuals
inside [P10, P90], in original units (volume), for the TFT the product's pipeline trains
(one, or an ensemble: `Plan.ensemble_sizes`) and for the naive last-value forecast with
an empirical interval (`naive_baselines.naive_quantiles`). The 6 months before the horizon are the
eval split (early stopping), so the scored months are never used for training or model
selection. Each run's test MAE is also the Evaluator's (the product's held-out figure),
checked equal to NumPy's. The gradient-boosted baseline the pipeline fits (`GbmBaseline`,
the same in every run: the windows and LightGBM are deterministic) is scored by it on
the same test windows; the first run's figures are recorded (`pipeline_gbm`).

`benchmarks.run_all --only stallion` runs the benchmark. Run alone, this module makes the
windows of a backtest origin for `benchmarks.stallion_tuning`: one pipeline run of one TFT
with the benchmark's plan and an earlier eval period, whose forecasts from before 2017 hold
months the eval split lacks (a year-end):

  .venv/bin/python -m benchmarks.stallion --eval-start 2016-07-01 \\
      --work-dir runs/stallion_backtest_2016-07
"""

import argparse
import dataclasses
import itertools
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import pandas as pd

from benchmarks import host, metrics, pipeline_run, readme_tables
from benchmarks.naive_baselines import naive_quantiles
from benchmarks.report import forecaster, training_used
from components.gbm_baseline import figures_on
from pipeline.config import default_strides
from schema.datasets import curated_schema_path, get_dataset
from schema.features import SERIES_KEY_SEPARATOR
from schema.time_split import TEST_SPLIT, TimeSplit

DATA_FILE = 'stallion.csv'
SPLIT = TimeSplit(eval_start='2017-01-01', test_start='2017-07-01')
KEYS = ['agency', 'sku']
# Months of history the naive forecast's interval is drawn from: the protocol's, whatever
# history the TFT's windows have, so that every run is compared with the same naive figures.
NAIVE_HISTORY = 36


@dataclasses.dataclass(frozen=True)
class Plan:
  """The training budget of one benchmark pass.

  Attributes:
    model_overrides: TFTConfig fields changed from the 'local' preset.
    train_steps: the Trainer's step budget (early stopping may use less).
    repeats: pipeline runs of each ensemble size; run r trains with seed r
      (`TrainingConfig.seed`), and the repeats show how much the figures vary with it.
    ensemble_sizes: TFTs per model (`TFTConfig.ensemble_size`), each benchmarked.
    series: None: every series; else only the first `series` (agency, sku) pairs, for
      a smoke run.
    split: the time split; the test period is the protocol's, the eval period (early
      stopping, calibration) may start earlier.
  """
  model_overrides: Mapping[str, Any]
  train_steps: int
  repeats: int = 1
  ensemble_sizes: Tuple[int, ...] = (1,)
  series: Optional[int] = None
  split: TimeSplit = SPLIT


# Chosen on the eval split (eval MAE and validation loss of three to five seeds) among the
# variants of benchmarks/pages/stallion.md, "How the settings were chosen": 400 steps in
# epochs of 40, so that the learning rate's cosine decay ends within the epochs early
# stopping keeps.
# Where the eval split could not tell settings apart, a backtest origin a year earlier
# (forecasts from 2016-06, trained on targets before 2016-07) chose: each window centred
# on its last value.
FULL = Plan(model_overrides={'hidden_size': 32, 'num_heads': 4, 'dropout': 0.2,
                             'learning_rate': 1e-3, 'batch_size': 64, 'max_epochs': 10,
                             'early_stopping_patience': 5, 'history_highway': True,
                             'target_location': 'last'},
            train_steps=400, repeats=3, ensemble_sizes=(1, 3))

QUICK = Plan(model_overrides={'hidden_size': 8, 'num_heads': 1, 'batch_size': 16,
                              'max_epochs': 1},
             train_steps=2, series=6)

# One run of every series whose TFT hardly trains: for the windows, which do not depend on
# it, and so for the pipeline's gradient-boosted baseline (`benchmarks.stallion_gbm`).
WINDOWS_ONLY = dataclasses.replace(QUICK, train_steps=1, series=None)


def run(plan: Plan, data_dir: str, work_dir: str) -> Dict[str, Any]:
  """Trains through the pipeline `plan.repeats` times per ensemble size and scores the
  last 6 months of each run; returns JSON-ready results."""
  data_file = host.data_file(os.path.join(data_dir, DATA_FILE), '--data-dir')
  if plan.split.test_start != SPLIT.test_start:
    raise ValueError(f'the protocol tests from {SPLIT.test_start}, not {plan.split.test_start}')
  if plan.series:
    data_file = _first_series(data_file, plan.series, work_dir)
  series = len(pd.read_csv(data_file, usecols=KEYS).drop_duplicates())
  dataset = get_dataset('stallion')
  spec = dataset.spec
  model_overrides = {**dataset.model_overrides, **plan.model_overrides}
  runs, naive = [], None
  first_run = (plan.ensemble_sizes[0], 1)
  for ensemble_size, repeat in itertools.product(plan.ensemble_sizes,
                                                range(1, plan.repeats + 1)):
    config = pipeline_run.new_config(
        run_dir(work_dir, ensemble_size, repeat), data_file,
        dataset=spec, time_split=plan.split, blessing=dataset.blessing,
        strides=default_strides(spec, plan.split),
        model_overrides={**model_overrides, 'ensemble_size': ensemble_size},
        train_steps=plan.train_steps, training_options={'warm_start': False, 'seed': repeat},
        schema_file=curated_schema_path(spec.name))
    result = pipeline_run.run(config, score_split='test')
    if (ensemble_size, repeat) == first_run:
      first_result = result
    scored = result.scored
    if len(scored.actual) != series:
      raise RuntimeError(f'{len(scored.actual)} test windows, but the protocol has one '
                         f'per series ({series}); see {config.pipeline_root}')
    training = result.training(config)
    model = metrics.quantile_errors(scored.forecasts, scored.actual)
    model['product_test_mae'] = result.product_test_mae(model['mae'])
    if naive is None:  # every run scores the same windows
      history = protocol_history(data_file, scored.series, scored.history[:, -1])
      naive = metrics.quantile_errors(
          naive_quantiles(history, spec.horizon, config.model_config.quantiles),
          scored.actual)
    print(f'  Stallion {forecaster(ensemble_size)}, run {repeat}/{plan.repeats}: MAE '
          f'{model["mae"]:.1f} (naive {naive["mae"]:.1f}), q-risk P50 '
          f'{model["q_risk_p50"]:.3f} (naive {naive["q_risk_p50"]:.3f}), P90 '
          f'{model["q_risk_p90"]:.3f} (naive {naive["q_risk_p90"]:.3f}); '
          f'{training_used(training)}, {result.seconds:.0f} s', flush=True)
    runs.append({'ensemble_size': ensemble_size, 'repeat': repeat, 'seed': repeat,
                 'model': model, 'training': training, 'pipeline': result.summary(),
                 'model_config': dataclasses.asdict(config.model_config)})
  gbm = pipeline_gbm(first_result.gbm_baseline, naive['mae'])
  print(f"  Stallion, the pipeline's LightGBM (GbmBaseline): {describe_gbm(gbm)}", flush=True)
  return {'benchmark': 'stallion',
          'protocol': {'data': os.path.basename(data_file), 'series': series,
                       'history_months': NAIVE_HISTORY, 'encoder_months': spec.encoder_steps,
                       'horizon_months': spec.horizon,
                       'split': dataclasses.asdict(plan.split)},
          'train_steps': plan.train_steps, 'test_windows': series,
          'naive_last_value': naive, 'runs': runs, 'pipeline_gbm': gbm}


def pipeline_gbm(record: Dict[str, Any], naive_mae: float) -> Dict[str, Any]:
  """The gradient-boosted baseline a pipeline run fitted (`GbmBaseline`'s `record`:
  trained on the run's training windows, stopped early and its band calibrated on its
  eval windows), on its test windows; its naive MAE must be `naive_mae`, the benchmark's,
  or the windows are not the same.

  Raises:
    RuntimeError: the run has no LightGBM figures of the test windows, or not of the
      benchmark's windows.
  """
  test = figures_on(record, TEST_SPLIT)
  if not test:
    raise RuntimeError(f'the run has no LightGBM figures of its test windows: {record}')
  if not np.isclose(test['naive_mae']['repeat_last'], naive_mae, rtol=1e-5):
    raise RuntimeError(f"the gradient-boosted baseline's last-value MAE "
                       f"{test['naive_mae']['repeat_last']} is not the benchmark's "
                       f'{naive_mae}: not the same test windows')
  return {**test, 'rounds': record['rounds']}


def describe_gbm(record: Dict[str, Any]) -> str:
  """'MAE 246.9, q-risk P50 0.158, P90 0.075, P10-P90 coverage 0.78; rounds {...}' of a
  `pipeline_gbm` record."""
  return (f"MAE {record['mae']:.1f}, q-risk P50 {record['q_risk']['p50']:.3f}, P90 "
          f"{record['q_risk']['p90']:.3f}, P10-P90 coverage {record['coverage']['0.1:0.9']:.2f}; "
          f"rounds {record['rounds']}")


def run_dir(work_dir: str, ensemble_size: int, repeat: int) -> str:
  """The directory of one pipeline run of `run` (`pipeline_run.new_config`'s run_dir)."""
  return os.path.join(work_dir, 'stallion', f'e{ensemble_size}-run-{repeat}')


def backtest_plan(eval_start: str) -> Plan:
  """The benchmark's plan for one TFT, trained and early-stopped with the eval period from
  `eval_start` and tested on the protocol's test period."""
  return dataclasses.replace(FULL, repeats=1, ensemble_sizes=(1,),
                             split=TimeSplit(eval_start=eval_start,
                                             test_start=SPLIT.test_start))


def protocol_history(data_file: str, series_keys: np.ndarray,
                      last_values: np.ndarray) -> np.ndarray:
  """The last NAIVE_HISTORY months of volume before the test period [N, NAIVE_HISTORY],
  in the order of the scored windows' `series_keys`; `last_values` (each window's last
  history value) check that the two line up."""
  frame = pd.read_csv(data_file, usecols=KEYS + ['date', 'volume'], parse_dates=['date'])
  frame = frame[frame['date'] < pd.Timestamp(SPLIT.test_start)]
  frame['key'] = frame[KEYS].astype(str).agg(SERIES_KEY_SEPARATOR.join, axis=1)
  table = frame.pivot_table(index='key', columns='date', values='volume')
  # float32, as the windows hold the target: the interval's ends meet the actuals as in
  # the windows (an actual on an end stays inside).
  history = table.loc[[key.decode() for key in series_keys]].to_numpy(
      np.float32)[:, -NAIVE_HISTORY:]
  if not np.allclose(history[:, -1], last_values, rtol=1e-5):
    raise RuntimeError('the test windows do not end where the data file says the test '
                       'period starts; the naive forecast would not be theirs')
  return history


def _first_series(data_file: str, count: int, work_dir: str) -> str:
  """The rows of the first `count` series in a file under `work_dir`."""
  frame = pd.read_csv(data_file)
  keys = frame[KEYS].drop_duplicates().head(count)
  path = os.path.join(work_dir, 'data', f'stallion-{count}-series.csv')
  os.makedirs(os.path.dirname(path), exist_ok=True)
  frame.merge(keys, on=KEYS).to_csv(path, index=False)
  return path


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(prog='benchmarks.stallion',
                                   description='the windows of a backtest origin')
  parser.add_argument('--eval-start', required=True,
                      help=f'first month of the eval period, before {SPLIT.eval_start} '
                      'for a backtest origin (e.g. 2016-07-01)')
  parser.add_argument('--work-dir', required=True,
                      help='the pipeline run, and its figures in stallion.json')
  parser.add_argument('--data-dir', default=host.SHARED_DATA_DIR,
                      help='directory of stallion.csv (default: %(default)s)')
  args = parser.parse_args(argv)
  result = run(backtest_plan(args.eval_start), args.data_dir, args.work_dir)
  readme_tables.write_results(os.path.join(args.work_dir, 'stallion.json'), result)
  print(f'windows for benchmarks.stallion_tuning: --run-root '
        f'{pipeline_run.pipeline_root(run_dir(args.work_dir, 1, 1))}', flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main())
