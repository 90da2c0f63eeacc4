"""A rolling-origin backtest: the whole pipeline fitted at K forecast origins at the end of
the data, each on the rows before it only, and scored on the H steps after it.

Origin k's run is the product's pipeline with the split train | eval | test | unused, the
test period the H steps from the origin (one window per series) and the eval period as
long as the spec's, right before it: ExampleGen, Transform's statistics and vocabularies,
the Trainer, its calibration and the LightGBM baseline see no row at or after the origin.
Each origin is a pipeline of its own (no warm start, no last blessed model). The TFT,
LightGBM and every naive forecast are scored on what happened (`evaluation.backtest_scores`);
a sign test over the windows calls a tie a tie. With the refit on, each origin also refits its TFT on its
train and eval rows (all it has before the origin, as a run's refit has every row) and
scores that model too (`tft_refit`), against the judged TFT: what the refit gains.
"""

import dataclasses
import os
from typing import Callable, Dict, List, Optional

import numpy as np
from tfx.utils import path_utils

from common.exit_codes import InputError
from components import input_rows
from schema import split_placement
from components.gbm_baseline import FORECASTS_FILE
from evaluation import backtest_scores
from evaluation.backtest_scores import LIGHTGBM, TFT, TFT_REFIT
from pipeline.config import PipelineConfig, default_strides
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import EVAL_SPLIT, TRAINING_SPLIT, TimeSplit, format_time


class BacktestError(InputError):
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
      split_placement.resolve_boundary(boundary, time_range, spec))
  stop = split.test_start if split.test_start is not None else split.end
  stop_step = place(stop) if stop is not None else spec.frequency.step_of(time_range[1]) + 1
  return stop_step - place(split.eval_start)


def origin_settings(config: PipelineConfig, origin: Origin) -> PipelineConfig:
  """`config` for one origin's fit: its split, trained from scratch, its forecasts not
  asked for (the backtest scores the test windows), refit on the rows before the origin
  whatever its blessing when the run refits."""
  if config.refit_splits:
    config = config.replace(refit_splits=(TRAINING_SPLIT, EVAL_SPLIT), refit_unblessed=True)
  return config.replace(
      time_split=origin.split, strides=default_strides(config.dataset, origin.split),
      training_options={**config.training_options, 'warm_start': False}, future_file=None)


def origin_config(config: PipelineConfig, origin: Origin, origin_dir: str) -> PipelineConfig:
  """The pipeline of one origin of the local backtest: `origin_settings`, its own name and
  directories."""
  return origin_settings(config, origin).replace(
      pipeline_name=f'{config.pipeline_name}-backtest-{origin.number}',
      pipeline_root=os.path.join(origin_dir, 'pipeline_root'),
      serving_model_dir=os.path.join(origin_dir, 'serving_model'))


def data_times(config: PipelineConfig) -> np.ndarray:
  """The epoch seconds of every row of the data `config` reads (one span, no pattern).

  Raises:
    BacktestError: the input pattern names spans.
  """
  from pipeline import future_check

  if '{SPAN' in config.input_pattern:
    raise BacktestError('a backtest reads one data file or directory; give the data without '
                        'a {SPAN} pattern')
  files = future_check.data_files(config.data_root, config.input_pattern, 1).newest
  return np.array([config.dataset.read_time(text) for path in files
                   for _, _, text in input_rows.keys_and_times(path, config.dataset)])


def run(config: PipelineConfig, times: np.ndarray, origins: int, every: Optional[int],
        output_dir: str, run_pipeline: Callable[[PipelineConfig, str], object],
        progress: Callable[[str], None] = print) -> Dict[str, object]:
  """Fits and scores every origin (`run_pipeline(config, metadata_path)` runs one
  pipeline and returns its `run_summary.RunSummary`), then writes the forecasts with their
  actuals, the summary and the report into `output_dir` (`backtest_report.write`); returns
  the summary."""
  from evaluation import backtest_report  # matplotlib: only once there is something to plot

  planned = plan(times, config.dataset, config.time_split, origins, every)
  frames = []
  for origin in planned:
    origin_dir = os.path.join(output_dir, f'origin-{origin.number}')
    progress(f'[backtest] origin {origin.number}/{len(planned)}: forecasting from '
             f'{format_time(origin.start)}, trained before {origin.split.eval_start} '
             f'(eval from then)')
    summary = run_pipeline(origin_config(config, origin, origin_dir),
                           os.path.join(origin_dir, 'metadata.sqlite'))
    frame = backtest_scores.scored_rows(
        origin.number, _only(origin_dir, 'Windowing', 'windows'),
        path_utils.serving_model_path(summary.model_uri),
        os.path.join(_only(origin_dir, 'GbmBaseline', 'evaluation'), FORECASTS_FILE),
        config.dataset, config.model_config.quantiles,
        refit_dir=(path_utils.serving_model_path(_only(origin_dir, 'Refit', 'model'))
                   if config.refit_splits else None))
    frames.append(frame)
    mae = lambda model: (frame[model] - frame['actual']).abs().mean()
    refit = (f', refit TFT {mae(f"{TFT_REFIT}_p50"):.4g}' if f'{TFT_REFIT}_p50' in frame
             else '')
    progress(f'[backtest] origin {origin.number}/{len(planned)}: MAE TFT '
             f'{mae(f"{TFT}_p50"):.4g}{refit}, LightGBM {mae(f"{LIGHTGBM}_p50"):.4g}, over '
             f'{frame["series"].nunique()} series x {config.dataset.horizon} steps')
  return backtest_report.write_all(
      frames, {origin.number: format_time(origin.start) for origin in planned},
      config.model_config.quantiles, output_dir, config.dataset)


def _only(origin_dir: str, component: str, output: str) -> str:
  """The one artifact directory of a component's output in an origin's run."""
  parent = os.path.join(origin_dir, 'pipeline_root', component, output)
  found = sorted(os.listdir(parent))
  if len(found) != 1:
    raise BacktestError(f'{parent} holds {len(found)} artifacts, not one: not one run of '
                        'the backtest')
  return os.path.join(parent, found[0])
