"""Drafts a data set's spec from its rows: what `tft-pipeline init` can tell from the data.

From a table of text values (the CSV as written) and the target column it finds the time
column and the grid of the rows, the series key (the fewest columns that, with the time,
identify every row, and give the longest series), static columns (one value in every
series), real or categorical columns and which have missing values. What the data cannot
tell, whether a time-varying column is known in advance or only observed, gets a default
that the written file marks for checking. The window shape and the eval period get
defaults from the grid, and the naive forecasts' MAEs on the eval windows, computed as
the pipeline computes them, show the bar a model must clear to be blessed.
"""

import dataclasses
import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from schema.csv_values import MISSING_MARKERS
from schema.dataset_spec import DType, Role
from schema.frequency import (DAY, MINUTE, WEEK, WEEKDAYS, Frequency,
                              fixed_frequency_text)
from schema.time_split import parse_timestamp
from trainer_module.naive_forecasts import naive_forecasts, periods_for

# Window shapes (horizon, history) by grid: a day ahead from a week back for sub-daily
# data (at most 384 history steps, to keep training on a CPU practical), then a week,
# a month, half a year and a year ahead.
_MAX_DEFAULT_HISTORY = 384
EVAL_SHARE = 0.2  # of the longest series' steps, at least one horizon
_TIME_NAMES = ('timestamp', 'datetime', 'date', 'time', 'ds', 'period', 'month', 'week')
# Time-varying reals with these in their name are usually known ahead (prices, calendars).
_KNOWN_HINTS = ('price', 'promo', 'discount', 'holiday', 'event', 'weekday', 'weekend',
                'planned', 'schedule', 'tariff', 'forecast')
_MAX_KEY_COLUMNS = 3
_MIN_NUMBERED_SERIES = 10


class DraftError(ValueError):
  """The data cannot be described by a spec; the message says what to change."""


@dataclasses.dataclass
class ColumnDraft:
  """One column of the drafted spec.

  Attributes:
    note: a remark written beside the column in the spec file.
    check: the draft is a guess the user must confirm (known or observed, an id or
      not); `note` asks the question.
  """
  name: str
  role: Role
  dtype: DType
  allow_missing: bool = False
  note: Optional[str] = None
  check: bool = False


@dataclasses.dataclass
class Draft:
  """A drafted spec, and what was found on the way."""
  name: str
  frequency: Frequency
  encoder_steps: int
  horizon: int
  calendar_features: Tuple[str, ...]
  columns: List[ColumnDraft]
  eval_start: str
  naive_maes: Dict[str, float]
  rows: int
  series: int
  findings: List[str]
  forecast_floor: Optional[float] = None

  @property
  def best_naive(self) -> str:
    return min(self.naive_maes, key=self.naive_maes.get)


def draft(table: pd.DataFrame, target: str, name: str, time: Optional[str] = None,
          horizon: Optional[int] = None, encoder_steps: Optional[int] = None) -> Draft:
  """Drafts the spec of `table` (every value a string, as in the file).

  Raises:
    DraftError: a named column is absent, no time column is found, the target is not
      numeric or has missing values, the rows do not fall on a regular grid, or the
      series are too short for any window.
  """
  if table.empty:
    raise DraftError('the file has a header and no rows')
  table = table.apply(lambda column: column.str.strip())
  for what, column in (('target', target), ('time', time)):
    if column is not None and column not in table.columns:
      raise DraftError(f"{what} column '{column}' is not in the file; its columns are "
                       f'{list(table.columns)}')
  missing = {c: _missing_mask(table[c]) for c in table.columns}
  numbers = {c: _numbers(table[c], missing[c]) for c in table.columns}
  if numbers[target] is None:
    raise DraftError(f"target column '{target}' holds values that are not numbers, e.g. "
                     f'{_first_bad(table[target], missing[target])!r}; the target must be real')
  time = time or _guess_time_column(table, exclude=target)
  seconds = _timestamps(table[time], time)
  others = [c for c in table.columns if c not in (time, target) and not missing[c].any()]
  key = _series_key(table, seconds, text=[c for c in others if numbers[c] is None],
                    integers=[c for c in others
                              if numbers[c] is not None and _integral(numbers[c])])
  series = _series_ids(table, key)
  if missing[target].any():
    raise DraftError(_missing_target_message(target, missing[target], seconds, series))
  frequency = _frequency(seconds, series, table[time])
  moments, inverse = np.unique(seconds, return_inverse=True)
  steps = np.array([frequency.step_of(moment) for moment in moments])[inverse]
  findings = []
  gaps = _gaps(steps, series)
  if gaps:
    findings.append(f'{gaps} steps are missing inside series: windows over a gap are '
                    'skipped, never shifted')
  columns = [ColumnDraft(c, Role.SERIES_KEY, DType.CATEGORICAL, check=numbers[c] is not None,
                         note=None if numbers[c] is None else
                         'CHECK: numbers that tell the series apart; is this the id?')
             for c in key]
  columns.append(ColumnDraft(time, Role.TIME, DType.CATEGORICAL))
  columns.append(ColumnDraft(target, Role.TARGET, DType.REAL))
  for column in table.columns:
    if column in (time, target) or column in key:
      continue
    drafted, left_out = _other_column(column, table[column], numbers[column],
                                      missing[column], series, missing[target])
    if drafted is None:
      findings.append(f"column '{column}' {left_out}: left out")
    else:
      columns.append(drafted)
  lengths = pd.Series(steps).groupby(series).agg(lambda s: s.max() - s.min() + 1)
  horizon, encoder_steps, eval_steps, note = _window(frequency, int(lengths.max()),
                                                     horizon, encoder_steps)
  if note:
    findings.append(note)
  eval_start_step = int(steps.max()) - eval_steps + 1
  target_values = numbers[target].to_numpy()
  maes = naive_maes(steps, series, target_values, frequency, encoder_steps, horizon,
                    eval_start_step)
  if not maes:
    raise DraftError(f'no series has an eval window of {encoder_steps} history and {horizon} '
                     'forecast steps without gaps; give longer series, or a shorter '
                     '--horizon and --encoder-steps')
  return Draft(name=name, frequency=frequency, encoder_steps=encoder_steps, horizon=horizon,
               calendar_features=frequency.default_calendar_features(), columns=columns,
               eval_start=_format_time(frequency.seconds_of(eval_start_step)),
               naive_maes=maes, rows=len(table), series=int(series.max()) + 1,
               findings=findings,
               # Sales, counts and volumes: never below 0 in the data, never forecast so.
               forecast_floor=0.0 if target_values.min() >= 0 else None)


