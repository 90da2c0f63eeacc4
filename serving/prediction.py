"""Forecasts from a published model for a CSV of recent history and known future values.

The CSV has the training data's columns (the dataset spec saved with the model). For
each series, the rows up to its last target value are its history; the H rows after it
are its horizon, with the known columns filled and the target and observed columns
empty. The last E history rows and the H horizon rows, consecutive steps of the spec's
time grid, make one raw window per series for the model's `serving_default` signature
(format: `trainer_module.export`). More rows after the last target value are refused: a
target left empty at the end of the history would otherwise start the forecast a step
early. The horizon rows may come from a future file instead (`rows_with_horizon`), as
`tft-pipeline --future` takes them, and a model without known columns needs none. Bad
input raises `PredictionInputError`, or a subclass naming the failed check, with the
series, line or column and the fix.
"""

import csv
import dataclasses
import difflib
import io
import logging
import math
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from common.exit_codes import InputError
from schema.csv_values import (MISSING_MARKERS, check_header, clean_header, data_rows,
                               decode_utf8, real_value)
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.frequency import off_grid_hint
from schema.features import SERIES_VOCABULARY, model_features, series_key
from schema.time_split import format_time
from schema.window_layout import raw_value_count
from serving import published_models
from trainer_module import export

HORIZON_STEP = 'horizon_step'
REASON = 'reason'  # why a series is not forecast, beside its key columns
_BATCH_SIZE = 256
_SERIES_NAMED = 10  # series a message lists by name


class PredictionInputError(InputError):
  """The input CSV cannot make windows for the model. `summary`, of each kind of error:
  the kind in words, read after a count of series ('3 with too little history')."""
  summary = 'whose rows cannot make a window'


class MissingColumnsError(PredictionInputError):
  """Columns of the dataset spec are not in the CSV."""
  summary = 'with columns missing'


class TooLittleHistoryError(PredictionInputError):
  """A series has fewer than E rows with a target value."""
  summary = 'with too little history'


class MissingFutureRowsError(PredictionInputError):
  """A series has fewer than H rows after its last target value."""
  summary = 'without known values over the horizon'


class RowsAfterHorizonError(PredictionInputError):
  """A series has more than H rows after its last target value."""
  summary = 'with rows after the horizon'


class TimeGridError(PredictionInputError):
  """Timestamps off the spec's time grid, duplicated, or not consecutive."""
  summary = 'with gaps or times off the grid'


class UnknownSeriesError(PredictionInputError):
  """A series the model was not trained on."""
  summary = 'the model was not trained on'


def line_place(line: Optional[int], source: str = '') -> str:
  """'line 12', 'future.csv line 12' with the file named, '' without a line."""
  if line is None:
    return ''
  return f'{source} line {line}' if source else f'line {line}'


@dataclasses.dataclass(frozen=True)
class InputRow:
  """One input row: its line in the CSV read (None for a row of the pipeline's data or
  one the run adds), time and the declared columns' text ('' where missing). The rows
  of the user's CSV (`read_series`) always have a line; those of a future file read
  beside it, or of one of several files of history, also name the file (`source`), so
  that a message says which file the line is in."""
  line: Optional[int]
  seconds: int
  values: Dict[str, str]
  source: str = ''

  def place(self) -> str:
    """'line 12', 'future.csv line 12' for a row that names its file, '' without a line."""
    return line_place(self.line, self.source)

  def at(self) -> str:
    """', line 12' for the place in a message naming the series, '' without a line."""
    return '' if self.line is None else f', {self.place()}'

  def named(self) -> str:
    """' (line 12)' after a time in a message, '' without a line."""
    return '' if self.line is None else f' ({self.place()})'

  def line_and_time(self) -> str:
    """'line 12, 2024-01-31 13:00:00', or the time alone without a line."""
    return (f'{self.place()}, ' if self.line is not None else '') + format_time(self.seconds)

  def where(self) -> str:
    """'at line 12', or 'in the data' for a row without a line."""
    return 'in the data' if self.line is None else f'at {self.place()}'


SeriesRows = Dict[Tuple[str, ...], List[InputRow]]  # by key values, ordered by time
# A series left out: its key values and why.
NotForecast = Tuple[Tuple[str, ...], PredictionInputError]


@dataclasses.dataclass(frozen=True)
class SeriesWindow:
  """The raw serving window of one series.

  Attributes:
    key: the composite series key, as Transform builds it (the spec's name for data
      without key columns).
    key_values: the values of the key columns.
    horizon_times: the H forecast steps' times as the forecast rows give them: in the UTC
      notation and offset their rows are written in (`DatasetSpec.write_time`).
    forecast_start: the first forecast step, in epoch seconds.
    example: the raw window example.
    categories: (column, value, line, source) of each categorical value the window uses,
      at the first row that holds it (`InputRow`'s line and source).
  """
  key: str
  key_values: Tuple[str, ...]
  horizon_times: Tuple[str, ...]
  forecast_start: int
  example: tf.train.Example
  categories: Tuple[Tuple[str, str, Optional[int], str], ...] = ()


