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

import csv
import dataclasses
import difflib
import io
import itertools
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import numpy as np
import pandas as pd

from common.exit_codes import InputError
from schema import forecast_starts
from schema import time_zones
from schema.csv_values import (MISSING_MARKERS, check_header, clean_header, data_rows,
                               decode_utf8)
from schema.dataset_spec import RESERVED_NAMES_RULE, DType, Role, reserved_names
from schema.frequency import (DAY, MINUTE, WEEK, WEEKDAYS, Frequency,
                              fixed_frequency_text, off_grid_hint)
from schema.time_split import (EVAL_SPLIT, check_time_format, day_month_order,
                               format_utc_offset, names_utc_offset, parse_timestamp,
                               utc_offset_seconds)
from schema.hparams import DEFAULT_PRESET, PRESETS, largest_batch_within
from trainer_module.naive_forecasts import naive_forecasts, periods_for

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
_TIME_NAMES = ('timestamp', 'datetime', 'date', 'day', 'time', 'ts', 'ds', 'period', 'month',
               'week')
# Words in the names of columns that usually identify series: among keys that tell the
# series apart equally well, one named so is preferred.
_ID_WORDS = frozenset({'id', 'key', 'code', 'series', 'sku', 'store', 'shop', 'item',
                       'product', 'station', 'site', 'sensor', 'meter', 'customer', 'agency',
                       'name'})
# Ends of words that name ids only (unlike 'meter' in 'diameter', 'shop' in 'workshop').
_ID_SUFFIXES = ('series', 'key', 'code', 'sku')
_TIME_OF_DAY = re.compile(r'\d{1,2}:\d{2}(:\d{2})?')
# Time-varying reals with these in their name are usually known ahead (prices, calendars).
_KNOWN_HINTS = ('price', 'promo', 'discount', 'holiday', 'event', 'weekday', 'weekend',
                'planned', 'schedule', 'tariff', 'forecast')
# Words of a name that make it read as measured, not planned, whatever else it says
# ('competitor_price', 'price_actual'; not 'contractual_price').
_OBSERVED_HINTS = ('competitor', 'actual', 'measured', 'observed', 'realised', 'realized')
_MAX_KEY_COLUMNS = 3
# Instants either side of an offset change that one clock can have in the data (two
# changes a year); more, and the times follow several clocks.
_MAX_CLOCK_EDGES = 500
_MIN_NUMBERED_SERIES = 10
# Rows that repeat a time within their series, as a share of those series' rows, up to
# which they are taken for duplicates to report; another key column (a store within a
# product) repeats about every time of the series it splits.
_DUPLICATE_SHARE = 0.05
# Non-numbers, as a share of a column's values, up to which they are taken for
# mistakes in a column of numbers (an 'n/a', a thousands separator).
_STRAY_TEXT_SHARE = 0.05


DEFAULT_BATCH_SIZE = PRESETS[DEFAULT_PRESET].batch_size


class DraftError(InputError):
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

  @property
  def best_naive(self) -> str:
    return min(self.naive_maes, key=self.naive_maes.get)


