"""Each series' rows as the raw serving window of its next H steps.

For each series, the rows up to its last target value are its history; the H rows after
it are its horizon, with the known columns filled and the target and observed columns
empty. The last E history rows and the H horizon rows, consecutive steps of the spec's
time grid, make one raw window per series for the model's `serving_default` signature
(format: `trainer_module.export`). More rows after the last target value are refused: a
target left empty at the end of the history would otherwise start the forecast a step
early. The horizon rows may come from a future file instead (`rows_with_horizon`), as
`tft-pipeline --future` takes them, and a model without known columns needs none. Each
failed check raises a subclass of `PredictionInputError` naming it.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from schema import static_columns
from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.features import SERIES_VOCABULARY, model_features, series_key
from schema.time_split import format_time
from schema.window_layout import raw_value_count
from serving import published_models
from serving.csv_rows import InputRow, NotForecast, SeriesRows, line_place
from serving.input_errors import (MissingFutureRowsError, NoDataRowsError,
                                  PredictionInputError, RowsAfterHorizonError,
                                  StaleSeriesError, TimeGridError, TooLittleHistoryError)


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
  return spec.frequency.seconds_after(spec.frequency.step_of(last), spec.horizon)


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
    changed = static_columns.first_change([_value_of(row, column) for row in given])
    if changed is not None:
      where = lambda row: f'{row.values[column.name]!r} {row.where()}'
      raise PredictionInputError(static_columns.changed_value_message(
          key, column.name, where(given[0]), where(given[changed])))


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
