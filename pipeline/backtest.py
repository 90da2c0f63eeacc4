"""A rolling-origin backtest: the whole pipeline fitted at K forecast origins at the end of
the data, each on the rows before it only, and scored on the H steps after it.

Origin k's run is the product's pipeline with the split train | eval | test | unused, the
test period the H steps from the origin (one window per series) and the eval period as
long as the spec's, right before it: ExampleGen, Transform's statistics and vocabularies,
the Trainer, its calibration and the LightGBM baseline see no row at or after the origin.
Each origin is a pipeline of its own (no warm start, no last blessed model). The TFT,
LightGBM and every naive forecast are scored on what happened; a sign test over the
windows calls a tie a tie. With the refit on, each origin also refits its TFT on its
train and eval rows (all it has before the origin, as a run's refit has every row) and
scores that model too (`tft_refit`), against the judged TFT: what the refit gains.
"""

import dataclasses
import math
import os
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import pandas as pd
from tfx.utils import path_utils

from components import time_series_example_gen as example_gen
from components.gbm_baseline import FORECASTS_FILE
from evaluation import gbm_baseline, window_forecasts
from pipeline.config import PipelineConfig, default_strides
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import EVAL_SPLIT, TEST_SPLIT, TRAINING_SPLIT, TimeSplit, format_time
from trainer_module import naive_forecasts
from trainer_module.export import quantile_key

# The models' names in the forecasts and the summary.
TFT, TFT_REFIT, LIGHTGBM = 'tft', 'tft_refit', 'lightgbm'
NAIVE_PREFIX = 'naive_'
_TIE_P_VALUE = 0.05  # a sign test's p-value at or above which a comparison is a tie


class BacktestError(ValueError):
  """The data or the spec cannot be backtested as asked."""


@dataclasses.dataclass(frozen=True)
class Origin:
  """One forecast origin: `number` from 1 (the oldest), the first forecast step `start`
  (epoch seconds) and the split its run uses."""
  number: int
  start: int
  split: TimeSplit


def plan(times: np.ndarray, spec: DatasetSpec, split: TimeSplit, origins: int,
         every: Optional[int] = None) -> List[Origin]:
  """The last `origins` forecast origins of data whose rows are at epoch `times`, `every`
  steps apart (default: a horizon), the newest with its H steps at the end of the data.

  Raises:
    BacktestError: `every` is not a multiple of the horizon (the windowing component
      starts forecasts on multiples of it), the split places its periods per series, or
      the oldest origin leaves no room to train before its eval period.
  """
  horizon, frequency = spec.horizon, spec.frequency
  every = horizon if every is None else every
  if origins < 1:
    raise BacktestError(f'--origins must be at least 1, got {origins}')
  if every < 1 or every % horizon:
    raise BacktestError(f'--every {every}: origins must lie a multiple of the horizon '
                        f'({horizon} steps) apart, where the pipeline starts forecasts')
  if split.of_each_series:
    raise BacktestError("the spec's periods are each series' last steps; a backtest places "
                        'its origins in the data\'s time range: give the split as "last N '
                        'steps" (or timestamps) to backtest it')
  first, last = (frequency.step_of(int(t)) for t in (times.min(), times.max()))
  eval_steps = _eval_steps(split, (int(times.min()), int(times.max())), spec)
  newest = forecast_starts.last_start_until(last + 1 - horizon, horizon)
  planned = []
  for number in range(1, origins + 1):
    start = newest - (origins - number) * every
    eval_start = forecast_starts.last_start_until(start - eval_steps, horizon)
    if eval_start - first < spec.window_length:
      raise BacktestError(
          f'origin {number} of {origins} ({format_time(frequency.seconds_of(start))}) leaves '
          f'{max(0, eval_start - first)} steps before its eval period of {start - eval_start}, '
          f'too few for one training window of {spec.window_length}; give fewer --origins, '
          'a smaller --every, or more history')
    planned.append(Origin(number, frequency.seconds_of(start), TimeSplit(
        eval_start=format_time(frequency.seconds_of(eval_start)),
        test_start=format_time(frequency.seconds_of(start)),
        end=format_time(frequency.seconds_of(start + horizon)))))
  return planned


def _eval_steps(split: TimeSplit, time_range, spec: DatasetSpec) -> int:
  """The steps of the spec's eval period, placed in the data as ExampleGen places it."""
  place = lambda boundary: spec.frequency.step_of(
      example_gen.resolve_boundary(boundary, time_range, spec))
  stop = split.test_start if split.test_start is not None else split.end
  stop_step = place(stop) if stop is not None else spec.frequency.step_of(time_range[1]) + 1
  return stop_step - place(split.eval_start)