def read_table(path: str) -> pd.DataFrame:
  """The CSV file at `path` as the pipeline's ExampleGen reads it (UTF-8, comma-separated,
  a byte-order mark dropped, blank lines skipped): every value as text, each row indexed
  by its line in the file.

  Raises:
    DraftError: the file is empty or not UTF-8 (named by `path` and line), its header repeats a name or looks
      separated by another character, or a row has another number of fields.
  """
  with open(path, 'rb') as f:
    text = decode_utf8(f.read(), path, DraftError)
  reader = csv.reader(io.StringIO(text, newline=''))
  header = clean_header(next(reader, []))
  if not header:
    raise DraftError('the file is empty; init reads a header line, then a row per series '
                     'and time step')
  check_header(header, 'line 1', DraftError)
  rows = dict(data_rows(reader, header, path, DraftError))
  return pd.DataFrame(list(rows.values()), columns=header, index=list(rows), dtype=str)


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
                       f'{_did_you_mean(column, table.columns)}; its columns are '
                       f'{list(table.columns)}')
  reserved = reserved_names(table.columns)
  if reserved:
    raise DraftError(f'the names of columns {reserved} {RESERVED_NAMES_RULE}; rename them '
                     'in the file')
  markers = {c: _missing_mask(table[c]) for c in table.columns}
  numbers = {c: _numbers(table[c], markers[c]) for c in table.columns}
  # Reals are missing where empty or a marker ('NA', 'null'); text, and any key column, is
  # kept as written, as ExampleGen keeps it ('NA' may be a country): only empty is missing.
  empty = {c: table[c] == '' for c in table.columns}
  missing = {c: markers[c] if numbers[c] is not None else empty[c] for c in table.columns}
  _check_target_values(table[target], target, numbers[target], missing[target])
  if time_format is not None:
    try:
      check_time_format(time_format, '--time-format')
    except ValueError as error:
      raise DraftError(str(error)) from None
  time = time or _guess_time_column(table, target, time_format)
  seconds = _timestamps(table[time], time, time_format)
  if series_key:
    key = _given_series_key(table, seconds, tuple(series_key), time, target, empty,
                            time_format)
  else:
    others = [c for c in table.columns if c not in (time, target)]
    key = _series_key(table, seconds, text=[c for c in others if numbers[c] is None],
                      integers=[c for c in others
                                if numbers[c] is not None and _integral(numbers[c])],
                      time=time, incomplete={c for c in others if empty[c].any()},
                      time_format=time_format)
    _check_no_time_of_day_key(table, seconds, time, key)
    _check_key_filled(table, key, empty)
  series = _series_ids(table, key)
  if missing[target].any():
    raise DraftError(_missing_target_message(table[target], target, missing[target],
                                             seconds, series))
  _check_target_varies(table, numbers[target], target, key, series)
  frequency = _frequency(seconds, series, table[time], time_format)
  moments, inverse = np.unique(seconds, return_inverse=True)
  steps = np.array([frequency.step_of(moment) for moment in moments])[inverse]
  findings = []
  gaps = _gaps(steps, series)
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
    drafted, left_out = _other_column(column, table[column], numbers[column],
                                      missing[column], series, missing[target], seconds)
    stray = (_separated_numbers(column, table[column], numbers[column], markers[column])
             or _stray_text(column, table[column], numbers[column], markers[column]))
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
  horizon = horizon or _default_window(frequency)[0]
  each_series = ends_apart(last, horizon)
  # The periods are placed from the end of the data, or of each series: drafted on the
  # longest series, whose last step ends them.
  last_step = int(last[lengths.idxmax()]) if each_series else int(steps.max())
  horizon, encoder_steps, eval_start_step, test_start_step, notes = _window(
      frequency, int(lengths.max()), last_step, horizon, encoder_steps)
  findings += notes
  eval_starts = _period_starts(last, last_step + 1 - eval_start_step, horizon, each_series)
  test_starts = (None if test_start_step is None else
                 _period_starts(last, last_step + 1 - test_start_step, horizon, each_series))
  season = _season_beyond_history_finding(
      frequency, encoder_steps, horizon,
      int(lengths.max()) - (last_step + 1 - eval_start_step))
  if season:
    findings.append(season)
  short = _short_series_finding(table, key, series, lengths, encoder_steps + horizon)
  if short:
    findings.append(short)
  ended = (_apart_finding(table, key, series, last, frequency, horizon) if each_series
           else _ended_series_finding(table, key, series, steps, frequency, horizon))
  if ended:
    findings.append(ended)
  late = _late_series_finding(table, key, series, steps, frequency, eval_starts)
  if late:
    findings.append(late)
  constant = _constant_series_finding(table, numbers[target], target, key, series)
  if constant:
    findings.append(constant)
  target_values = numbers[target].to_numpy()
  # The blessing's windows: the test period's, or the eval period's without one.
  maes = naive_maes(steps, series, target_values, frequency, encoder_steps, horizon,
                    eval_starts if test_starts is None else test_starts)
  eval_start = _format_time(frequency.seconds_of(eval_start_step))
  test_start = (None if test_start_step is None
                else _format_time(frequency.seconds_of(test_start_step)))
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
  offsets, zones = _changing_clock(table[time], seconds, series, frequency, time_format)
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
  return Draft(name=name, frequency=frequency, encoder_steps=encoder_steps, horizon=horizon,
               calendar_features=tuple(f for f in calendar if f not in table.columns),
               columns=columns,
               eval_start=eval_start, eval_steps=last_step + 1 - eval_start_step,
               test_start=test_start,
               test_steps=0 if test_start is None else last_step + 1 - test_start_step,
               each_series=each_series,
               naive_maes=maes, rows=len(table), series=int(series.max()) + 1,
               findings=findings, time_zone=zones[0] if zones else None,
               time_format=time_format,
               training_windows=windows, batch_size=batch_size,
               # Sales, counts and volumes: never below 0 in the data, never forecast so.
               forecast_floor=0.0 if target_values.min() >= 0 else None)


def _did_you_mean(name: str, columns: Sequence[str]) -> str:
  close = difflib.get_close_matches(name, list(columns), n=1)
  return f' (did you mean {close[0]!r}?)' if close else ''


def _check_target_values(values: pd.Series, target: str, numbers: Optional[pd.Series],
                         missing: pd.Series) -> None:
  """Raises DraftError, naming the first line, when a present target value is not a
  finite number (rows without a target are told apart later, by series)."""
  if numbers is None:
    line = _line(_not_numbers(values, missing))
    raise DraftError(f"target column '{target}' holds {values[line]!r} on line {line}, which "
                     'is not a number; the target must be a number in every row (written '
                     'as 1234.5, without thousands separators)')
  non_finite = numbers.isna() & ~missing
  if non_finite.any():
    line = _line(non_finite)
    raise DraftError(f"target column '{target}' holds {values[line]!r} on line {line}, which "
                     'is not a finite number; the model trains on finite values only: fix '
                     'the value or remove the row')