def read_series(path: str, spec: DatasetSpec,
                on_bad_series: Optional[Callable[[Tuple[str, ...], str], None]] = None,
                future: bool = False, named: bool = False) -> SeriesRows:
  """The CSV's rows grouped by the values of the key columns, ordered by time.

  Args:
    path: the CSV.
    spec: the model's dataset spec.
    on_bad_series: None: a cell that cannot be read (a value that is not a number, a
      non-finite target, a time that cannot be parsed) raises PredictionInputError.
      Else the series whose row holds it is left out, and this is called with its key
      values and why; an empty key, which names no series, still raises.
    future: it is a future file, read beside a CSV of history: its rows name it
      (`InputRow.source`), and the errors say what it should hold.
    named: its rows name it (`InputRow.source`): it is one of several files of history.
  """
  if not tf.io.gfile.exists(path) or tf.io.gfile.isdir(path):
    wanted = ('the future file: the known columns over the horizon' if future
              else 'the CSV of recent rows')
    raise PredictionInputError(f'{path} is not a file; pass {wanted}')
  with tf.io.gfile.GFile(path, 'rb') as f:
    reader = csv.reader(io.StringIO(decode_utf8(f.read(), path, PredictionInputError),
                                    newline=''))
  header = clean_header(next(reader, None) or [])
  if not header:
    raise PredictionInputError(f'{path} is empty; give a header with the columns '
                               f'{[c.name for c in spec.columns]}, then the rows')
  check_header(header, path, PredictionInputError)
  # A future file gives the horizon rows only: the other columns come from the history.
  needed = [column.name for column in spec.columns
            if not future or column.role in (Role.SERIES_KEY, Role.TIME, Role.KNOWN)]
  missing = [name for name in needed if name not in header]
  if not future and len(missing) > len(needed) / 2:  # most of them: not a misspelling
    raise MissingColumnsError(
        f"{path}: {len(missing)} of the {len(needed)} columns it needs of dataset spec "
        f"'{spec.name}', on which the model was trained, are missing: {missing}. Is this the "
        'model of another data set? Pass the serving directory of the one trained on these '
        f'columns ({header}), or a CSV with the columns {needed}')
  if missing:
    near = {name: difflib.get_close_matches(name, header, n=1) for name in missing}
    written = ''.join(f'; {close[0]!r} may be {name!r}' for name, close in near.items()
                      if close)
    if future:
      fix = (f'a future file needs the key, time and known columns {needed} of dataset spec '
             f"'{spec.name}', on which the model was trained")
    else:
      fix = (f"the model was trained on dataset spec '{spec.name}', whose columns {needed} "
             'the CSV needs (leave the target and observed columns empty in the horizon rows)')
    raise MissingColumnsError(f'{path}: columns {missing} are missing{written}; {fix}')
  positions = {column.name: header.index(column.name) for column in spec.columns
               if column.name in header}
  series: Dict[Tuple[str, ...], List[InputRow]] = {}
  unreadable: Dict[Tuple[str, ...], str] = {}
  for line, fields in data_rows(reader, header, path, PredictionInputError):
    values = {column.name: fields[positions[column.name]].strip()
              if column.name in positions else '' for column in spec.columns}
    key = tuple(values[name] for name in spec.series_key_columns)
    try:
      row = _read_row(line, values, spec, f'{path}, line {line}')
      if future:
        _check_future_time(row, spec, f'{path}, line {line}')
      if future or named:
        row = dataclasses.replace(row, source=path)
    except PredictionInputError as error:
      if on_bad_series is None or not all(key):
        raise
      unreadable.setdefault(key, str(error))
      continue
    series.setdefault(key, []).append(row)
  for key, error in unreadable.items():
    series.pop(key, None)
    on_bad_series(key, f"series '{series_key(key, spec)}': {error}")
  if not series and not unreadable:
    wanted = (f'its {spec.horizon} horizon rows, the known columns filled' if future else
              f'its last {spec.encoder_steps} rows and {spec.horizon} horizon rows')
    raise PredictionInputError(f'{path} has no rows; give each series {wanted}')
  for rows in series.values():
    rows.sort(key=lambda row: row.seconds)
  return series


def read_inputs(paths: Sequence[str], spec: DatasetSpec,
                on_bad_series: Optional[Callable[[Tuple[str, ...], str], None]] = None
                ) -> SeriesRows:
  """The rows of the CSV files `paths` (`read_series`), a series' rows gathered from every
  file and ordered by time; with several files, each row names its file."""
  if len(paths) == 1:
    return read_series(paths[0], spec, on_bad_series)
  series: SeriesRows = {}
  for path in paths:
    for key_values, rows in read_series(path, spec, on_bad_series, named=True).items():
      series.setdefault(key_values, []).extend(rows)
  for rows in series.values():
    rows.sort(key=lambda row: row.seconds)
  return series