def _missing_target_message(target: str, missing: pd.Series, seconds: np.ndarray,
                            series: pd.Series) -> str:
  """Why rows without a target stop init, and what to do with them."""
  times = pd.Series(seconds, index=missing.index)
  last_with_target = times[~missing].groupby(series[~missing]).max()
  after_the_data = (times[missing] > series[missing].map(last_with_target).fillna(-np.inf))
  count = int(missing.sum())
  where = (f"target column '{target}' is empty in {count} row{'s' if count > 1 else ''} "
           f'(first on line {_line(missing)})')
  if after_the_data.all():
    return (f"{where}, all after their series' last target value: these look like the "
            'forecast horizon. Move them to a future file (the same columns) and pass it '
            'when running the pipeline (tft-pipeline --future FILE); give init the rows '
            'with a target')
  return f'{where}; the pipeline trains on rows with a target: fill them or remove those rows'


def _missing_mask(values: pd.Series) -> pd.Series:
  return values.str.lower().isin(MISSING_MARKERS)


def _numbers(values: pd.Series, missing: pd.Series) -> Optional[pd.Series]:
  """The column as floats (NaN where missing or non-finite), or None if any present
  value is not a number."""
  parsed = pd.to_numeric(values.where(~missing), errors='coerce')
  if (parsed.isna() & ~missing).any():
    return None
  return parsed.where(np.isfinite(parsed.astype(float)))


def _integral(numbers: pd.Series) -> bool:
  present = numbers.dropna()
  return bool(len(present)) and bool((present == present.round()).all())


def _first_bad(values: pd.Series, missing: pd.Series) -> str:
  parsed = pd.to_numeric(values.where(~missing), errors='coerce')
  return values[parsed.isna() & ~missing].iloc[0]


def _line(mask: pd.Series) -> int:
  """The file line of the first row where `mask` holds (the header is line 1)."""
  return int(np.flatnonzero(mask.to_numpy())[0]) + 2


def _guess_time_column(table: pd.DataFrame, exclude: str) -> str:
  parsed = [c for c in table.columns if c != exclude and _all_timestamps(table[c])]
  if not parsed:
    raise DraftError('no column holds an ISO 8601 timestamp (2024-01-31, 2024-01-31 '
                     '13:00:00) in every row; pass --time COLUMN, with the times written '
                     'so')
  named = [c for c in parsed if c.lower() in _TIME_NAMES]
  return (named or parsed)[0]


def _all_timestamps(values: pd.Series) -> bool:
  for text in values.unique():
    try:
      parse_timestamp(text)
    except ValueError:
      return False
  return True


def _timestamps(values: pd.Series, column: str) -> np.ndarray:
  seconds = {}
  for text in values.unique():
    try:
      seconds[text] = parse_timestamp(text, what=f"column '{column}'")
    except ValueError as error:
      raise DraftError(f'line {_line(values == text)}: {error}') from None
  return values.map(seconds).to_numpy(dtype=np.int64)