def _stray_text(name: str, values: pd.Series, numbers: Optional[pd.Series],
                missing: pd.Series) -> Optional[str]:
  """What to fix when a column of numbers holds a few values that are not numbers (and is
  therefore drafted as text), or None."""
  if numbers is not None:
    return None
  stray = _not_numbers(values, missing)
  if not 0 < stray.sum() <= _STRAY_TEXT_SHARE * (~missing).sum():
    return None
  line = _line(stray)
  count = int(stray.sum())
  markers = sorted(MISSING_MARKERS - {''})
  return (f"column '{name}' holds numbers but for {count} value{'s' if count > 1 else ''} "
          f'such as {values[line]!r} on line {line}, so it is drafted as text; if it is a '
          f'column of numbers, write a missing value as empty or one of {markers} and run '
          'init again')


_SEPARATED_NUMBER = re.compile(r'[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?')


def _separated_numbers(name: str, values: pd.Series, numbers: Optional[pd.Series],
                       missing: pd.Series) -> Optional[str]:
  """What to fix when a column holds numbers written with thousands separators (and is
  therefore drafted as text), or None."""
  if numbers is not None:
    return None
  commas = values.str.contains(',', regex=False) & ~missing
  separated = values.str.fullmatch(_SEPARATED_NUMBER) & ~missing
  # '1,5' or '0,750' is a decimal comma, not a separator: then this is not the reason.
  if (not separated.any() or (commas & ~separated).any()
      or _not_numbers(values.str.replace(',', ''), missing).any()):
    return None
  line = _line(separated)
  return (f"column '{name}' holds numbers written with thousands separators, such as "
          f'{values[line]!r} on line {line}, so it is drafted as text (a category per '
          f'value); write them without separators ({values[line].replace(",", "")}; if the '
          'comma is a decimal point, with a point) and run init again')


def _missing_target_message(values: pd.Series, target: str, missing: pd.Series,
                            seconds: np.ndarray, series: pd.Series) -> str:
  """Why rows without a target stop init, and what to do with them."""
  times = pd.Series(seconds, index=missing.index)
  last_with_target = times[~missing].groupby(series[~missing]).max()
  after_the_data = (times[missing] > series[missing].map(last_with_target).fillna(-np.inf))
  count = int(missing.sum())
  line = _line(missing)
  where = (f"target column '{target}' has no value in {count} row{'s' if count > 1 else ''} "
           f'(first on line {line}: {values[line]!r})')
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
  if _not_numbers(values, missing).any():
    return None
  parsed = pd.to_numeric(values.where(~missing))
  return parsed.where(np.isfinite(parsed.astype(float)))


def _not_numbers(values: pd.Series, missing: pd.Series) -> pd.Series:
  """Where a present value is not a number."""
  return pd.to_numeric(values.where(~missing), errors='coerce').isna() & ~missing


def _integral(numbers: pd.Series) -> bool:
  present = numbers.dropna()
  return bool(len(present)) and bool((present == present.round()).all())


def _line(mask: pd.Series) -> int:
  """The file line of the first row where `mask` holds (the table's index)."""
  return int(mask.index[mask.to_numpy()][0])


def _guess_time_column(table: pd.DataFrame, exclude: str, time_format: Optional[str]) -> str:
  parsed = [c for c in table.columns
            if c != exclude and _all_timestamps(table[c], time_format)]
  if not parsed:
    for column in (c for c in table.columns if c != exclude and c.lower() in _TIME_NAMES):
      try:
        _timestamps(table[column], column, time_format)
      except DraftError as error:  # its first value that is no timestamp
        raise DraftError(f'{error}; or, if the times are in another column, pass --time '
                         'COLUMN') from None
    if time_format is not None:
      raise DraftError(f'no column holds a time in the format {time_format!r} in every '
                       'row; pass --time COLUMN, or the format the times are written in')
    raise DraftError('no column holds an ISO 8601 timestamp (2024-01-31, 2024-01-31 '
                     '13:00:00) in every row; pass --time COLUMN, with the times written '
                     "so, or --time-format with the format they are written in ('%d/%m/%Y')")
  named = [c for c in parsed if c.lower() in _TIME_NAMES]
  return (named or parsed)[0]


def _all_timestamps(values: pd.Series, time_format: Optional[str]) -> bool:
  for text in values.unique():
    try:
      parse_timestamp(text, time_format=time_format)
    except ValueError:
      return False
  return True