def _read_row(line: int, values: Dict[str, str], spec: DatasetSpec, where: str) -> InputRow:
  """One row with its values checked (`_checked_value`) and its time parsed.

  Raises:
    PredictionInputError: a value or the time cannot be read.
  """
  for column in spec.columns:
    values[column.name] = _checked_value(values[column.name], column, where)
  try:
    seconds = spec.read_time(values[spec.time_column],
                             what=f"{where}, column '{spec.time_column}'")
  except ValueError as error:
    raise PredictionInputError(str(error)) from None
  return InputRow(line, seconds, values)


def _check_future_time(row: InputRow, spec: DatasetSpec, where: str) -> None:
  """Raises TimeGridError when a future row's time is off the model's grid: it would match
  none of the horizon's steps, which would then be reported missing."""
  try:
    spec.frequency.step_of(row.seconds)
  except ValueError:
    text = row.values[spec.time_column]
    raise TimeGridError(
        f"{where}: column '{spec.time_column}' holds {text!r}, which is not on the model's "
        f'{spec.frequency.value} time grid ({spec.frequency.description}); the future rows '
        "must be at the grid's steps after each series' last row: "
        f'{off_grid_hint(spec.frequency, row.seconds, text, spec.time_format)}') from None


def _checked_value(text: str, column: Column, where: str) -> str:
  """The value of `column` as the window reads it: '' for a missing real value (a missing
  marker, or a non-finite number where the spec allows missing values).

  Raises:
    PredictionInputError: a real value that is not a number, a non-finite number where
      the column may not be missing (the target, for one), or an empty key value.
  """
  if column.role == Role.SERIES_KEY and not text:
    raise PredictionInputError(f"{where}: key column '{column.name}' is empty; every row "
                               'needs the key of its series')
  if column.dtype != DType.REAL:
    return text
  try:
    number = real_value(text, f"{where}: column '{column.name}'")
  except ValueError as error:
    raise PredictionInputError(str(error)) from None
  if number is not None:
    return text
  if text.lower() not in MISSING_MARKERS and not column.allow_missing:
    what = ("is beyond float32's range (3.4e38), which the model computes in"
            if math.isfinite(float(text)) else 'is not a finite number')
    raise PredictionInputError(f"{where}: column '{column.name}' holds {text!r}, which {what}; "
                               'the model reads finite values only: fix the value')
  return ''


def _grid_steps(rows: Sequence[InputRow], spec: DatasetSpec, key: str) -> np.ndarray:
  """Grid step of every row; raises TimeGridError for off-grid or duplicate times."""
  steps = []
  for row in rows:
    try:
      steps.append(spec.frequency.step_of(row.seconds))
    except ValueError:
      raise TimeGridError(
          f"series '{key}'{row.at()}: {row.values[spec.time_column]!r} is not on the "
          f"model's {spec.frequency.value} time grid; use the training data's time steps"
      ) from None
  steps = np.array(steps)
  duplicated = np.nonzero(np.diff(steps) == 0)[0]
  if duplicated.size:
    first, second = rows[duplicated[0]], rows[duplicated[0] + 1]
    raise TimeGridError(f"series '{key}' has two rows at {format_time(second.seconds)}"
                        f'{_two_places(first, second)}; keep one')
  return steps


def _two_places(first: InputRow, second: InputRow) -> str:
  """' (lines 12 and 13)', ' (a.csv line 12 and b.csv line 3)' for rows of two files,
  the one line of a row the run added, or ''."""
  if first.line is None or second.line is None:
    return next((f' ({row.place()})' for row in (first, second) if row.line is not None), '')
  if first.source != second.source:
    return f' ({first.place()} and {second.place()})'
  return f' ({first.source + " " if first.source else ""}lines {first.line} and {second.line})'


def _window_slice(rows: List[InputRow], steps: np.ndarray, spec: DatasetSpec,
                  key: str) -> slice:
  """Where the window's rows are: the last E history rows and the H horizon rows after.

  Raises:
    PredictionInputError: more than H rows after the last target value (first: an empty
      target at the end of the history is the likelier cause of too little history),
      too few history rows (naming an empty target or a gap among them first), fewer
      than H rows after the last target value, or a horizon row with observed values.
  """
  target = spec.target_column
  observed = [i for i, row in enumerate(rows) if row.values[target]]
  last = observed[-1] if observed else -1
  if observed and len(rows) - last - 1 > spec.horizon:
    _check_horizon_rows(rows[last + 1:last + 2], spec, key)  # an observed value, if any
    raise _rows_after_horizon_error(rows, last, spec, key)
  if len(observed) < spec.encoder_steps:
    if observed:
      _check_history_targets(rows[:last + 1], spec, key)
      _check_consecutive(rows[:last + 1], steps[:last + 1], spec, key)
    raise TooLittleHistoryError(
        f"series '{key}' has {len(observed)} rows with a '{target}' value; the model "
        f'needs the last {spec.encoder_steps} (its history length E): add earlier rows')
  start = last + 1 - spec.encoder_steps
  _check_history_targets(rows[start:last + 1], spec, key)
  horizon_rows = len(rows) - last - 1
  if horizon_rows < spec.horizon:
    known = [c.name for c in spec.columns_with(Role.KNOWN)]
    raise MissingFutureRowsError(
        f"series '{key}' has {horizon_rows} rows after its last '{target}' value at "
        f'{format_time(rows[last].seconds)}; the model forecasts {spec.horizon} steps: '
        + (f'add the missing rows with the known columns {known} filled and {target!r} '
           'empty, or give them in a future file (tft-predict --future FILE)' if known else
           'leave out the rows after it: the model has no known columns, so the steps are '
           'added'))
  _check_horizon_rows(rows[last + 1:last + 1 + spec.horizon], spec, key)
  return slice(start, last + 1 + spec.horizon)


