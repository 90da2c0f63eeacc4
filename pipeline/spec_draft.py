"""Drafts a data set's spec from its rows: what `tft-pipeline init` can tell from the data.

From a table of text values (the CSV as written) and the target column it finds the time
column and the grid of the rows, the series key (the fewest columns that, with the time,
identify every row, and give the longest series), static columns (one value in every
series), real or categorical columns and which have missing values. What the data cannot
tell, whether a time-varying column is known in advance or only observed, gets a default
that the written file marks for checking. The window shape and the eval period get
defaults from the grid, and the naive forecasts' MAEs on the eval windows, computed as
the pipeline computes them, show the bar a model must clear to be blessed. The grid's
calendar features are drafted where the training period holds every value the later
periods and the forecasts after the data take.

`draft` runs the steps in that order; each lives in `pipeline.draft`: reading and typing
the table (`table`), the time column and grid (`time_column`), the series key
(`series_key`), the other columns (`columns`), the notes on the series (`findings`) and
the window and periods (`window`).
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from common.suggestions import did_you_mean
from pipeline.draft.columns import ColumnDraft, other_column
from pipeline.draft.findings import (apart_finding, check_target_varies, constant_series_finding,
                                     ended_series_finding, late_series_finding,
                                     season_beyond_history_finding, short_series_finding,
                                     untrained_calendar_finding)
from pipeline.draft.series_key import (check_key_filled, check_no_time_of_day_key, given_series_key,
                                       guess_series_key, series_ids)
from pipeline.draft.table import (DraftError, check_target_values, is_integral, missing_mask,
                                  missing_target_message, numbers_of, separated_numbers,
                                  stray_text)
from pipeline.draft.time_column import (changing_clock, count_gaps, grid_of, guess_time_column,
                                        time_text, timestamps_of)
from pipeline.draft.window import (DEFAULT_BATCH_SIZE, default_window, draft_window, ends_apart,
                                   naive_maes, period_starts, small_data_batch_size,
                                   training_windows)
from schema.dataset_spec import RESERVED_NAMES_RULE, DType, Role, reserved_names
from schema.frequency import Frequency
from schema.time_split import check_time_format
from trainer_module import naive_forecasts
from trainer_module.preprocessing import calendar_values, untrained_calendar_values

# An ensemble of three TFTs of different seeds, serving the mean of the members chosen on
# the eval windows: on every data set of the development suite its held-out test MAE is
# below one TFT's, for about 2.5 times the training time (benchmarks/pages/suite.md).
ENSEMBLE_SIZE = 3

# Of a target never below 0, the share of its values at 0 from which it rests on 0 (sales
# that are 0 on quiet days) and gets a forecast floor there.
FLOOR_ZERO_SHARE = 0.01


@dataclasses.dataclass
class Draft:
  """A drafted spec, and what was found on the way."""
  name: str
  frequency: Frequency
  encoder_steps: int
  horizon: int
  calendar_features: Tuple[str, ...]
  columns: List[ColumnDraft]
  eval_start: str  # where the eval period starts in this data
  test_start: Optional[str]  # where the held-out test period starts; None: none fits
  naive_maes: Dict[str, float]
  rows: int
  series: int
  findings: List[str]
  forecast_floor: Optional[float] = None
  time_zone: Optional[str] = None  # whose clock the times follow, when it changes
  time_format: Optional[str] = None  # the strptime format the times are written in
  training_windows: int = 0
  eval_steps: int = 0  # the data's last steps from `eval_start` (eval and test periods)
  test_steps: int = 0  # the data's last steps from `test_start` (the test period)
  each_series: bool = False  # the periods are each series' last steps (series end apart);
  # `eval_start` and `test_start` are then the longest series' own
  batch_size: Optional[int] = None  # when the training windows are fewer than the default
  ensemble_size: int = ENSEMBLE_SIZE  # TFTs of different seeds, members chosen on eval
  # 'last' where the level drifts: before the test period, the last value forecasts better
  # than the history's mean (`drifting_level`); None keeps the model's default.
  target_location: Optional[str] = None
  # The grid's calendar features left out: the eval and test periods or the forecasts after
  # the data take values the training period does not
  # (`preprocessing.untrained_calendar_values`).
  untrained_calendar_features: Tuple[str, ...] = ()

  @property
  def best_naive(self) -> str:
    return min(self.naive_maes, key=self.naive_maes.get)


def drifting_level(maes: Dict[str, float]) -> bool:
  """Whether, by these naive forecasts' MAEs, repeating the last value forecasts better
  than the history's mean: the level drifts more than the history's mean follows, so each
  window is better centred on its last value than on its mean (the centring makes that
  value the model's zero). The seasonal naive forecasts do not decide it: the model learns
  the season from either centre."""
  last, mean = maes.get(naive_forecasts.REPEAT_LAST), maes.get(naive_forecasts.HISTORY_MEAN)
  return last is not None and mean is not None and last < mean


def zero_floor(target: pd.Series) -> bool:
  """Whether forecasts of `target` (its values, NaN where missing) are floored at 0: it is
  never below 0, and either counts (whole numbers only) or rests on 0 (at least
  `FLOOR_ZERO_SHARE` of its values are 0), as sales, counts and volumes do. A measurement
  that only stayed above 0 in the data (a temperature, a load, a price) gets no floor: it
  could go lower."""
  present = target.dropna()
  if present.empty or present.min() < 0:
    return False
  return is_integral(present) or bool((present == 0).mean() >= FLOOR_ZERO_SHARE)


def draft(table: pd.DataFrame, target: str, name: str, time: Optional[str] = None,
          horizon: Optional[int] = None, encoder_steps: Optional[int] = None,
          series_key: Optional[Sequence[str]] = None,
          time_format: Optional[str] = None) -> Draft:
  """Drafts the spec of `table` (every value a string, as in the file; the index is each
  row's line in the file, as `read_table` gives it). `series_key`, when given, names the
  columns that tell the series apart instead of the guess; `time_format`, the strptime
  format the times are written in, when they are in none the pipeline reads by itself.

  Raises:
    DraftError: a named column is absent, no time column is found, the target is not
      numeric, has missing values or never changes within a series, the rows do not fall
      on a regular grid, a series has two rows at one time, a key column has empty
      values, or the series are too short for any window.
  """
  if table.empty:
    raise DraftError('the file has a header and no rows')
  table = table.apply(lambda column: column.str.strip())
  named = [('target', target), ('time', time)] + [('series key', c) for c in series_key or ()]
  for what, column in named:
    if column is not None and column not in table.columns:
      raise DraftError(f"{what} column '{column}' is not in the file"
                       f'{did_you_mean(column, table.columns)}; its columns are '
                       f'{list(table.columns)}')
  reserved = reserved_names(table.columns)
  if reserved:
    raise DraftError(f'the names of columns {reserved} {RESERVED_NAMES_RULE}; rename them '
                     'in the file')
  markers = {c: missing_mask(table[c]) for c in table.columns}
  numbers = {c: numbers_of(table[c], markers[c]) for c in table.columns}
  # Reals are missing where empty or a marker ('NA', 'null'); text, and any key column, is
  # kept as written, as ExampleGen keeps it ('NA' may be a country): only empty is missing.
  empty = {c: table[c] == '' for c in table.columns}
  missing = {c: markers[c] if numbers[c] is not None else empty[c] for c in table.columns}
  check_target_values(table[target], target, numbers[target], missing[target])
  if time_format is not None:
    try:
      check_time_format(time_format, '--time-format')
    except ValueError as error:
      raise DraftError(str(error)) from None
  time = time or guess_time_column(table, target, time_format)
  seconds = timestamps_of(table[time], time, time_format)
  if series_key:
    key = given_series_key(table, seconds, tuple(series_key), time, target, empty,
                           time_format)
  else:
    others = [c for c in table.columns if c not in (time, target)]
    key = guess_series_key(table, seconds, text=[c for c in others if numbers[c] is None],
                           integers=[c for c in others
                                     if numbers[c] is not None and is_integral(numbers[c])],
                           time=time, incomplete={c for c in others if empty[c].any()},
                           time_format=time_format)
    check_no_time_of_day_key(table, seconds, time, key)
    check_key_filled(table, key, empty)
  series = series_ids(table, key)
  if missing[target].any():
    raise DraftError(missing_target_message(table[target], target, missing[target],
                                            seconds, series))
  check_target_varies(table, numbers[target], target, key, series)
  frequency = grid_of(seconds, series, table[time], time_format)
  moments, inverse = np.unique(seconds, return_inverse=True)
  steps = np.array([frequency.step_of(moment) for moment in moments])[inverse]
  findings = []
  gaps = count_gaps(steps, series)
  if gaps:
    findings.append(f'{gaps} steps are missing inside series: windows over a gap are '
                    'skipped, never shifted')
  guessed_numbers = [c for c in key if numbers[c] is not None and not series_key]
  columns = [ColumnDraft(c, Role.SERIES_KEY, DType.CATEGORICAL, check=c in guessed_numbers,
                         note='CHECK: numbers that tell the series apart; is this the id?'
                         if c in guessed_numbers else None)
             for c in key]
  columns.append(ColumnDraft(time, Role.TIME, DType.CATEGORICAL))
  columns.append(ColumnDraft(target, Role.TARGET, DType.REAL))
  for column in table.columns:
    if column in (time, target) or column in key:
      continue
    drafted, left_out = other_column(column, table[column], numbers[column],
                                     missing[column], series, missing[target], seconds)
    stray = (separated_numbers(column, table[column], numbers[column], markers[column])
             or stray_text(column, table[column], numbers[column], markers[column]))
    if stray:
      findings.append(stray)
      if drafted is not None:
        drafted.note, drafted.check = f'CHECK: {stray}', True
    if drafted is None:
      findings.append(f"column '{column}' {left_out}: left out")
    else:
      columns.append(drafted)
  lengths = pd.Series(steps).groupby(series.to_numpy()).agg(lambda s: s.max() - s.min() + 1)
  last = pd.Series(steps).groupby(series.to_numpy()).max()
  horizon = horizon or default_window(frequency)[0]
  each_series = ends_apart(last, horizon)
  # The periods are placed from the end of the data, or of each series: drafted on the
  # longest series, whose last step ends them.
  last_step = int(last[lengths.idxmax()]) if each_series else int(steps.max())
  horizon, encoder_steps, eval_start_step, test_start_step, notes = draft_window(
      frequency, int(lengths.max()), last_step, horizon, encoder_steps)
  findings += notes
  eval_starts = period_starts(last, last_step + 1 - eval_start_step, horizon, each_series)
  test_starts = (None if test_start_step is None else
                 period_starts(last, last_step + 1 - test_start_step, horizon, each_series))
  season = season_beyond_history_finding(
      frequency, encoder_steps, horizon,
      int(lengths.max()) - (last_step + 1 - eval_start_step))
  if season:
    findings.append(season)
  short = short_series_finding(table, key, series, lengths, encoder_steps + horizon)
  if short:
    findings.append(short)
  ended = (apart_finding(table, key, series, last, frequency, horizon) if each_series
           else ended_series_finding(table, key, series, steps, frequency, horizon))
  if ended:
    findings.append(ended)
  late = late_series_finding(table, key, series, steps, frequency, eval_starts)
  if late:
    findings.append(late)
  constant = constant_series_finding(table, numbers[target], target, key, series)
  if constant:
    findings.append(constant)
  target_values = numbers[target].to_numpy()
  # The blessing's windows: the test period's, or the eval period's without one.
  maes = naive_maes(steps, series, target_values, frequency, encoder_steps, horizon,
                    eval_starts if test_starts is None else test_starts)
  eval_start = time_text(frequency.seconds_of(eval_start_step))
  test_start = (None if test_start_step is None
                else time_text(frequency.seconds_of(test_start_step)))
  judged = 'eval' if test_start is None else 'test'
  if test_start is not None and not naive_maes(steps, series, target_values, frequency,
                                               encoder_steps, horizon, eval_starts,
                                               test_starts):
    raise DraftError(f'no series has an eval window ({encoder_steps} history and {horizon} '
                     f'forecast steps{" without gaps" if gaps else ""}, forecasting from '
                     f'{eval_start} on, before the test period from {test_start}); give '
                     'longer series, or a shorter --horizon and --encoder-steps')
  if not maes:
    raise DraftError(f'no series has {"an" if test_start is None else "a"} {judged} window '
                     f'({encoder_steps} history and {horizon} forecast steps'
                     f'{" without gaps" if gaps else ""}, forecasting from '
                     f'{test_start or eval_start} on); give longer series, or a shorter '
                     '--horizon and --encoder-steps')
  windows = training_windows(steps, series, encoder_steps + horizon, eval_starts)
  if not windows:
    raise DraftError(f'no series has a training window ({encoder_steps} history and '
                     f'{horizon} forecast steps{" without gaps" if gaps else ""}, before '
                     f'{eval_start}); give longer series, or a shorter --encoder-steps or '
                     '--horizon')
  batch_size = small_data_batch_size(windows)
  if batch_size:
    findings.append(f'{windows} training windows, fewer than the default batch of '
                    f'{DEFAULT_BATCH_SIZE}: the spec sets a batch of {batch_size} (model: '
                    '{batch_size: ...}); more history per series, or a shorter '
                    '--encoder-steps, gives more windows')
  if min(maes.values()) == 0:
    findings.append(f'the naive forecast {min(maes, key=maes.get)} is exact on every {judged} '
                    'window (MAE 0), so no model can beat it and none will be blessed: check '
                    'the target column')
  before_test = naive_maes(steps, series, target_values, frequency, encoder_steps, horizon,
                           int(steps.min()), test_starts)
  offsets, zones = changing_clock(table[time], seconds, series, frequency, time_format)
  if offsets and zones:
    more = f' or one of {len(zones) - 1} more' if len(zones) > 1 else ''
    findings.append(f'the times name the UTC offsets {" and ".join(offsets)}: a clock that '
                    'changes. To read the calendar features on it, name its zone in the '
                    f'spec (time_zone: "{zones[0]}"{more} whose clock keeps these offsets at '
                    f'these times, such as {", ".join(zones[1:4])}); the spec holds the line, '
                    'commented out')
  elif offsets:
    findings.append(f'the times name the UTC offsets {" and ".join(offsets)}, and no one '
                    "zone's clock keeps them at these times (series in several zones?): the "
                    'calendar features are read in UTC')
  calendar = frequency.default_calendar_features()
  for feature in set(calendar) & set(table.columns):
    findings.append(f"column '{feature}' has the name of a calendar feature the pipeline "
                    'derives from the time: the column is used, the derived feature left out')
  training_rows = steps < series.map(eval_starts).to_numpy()
  drafted_calendar = [f for f in calendar if f not in table.columns]
  forecasts = [frequency.seconds_after(end, horizon) for end in last.unique()]
  untrained = untrained_calendar_values(
      calendar_values(drafted_calendar, seconds[training_rows]),
      calendar_values(drafted_calendar, np.concatenate([seconds[~training_rows], *forecasts])))
  untrained_note = untrained_calendar_finding(untrained)
  if untrained_note:
    findings.append(untrained_note)
  return Draft(name=name, frequency=frequency, encoder_steps=encoder_steps, horizon=horizon,
               calendar_features=tuple(f for f in drafted_calendar if f not in untrained),
               untrained_calendar_features=tuple(untrained),
               columns=columns,
               eval_start=eval_start, eval_steps=last_step + 1 - eval_start_step,
               test_start=test_start,
               test_steps=0 if test_start is None else last_step + 1 - test_start_step,
               each_series=each_series,
               naive_maes=maes, rows=len(table), series=int(series.max()) + 1,
               findings=findings, time_zone=zones[0] if zones else None,
               time_format=time_format,
               training_windows=windows, batch_size=batch_size,
               target_location='last' if drifting_level(before_test) else None,
               forecast_floor=0.0 if zero_floor(numbers[target]) else None)