def _timestamps(values: pd.Series, column: str, time_format: Optional[str]) -> np.ndarray:
  seconds = {}
  for text in values.unique():
    try:
      seconds[text] = parse_timestamp(text, what=f"column '{column}'", time_format=time_format)
    except ValueError as error:
      order = None if time_format is not None else day_month_order(values.unique())
      if order is not None:
        error = (f"column '{column}' writes dates with the day and the month in an order "
                 f"{text!r} does not tell; {order[1]!r} (line {_line(values == order[1])}) "
                 f"does: pass --time-format '{order[0]}', or write the dates as ISO 8601")
      raise DraftError(f'line {_line(values == text)}: {error}') from None
  return values.map(seconds).to_numpy(dtype=np.int64)


def _series_key(table: pd.DataFrame, seconds: np.ndarray, text: Sequence[str],
                integers: Sequence[str], time: str, incomplete: Set[str],
                time_format: Optional[str]) -> Tuple[str, ...]:
  """The fewest columns that with the time identify every row, text columns (the usual
  ids) before integer ones; of those, the ones that make the fewest, longest series, then
  those with fewest `incomplete` columns (with empty values), then those named like ids
  (`_ID_WORDS`), then the first in the file.

  Raises:
    DraftError: no such columns, or a few rows (up to `_DUPLICATE_SHARE` of their
      series) repeat a series' time under the closest key: duplicates, which the
      message names, not a sign that the key needs another column.
  """
  times = pd.Series(seconds, index=table.index, name='__time__')

  def repeat(key: Tuple[str, ...]) -> pd.Series:  # rows that repeat an earlier one's time
    return pd.concat([table[list(key)], times], axis=1).duplicated()

  repeat_counts = {}
  for candidates in (list(text), list(text) + list(integers)):
    for size in range(0, min(_MAX_KEY_COLUMNS, len(candidates)) + 1):
      found = []
      for key in itertools.combinations(candidates, size):
        repeat_counts[key] = int(repeat(key).sum())
        if not repeat_counts[key]:
          found.append((len(table[list(key)].drop_duplicates()) if key else 1, key))
      if found:  # min() keeps the first of equals: the file's order
        return min(found, key=lambda item: (item[0], len(incomplete.intersection(item[1])),
                                            -_id_words(item[1])))[1]
    closest = min(repeat_counts, key=lambda key: (repeat_counts[key], len(key)))
    repeats = repeat(closest)
    series = _series_ids(table, closest)
    if repeats.sum() <= _DUPLICATE_SHARE * series.isin(series[repeats]).sum():
      raise DraftError(_duplicates_message(table, times, closest, time, repeats, time_format))
  earlier, line = _first_repeat(pd.concat([table[list(closest)], times], axis=1))
  at = f'e.g. lines {earlier} and {line}, {time} {table.loc[line, time]!r}'
  if closest:
    where = (f'{int(repeats.sum())} rows repeat the time of an earlier row with the same '
             f"{', '.join(closest)} ({at})")
  else:
    where = f'rows at the same time ({at}) differ in no such column'
  raise DraftError(f'no combination of up to {_MAX_KEY_COLUMNS} text or integer columns '
                   f'tells the series apart: {where}. Remove or aggregate repeated rows; if '
                   'they belong to other series, add a column that tells them apart, or '
                   'name the key columns with --series-key')


def _id_words(key: Tuple[str, ...]) -> int:
  """How many of `key`'s columns are named like ids (`store_id`, `SKU`, `site`)."""
  return sum(bool(_ID_WORDS & set(_name_words(column))) for column in key)


def _name_words(name: str) -> List[str]:
  """The words of a column's name, lowercased ('Store_ID' gives store, id)."""
  return re.split(r'[^a-z0-9]+', name.lower())


def _given_series_key(table: pd.DataFrame, seconds: np.ndarray, key: Tuple[str, ...],
                      time: str, target: str, empty: Dict[str, pd.Series],
                      time_format: Optional[str]) -> Tuple[str, ...]:
  """`key` as the user named it, checked: other columns than the time and target, no
  empty values, and with the time one row each."""
  for column in key:
    if key.count(column) > 1:
      problem = 'twice'
    elif column in (time, target):
      problem = f'that is the {"time" if column == time else "target"} column'
    else:
      continue
    raise DraftError(f"--series-key names column '{column}' {problem}; name the columns "
                     'that tell the series apart, each once')
  _check_key_filled(table, key, empty)
  times = pd.Series(seconds, index=table.index, name='__time__')
  repeats = pd.concat([table[list(key)], times], axis=1).duplicated()
  if repeats.any():
    raise DraftError(_duplicates_message(table, times, key, time, repeats, time_format))
  return key


def _check_key_filled(table: pd.DataFrame, key: Tuple[str, ...],
                      empty: Dict[str, pd.Series]) -> None:
  """Raises DraftError naming the first row where a key column is empty."""
  for column in key:
    if empty[column].any():
      count = int(empty[column].sum())
      raise DraftError(
          f"column '{column}' tells the series apart but is empty in {count} "
          f'row{"s" if count > 1 else ""} (first on line {_line(empty[column])}): fill '
          'them in, or remove those rows, or name the key columns with --series-key')