def _rows_after_horizon_error(rows: Sequence[InputRow], last: int, spec: DatasetSpec,
                              key: str) -> RowsAfterHorizonError:
  target, horizon = spec.target_column, spec.horizon
  after, first, end = len(rows) - last - 1, rows[last + 1], rows[last + horizon]
  return RowsAfterHorizonError(
      f"series '{key}' has {after} rows after its last {target!r} value "
      f'({rows[last].line_and_time()}), {after - horizon} more than the {horizon} horizon '
      f'rows the model forecasts: if {target!r} is missing on {first.line_and_time()}, a '
      f'history row, fill it; if the rows after {end.line_and_time()} are beyond the '
      'horizon, leave them out')


def _check_horizon_rows(horizon: Sequence[InputRow], spec: DatasetSpec, key: str) -> None:
  """Raises PredictionInputError for a horizon row with an observed value: a history row
  whose target is missing would otherwise start the forecast a step early."""
  observed = [c.name for c in spec.columns_with(Role.OBSERVED)]
  for row in horizon:
    filled = [name for name in observed if row.values[name]]
    if filled:
      raise PredictionInputError(
          f"series '{key}'{row.at()}: '{spec.target_column}' has no value at "
          f'{format_time(row.seconds)} but the observed columns {filled} are not, so it is '
          'neither a history row (they need the target) nor a horizon row (they leave the '
          'observed columns empty): fill the target or empty those columns')


def _check_history_targets(history: Sequence[InputRow], spec: DatasetSpec, key: str) -> None:
  """Raises PredictionInputError for the last row of `history` (rows up to the last target
  value) without a target: history rows need it, and only the horizon rows after the
  last value leave it empty."""
  target = spec.target_column
  empty = [row for row in history if not row.values[target]]
  if empty:
    row, last = empty[-1], history[-1]
    raise PredictionInputError(
        f"series '{key}'{row.at()}: '{target}' has no value at "
        f'{format_time(row.seconds)}, before the last {target!r} value '
        f'({last.line_and_time()}); history rows need the target and the horizon rows after '
        'the last value leave it empty: fill this value, or empty that last one if its row '
        'is a horizon row')


def _check_consecutive(rows: Sequence[InputRow], steps: np.ndarray, spec: DatasetSpec,
                       key: str) -> None:
  gaps = np.nonzero(np.diff(steps) != 1)[0]
  if gaps.size:
    before, after = rows[gaps[0]], rows[gaps[0] + 1]
    raise TimeGridError(
        f"series '{key}': rows at {format_time(before.seconds)}{before.named()} and "
        f'{format_time(after.seconds)}{after.named()} are not consecutive '
        f'{spec.frequency.value} steps; the last {spec.encoder_steps} history rows and the '
        f'{spec.horizon} horizon rows must have no gaps: add the missing rows, with empty '
        f"values where the spec allows them; the target '{spec.target_column}' needs a value "
        'in every history row (0 for a step with nothing sold or measured, if 0 is what it '
        'was)')


def _feature(column: Column, rows: Sequence[InputRow], spec: DatasetSpec,
             key: str) -> tf.train.Feature:
  """The raw window feature of `column` over `rows`."""
  if column.role == Role.TIME:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[r.seconds for r in rows]))
  texts = [row.values[column.name] for row in rows]
  for row, text in zip(rows, texts):
    if not text and not column.allow_missing:
      raise PredictionInputError(
          f"series '{key}'{row.at()}: column '{column.name}' has no value at "
          f'{format_time(row.seconds)}; the model needs it ({column.role.value} column '
          f'without missing values in spec {spec.name!r}): fill the value')
  if column.dtype == DType.CATEGORICAL:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[t.encode() for t in texts]))
  # Real values were checked as the CSV was read (`read_series`).
  values = [float(text) if text else float('nan') for text in texts]
  return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def with_horizon(rows: List[InputRow], future: List[InputRow], spec: DatasetSpec,
                 future_file: str = '') -> List[InputRow]:
  """The series' rows and its H steps after the last one: the rows at those steps of the
  future file (`future_file`, '' if none was given), or, where no known column is
  declared, rows holding only the key and the time, written as the last row's time is
  (`DatasetSpec.write_time`), whatever clock the calendar features read.

  Raises:
    MissingFutureRowsError: known columns are declared and the future rows
      do not cover the H steps.
  """
  if spec.columns_with(Role.KNOWN):
    return rows + future_rows_after(rows[-1].seconds, future, spec, future_file)
  key_values = {name: rows[-1].values[name] for name in spec.series_key_columns}
  last_time = rows[-1].values[spec.time_column]
  return rows + [InputRow(None, seconds, {
      **{c.name: '' for c in spec.columns}, **key_values,
      spec.time_column: spec.write_time(seconds, last_time)})
                 for seconds in _horizon_times(rows[-1].seconds, spec)]


