"""A global gradient-boosted baseline on the Stallion protocol: what a practitioner would
try before a TFT.

One LightGBM model per quantile (P10, P50, P90) over all series and horizon steps
(direct multi-horizon): each row is a series, a forecast origin (the last history month)
and a step h of 1 to 6, with the target's lags and rolling statistics at the origin, the
value 12 months before the target month, the known covariates of the target month, the
static columns and the agency and SKU as categoricals. Volumes differ by orders of
magnitude between series, so the target and its lags are divided by the series' level at
the origin (its mean over the last 12 months, plus 1), which is a feature too, and the
forecasts multiplied back, then raised to the Stallion spec's `forecast_floor` (0) as the
TFT's are. Trained only on targets before the eval period (2017-01),
tuned on the eval period (the forecast from 2016-12: the tree size, and each quantile's
number of rounds by early stopping), and scored on the test windows of
`benchmarks/stallion.py` (the forecast from 2017-06, every series) by the same metric
code, beside the same naive forecast.

It also scores the gradient-boosted baseline every pipeline run fits (`GbmBaseline`,
`evaluation.gbm_baseline`: built from the run's windows by code that knows nothing of
Stallion) on the same test windows, from one pipeline run of the protocol whose TFT
trains one step (`stallion.WINDOWS_ONLY`; about 3 minutes).

  .venv/bin/python -m benchmarks.stallion_gbm            # writes results/stallion_gbm.json
  .venv/bin/python -m benchmarks.stallion_gbm --without same_month_last_year   # ablation
"""

import argparse
import itertools
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

import lightgbm
import numpy as np
import pandas as pd

from benchmarks import host, metrics, readme_tables, stallion
from benchmarks.naive_baselines import naive_quantiles
from benchmarks.stallion import KEYS, NAIVE_HISTORY, SPLIT
from schema.datasets import get_dataset
from schema.time_split import TimeSplit

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUANTILES = (0.1, 0.5, 0.9)
HORIZON = 6
LAGS = 12
KNOWN = ('price_regular', 'price_actual', 'discount', 'discount_in_percent', 'easter_day',
         'good_friday', 'new_year', 'christmas', 'labor_day', 'independence_day',
         'revolution_day_memorial', 'regional_games', 'fifa_u_17_world_cup',
         'football_gold_cup', 'beer_capital', 'music_fest')
STATIC = ('avg_population_2017', 'avg_yearly_household_income_2017')
# Tried on the eval period; the first is LightGBM's default tree size.
GRID = {'num_leaves': (31, 15, 63), 'min_child_samples': (20, 50),
        'learning_rate': (0.05,)}
MAX_ROUNDS = 2000
SEED = 1
DEFAULT_RESULTS = os.path.join(PROJECT_ROOT, 'benchmarks', 'results', 'stallion_gbm.json')


def load(path: str) -> pd.DataFrame:
  """The data as one row per series and month, ordered, with a month index."""
  frame = pd.read_csv(path, parse_dates=['date'])
  frame['month'] = frame['date'].dt.year * 12 + frame['date'].dt.month - 1
  return frame.sort_values(KEYS + ['month']).reset_index(drop=True)


