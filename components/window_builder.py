"""Cuts one series' transformed rows into fixed-length windows (pure Python, no Beam).

Rules:
  - rows are ordered by time and placed on the spec's time grid; a duplicate time step is
    an error, and so is a static column whose value changes within the series;
  - a window covers T = E + H consecutive grid steps; a window with a missing step (a gap)
    is skipped and counted, never shifted;
  - a window belongs to the split of its forecast steps, which must all lie in one split
    (a window whose horizon crosses a split boundary is skipped and counted); its history
    may reach back into an earlier split;
  - within a split, windows start their forecast at grid steps divisible by the split's
    stride, so the same data always gives the same windows;
  - a split's sample rate keeps that share of its windows, chosen by a hash of series key
    and forecast start: deterministic, and the same windows across runs;
  - the splits asked for as segments (training) are written as segments of 2T - 1 steps,
    each with a mask of the windows it holds (`schema.window_layout`): a segment starts
    every T steps of the series where one of its T windows is kept;
  - rows given with their raw values give windows (not segments) that also hold the raw
    columns (`window_layout.raw_window_feature_spec`).
"""

import collections
import dataclasses
import datetime
import hashlib
from typing import Collection, Dict, Iterable, List, Mapping, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from common.exit_codes import InputError
from schema import forecast_starts, static_columns, window_cuts
from schema.dataset_spec import DatasetSpec, Role
from schema.features import SERIES_KEY, model_features, transformed_name
from schema.window_layout import (FORECAST_START, TARGET_FUTURE, TARGET_HISTORY, WINDOW_MASK,
                                  WINDOW_SPLIT, feature_length, raw_value_count, segment_length,
                                  step_value_names)

Counts = Dict[str, int]
_LONGEST = 'longest_'
LONGEST_SERIES = f'{_LONGEST}series_steps'  # the most grid steps one series spans


class RowsError(InputError):
  """Rows of one series that cannot be windowed, which a caller with the input files can
  name by file and line: `times` holds their epoch seconds."""

  def __init__(self, message: str, times: Collection[int]):
    super().__init__(message)
    self.times = frozenset(int(seconds) for seconds in times)


@dataclasses.dataclass(frozen=True)
class Row:
  """One transformed row of a series."""
  seconds: int  # epoch seconds
  split: str
  values: Mapping[str, float]  # transformed feature name -> value
  # Nothing, or every column but the time: column name -> raw value (bytes, or a float
  # with NaN for a missing value), as `series_chunks` takes them.
  raw: Mapping[str, object] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class RowChunk:
  """Transformed rows of one series by column, as Windowing groups them: arrays of one
  value per row."""
  seconds: np.ndarray  # int64 epoch seconds
  splits: np.ndarray  # split names (object)
  values: Mapping[str, np.ndarray]  # transformed feature name -> values
  raw: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)  # as Row's

  @classmethod
  def of(cls, rows: Iterable[Union[Row, 'RowChunk']]) -> 'RowChunk':
    """The rows and chunks given, as one chunk.

    Raises:
      ValueError: some hold raw values and others do not, or other columns of them.
    """
    chunks = [item if isinstance(item, RowChunk) else cls(
        np.array([item.seconds], np.int64), np.array([item.split], object),
        {name: np.array([value]) for name, value in item.values.items()},
        {name: np.array([value], object if isinstance(value, bytes) else float)
         for name, value in item.raw.items()}) for item in rows]
    raw_columns = {tuple(sorted(chunk.raw)) for chunk in chunks}
    if len(raw_columns) > 1:
      raise ValueError('rows of one series hold the raw values of different columns: '
                       f'{sorted(raw_columns)}')
    joined = lambda field: {name: np.concatenate([getattr(chunk, field)[name]
                                                  for chunk in chunks])
                            for name in getattr(chunks[0], field)}
    return cls(np.concatenate([chunk.seconds for chunk in chunks]),
               np.concatenate([chunk.splits for chunk in chunks]),
               joined('values'), joined('raw'))

  def sorted_by_time(self) -> 'RowChunk':
    order = np.argsort(self.seconds, kind='stable')
    return RowChunk(self.seconds[order], self.splits[order],
                    {name: values[order] for name, values in self.values.items()},
                    {name: values[order] for name, values in self.raw.items()})


def series_chunks(transformed: Mapping[str, np.ndarray], raw: Mapping[str, np.ndarray],
                  spec: DatasetSpec, split: str) -> List[Tuple[str, RowChunk]]:
  """(series key, its rows) for every series in a batch of rows.

  Args:
    transformed: Transform's outputs, one array per feature, one value per row.
    raw: every column but the time, one value per row (bytes, or floats with NaN for a
      missing value), or nothing: the windows then hold no raw columns.
    spec: the dataset spec.
    split: the rows' split.
  """
  time_name = transformed_name(spec.time_column)
  count = len(transformed[time_name])
  columns = {name: np.reshape(transformed[name], (count, -1))[:, 0]
             for name in [time_name, SERIES_KEY] + step_value_names(spec)}
  keys, series_of_row = np.unique(columns[SERIES_KEY], return_inverse=True)
  by_series = np.argsort(series_of_row, kind='stable')
  ends = np.cumsum(np.bincount(series_of_row, minlength=len(keys)))
  chunks = []
  for key, rows in zip(keys, np.split(by_series, ends[:-1])):
    chunks.append((key.decode(), RowChunk(
        columns[time_name][rows].astype(np.int64), np.full(len(rows), split, dtype=object),
        {name: columns[name][rows] for name in step_value_names(spec)},
        {name: values[rows] for name, values in raw.items()})))
  return chunks