def origin_config(config: PipelineConfig, origin: Origin, origin_dir: str) -> PipelineConfig:
  """The pipeline of one origin: its split and directories, trained from scratch, its
  forecasts not asked for (the backtest scores the test windows), refit on the rows
  before the origin whatever its blessing when the run refits."""
  if config.refit_splits:
    config = config.replace(refit_splits=(TRAINING_SPLIT, EVAL_SPLIT), refit_unblessed=True)
  return config.replace(
      pipeline_name=f'{config.pipeline_name}-backtest-{origin.number}',
      pipeline_root=os.path.join(origin_dir, 'pipeline_root'),
      serving_model_dir=os.path.join(origin_dir, 'serving_model'),
      time_split=origin.split, strides=default_strides(config.dataset, origin.split),
      training_options={**config.training_options, 'warm_start': False}, future_file=None)


def scored_rows(origin: Origin, windows_uri: str, model_dir: str, gbm_uri: str,
                spec: DatasetSpec, quantiles: Sequence[float],
                refit_dir: Optional[str] = None) -> pd.DataFrame:
  """A row per test window and horizon step of one origin's run: the actual, the TFT's
  (and its refit's, in `refit_dir`) and LightGBM's quantiles and every naive forecast.

  Raises:
    BacktestError: LightGBM's saved forecasts are not of the same windows.
  """
  files = window_forecasts.split_files(windows_uri, TEST_SPLIT)
  scored = window_forecasts.score_windows(model_dir, files, quantiles)
  refit = window_forecasts.score_windows(refit_dir, files, quantiles) if refit_dir else None
  saved = gbm_baseline.read_forecasts(os.path.join(gbm_uri, FORECASTS_FILE))
  if saved['actual'].shape != scored.actual.shape or not np.allclose(
      saved['actual'], scored.actual):
    raise BacktestError(f"origin {origin.number}: LightGBM's forecasts in {gbm_uri} are not "
                        "of the test windows the TFT was scored on")
  count, horizon = scored.actual.shape
  periods = naive_forecasts.periods_for(spec.frequency.seasons, spec.encoder_steps)
  naive = naive_forecasts.naive_forecasts(scored.history.astype(np.float64), horizon, periods)
  columns = {
      'origin': np.full(count * horizon, origin.number),
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
  out): twice the binomial tail of the smaller count, at most 1."""
  count = wins + losses
  if count == 0:
    return 1.0
  tail = sum(math.comb(count, k) for k in range(min(wins, losses) + 1)) / 2.0 ** count
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


def run(config: PipelineConfig, times: np.ndarray, origins: int, every: Optional[int],
        output_dir: str, run_pipeline: Callable[[PipelineConfig, str], object],
        progress: Callable[[str], None] = print) -> Dict[str, object]:
  """Fits and scores every origin (`run_pipeline(config, metadata_path)` runs one
  pipeline and returns its `run_summary.RunSummary`), then writes the forecasts with their
  actuals, the summary and the report into `output_dir` (`backtest_report.write`); returns
  the summary."""
  from pipeline import backtest_report  # matplotlib: only once there is something to plot

  planned = plan(times, config.dataset, config.time_split, origins, every)
  frames = []
  for origin in planned:
    origin_dir = os.path.join(output_dir, f'origin-{origin.number}')
    progress(f'[backtest] origin {origin.number}/{len(planned)}: forecasting from '
             f'{format_time(origin.start)}, trained before {origin.split.eval_start} '
             f'(eval from then)')
    summary = run_pipeline(origin_config(config, origin, origin_dir),
                           os.path.join(origin_dir, 'metadata.sqlite'))
    frame = scored_rows(origin, _only(origin_dir, 'Windowing', 'windows'),
                        path_utils.serving_model_path(summary.model_uri),
                        _only(origin_dir, 'GbmBaseline', 'evaluation'), config.dataset,
                        config.model_config.quantiles,
                        refit_dir=(path_utils.serving_model_path(
                            _only(origin_dir, 'Refit', 'model'))
                                   if config.refit_splits else None))
    frames.append(frame)
    mae = lambda model: (frame[model] - frame['actual']).abs().mean()
    progress(f'[backtest] origin {origin.number}/{len(planned)}: MAE TFT '
             f'{mae(f"{TFT}_p50"):.4g}, LightGBM {mae(f"{LIGHTGBM}_p50"):.4g}, over '
             f'{frame["series"].nunique()} series x {config.dataset.horizon} steps')
  frame = pd.concat(frames, ignore_index=True)
  summary = summarize(frame, config.model_config.quantiles)
  summary['origin_starts'] = {origin.number: format_time(origin.start) for origin in planned}
  backtest_report.write(frame, summary, output_dir, config.dataset)
  return summary


def _only(origin_dir: str, component: str, output: str) -> str:
  """The one artifact directory of a component's output in an origin's run."""
  parent = os.path.join(origin_dir, 'pipeline_root', component, output)
  found = sorted(os.listdir(parent))
  if len(found) != 1:
    raise BacktestError(f'{parent} holds {len(found)} artifacts, not one: not one run of '
                        'the backtest')
  return os.path.join(parent, found[0])