def examples(frame: pd.DataFrame, origins: Sequence[int]) -> pd.DataFrame:
  """One row per series, origin month in `origins` and step 1..H: features and target."""
  by_series = frame.groupby(KEYS, sort=False)['volume']
  lagged = pd.DataFrame({f'lag_{k}': by_series.shift(k) for k in range(LAGS)})
  for window in (3, 6, 12):
    rolling = by_series.rolling(window, min_periods=window)
    lagged[f'mean_{window}'] = rolling.mean().reset_index(level=[0, 1], drop=True)
    lagged[f'std_{window}'] = rolling.std().reset_index(level=[0, 1], drop=True)
  at_origin = pd.concat([frame[KEYS + ['month'] + list(STATIC)], lagged], axis=1)
  at_origin = at_origin[at_origin['month'].isin(origins)]
  target_rows = frame[KEYS + ['month', 'volume'] + list(KNOWN)]
  last_year = frame[KEYS + ['month', 'volume']].rename(columns={'volume': 'same_month_last_year'})
  parts = []
  for step in range(1, HORIZON + 1):
    rows = at_origin.assign(step=step, target_month=at_origin['month'] + step)
    rows = rows.merge(target_rows.rename(columns={'month': 'target_month'}),
                      on=KEYS + ['target_month'], how='inner')
    last_year_rows = last_year.assign(target_month=last_year['month'] + 12).drop(
        columns='month')
    rows = rows.merge(last_year_rows, on=KEYS + ['target_month'], how='left')
    parts.append(rows)
  result = pd.concat(parts, ignore_index=True)
  result['month_of_year'] = result['target_month'] % 12
  result['level'] = result['mean_12'].fillna(result['lag_0']) + 1.0
  for column in [c for c in result if c.startswith(('lag_', 'mean_', 'std_'))] + [
      'same_month_last_year', 'volume']:
    result[column] = result[column] / result['level']
  for key in KEYS:
    result[key] = pd.Categorical(result[key], categories=sorted(frame[key].unique()))
  return result


def features(rows: pd.DataFrame, without: Sequence[str] = ()) -> pd.DataFrame:
  """The model's inputs of `rows`, less the features named in `without`."""
  unknown = sorted(set(without) - set(rows))
  if unknown:
    raise ValueError(f'no features {unknown}; the features are {sorted(rows)}')
  return rows.drop(columns=['month', 'target_month', 'volume', *without])


def fit(train: pd.DataFrame, quantile: float, params: Dict[str, Any], rounds: int,
        validation: Optional[pd.DataFrame] = None,
        without: Sequence[str] = ()) -> lightgbm.Booster:
  """A quantile model on the features less `without`; with `validation`, stopped early
  on its pinball loss."""
  config = {'objective': 'quantile', 'alpha': quantile, 'verbosity': -1, 'seed': SEED,
            'num_threads': 2, 'deterministic': True, **params}
  data = lightgbm.Dataset(features(train, without), train['volume'])
  if validation is None:
    return lightgbm.train(config, data, num_boost_round=rounds)
  valid = lightgbm.Dataset(features(validation, without), validation['volume'],
                           reference=data)
  return lightgbm.train(config, data, num_boost_round=rounds, valid_sets=[valid],
                        callbacks=[lightgbm.early_stopping(50, verbose=False)])


def predict(model: lightgbm.Booster, rows: pd.DataFrame,
            floor: Optional[float] = None) -> np.ndarray:
  """Forecasts in original units, at or above `floor` if one is given."""
  scaled = model.predict(features(rows)[model.feature_name()],
                         num_iteration=model.best_iteration or None)
  forecasts = scaled * rows['level'].to_numpy()
  return forecasts if floor is None else np.maximum(forecasts, floor)


def windows(rows: pd.DataFrame, values: np.ndarray) -> np.ndarray:
  """[N, H] from one value per (series, step) row, series in key order."""
  table = rows.assign(value=values).pivot_table(index=KEYS, columns='step', values='value',
                                                observed=True)
  return table.sort_index().to_numpy()


def pipeline_baseline(data_file: str) -> Dict[str, Any]:
  """The pipeline's own gradient-boosted baseline on the protocol's test windows (its band
  calibrated on the eval windows), from one pipeline run of `stallion.WINDOWS_ONLY` on
  `data_file`."""
  with tempfile.TemporaryDirectory() as work_dir:
    return stallion.run(stallion.WINDOWS_ONLY, os.path.dirname(data_file),
                        work_dir)['pipeline_gbm']