_HOUR_NAME = re.compile(r'(?i)hour|^(hr|he)$')
_MIN_HOURS = 12  # distinct values of a column taken for hours of the day


def _check_no_time_of_day_key(table: pd.DataFrame, seconds: np.ndarray, time: str,
                              key: Tuple[str, ...]) -> None:
  """Raises DraftError when the time column holds dates and a key column the times of
  day: split so, each day's rows would be taken for series of their own."""
  if (seconds % DAY).any():
    return
  for column in key:
    values = table[column]
    if values.str.fullmatch(_TIME_OF_DAY).all():
      raise DraftError(
          f"column '{column}' holds times of day ({values.iloc[0]!r} on line "
          f"{values.index[0]}) beside the dates of column '{time}': write each row's date "
          f"and time in one column ('{_format_time(int(seconds[0]))} {values.iloc[0]}') "
          'and run init again')
    if (_HOUR_NAME.search(column) and values.str.fullmatch(r'\d{1,2}').all()
        and (values.astype(int) <= 24).all() and values.nunique() >= _MIN_HOURS):
      first_hour = int(seconds[0]) + int(values.iloc[0]) * 3600
      raise DraftError(
          f"column '{column}' holds hours of the day ({values.iloc[0]!r} on line "
          f"{values.index[0]}) beside the dates of column '{time}': write each row's date "
          f"and hour in one column ('{_format_time(first_hour)}', an hour 24 as 00:00 of the "
          'next day) and run init again, or name the key columns with --series-key if it '
          'is no hour of the day')


def _check_target_varies(table: pd.DataFrame, numbers: pd.Series, target: str,
                         key: Tuple[str, ...], series: pd.Series) -> None:
  """Raises DraftError when the target never changes within a series: nothing to
  forecast, and a naive forecast no model can beat."""
  if (numbers.groupby(series.to_numpy()).nunique() > 1).any():
    return
  first = table.index[0]
  where = (' of the series ' + ', '.join(f'{c} {table.loc[first, c]!r}' for c in key)
           if key else '')
  raise DraftError(f"target column '{target}' never changes within a series (e.g. "
                   f'{table.loc[first, target]!r} in every row{where}): there is nothing to '
                   'forecast; check that --target names the column to forecast')


def _constant_series_finding(table: pd.DataFrame, numbers: pd.Series, target: str,
                             key: Tuple[str, ...], series: pd.Series) -> Optional[str]:
  """Names the series whose target never changes (when others do), or None."""
  distinct = numbers.groupby(series.to_numpy()).nunique()
  constant = distinct[distinct <= 1]
  if constant.empty:
    return None
  line, name = _first_row_of(table, key, series, constant.index[0])
  return (f"{_series_count(len(constant), 'has', 'have')} one '{target}' value in every "
          f'row, e.g. {name} (from line {line}), {table.loc[line, target]!r}: they are '
          'trained on and forecast like the others; leave them out of the data if they are '
          'not series to forecast')


def _ended_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                          steps: np.ndarray, frequency: Frequency,
                          horizon: int) -> Optional[str]:
  """Names the series whose rows end a horizon or more before the newest rows (the run's
  forecasts, which start after the newest rows, leave them out), or None."""
  last = pd.Series(steps).groupby(series.to_numpy()).max()
  ended = last[last <= last.max() - horizon]
  if ended.empty:
    return None
  line, name = _first_row_of(table, key, series, ended.index[0])
  return (f"{_series_count(len(ended), 'ends', 'end')} {horizon} or more steps before the "
          'newest rows '
          f'({_format_time(frequency.seconds_of(int(last.max())))}), e.g. {name} (from line '
          f'{line}) at {_format_time(frequency.seconds_of(int(ended.iloc[0])))}: the '
          "pipeline's forecasts start after the newest rows and list them as not forecast; "
          "tft-predict forecasts each series from its own last row")


def _season_beyond_history_finding(frequency: Frequency, encoder_steps: int, horizon: int,
                                   train_steps: int) -> Optional[str]:
  """A suggestion when the grid's season (a year of weeks) is longer than the history
  and the training period of the longest series has room for windows that long
  (`_longest_window`), or None."""
  longer = [p for p in frequency.seasons if p > encoder_steps and p >= horizon
            and p + horizon <= _longest_window(train_steps)]
  if not longer:
    return None
  period = longer[0]
  return (f'the grid\'s season of {period} steps is longer than the {encoder_steps}-step '
          'history, so neither the model nor the naive forecasts see the value a season '
          f'before; the series are long enough to try --encoder-steps {period} with model: '
          f'{{seasonal_lag: {period}}} (the target {period} steps before each forecast step '
          f'as an input, and seasonal_{period} among the naive forecasts)')


