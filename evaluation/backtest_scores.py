"""The figures of a rolling-origin backtest (`pipeline.backtest`), from its forecasts.

A row per origin, test window and horizon step: the actual, the TFT's quantiles (and its
refit's, when the run refits), LightGBM's and every naive forecast. From those rows: MAE
per model overall, per origin and per step, the outer band's coverage, and paired
comparisons, window by window, whose sign test calls a tie a tie. Used by the local
backtest and by the scoring step of the compiled one (`components.backtest_scoring`).
"""

import math
import os
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd

from evaluation import gbm_baseline, window_forecasts
from schema.dataset_spec import DatasetSpec
from schema.time_split import TEST_SPLIT, format_time
from trainer_module import naive_forecasts
from trainer_module.export import quantile_key

# The models' names in the forecasts and the summary.
TFT, TFT_REFIT, LIGHTGBM = 'tft', 'tft_refit', 'lightgbm'
NAIVE_PREFIX = 'naive_'
_TIE_P_VALUE = 0.05  # a sign test's p-value at or above which a comparison is a tie


class ScoringError(ValueError):
  """An origin's forecasts cannot be paired with the windows they are scored on."""


def scored_rows(origin: int, windows_uri: str, model_dir: str, gbm_forecasts: str,
                spec: DatasetSpec, quantiles: Sequence[float],
                refit_dir: Optional[str] = None) -> pd.DataFrame:
  """A row per test window and horizon step of origin number `origin`'s run: the actual,
  the TFT's (and its refit's, in `refit_dir`) and LightGBM's quantiles (saved by
  GbmBaseline in `gbm_forecasts`) and every naive forecast.

  Raises:
    ScoringError: LightGBM's saved forecasts are not of the same windows.
  """
  files = window_forecasts.split_files(windows_uri, TEST_SPLIT)
  scored = window_forecasts.score_windows(model_dir, files, quantiles)
  refit = window_forecasts.score_windows(refit_dir, files, quantiles) if refit_dir else None
  saved = gbm_baseline.read_forecasts(gbm_forecasts)
  if saved['actual'].shape != scored.actual.shape or not np.allclose(
      saved['actual'], scored.actual):
    raise ScoringError(f"origin {origin}: LightGBM's forecasts in {gbm_forecasts} are not "
                       'of the test windows the TFT was scored on')
  count, horizon = scored.actual.shape
  periods = naive_forecasts.periods_for(spec.frequency.seasons, spec.encoder_steps)
  naive = naive_forecasts.naive_forecasts(scored.history.astype(np.float64), horizon, periods)
  columns = {
      'origin': np.full(count * horizon, origin),
      'series': np.repeat([key.decode() for key in scored.series], horizon),
      'step': np.tile(np.arange(1, horizon + 1), count),
      'time': [format_time(spec.frequency.seconds_of(spec.frequency.step_of(int(start)) + step))
               for start in scored.forecast_start for step in range(horizon)],
      'actual': scored.actual.reshape(-1).astype(np.float64),
  }
  for index, q in enumerate(quantiles):
    columns[f'{TFT}_{quantile_key(q)}'] = scored.forecasts[q].reshape(-1)
    if refit is not None:
      columns[f'{TFT_REFIT}_{quantile_key(q)}'] = refit.forecasts[q].reshape(-1)
    columns[f'{LIGHTGBM}_{quantile_key(q)}'] = saved['forecasts'][..., index].reshape(-1)
  for name, values in naive.items():
    columns[f'{NAIVE_PREFIX}{name}'] = np.asarray(values).reshape(-1)
  return pd.DataFrame(columns)


def point_forecasts(frame: pd.DataFrame) -> List[str]:
  """The columns of the point forecasts a backtest compares: the TFT's (and its refit's)
  and LightGBM's medians and every naive forecast."""
  return ([f'{TFT}_p50'] + [f'{TFT_REFIT}_p50'] * (f'{TFT_REFIT}_p50' in frame)
          + [f'{LIGHTGBM}_p50'] + [c for c in frame if c.startswith(NAIVE_PREFIX)])


def probabilistic_models(frame: pd.DataFrame) -> List[str]:
  """The models with quantiles in `frame`: the TFT, its refit if scored, LightGBM."""
  return [model for model in (TFT, TFT_REFIT, LIGHTGBM) if f'{model}_p50' in frame]


