"""The window shape, the eval and test periods `init` drafts, and the naive forecasts' MAEs
on them.
"""

from typing import Dict, List, Optional, Tuple, Union

import numpy as np
import pandas as pd

from pipeline.draft.table import DraftError
from schema import forecast_starts, window_cuts
from schema.frequency import DAY, WEEK, Frequency
from schema.hparams import DEFAULT_PRESET, PRESETS, largest_batch_within
from schema.time_split import EVAL_SPLIT
from trainer_module import naive_forecasts
from trainer_module.naive_forecasts import periods_for


# Window shapes (horizon, history) by grid: a day ahead from a week back for sub-daily
# data (at most 384 history steps, to keep training on a CPU practical), then a week,
# a month, half a year and a year ahead.
_MAX_DEFAULT_HISTORY = 384


# A longer horizon than the grid's default gets a history of at least this many horizons,
# in whole seasons of the grid, so that it holds more than the span it forecasts.
_HISTORY_HORIZONS = 2


# Of the longest series' steps, each at least one horizon: the test period at the end of
# the data, the eval period before it.
EVAL_SHARE = TEST_SHARE = 0.15


DEFAULT_BATCH_SIZE = PRESETS[DEFAULT_PRESET].batch_size


def longest_window(train_steps: int) -> int:
  """The longest window a drafted spec gives a training period of `train_steps`: two
  thirds of it, so that it holds several windows."""
  return 2 * train_steps // 3


def draft_window(frequency: Frequency, longest: int, last_step: int, horizon: Optional[int],
                 encoder_steps: Optional[int]
                 ) -> Tuple[int, int, int, Optional[int], List[str]]:
  """(horizon, history, the eval period's first step, the test period's first step or
  None, notes on what was given up). The test period ends at `last_step` and holds
  `TEST_SHARE` of the longest series, the eval period before it `EVAL_SHARE`, each at
  least a horizon, from a step divisible by the horizon: the windowing component starts
  forecasts there, so each holds a whole window. Series too short to train before both
  get no test period; the history is shortened before that, so that the training period
  holds windows."""
  horizon = horizon or default_window(frequency)[0]
  stride = forecast_starts.default_stride(EVAL_SPLIT, horizon)
  period = lambda end, share: forecast_starts.last_start_until(
      end - max(horizon, int(round(share * longest))), stride)
  test_start = period(last_step + 1, TEST_SHARE)
  eval_start = period(test_start, EVAL_SHARE)
  # The shortest history: the one given, or as short as the horizon when drafted.
  if longest - (last_step + 1 - eval_start) < (encoder_steps or horizon) + horizon:
    # No window fits before both periods.
    eval_start, test_start = period(last_step + 1, EVAL_SHARE), None
  held_out = last_step + 1 - eval_start
  train_steps = longest - held_out
  periods = 'eval and test periods' if test_start is not None else 'an eval period'
  if train_steps < 1:
    raise DraftError(f'the longest series has {longest} steps, too few for {periods} of '
                     f'{held_out} steps (at least a horizon, from a step divisible by it) '
                     'and training before it; give longer series, or a shorter --horizon')
  notes = [] if test_start is not None else [
      'the series are too short to train before a held-out test period as well as an eval '
      "period: none is drafted, so the run's figures are those of the eval windows, which "
      'also choose the epoch and flatter the model; longer series, or a shorter --horizon, '
      'give one']
  if encoder_steps is None:
    encoder_steps = drafted_history(frequency, horizon)
    if encoder_steps + horizon > longest_window(train_steps):
      shortened = max(horizon, longest_window(train_steps) - horizon)
      notes.insert(0, f'history shortened from {encoder_steps} to {shortened} steps so that '
                   f'the training period ({train_steps} steps) holds windows')
      encoder_steps = shortened
  if encoder_steps + horizon > train_steps:
    raise DraftError(f'the longest series has {longest} steps: after {held_out} steps of '
                     f'{periods} its {train_steps} training steps cannot hold one window of '
                     f'{encoder_steps} history and {horizon} forecast steps; give a shorter '
                     '--encoder-steps or --horizon, or longer series')
  return horizon, encoder_steps, eval_start, test_start, notes


def training_windows(steps: np.ndarray, series: pd.Series, window: int,
                     eval_starts: Union[int, pd.Series]) -> int:
  """Training windows of `window` steps as the windowing component cuts them: one from
  every step, its steps consecutive (no gap) and all before the eval period's first step
  (`eval_starts`: one for every series, or one per series)."""
  count = 0
  for code, index in pd.Series(range(len(steps))).groupby(series.to_numpy()):
    held = steps[index.to_numpy()]
    held = held[held < _start_of(eval_starts, code)]
    if held.size:
      present = np.zeros(int(held.max() - held.min()) + 1, dtype=bool)
      present[held - held.min()] = True
      count += int(window_cuts.whole_windows(present, window).sum())
  return count