def _late_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                         steps: np.ndarray, frequency: Frequency,
                         eval_starts: pd.Series) -> Optional[str]:
  """Names the series whose rows start in their eval period (`eval_starts`: its first step
  per series), or None: the model trains on none of their rows (the series vocabulary
  comes from the training rows), so the run's forecasts leave them out until a later
  eval period starts after their first rows."""
  first = pd.Series(steps).groupby(series.to_numpy()).min()
  late = first[first >= eval_starts[first.index]]
  if late.empty:
    return None
  line, name = _first_row_of(table, key, series, late.index[0])
  return (f"{_series_count(len(late), 'starts', 'start')} in the eval period (from "
          f'{_format_time(frequency.seconds_of(int(eval_starts[late.index[0]])))}), e.g. '
          f'{name} (from line {line}): no model trains on them, so the run does not forecast '
          'them, until the eval period of a later run starts after their first rows '
          '(docs/pipeline.md: new series)')


def _first_row_of(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                  series_id: int) -> Tuple[int, str]:
  """The line of a series' first row and its key as a message names it ("shop 'A'")."""
  line = _line(series == series_id)
  return line, ', '.join(f'{c} {table.loc[line, c]!r}' for c in key)


def _series_count(count: int, singular: str, plural: str) -> str:
  """'1 series ends', '3 series end'."""
  return f'{count} series {singular if count == 1 else plural}'


def _short_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                          lengths: pd.Series, window: int) -> Optional[str]:
  """Names the series too short to hold one window of `window` steps, or None."""
  short = lengths[lengths < window]
  if short.empty:
    return None
  line, name = _first_row_of(table, key, series, short.index[0])
  name = name or 'the series'
  return (f'{len(short)} series cannot fill one window of history and horizon ({window} '
          f'steps), so no window of theirs is trained on or scored: e.g. {name} (from line '
          f'{line}), {int(short.iloc[0])} steps; give them more rows, or a shorter '
          '--encoder-steps')


def _first_repeat(identity: pd.DataFrame) -> Tuple[int, int]:
  """The lines of the first row that repeats an earlier row of `identity`, and of that
  earlier row: (earlier, repeat)."""
  line = _line(identity.duplicated())
  return _line((identity == identity.loc[line]).all(axis=1)), line


def _duplicates_message(table: pd.DataFrame, times: pd.Series, key: Tuple[str, ...],
                        time: str, repeats: pd.Series, time_format: Optional[str]) -> str:
  """Names the first row that repeats a series' time under `key`, and the row it repeats."""
  earlier, line = _first_repeat(pd.concat([table[list(key)], times], axis=1))
  series = ' of the series ' + ', '.join(f'{column} {table.loc[line, column]!r}'
                                         for column in key) if key else ''
  count = int(repeats.sum())
  return (f'lines {earlier} and {line} are two rows{series} at the same time '
          f'({time} {table.loc[line, time]!r}; {count} row{"s" if count > 1 else ""} in all '
          'repeat an earlier row\'s series and time): remove or aggregate the duplicates, or, '
          'if they are rows of different series, add a column that tells those apart'
          f'{_clock_change_hint(table.loc[repeats, time], times[repeats], time_format)}')


def _changing_clock(texts: pd.Series, seconds: np.ndarray, series: pd.Series,
                    frequency: Frequency, time_format: Optional[str]
                    ) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
  """(offsets, zones) when a series' times name two UTC offsets or more on a sub-daily
  grid (a local clock that changes, whose zone `time_zone` can name): the offsets named,
  in order, and the zones whose clock keeps each time's offset; else ((), ())."""
  if frequency.step_seconds is None or frequency.step_seconds >= DAY:
    return (), ()
  by_text = {text: utc_offset_seconds(text, time_format) for text in texts.unique()}
  offsets = texts.map(by_text)
  if offsets.groupby(series.to_numpy()).nunique().max() < 2:
    return (), ()
  named = offsets.notna().to_numpy()
  moments = pd.DataFrame({'seconds': np.asarray(seconds)[named],
                          'offset': offsets[named].astype(int).to_numpy()}).drop_duplicates()
  moments = moments.sort_values('seconds', ignore_index=True)
  # One clock: an offset per instant, changing a few times a year. Its first and last
  # instants and those either side of each change tell the zones apart.
  change = moments['offset'].ne(moments['offset'].shift())
  edges = moments[change | change.shift(-1, fill_value=True)]
  one_clock = not moments['seconds'].duplicated().any() and len(edges) <= _MAX_CLOCK_EDGES
  zones = (time_zones.matching(dict(zip(edges['seconds'], edges['offset'])))
           if one_clock else ())
  return tuple(format_utc_offset(s) for s in sorted(set(offsets.dropna().astype(int)))), zones


def _clock_change_hint(texts: pd.Series, seconds: pd.Series, time_format: Optional[str]) -> str:
  """A hint when every repeated time is a local hour that a clock change repeats (in the
  small hours, in March, April, October or November, without a UTC offset), else ''."""
  moments = pd.to_datetime(seconds.to_numpy(), unit='s')
  if (any(names_utc_offset(text, time_format) for text in texts)
      or (moments == moments.normalize()).all()
      or not ((moments.hour < 4) & moments.month.isin((3, 4, 10, 11))).all()):
    return ''
  return ('; if the clocks went back an hour then, write the times in UTC or with their UTC '
          "offset ('2023-10-29T02:00:00+01:00')")