def future_rows_after(last: int, future: Sequence[InputRow], spec: DatasetSpec,
                      future_file: str = '') -> List[InputRow]:
  """The rows of `future` (a series' rows of the future file `future_file`, '' if none
  was given) at the H steps after epoch seconds `last`, the series' last row.

  Raises:
    MissingFutureRowsError: they do not cover the H steps.
  """
  by_time = {row.seconds: row for row in future}
  steps = _horizon_times(last, spec)
  absent = [seconds for seconds in steps if seconds not in by_time]
  if absent:
    known = [c.name for c in spec.columns_with(Role.KNOWN)]
    fix = (f'add its rows at those steps to the future file {future_file}' if future_file
           else 'give them in a future file (--future FILE of tft-pipeline or tft-predict: '
           'the key, time and known columns, a row per series and step)')
    raise MissingFutureRowsError(
        f'the known columns {known} have no values for {len(absent)} of the {spec.horizon} '
        f'steps after the last row ({format_time(last)}), from {format_time(absent[0])}: '
        f'{fix}')
  return [by_time[seconds] for seconds in steps]


def _horizon_times(last: int, spec: DatasetSpec) -> List[int]:
  """Epoch seconds of the H grid steps after epoch seconds `last`."""
  step = spec.frequency.step_of(last)
  return [spec.frequency.seconds_of(step + offset) for offset in range(1, spec.horizon + 1)]


def steps_behind(last: int, newest: int, spec: DatasetSpec) -> int:
  """Grid steps from epoch seconds `last` (a series' last row) to `newest` (the newest
  row of all): a series a horizon or more behind (`ends_early`) has its whole forecast in
  the past of the others'."""
  return spec.frequency.period_of(newest) - spec.frequency.period_of(last)


def ends_early(last: int, newest: int, spec: DatasetSpec) -> bool:
  """Whether a series whose rows end at `last` is a horizon or more behind `newest`."""
  return steps_behind(last, newest, spec) >= spec.horizon


def short_future_series(future: SeriesRows, spec: DatasetSpec) -> List[str]:
  """A sentence per series of a future file with fewer rows than the horizon has steps:
  its forecast cannot have the known values of every step."""
  if not spec.columns_with(Role.KNOWN):
    return []
  return [f"series '{series_key(key_values, spec)}' has {len(rows)} rows in the future file "
          f'(from {rows[0].place()}), fewer than the {spec.horizon} steps of the horizon'
          for key_values, rows in future.items() if len(rows) < spec.horizon]


def future_file_unused(spec: DatasetSpec, option: str = '--future') -> Optional[str]:
  """A note when a future file has nothing to give: the spec declares no known column;
  `option` is how the user gave the file."""
  if spec.columns_with(Role.KNOWN):
    return None
  return ('the future file is not needed: the spec declares no known column, so its values '
          "are not read (the H steps are added after each series' history; its series are "
          f'only checked); leave {option} out')


def rows_with_horizon(key_values: Tuple[str, ...], rows: List[InputRow],
                      future: Optional[List[InputRow]], spec: DatasetSpec,
                      future_file: str = '') -> List[InputRow]:
  """A series' rows for its window. With `future` (its rows of the future file
  `future_file`, perhaps none), its rows are the history and `with_horizon` adds the H
  steps after them. Without, the rows hold the horizon too, unless the spec declares no
  known columns and they end with a target value: then `with_horizon` adds the steps.

  Raises:
    PredictionInputError: a future file is given, but the history ends without a target
      value, or a future row of the horizon holds a target or observed value.
    MissingFutureRowsError: the future file does not cover the H steps.
  """
  key = series_key(key_values, spec)
  target = spec.target_column
  ends_with_target = bool(rows[-1].values[target])
  if future is not None and not ends_with_target:
    raise PredictionInputError(
        f"series '{key}' ends with a row without a '{target}' value "
        f'({rows[-1].line_and_time()}), and a future file gives the horizon: if it is a '
        'history row, fill its target; if a horizon row, leave it out of the history (or '
        'give the horizon there, without the future file)')
  if future is None and not (ends_with_target and not spec.columns_with(Role.KNOWN)):
    return rows
  try:
    extended = with_horizon(rows, future or [], spec, future_file)
  except MissingFutureRowsError as error:
    raise MissingFutureRowsError(f"series '{key}': {error}") from None
  filled_in = [c.name for c in spec.columns if c.role in (Role.TARGET, Role.OBSERVED)]
  for row in extended[len(rows):]:
    filled = [name for name in filled_in if row.values[name]]
    if filled:
      raise PredictionInputError(
          f"series '{key}'{row.at()}: the future row at {format_time(row.seconds)} holds "
          f'values of {filled}, which a horizon row leaves empty (they are not known ahead): '
          'empty them, or move the row to the history')
  return extended