def _series_key(table: pd.DataFrame, seconds: np.ndarray, text: Sequence[str],
                integers: Sequence[str]) -> Tuple[str, ...]:
  """The fewest columns that with the time identify every row, text columns (the usual
  ids) before integer ones; of those, the ones that make the fewest, longest series."""
  times = pd.Series(seconds, index=table.index, name='__time__')
  for candidates in (list(text), list(text) + list(integers)):
    for size in range(0, min(_MAX_KEY_COLUMNS, len(candidates)) + 1):
      found = []
      for key in itertools.combinations(candidates, size):
        if not pd.concat([table[list(key)], times], axis=1).duplicated().any():
          found.append((len(table[list(key)].drop_duplicates()) if key else 1, key))
      if found:  # ties: the file's order
        return min(found, key=lambda item: item[0])[1]
  duplicated = pd.Series(seconds).duplicated(keep=False)
  raise DraftError(f'no combination of up to {_MAX_KEY_COLUMNS} text or integer columns '
                   'tells the series apart: rows with the same time (e.g. lines '
                   f'{[int(i) + 2 for i in np.flatnonzero(duplicated)[:3]]}) differ in no '
                   'such column. Add a series id column, or aggregate the duplicates')


def _series_ids(table: pd.DataFrame, key: Tuple[str, ...]) -> pd.Series:
  if not key:
    return pd.Series(0, index=table.index)
  return table.groupby(list(key), sort=False).ngroup()


def _frequency(seconds: np.ndarray, series: pd.Series, times: pd.Series) -> Frequency:
  """The grid of the most common spacing of consecutive rows of a series."""
  order = np.lexsort((seconds, series.to_numpy()))
  ordered, ids = seconds[order], series.to_numpy()[order]
  spacing = np.diff(ordered)[np.diff(ids) == 0]
  if not spacing.size:
    raise DraftError('every series has a single row; a series needs a row per time step')
  values, counts = np.unique(spacing, return_counts=True)
  step = int(values[np.argmax(counts)])
  frequency = _frequency_of_spacing(step, seconds)
  for moment in np.unique(seconds):
    try:
      frequency.step_of(moment)
    except ValueError as error:
      index = int(np.flatnonzero(seconds == moment)[0])
      raise DraftError(f'line {index + 2} ({times.iloc[index]!r}): {error}; the rows are '
                       f'most often {frequency.value} apart') from None
  return frequency