def run(data_file: str, grid: Dict[str, Sequence[Any]] = None,
        max_rounds: int = MAX_ROUNDS, split: TimeSplit = SPLIT,
        without: Sequence[str] = ()) -> Dict[str, Any]:
  """Tunes on the eval period, scores the test windows; returns JSON-ready results.

  `without` names features left out (an ablation).
  """
  grid = grid or GRID
  started = time.monotonic()
  floor = get_dataset('stallion').spec.forecast_floor
  frame = load(host.data_file(data_file, '--data'))
  month = lambda text: pd.Timestamp(text).year * 12 + pd.Timestamp(text).month - 1
  eval_start, test_start = month(split.eval_start), month(split.test_start)
  all_rows = examples(frame, origins=range(frame['month'].min(), test_start))
  train = all_rows[all_rows['target_month'] < eval_start]
  # The eval forecasts: every H months from the eval period's start, as the TFT's eval
  # windows (one per series for a 6-month period, two for a year).
  evaluation = all_rows[(all_rows['month'] >= eval_start - 1) &
                        ((all_rows['month'] - eval_start + 1) % HORIZON == 0) &
                        (all_rows['month'] + HORIZON < test_start)]
  test = examples(frame, origins=[test_start - 1])
  eval_actual = (evaluation['volume'] * evaluation['level']).to_numpy()
  trials = []
  for values in itertools.product(*grid.values()):
    params = dict(zip(grid, values))
    model = fit(train, 0.5, params, max_rounds, validation=evaluation, without=without)
    mae = float(np.mean(np.abs(predict(model, evaluation, floor) - eval_actual)))
    trials.append({'params': params, 'rounds': model.best_iteration, 'eval_mae': mae})
    print(f'  GBM {params}: {model.best_iteration} rounds, eval MAE {mae:.1f}', flush=True)
  best = min(trials, key=lambda trial: trial['eval_mae'])
  models = {q: fit(train, q, best['params'], max_rounds, validation=evaluation,
                   without=without)
            for q in QUANTILES}
  forecasts = {q: windows(test, predict(model, test, floor)) for q, model in models.items()}
  actual = windows(test, (test['volume'] * test['level']).to_numpy())
  history = frame[frame['month'].between(test_start - NAIVE_HISTORY,
                                         test_start - 1)].pivot_table(
      index=KEYS, columns='month', values='volume').sort_index().to_numpy()
  naive = metrics.quantile_errors(naive_quantiles(history, HORIZON, QUANTILES), actual)
  model = metrics.quantile_errors(forecasts, actual)
  return {'benchmark': 'stallion_gbm', 'lightgbm': lightgbm.__version__, 'seed': SEED,
          'without': list(without),
          'protocol': {'data': os.path.basename(data_file), 'test_windows': len(actual),
                       'split': {'eval_start': split.eval_start,
                                 'test_start': split.test_start}},
          'training_rows': len(train), 'eval_rows': len(evaluation), 'tuning': trials,
          'chosen': best, 'rounds': {str(q): m.best_iteration for q, m in models.items()},
          'model': model, 'naive_last_value': naive,
          'seconds': time.monotonic() - started}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(prog='stallion_gbm', description=__doc__.split('\n')[0])
  parser.add_argument('--data', default=os.path.join(host.SHARED_DATA_DIR, 'stallion.csv'))
  parser.add_argument('--results', help=f'results JSON (default: {DEFAULT_RESULTS}, '
                      'none with --without)')
  parser.add_argument('--eval-start', default=SPLIT.eval_start,
                      help='first month of the eval period (default: %(default)s)')
  parser.add_argument('--without', nargs='+', default=[], metavar='FEATURE',
                      help='leave these features out (an ablation: printed, and written '
                      'only with --results)')
  args = parser.parse_args(argv)
  result = run(args.data, split=TimeSplit(eval_start=args.eval_start,
                                          test_start=SPLIT.test_start), without=args.without)
  model, naive = result['model'], result['naive_last_value']
  print(f'Stallion, LightGBM ({result["chosen"]["params"]}): MAE {model["mae"]:.1f} '
        f'(last value {naive["mae"]:.1f}), q-risk P50 {model["q_risk_p50"]:.3f}, '
        f'P90 {model["q_risk_p90"]:.3f}, P10-P90 coverage {model["coverage_p10_p90"]:.2f}; '
        f'{result["seconds"]:.0f} s')
  if args.without and args.results is None:
    return 0
  if not args.without:
    result['pipeline'] = pipeline_baseline(args.data)
    print(f"Stallion, the pipeline's LightGBM: {stallion.describe_gbm(result['pipeline'])}")
  readme_tables.write_results(args.results or DEFAULT_RESULTS, result)
  return 0


if __name__ == '__main__':
  sys.exit(main())