class NoDataRowsError(PredictionInputError):
  """The series has rows in the future file only."""
  summary = 'in the future file only'


def future_only_series(series: SeriesRows, future: SeriesRows,
                       spec: DatasetSpec) -> List[NotForecast]:
  """The series of the future file that have no rows in the data, each with the reason."""
  return [(key_values, NoDataRowsError(
      f"series '{series_key(key_values, spec)}' has rows in the future file but "
      'none in the data: add its rows to the data, or remove it from the future file'))
          for key_values in sorted(set(future) - set(series))]


def build_window(key_values: Tuple[str, ...], rows: List[InputRow],
                 spec: DatasetSpec) -> SeriesWindow:
  """The raw serving window of one series from its rows, ordered by time."""
  key = series_key(key_values, spec)
  _check_static_columns(rows, spec, key)
  steps = _grid_steps(rows, spec, key)
  window = _window_slice(rows, steps, spec, key)
  window_rows = rows[window]
  _check_consecutive(window_rows, steps[window], spec, key)
  last_history = spec.encoder_steps - 1
  features, categories = {}, {}
  for column in spec.columns:
    # Static values are read at the last history step, as the windowing component does.
    if column.role in (Role.SERIES_KEY, Role.STATIC):
      used = window_rows[last_history:last_history + 1]
    else:
      used = window_rows[:raw_value_count(column, spec)]
    features[column.name] = _feature(column, used, spec, key)
    if column.dtype == DType.CATEGORICAL:
      for row in used:
        categories.setdefault((column.name, row.values[column.name]), (row.line, row.source))
  return SeriesWindow(
      key=key, key_values=key_values,
      horizon_times=tuple(spec.write_time(row.seconds, row.values[spec.time_column])
                          for row in window_rows[spec.encoder_steps:]),
      forecast_start=window_rows[spec.encoder_steps].seconds,
      example=tf.train.Example(features=tf.train.Features(feature=features)),
      categories=tuple((name, value, *row) for (name, value), row in categories.items()))


def _check_static_columns(rows: Sequence[InputRow], spec: DatasetSpec, key: str) -> None:
  """Raises PredictionInputError for a static column whose value changes within the
  series' rows, as the windowing refuses it in training; rows that leave it empty (the
  horizon rows may) are not compared."""
  for column in spec.columns_with(Role.STATIC):
    given = [row for row in rows if row.values[column.name]]
    other = next((row for row in given
                  if _value_of(row, column) != _value_of(given[0], column)), None)
    if other is not None:
      raise PredictionInputError(
          f"series '{key}': static column '{column.name}' is "
          f'{given[0].values[column.name]!r} {given[0].where()} but '
          f'{other.values[column.name]!r} {other.where()}; a static column holds one '
          'value per series, as in training: make it constant, or declare it known (or '
          'observed) and retrain if it changes over time')


def _value_of(row: InputRow, column: Column):
  """The row's value of `column`: a number for a real column ('50' and '50.0' are one)."""
  text = row.values[column.name]
  return text if column.dtype == DType.CATEGORICAL else float(text)


def unseen_categories(windows: Sequence[SeriesWindow], model_dir: str,
                      spec: DatasetSpec, input_name: str = '') -> List[str]:
  """A note per categorical value the model was not trained on, naming a series and the
  row that holds it (a line of `input_name`, the file read, or of a future file): the model
  forecasts with its out-of-vocabulary embedding there, which a misspelt value would
  otherwise change silently."""
  # The series key is checked on its own (`predict`'s allow_unknown_series).
  names = {feature.vocabulary for feature in model_features(spec)
           if feature.vocabulary and feature.vocabulary != SERIES_VOCABULARY}
  holders: Dict[Tuple[str, str], List[Tuple[str, str]]] = {}
  for window in windows:
    for name, value, line, source in window.categories:
      if name in names:
        holders.setdefault((name, value), []).append(
            (window.key, line_place(line, source or input_name)))
  known = {name: published_models.vocabulary(model_dir, name) for name in sorted(names)}
  notes = []
  for (name, value), series in holders.items():
    if value and value not in known[name]:
      first_key, place = series[0]
      line = f', {place}' if place else ''
      more = f'; {len(series) - 1} more series' if len(series) > 1 else ''
      notes.append(
          f"column '{name}' holds {value!r}, a value the model was not trained on (series "
          f"'{first_key}'{line}{more}); the model forecasts it with its "
          "out-of-vocabulary embedding: check the value, or retrain on data that has it")
  return notes


class StaleSeriesError(PredictionInputError):
  """The series' rows end a horizon or more before the newest rows of the data."""
  summary = 'that ended a horizon or more before the others'