def _start_of(starts: Union[int, pd.Series], code: int) -> int:
  """A period's first step for series `code`: the one of every series, or its own."""
  return starts if isinstance(starts, (int, np.integer)) else int(starts[code])


def ends_apart(last: pd.Series, horizon: int) -> bool:
  """Whether most series (`last`: the last step of each) end a horizon or more before the
  newest rows: series of other periods (markets of other years), not a few that stopped;
  their eval and test periods are then each series' own last steps."""
  return bool((last <= last.max() - horizon).mean() > 0.5)


def period_starts(last: pd.Series, steps: int, horizon: int, each_series: bool
                  ) -> pd.Series:
  """The first step of the period of the data's (or, `each_series`, each series') last
  `steps` steps, moved back to where a forecast starts, as the example generator places
  'last N steps' (of each series), for every series."""
  stride = forecast_starts.default_stride(EVAL_SPLIT, horizon)
  ends = last if each_series else pd.Series(int(last.max()), index=last.index)
  return ends.map(lambda end: forecast_starts.last_start_until(int(end) + 1 - steps, stride))


def small_data_batch_size(windows: int) -> Optional[int]:
  """The batch to draft when `windows` training windows are fewer than the default
  preset's batch (the Trainer needs one whole batch); None when the default fits."""
  return None if windows >= DEFAULT_BATCH_SIZE else largest_batch_within(windows)


def default_window(frequency: Frequency) -> Tuple[int, int]:
  """(horizon, history) in steps for a grid."""
  step = frequency.step_seconds
  if frequency.value == 'monthly':
    return 6, 24
  if frequency.value == 'quarterly':
    return 4, 12
  if step >= WEEK:
    return 4, 26
  if step >= DAY:
    return 7, 28
  per_day, per_week = DAY // step, WEEK // step
  return per_day, per_week if per_week <= _MAX_DEFAULT_HISTORY else 4 * per_day


def drafted_history(frequency: Frequency, horizon: int) -> int:
  """The history `init` drafts for `horizon` steps ahead: the grid's default
  (`default_window`), or `_HISTORY_HORIZONS` horizons rounded up to whole seasons of the
  grid when that is longer (a 56-day history for 28 days ahead), at most
  `_MAX_DEFAULT_HISTORY` steps unless one horizon is longer."""
  default = default_window(frequency)[1]
  wanted = _HISTORY_HORIZONS * horizon
  season = max((period for period in frequency.seasons if period <= wanted), default=1)
  wanted = -(-wanted // season) * season
  return max(default, min(wanted, max(_MAX_DEFAULT_HISTORY, horizon)))


def naive_maes(steps: np.ndarray, series: pd.Series, target: np.ndarray,
               frequency: Frequency, encoder_steps: int, horizon: int,
               start_step: Union[int, pd.Series],
               end_step: Union[None, int, pd.Series] = None) -> Dict[str, float]:
  """MAE of each naive forecast (`trainer_module.naive_forecasts`) over the windows of the
  period from `start_step` up to `end_step` (default: the end of the data), each one for
  every series or one per series.

  Windows are cut as the windowing component cuts a period's: forecasts start at grid
  steps divisible by the horizon, at or after `start_step`, with E history and H
  forecast steps present (no gap) and inside the period.
  """
  histories, futures = [], []
  stride = forecast_starts.default_stride(EVAL_SPLIT, horizon)
  for code, index in pd.Series(range(len(steps))).groupby(series.to_numpy()):
    positions = index.to_numpy()
    first, last = int(steps[positions].min()), int(steps[positions].max())
    values = np.full(last - first + 1, np.nan)
    values[steps[positions] - first] = target[positions]
    start = forecast_starts.first_start_from(
        max(_start_of(start_step, code), first + encoder_steps), stride)
    stop = last if end_step is None else min(last, _start_of(end_step, code) - 1)
    whole = window_cuts.whole_windows(~np.isnan(values), encoder_steps + horizon)
    for forecast in range(start, stop - horizon + 2, stride):
      at = forecast - first
      if whole[at - encoder_steps]:
        histories.append(values[at - encoder_steps:at])
        futures.append(values[at:at + horizon])
  if not histories:
    return {}
  return naive_forecasts.naive_maes(np.array(histories), np.array(futures),
                                    periods_for(frequency.seasons, encoder_steps))