def sample_unit(series_key: str, forecast_seconds: int) -> float:
  """A deterministic pseudo-random number in [0, 1) for one window."""
  digest = hashlib.sha256(f'{series_key}|{forecast_seconds}'.encode()).digest()
  return int.from_bytes(digest[:8], 'big') / 2.0**64


def build_windows(series_key: str, rows: Iterable[Union[Row, RowChunk]], spec: DatasetSpec,
                  strides: Mapping[str, int], sample_rates: Mapping[str, float] = None,
                  segment_splits: Collection[str] = ()
                  ) -> Tuple[List[Tuple[str, bytes]], Counts]:
  """The serialized windows of one series, each with its split, and what was counted.

  Args:
    series_key: the composite series key.
    rows: the series' rows, in any order, one by one or in chunks.
    spec: the dataset spec; gives the window shape and the time grid.
    strides: forecast-start stride per split name, in grid steps; splits not named get
      no windows.
    sample_rates: share of windows to keep per split name (default 1.0).
    segment_splits: splits whose windows are written as segments (training).

  Returns:
    A list of (split name, serialized tf.Example: a window, or a segment for
    `segment_splits`), in time order per split, and a dict of counts.

  Raises:
    ValueError: a row is off the time grid.
    RowsError: two rows fall on the same step, or a static value changes.
  """
  rows = RowChunk.of(rows).sorted_by_time()
  counts = collections.Counter(series=1, rows=len(rows.seconds))
  try:
    steps = np.array([spec.frequency.step_of(seconds) for seconds in rows.seconds])
  except ValueError as error:
    raise ValueError(f"series '{series_key}': {error}") from None
  duplicated = np.nonzero(np.diff(steps) == 0)[0]
  if duplicated.size:
    no_key = ('; the spec declares no series key: if the rows belong to several series, '
              'give their key columns role: series_key' if not spec.series_key_columns else '')
    twice = rows.seconds[duplicated[0]]
    raise RowsError(f"series '{series_key}' has more than one row at {_minute(twice)}"
                    f' ({spec.frequency.value} grid); remove or aggregate the duplicates '
                    '(with several spans: no two spans may hold the same time of a series)'
                    f'{no_key}', [twice])
  _check_static_columns(series_key, rows, spec)
  first = int(steps[0])
  length = int(steps[-1]) - first + 1
  window = spec.window_length
  counts[LONGEST_SERIES] = length
  if length < window:
    counts.update(series_too_short=1, rows_in_short_series=len(rows.seconds))
    return [], dict(counts)

  position = steps - first
  present = np.zeros(length, dtype=bool)
  present[position] = True
  whole = window_cuts.whole_windows(present, window)
  # A missing step takes the split of the step before it (splits follow time), so windows
  # over it are counted as gaps in the right split.
  split_at = rows.splits[np.searchsorted(position, np.arange(length), side='right') - 1]
  for split, steps_in_split in zip(*np.unique(split_at, return_counts=True)):
    counts[longest_period(split)] = int(steps_in_split)
  columns = {name: np.full(length, np.nan) for name in step_value_names(spec)}
  for name, column in columns.items():
    column[position] = rows.values[name]
  raw_columns = {}
  for name, values in rows.raw.items():
    raw_columns[name] = np.full(length, b'' if values.dtype == object else np.nan,
                                values.dtype)
    raw_columns[name][position] = values
  seconds_at = np.zeros(length, dtype=np.int64)
  seconds_at[position] = rows.seconds

  windows = []
  segment_starts = collections.defaultdict(list)  # split -> kept window starts
  for start in range(length - window + 1):
    forecast = start + spec.encoder_steps
    split = split_at[forecast]
    stride = strides.get(split)
    if not stride or not forecast_starts.starts_forecast(first + forecast, stride):
      continue
    if not whole[start]:
      counts['windows_skipped_gap'] += 1
    elif split_at[start + window - 1] != split:
      counts['windows_skipped_crossing_split'] += 1
    elif (sample_rates or {}).get(split, 1.0) < 1.0 and sample_unit(
        series_key, int(seconds_at[forecast])) >= sample_rates[split]:
      counts['windows_sampled_out'] += 1
    else:
      counts[f'windows_{split}'] += 1
      if split in segment_splits:
        segment_starts[split].append(start)
      else:
        example = _window_example(series_key, split, columns, start,
                                  int(seconds_at[forecast]), spec)
        if raw_columns:
          _add_raw_columns(example, raw_columns, seconds_at, start, spec)
        windows.append((split, example.SerializeToString()))
  for split, starts in segment_starts.items():
    segments = _segment_examples(series_key, columns, seconds_at, starts, spec)
    counts[f'segments_{split}'] += len(segments)
    windows.extend((split, segment.SerializeToString()) for segment in segments)
  return windows, dict(counts)


