"""The rows of a CSV of recent history (and of a future file), grouped by series.

The CSV has the training data's columns (the dataset spec saved with the model); each
row's values are checked as the window reads them and its time parsed
(`DatasetSpec.read_time`). A bad value raises `PredictionInputError` naming the file,
line and column, or, with `on_bad_series`, leaves the series out with why.
"""

import csv
import dataclasses
import io
import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import tensorflow as tf

from common.suggestions import closest
from schema.csv_values import (MISSING_MARKERS, check_header, clean_header, data_rows,
                               decode_utf8, real_value)
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.frequency import off_grid_hint
from schema.features import series_key
from schema.time_split import format_time
from serving.input_errors import MissingColumnsError, PredictionInputError, TimeGridError


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
    near = {name: closest(name, header) for name in missing}
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