def _series_ids(table: pd.DataFrame, key: Tuple[str, ...]) -> pd.Series:
  if not key:
    return pd.Series(0, index=table.index)
  return table.groupby(list(key), sort=False).ngroup()


def _frequency(seconds: np.ndarray, series: pd.Series, times: pd.Series,
               time_format: Optional[str]) -> Frequency:
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
    except ValueError:
      line = _line(pd.Series(seconds == moment, index=times.index))
      raise DraftError(f'line {line}: {times[line]!r} is not on the {frequency.value} grid '
                       f'({frequency.description}) that the rows most often follow; '
                       f'{off_grid_hint(frequency, int(moment), times[line], time_format)}'
                       ) from None
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
  apart = f'{step} s' if step < DAY else f'{step / DAY:g} days'
  raise DraftError(f'consecutive rows of a series are most often {apart} apart, which is '
                   'no regular grid the pipeline knows (minutes, hours, days, weeks, months, '
                   'quarters; not years)')


def _gaps(steps: np.ndarray, series: pd.Series) -> int:
  spans = pd.Series(steps).groupby(series.to_numpy()).agg(['min', 'max', 'count'])
  return int((spans['max'] - spans['min'] + 1 - spans['count']).sum())


def _other_column(name: str, values: pd.Series, numbers: Optional[pd.Series],
                  missing: pd.Series, series: pd.Series, target_missing: pd.Series,
                  seconds: np.ndarray) -> Tuple[Optional[ColumnDraft], Optional[str]]:
  """The draft of a column that is neither key, time nor target, or (None, why not)."""
  dtype = DType.REAL if numbers is not None else DType.CATEGORICAL
  compared = values.where(~missing, '') if dtype == DType.CATEGORICAL else numbers
  if compared.nunique(dropna=False) <= 1:
    return None, 'has one value in every row'
  if dtype == DType.CATEGORICAL and missing.any():
    count = int(missing.sum())
    return None, (f'is text with {count} empty value{"s" if count > 1 else ""} (first on '
                  f'line {_line(missing)}); fill them with a category such as "unknown" to '
                  'use it')
  per_series = compared.groupby(series.to_numpy()).nunique(dropna=False)
  if (per_series <= 1).all() and not missing.any():
    numbered = _series_numbering(name, numbers, series) if dtype == DType.REAL else None
    if numbered:
      return ColumnDraft(name, Role.STATIC, dtype, check=True, note=(
          f'CHECK: {numbered}, like an id: remove the line unless the number means something '
          '(a size, a rank)')), None
    return ColumnDraft(name, Role.STATIC, dtype, note='constant within each series'), None
  if dtype == DType.CATEGORICAL:
    return ColumnDraft(name, Role.KNOWN, dtype, check=True, note=(
        'CHECK: text that changes over time can only be known (observed inputs are '
        'real): remove the line if its future values are not known')), None
  allow_missing = bool(numbers.isna().any())
  filled_ahead = bool((target_missing & numbers.notna()).any())
  named_known = (any(hint in name.lower() for hint in _KNOWN_HINTS)
                 and not set(_OBSERVED_HINTS) & set(_name_words(name)))
  flag = _calendar_flag(numbers, series, seconds)
  known = filled_ahead or named_known or flag
  reason = ('filled where the target is not yet' if filled_ahead else
            'its name suggests a value known ahead' if named_known else
            'a 0/1 flag the same in every series at each time, like a holiday' if flag else
            'default: its future values are not known')
  present = numbers.notna().groupby(series.to_numpy()).any()
  sparse = (f'; filled in {int(present.sum())} of {len(present)} series only, the others '
            'read it as missing throughout' if not present.all() else '')
  return ColumnDraft(name, Role.KNOWN if known else Role.OBSERVED, dtype,
                     allow_missing=allow_missing,
                     note=f'CHECK known or observed ({reason}){sparse}', check=True), None


def _calendar_flag(numbers: pd.Series, series: pd.Series, seconds: np.ndarray) -> bool:
  """Whether a column is 0 or 1 in every row and, over two or more series, the same in
  all of them at each time: a holiday or an event, most likely marked ahead."""
  if series.nunique() < 2 or not numbers.isin((0, 1)).all():
    return False
  return bool((numbers.groupby(seconds).nunique() == 1).all())


def _series_numbering(name: str, numbers: pd.Series, series: pd.Series) -> Optional[str]:
  """How a static column gives each series its own whole number like an id, over
  N >= _MIN_NUMBERED_SERIES series (so that a few small counts such as floors are not
  taken for one): numbering them one by one (any run of N consecutive integers), or under
  a name that reads like an id (the ids of a subset of the series are not consecutive);
  else None."""
  values = numbers.groupby(series.to_numpy()).first()
  if (len(values) < _MIN_NUMBERED_SERIES or not _integral(values)
      or values.nunique() != len(values)):
    return None
  first, last = int(values.min()), int(values.max())
  if last - first + 1 == len(values):
    return f'numbers the series {first} to {last}, a different value in each'
  if _named_like_id(name):
    return f'a different whole number in each series ({first} to {last}), named like an id'
  return None