def _segment_examples(series_key: str, columns: Mapping[str, np.ndarray],
                      seconds_at: np.ndarray, starts: Sequence[int],
                      spec: DatasetSpec) -> List[tf.train.Example]:
  """The segments holding the windows that start at `starts` (ascending positions)."""
  window, length = spec.window_length, segment_length(spec)
  categorical = {f.name for f in model_features(spec) if f.group.is_categorical}
  starts = np.asarray(starts)
  segments = []
  for first in np.unique(starts // window) * window:
    kept = starts[(starts >= first) & (starts < first + window)]
    mask = np.zeros(window, dtype=np.int64)
    mask[kept - first] = 1
    forecast_starts = np.zeros(window, dtype=np.int64)
    forecast_starts[kept - first] = seconds_at[kept + spec.encoder_steps]
    features = {SERIES_KEY: _bytes([series_key.encode()]), WINDOW_MASK: _ints(mask),
                FORECAST_START: _ints(forecast_starts)}
    for name, column in columns.items():
      values = np.zeros(length)
      stretch = column[first:first + length]
      values[:len(stretch)] = np.nan_to_num(stretch)  # gaps lie in masked windows only
      features[name] = (_ints(values.astype(np.int64)) if name in categorical
                        else _floats(values))
    segments.append(tf.train.Example(features=tf.train.Features(feature=features)))
  return segments


def _check_static_columns(series_key: str, rows: RowChunk, spec: DatasetSpec) -> None:
  """Raises RowsError naming a static column whose value changes within the series."""
  at = lambda index: _minute(rows.seconds[index])
  for column in spec.columns_with(Role.STATIC):
    changed = static_columns.first_change(rows.values[transformed_name(column.name)])
    if changed is not None:
      raise RowsError(static_columns.changed_value_message(
          series_key, column.name, f'one value from its first row ({at(0)})',
          f'another at {at(changed)}'), [rows.seconds[0], rows.seconds[changed]])


def _minute(seconds: int) -> str:
  """'2024-01-01 02:00': a time in UTC to the minute, for an error."""
  return f'{datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc):%Y-%m-%d %H:%M}'


def _window_example(series_key: str, split: str, columns: Mapping[str, np.ndarray],
                    start: int, forecast_seconds: int, spec: DatasetSpec) -> tf.train.Example:
  encoder_end = start + spec.encoder_steps
  target = columns[transformed_name(spec.target_column)]
  features = {
      SERIES_KEY: _bytes([series_key.encode()]),
      WINDOW_SPLIT: _bytes([split.encode()]),
      FORECAST_START: _ints([forecast_seconds]),
      TARGET_HISTORY: _floats(target[start:encoder_end]),
      TARGET_FUTURE: _floats(target[encoder_end:start + spec.window_length]),
  }
  for feature in model_features(spec):
    length = feature_length(feature.group, spec)
    begin = _first_step(start, length, spec)
    values = columns[feature.name][begin:begin + length]
    features[feature.name] = (_ints(values.astype(np.int64)) if feature.group.is_categorical
                              else _floats(values))
  return tf.train.Example(features=tf.train.Features(feature=features))


def _first_step(start: int, count: int, spec: DatasetSpec) -> int:
  """Where the `count` values of a feature begin in the window at `start`: a static
  value (1) at the last history step, the latest known value; the others at the start."""
  return start + spec.encoder_steps - 1 if count == 1 else start


def _add_raw_columns(example: tf.train.Example, raw_columns: Mapping[str, np.ndarray],
                     seconds_at: np.ndarray, start: int, spec: DatasetSpec) -> None:
  """Adds the window's raw columns, as `serving_default` reads them, to `example`."""
  features = example.features.feature
  for column in spec.columns:
    if column.role == Role.TIME:
      features[column.name].CopyFrom(_ints(seconds_at[start:start + spec.window_length]))
      continue
    count = raw_value_count(column, spec)
    begin = _first_step(start, count, spec)
    values = raw_columns[column.name][begin:begin + count]
    features[column.name].CopyFrom(_bytes(values) if values.dtype == object
                                   else _floats(values))


def _floats(values: Sequence[float]) -> tf.train.Feature:
  return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def _ints(values: Sequence[int]) -> tf.train.Feature:
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _bytes(values: Sequence[bytes]) -> tf.train.Feature:
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def longest_period(split: str) -> str:
  """The count of the most grid steps one series spans in `split`."""
  return f'{_LONGEST}{split}_steps'


def sum_counts(all_counts: Iterable[Counts]) -> Counts:
  """The counts of all series: summed, but the longest spans (`longest_*`) as maxima."""
  total = collections.Counter()
  for counts in all_counts:
    for name, value in counts.items():
      total[name] = max(total[name], value) if name.startswith(_LONGEST) else (
          total[name] + value)
  return dict(total)