def stale_series_error(key: str, rows: Sequence[InputRow], newest: int,
                       spec: DatasetSpec, source: str = 'the data'
                       ) -> Optional[StaleSeriesError]:
  """The error for a series whose whole forecast would lie before `newest` (epoch
  seconds of the newest row of `source`), or None."""
  if not ends_early(rows[-1].seconds, newest, spec):
    return None
  behind = steps_behind(rows[-1].seconds, newest, spec)
  last, now = format_time(rows[-1].seconds), format_time(newest)
  return StaleSeriesError(
      f"series '{key}' ends at {last}, {behind} steps before the newest rows ({now}), so its "
      f'{spec.horizon}-step forecast would lie wholly in the past: give its rows up to {now}, '
      f'or leave it out of {source}')


def early_forecasts(windows: Sequence[SeriesWindow], spec: DatasetSpec) -> Optional[str]:
  """A note naming the series whose forecast ends before the newest window's begins: their
  rows end a horizon or more before the others', so they are forecast into the others'
  past (the pipeline's run leaves such series out); None if there are none."""
  if not windows:
    return None
  newest = max(window.forecast_start for window in windows)
  early = [(window.key, window.forecast_start) for window in windows
           if ends_early(window.forecast_start, newest, spec)]
  if not early:
    return None
  key, start = early[0]
  behind = steps_behind(start, newest, spec)
  if len(early) == 1:
    return (f"series '{key}' is forecast from {format_time(start)}, {behind} steps before the "
            f'newest forecasts begin ({format_time(newest)}): its rows end early, so the whole '
            'forecast lies in the past of the others; give its recent rows for a forecast '
            'from now, or ignore this for a backtest')
  return (f'{len(early)} series are forecast a horizon or more before the newest forecasts '
          f"begin ({format_time(newest)}), e.g. '{key}' from {format_time(start)}, {behind} "
          'steps before: their rows end early, so their whole forecasts lie in the past of '
          'the others; give their recent rows for a forecast from now, or ignore this for a '
          'backtest')


def _series_list(keys: Sequence[str]) -> str:
  """The series a message names: `series ['a', 'b'] are`, or beyond ten
  `12 series (['a', ..., 'j'] ...) are`."""
  if len(keys) <= _SERIES_NAMED:
    return f'series {list(keys)} {"is" if len(keys) == 1 else "are"}'
  return f'{len(keys)} series ({list(keys[:_SERIES_NAMED])} ...) are'


def _unknown_series_error(unknown: Sequence[str], known: int,
                          model_dir: str) -> UnknownSeriesError:
  return UnknownSeriesError(
      f'{_series_list(unknown)} not among the '
      f'{known} series the model in {model_dir} was trained on; check the key columns, or '
      "forecast them with the model's out-of-vocabulary series embedding "
      '(--allow-unknown-series), or retrain with their history')