def _named_like_id(name: str) -> bool:
  """Whether a column's name reads like an id's: an id word as one of its words, or a
  word ending in one that names ids only ('timeseries', 'zipcode')."""
  return any(word in _ID_WORDS or word.endswith(_ID_SUFFIXES) for word in _name_words(name))


def _longest_window(train_steps: int) -> int:
  """The longest window a drafted spec gives a training period of `train_steps`: two
  thirds of it, so that it holds several windows."""
  return 2 * train_steps // 3


def _window(frequency: Frequency, longest: int, last_step: int, horizon: Optional[int],
            encoder_steps: Optional[int]
            ) -> Tuple[int, int, int, Optional[int], List[str]]:
  """(horizon, history, the eval period's first step, the test period's first step or
  None, notes on what was given up). The test period ends at `last_step` and holds
  `TEST_SHARE` of the longest series, the eval period before it `EVAL_SHARE`, each at
  least a horizon, from a step divisible by the horizon: the windowing component starts
  forecasts there, so each holds a whole window. Series too short to train before both
  get no test period; the history is shortened before that, so that the training period
  holds windows."""
  horizon = horizon or _default_window(frequency)[0]
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
      f'the series are too short to train before a held-out test period as well as an eval '
      f'period: none is drafted, so the run\'s figures are those of the eval windows, which '
      'also choose the epoch and flatter the model; longer series, or a shorter --horizon, '
      'give one']
  if encoder_steps is None:
    encoder_steps = drafted_history(frequency, horizon)
    if encoder_steps + horizon > _longest_window(train_steps):
      shortened = max(horizon, _longest_window(train_steps) - horizon)
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
    present = np.unique(steps[index.to_numpy()])
    present = present[present < _start_of(eval_starts, code)]
    # Runs of consecutive steps: each of length n holds n - window + 1 windows.
    runs = np.split(present, np.flatnonzero(np.diff(present) != 1) + 1)
    count += sum(max(0, len(run) - window + 1) for run in runs)
  return count


def _start_of(starts: Union[int, pd.Series], code: int) -> int:
  """A period's first step for series `code`: the one of every series, or its own."""
  return starts if isinstance(starts, (int, np.integer)) else int(starts[code])


def ends_apart(last: pd.Series, horizon: int) -> bool:
  """Whether most series (`last`: the last step of each) end a horizon or more before the
  newest rows: series of other periods (markets of other years), not a few that stopped;
  their eval and test periods are then each series' own last steps."""
  return bool((last <= last.max() - horizon).mean() > 0.5)


def _period_starts(last: pd.Series, steps: int, horizon: int, each_series: bool
                   ) -> pd.Series:
  """The first step of the period of the data's (or, `each_series`, each series') last
  `steps` steps, moved back to where a forecast starts, as the example generator places
  'last N steps' (of each series), for every series."""
  stride = forecast_starts.default_stride(EVAL_SPLIT, horizon)
  ends = last if each_series else pd.Series(int(last.max()), index=last.index)
  return ends.map(lambda end: forecast_starts.last_start_until(int(end) + 1 - steps, stride))


def _apart_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                   last: pd.Series, frequency: Frequency, horizon: int) -> str:
  """Says that the series end at different times, so that each has its own periods."""
  early = last[last <= last.max() - horizon]
  line, name = _first_row_of(table, key, series, early.index[0])
  return (f"{_series_count(len(early), 'ends', 'end')} {horizon} or more steps before the "
          f'newest rows ({_format_time(frequency.seconds_of(int(last.max())))}), e.g. {name} '
          f'(from line {line}) at {_format_time(frequency.seconds_of(int(early.iloc[0])))}: '
          "the series cover different periods, so the eval and test periods are each "
          "series' own last steps ('of each series' in the split), and each series is "
          'forecast from its own last row')


def small_data_batch_size(windows: int) -> Optional[int]:
  """The batch to draft when `windows` training windows are fewer than the default
  preset's batch (the Trainer needs one whole batch); None when the default fits."""
  return None if windows >= DEFAULT_BATCH_SIZE else largest_batch_within(windows)


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


def drafted_history(frequency: Frequency, horizon: int) -> int:
  """The history `init` drafts for `horizon` steps ahead: the grid's default
  (`_default_window`), or `_HISTORY_HORIZONS` horizons rounded up to whole seasons of the
  grid when that is longer (a 56-day history for 28 days ahead), at most
  `_MAX_DEFAULT_HISTORY` steps unless one horizon is longer."""
  default = _default_window(frequency)[1]
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
    for forecast in range(start, stop - horizon + 2, stride):
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
