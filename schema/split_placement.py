"""Where a time split's boundaries fall in the data, and the split each row falls in.

A boundary (`schema.time_split`) is placed on the time grid of the data's range: a
timestamp as it is, a fraction of the range on the first grid time at or after it, the
last N steps moved back to where Windowing starts a forecast, so that each period holds
whole windows; for periods placed from each series' last row, in each series' own range.
"""

from typing import Mapping, Optional, Tuple

import numpy as np

from common.exit_codes import InputError
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import EVAL_SPLIT, TimeSplit, format_time, last_steps, parse_timestamp


def resolve_boundary(boundary, time_range: Tuple[int, int], spec: DatasetSpec) -> int:
  """Epoch seconds of a boundary given as timestamp, as fraction of `time_range` (moved
  on to the grid), or as the last N steps of the grid up to its end, moved back to where
  the windowing component starts a forecast, so that the period holds whole windows."""
  steps = last_steps(boundary)
  if steps is not None:
    last = spec.frequency.step_of(time_range[1])
    return spec.frequency.seconds_of(forecast_starts.last_start_until(
        last + 1 - steps, forecast_starts.default_stride(EVAL_SPLIT, spec.horizon)))
  if isinstance(boundary, str):
    return parse_timestamp(boundary)
  start, end = time_range
  # The first grid time at or after the fraction's instant: the same rows either side
  # (every row is on the grid), and a time the split report can show as a step's.
  instant = int(start + float(boundary) * (end - start))
  period = spec.frequency.period_of(instant)
  first = spec.frequency.seconds_of(period)
  return first if first == instant else spec.frequency.seconds_of(period + 1)


def split_indices(seconds: np.ndarray, split: TimeSplit, time_range, spec: DatasetSpec,
                  keys: Optional[np.ndarray] = None,
                  series_ends: Optional[Mapping[str, int]] = None) -> np.ndarray:
  """`split_index` of rows at epoch `seconds`; when the split's periods are placed from
  each series' last row, of series `keys` whose last rows are at `series_ends`.

  Raises:
    ValueError: boundaries of both kinds (timestamps and fractions) fall out of order once
      the fractions are placed in `time_range`.
  """
  if not split.of_each_series:
    return _indices(seconds, split, time_range, spec)
  indices = np.empty(len(seconds), dtype=np.int64)
  for key in np.unique(keys):
    rows = keys == key
    indices[rows] = _indices(seconds[rows], split, (time_range[0], series_ends[key]), spec)
  return indices


def _indices(seconds: np.ndarray, split: TimeSplit, time_range,
             spec: DatasetSpec) -> np.ndarray:
  """`split_indices` of rows whose boundaries are placed in `time_range`."""
  given = [(name, getattr(split, name)) for name in ('eval_start', 'test_start', 'end')
           if getattr(split, name) is not None]
  placed = [(name, value, resolve_boundary(value, time_range, spec)) for name, value in given]
  for (earlier, first, at), (later, second, then) in zip(placed, placed[1:]):
    if not at < then:
      raise InputError(f'time split {later}={second!r} falls at or before {earlier}={first!r} '
                       f'in the data, which runs from {format_time(time_range[0])} to '
                       f'{format_time(time_range[1])}; put eval_start, test_start and end in '
                       'that order')
  starts = [split.eval_start] + ([split.test_start] if split.test_start is not None else [])
  indices = sum((seconds >= resolve_boundary(b, time_range, spec)).astype(np.int64)
                for b in starts)
  if split.end is not None:
    indices[seconds >= resolve_boundary(split.end, time_range, spec)] = len(split.split_names)
  return indices