def summarize(frame: pd.DataFrame, quantiles: Sequence[float]) -> Dict[str, object]:
  """The backtest's figures from its rows: MAE per model overall, per origin and per
  step, the outer band's coverage, and the paired comparisons of the TFT with LightGBM and
  with the best naive forecast."""
  models = point_forecasts(frame)
  errors = {model: (frame[model] - frame['actual']).abs() for model in models}
  low, high = quantile_key(min(quantiles)), quantile_key(max(quantiles))
  coverage = {model: ((frame['actual'] >= frame[f'{model}_{low}'])
                      & (frame['actual'] <= frame[f'{model}_{high}']))
              for model in probabilistic_models(frame)}
  by = lambda key: {model: [float(v) for v in errors[model].groupby(frame[key]).mean()]
                    for model in models}
  naive_mae = {model: float(errors[model].mean()) for model in models
               if model.startswith(NAIVE_PREFIX)}
  best_naive = min(naive_mae, key=naive_mae.get)
  windows = [frame['origin'], frame['series']]
  window_mae = {model: errors[model].groupby(windows).mean() for model in models}
  origin_mae = {model: errors[model].groupby(frame['origin']).mean() for model in models}
  return {
      'origins': sorted(int(o) for o in frame['origin'].unique()),
      'windows': int(len(window_mae[models[0]])),
      'mae': {model: float(errors[model].mean()) for model in models},
      'mae_by_origin': by('origin'),
      'mae_by_step': by('step'),
      'coverage': {model: float(hits.mean()) for model, hits in coverage.items()},
      'coverage_by_step': {model: [float(v) for v in hits.groupby(frame['step']).mean()]
                           for model, hits in coverage.items()},
      'band': f'{low.upper()}-{high.upper()}',
      'best_naive': best_naive,
      'comparisons': [
          paired(f'{TFT}_p50', other, window_mae, origin_mae)
          for other in (f'{LIGHTGBM}_p50', best_naive)] + [
              paired(f'{TFT_REFIT}_p50', f'{TFT}_p50', window_mae, origin_mae)
              for _ in [None] if f'{TFT_REFIT}_p50' in models],
  }


def paired(model: str, other: str, window_mae: Dict[str, pd.Series],
           origin_mae: Dict[str, pd.Series]) -> Dict[str, object]:
  """`model` against `other` window by window (each window's MAE over its steps) and
  origin by origin: the wins of each and the sign test's two-sided p-value over the
  windows that differ; a p-value of `_TIE_P_VALUE` or more is a tie."""
  differences = (window_mae[model] - window_mae[other]).to_numpy()
  wins, losses = int((differences < 0).sum()), int((differences > 0).sum())
  p_value = sign_test_p_value(wins, losses)
  by_origin = (origin_mae[model] - origin_mae[other]).to_numpy()
  return {'model': model, 'other': other, 'windows_won': wins, 'windows_lost': losses,
          'windows_tied': int(len(differences) - wins - losses),
          'origins_won': int((by_origin < 0).sum()), 'origins': int(len(by_origin)),
          'p_value': p_value,
          'verdict': ('tie' if p_value >= _TIE_P_VALUE else
                      'better' if wins > losses else 'worse')}


def sign_test_p_value(wins: int, losses: int) -> float:
  """The two-sided p-value of `wins` against `losses` when each is as likely (ties left
  out): twice the binomial tail of the smaller count, at most 1. In integers until the
  one division, so that a thousand windows and more do not overflow a float."""
  count = wins + losses
  if count == 0:
    return 1.0
  tail = sum(math.comb(count, k) for k in range(min(wins, losses) + 1)) / 2 ** count
  return min(1.0, 2.0 * tail)


def verdict(summary: Dict[str, object]) -> List[str]:
  """The printed verdict: which model wins on how many origins and windows, and whether
  the sign test calls it a tie."""
  names = {f'{TFT}_p50': 'the TFT', f'{TFT_REFIT}_p50': 'the refit TFT',
           f'{LIGHTGBM}_p50': 'LightGBM'}
  lines = []
  for comparison in summary['comparisons']:
    model = names[comparison['model']]
    other = names.get(comparison['other'],
                      f"the best naive forecast ({comparison['other'][len(NAIVE_PREFIX):]})")
    judged = {'tie': 'a tie', 'better': f'{model} is better',
              'worse': f'{other} is better'}[comparison['verdict']]
    lines.append(
        f"{model} against {other}: MAE {summary['mae'][comparison['model']]:.4g} against "
        f"{summary['mae'][comparison['other']]:.4g}; {model} wins "
        f"{comparison['origins_won']} of {comparison['origins']} origins and "
        f"{comparison['windows_won']} of {summary['windows']} windows "
        f"({comparison['windows_lost']} lost); sign test p = {comparison['p_value']:.3g}: "
        f'{judged}')
  band = summary['band']
  lines.append(f'{band} coverage: ' + ', '.join(
      f'{names[f"{model}_p50"]} {coverage:.3f}' for model, coverage in
      summary['coverage'].items()) + ' (0.8 is the aim)')
  return lines