def predict(model_dir: str, csv_paths: Union[str, Sequence[str]],
            allow_unknown_series: bool = False,
            skip_bad_series: bool = False,
            warn: Callable[[str], None] = logging.warning,
            not_forecast: Optional[List[Dict[str, str]]] = None,
            future_path: Optional[str] = None) -> List[Dict[str, object]]:
  """Forecast rows, one per series and horizon step, in the CSV's series order.

  Args:
    model_dir: a SavedModel directory, or a serving directory (its newest version).
    csv_paths: a CSV of recent history and known future values, with the spec's columns;
      with `future_path`, the history alone (`rows_with_horizon`). Or several such files
      (a series' rows may be spread over them, as over span files).
    future_path: a future file: the known columns over the H steps after each series'
      last row of `csv_paths`, as `tft-pipeline --future` reads it. Its series without
      rows in `csv_paths` are named through `warn`, not forecast. A series that ends a
      horizon or more before the others and has no future rows after its end is not
      forecast for that reason (`stale_series_error`).
    allow_unknown_series: forecast series the model was not trained on instead of
      raising UnknownSeriesError.
    skip_bad_series: forecast the other series when a series' rows cannot be read or
      cannot make its window (a value that is not a number, too little history, too few
      horizon rows, a gap, a static value that changes, an unknown series), and name
      each series left out through `warn`; a file that cannot be read, or a row without
      its key, stops the run all the same.
    warn: called with each categorical value the model was not trained on, and with
      each series left out.
    not_forecast: with `skip_bad_series`, appended with a row for each series left
      out: its key columns and `REASON`.

  Returns:
    Dicts with the key columns, the time column (UTC), `HORIZON_STEP` (1 to H) and one
    value per quantile ('p10', 'p50', 'p90'), ordered by quantile.

  Raises:
    published_models.ModelNotFoundError: no model at `model_dir`.
    FileNotFoundError: the model has no dataset spec (exported before specs were saved).
    PredictionInputError: the CSV cannot make the windows (with `skip_bad_series`: those
      of any series); the subclass says why.
  """
  model_dir = published_models.resolve_model_dir(model_dir)
  paths = [csv_paths] if isinstance(csv_paths, str) else list(csv_paths)
  input_name = paths[0] if len(paths) == 1 else f'the {len(paths)} input files'
  spec = export.read_dataset_spec(model_dir)

  gone = set()  # the key values of the series left out, each named once

  def left_out(key_values: Tuple[str, ...], why: str, warned: bool = False) -> None:
    if key_values in gone:
      return
    gone.add(key_values)
    if not warned:
      warn(f'{input_name}: not forecast: {why}')
    if not_forecast is not None:
      not_forecast.append({**dict(zip(spec.series_key_columns, key_values)), REASON: why})

  on_bad_series = left_out if skip_bad_series else None
  unused = future_path and future_file_unused(spec)
  if unused:
    warn(f'{future_path}: {unused}')
  series = read_inputs(paths, spec, on_bad_series)
  future = read_series(future_path, spec, on_bad_series, future=True) if future_path else None
  vocabulary = published_models.series_vocabulary(model_dir)
  keys = {key_values: series_key(key_values, spec) for key_values in series}
  unknown = [key_values for key_values, key in keys.items() if key not in vocabulary]
  unknown_keys = [keys[key_values] for key_values in unknown]
  if unknown and allow_unknown_series:
    warn(f'{input_name}: {_series_list(unknown_keys)} not among the {len(vocabulary)} series '
         "the model was trained on: forecast with the model's out-of-vocabulary series "
         'embedding (as one series never seen), from the rows given')
  elif unknown:  # first, as the run's forecasts: no other reason matters
    error = _unknown_series_error(unknown_keys, len(vocabulary), model_dir)
    if not skip_bad_series:
      raise type(error)(f'{input_name}: {error}')
    warn(f'{input_name}: not forecast: {error}')
    for key_values, key in zip(unknown, unknown_keys):
      left_out(key_values, f"series '{key}' is not among the {len(vocabulary)} series the "
               'model was trained on', warned=True)
  windows = []
  newest = max((rows[-1].seconds for rows in series.values()), default=0)
  for key_values, rows in series.items():
    if key_values in gone:  # its future rows could not be read, or it is unknown
      continue
    try:
      try:
        rows = rows_with_horizon(key_values, rows, None if future is None else future.get(
            key_values, []), spec, future_path or '')
      except MissingFutureRowsError as missing:  # after a stale series' end: it is stale
        stale = stale_series_error(keys[key_values], rows, newest, spec, 'the input')
        raise (stale or missing) from None
      windows.append(build_window(key_values, rows, spec))
    except PredictionInputError as error:
      if not skip_bad_series:
        raise type(error)(f'{input_name}: {error}') from None
      left_out(key_values, str(error))  # it names the series
  future_only = sorted(set(future or {}) - set(series))
  if future_only:
    warn(f'{future_path}: {_series_list([series_key(k, spec) for k in future_only])} in the '
         f'future file only, not in {input_name}: not forecast')
  if not windows:
    raise PredictionInputError(f'{input_name}: no series could be forecast; the warnings '
                               'above say why for each')
  early = early_forecasts(windows, spec)
  if early:
    warn(f'{input_name}: {early}')
  for note in unseen_categories(windows, model_dir, spec, input_name=input_name):
    warn(note)
  return forecast_rows(model_dir, windows, spec)


def forecast_rows(model_dir: str, windows: Sequence[SeriesWindow],
                  spec: DatasetSpec) -> List[Dict[str, object]]:
  """The model's forecast rows for `windows` (see `predict`), in their order."""
  serve = tf.saved_model.load(model_dir).signatures[export.SERVING_SIGNATURE]
  forecasts: Dict[str, List[np.ndarray]] = {}
  for start in range(0, len(windows), _BATCH_SIZE):
    batch = windows[start:start + _BATCH_SIZE]
    outputs = serve(examples=tf.constant([w.example.SerializeToString() for w in batch]))
    for name, values in outputs.items():
      forecasts.setdefault(name, []).append(values.numpy())
  if not windows:
    return []
  columns = _columns(spec, forecasts)
  quantiles = [np.concatenate(forecasts[name]) for name in columns[-len(forecasts):]]
  return [dict(zip(columns, [*window.key_values, time, step + 1,
                             *(float(values[index, step]) for values in quantiles)]))
          for index, window in enumerate(windows)
          for step, time in enumerate(window.horizon_times)]


def forecast_columns(model_dir: str, spec: DatasetSpec) -> List[str]:
  """The columns of `forecast_rows`' rows, without forecasting (for a file with none)."""
  serve = tf.saved_model.load(model_dir).signatures[export.SERVING_SIGNATURE]
  return _columns(spec, serve.structured_outputs)


def _columns(spec: DatasetSpec, quantile_keys: Iterable[str]) -> List[str]:
  """A forecast row's columns: the series key, the time, the step, then the quantiles."""
  return [*spec.series_key_columns, spec.time_column, HORIZON_STEP,
          *sorted(quantile_keys, key=export.key_quantile)]


def write_forecasts(rows: Sequence[Dict[str, object]], stream,
                    columns: Optional[Sequence[str]] = None) -> None:
  """Writes forecast rows (or rows of series not forecast) as CSV, values with 4
  decimals; the header is `columns`, by default the first row's."""
  header = list(columns or rows[0])
  writer = csv.writer(stream, lineterminator='\n')
  writer.writerow(header)
  for row in rows:
    writer.writerow([f'{row[name]:.4f}' if isinstance(row[name], float) else row[name]
                     for name in header])