def _frequency_of_spacing(step: int, seconds: np.ndarray) -> Frequency:
  if step == WEEK:
    weekdays = (seconds // DAY + 3) % 7  # 1970-01-01 was a Thursday
    return Frequency(f'W-{WEEKDAYS[int(np.bincount(weekdays).argmax())]}')
  if 28 * DAY <= step <= 31 * DAY:
    return Frequency('monthly')
  if 89 * DAY <= step <= 92 * DAY:
    return Frequency('quarterly')
  if step % MINUTE == 0 and step < 28 * DAY:
    return Frequency(fixed_frequency_text(step))
  raise DraftError(f'consecutive rows of a series are most often {step} s apart, which is '
                   'no regular grid the pipeline knows (minutes, hours, days, weeks, months, '
                   'quarters)')


def _gaps(steps: np.ndarray, series: pd.Series) -> int:
  spans = pd.Series(steps).groupby(series.to_numpy()).agg(['min', 'max', 'count'])
  return int((spans['max'] - spans['min'] + 1 - spans['count']).sum())


def _other_column(name: str, values: pd.Series, numbers: Optional[pd.Series],
                  missing: pd.Series, series: pd.Series, target_missing: pd.Series
                  ) -> Tuple[Optional[ColumnDraft], Optional[str]]:
  """The draft of a column that is neither key, time nor target, or (None, why not)."""
  dtype = DType.REAL if numbers is not None else DType.CATEGORICAL
  compared = values.where(~missing, '') if dtype == DType.CATEGORICAL else numbers
  if compared.nunique(dropna=False) <= 1:
    return None, 'has one value in every row'
  if dtype == DType.CATEGORICAL and missing.any():
    return None, (f'is text with {int(missing.sum())} empty values (first on line '
                  f'{_line(missing)}); fill them with a category such as "unknown" to use it')
  per_series = compared.groupby(series.to_numpy()).nunique(dropna=False)
  if (per_series <= 1).all() and not missing.any():
    numbered = _series_numbering(numbers, series) if dtype == DType.REAL else None
    if numbered:
      return ColumnDraft(name, Role.STATIC, dtype, check=True, note=(
          f'CHECK: numbers the series {numbered[0]} to {numbered[1]}, a different value in '
          'each, like an id: remove the line unless the number means something (a size, '
          'a rank)')), None
    return ColumnDraft(name, Role.STATIC, dtype, note='one value in every series'), None
  if dtype == DType.CATEGORICAL:
    return ColumnDraft(name, Role.KNOWN, dtype, check=True, note=(
        'CHECK: text that changes over time can only be known (observed inputs are '
        'real): remove the line if its future values are not known')), None
  allow_missing = bool(numbers.isna().any())
  filled_ahead = bool((target_missing & numbers.notna()).any())
  known = filled_ahead or any(hint in name.lower() for hint in _KNOWN_HINTS)
  reason = ('filled where the target is not yet' if filled_ahead else
            'its name suggests a value known ahead' if known else
            'default: its future values are not known')
  return ColumnDraft(name, Role.KNOWN if known else Role.OBSERVED, dtype,
                     allow_missing=allow_missing,
                     note=f'CHECK known or observed ({reason})', check=True), None


def _series_numbering(numbers: pd.Series, series: pd.Series) -> Optional[Tuple[int, int]]:
  """(first, last) when a static column numbers the series one by one, an id in all but
  name (0 to N - 1, or any run of N consecutive integers, over N >= _MIN_NUMBERED_SERIES
  series, so that a few small counts such as floors are not taken for one); else None."""
  values = numbers.groupby(series.to_numpy()).first()
  if (len(values) < _MIN_NUMBERED_SERIES or not _integral(values)
      or values.nunique() != len(values)):
    return None
  first, last = int(values.min()), int(values.max())
  return (first, last) if last - first + 1 == len(values) else None


def _window(frequency: Frequency, longest: int, horizon: Optional[int],
            encoder_steps: Optional[int]) -> Tuple[int, int, int, Optional[str]]:
  """(horizon, history, eval steps, a note if the history was shortened)."""
  default_horizon, default_history = _default_window(frequency)
  horizon = horizon or default_horizon
  eval_steps = max(horizon, int(round(EVAL_SHARE * longest)))
  train_steps = longest - eval_steps
  if encoder_steps is None:
    encoder_steps = default_history
    # Leave the training period room for windows: at most two thirds of it in one.
    if encoder_steps + horizon > 2 * train_steps // 3:
      shortened = max(horizon, 2 * train_steps // 3 - horizon)
      note = (f'history shortened from {encoder_steps} to {shortened} steps so that the '
              f'training period ({train_steps} steps) holds windows')
      return horizon, shortened, eval_steps, note
  if encoder_steps + horizon > train_steps:
    raise DraftError(f'the longest series has {longest} steps: after {eval_steps} eval steps '
                     f'its {train_steps} training steps cannot hold one window of '
                     f'{encoder_steps} history and {horizon} forecast steps; give a shorter '
                     '--encoder-steps or --horizon')
  return horizon, encoder_steps, eval_steps, None


def _default_window(frequency: Frequency) -> Tuple[int, int]:
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


def naive_maes(steps: np.ndarray, series: pd.Series, target: np.ndarray,
               frequency: Frequency, encoder_steps: int, horizon: int,
               eval_start_step: int) -> Dict[str, float]:
  """MAE of each naive forecast (`trainer_module.naive_forecasts`) over the eval windows.

  Eval windows are cut as the windowing component cuts them: forecasts start at grid
  steps divisible by the horizon, at or after `eval_start_step`, with E history and H
  forecast steps present (no gap).
  """
  histories, futures = [], []
  for _, index in pd.Series(range(len(steps))).groupby(series.to_numpy()):
    positions = index.to_numpy()
    first, last = int(steps[positions].min()), int(steps[positions].max())
    values = np.full(last - first + 1, np.nan)
    values[steps[positions] - first] = target[positions]
    start = max(eval_start_step, first + encoder_steps)
    start += -start % horizon
    for forecast in range(start, last - horizon + 2, horizon):
      at = forecast - first
      history, future = values[at - encoder_steps:at], values[at:at + horizon]
      if not (np.isnan(history).any() or np.isnan(future).any()):
        histories.append(history)
        futures.append(future)
  if not histories:
    return {}
  futures = np.array(futures)
  forecasts = naive_forecasts(np.array(histories), horizon,
                              periods_for(frequency.seasons, encoder_steps))
  return {name: float(np.mean(np.abs(futures - values.numpy())))
          for name, values in forecasts.items()}


def _format_time(seconds: int) -> str:
  moment = pd.Timestamp(seconds, unit='s')
  return moment.strftime('%Y-%m-%d' if moment == moment.normalize() else '%Y-%m-%d %H:%M:%S')
