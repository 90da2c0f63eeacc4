"""The time column `init` finds, its timestamps, the grid the rows follow and the clock
their offsets name.
"""

from typing import Optional, Tuple

import numpy as np
import pandas as pd

from pipeline.draft.table import DraftError, line_of
from schema import time_zones
from schema.frequency import (DAY, MINUTE, WEEK, WEEKDAYS, Frequency, fixed_frequency_text,
                              off_grid_hint)
from schema.time_split import (day_month_order, format_utc_offset, names_utc_offset,
                               parse_timestamp, utc_offset_seconds)


_TIME_NAMES = ('timestamp', 'datetime', 'date', 'day', 'time', 'ts', 'ds', 'period', 'month',
               'week')


# Instants either side of an offset change that one clock can have in the data (two
# changes a year); more, and the times follow several clocks.
_MAX_CLOCK_EDGES = 500


def guess_time_column(table: pd.DataFrame, exclude: str, time_format: Optional[str]) -> str:
  parsed = [c for c in table.columns
            if c != exclude and _all_timestamps(table[c], time_format)]
  if not parsed:
    for column in (c for c in table.columns if c != exclude and c.lower() in _TIME_NAMES):
      try:
        timestamps_of(table[column], column, time_format)
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


def timestamps_of(values: pd.Series, column: str, time_format: Optional[str]) -> np.ndarray:
  seconds = {}
  for text in values.unique():
    try:
      seconds[text] = parse_timestamp(text, what=f"column '{column}'", time_format=time_format)
    except ValueError as error:
      order = None if time_format is not None else day_month_order(values.unique())
      if order is not None:
        error = (f"column '{column}' writes dates with the day and the month in an order "
                 f"{text!r} does not tell; {order[1]!r} (line {line_of(values == order[1])}) "
                 f"does: pass --time-format '{order[0]}', or write the dates as ISO 8601")
      raise DraftError(f'line {line_of(values == text)}: {error}') from None
  return values.map(seconds).to_numpy(dtype=np.int64)


def changing_clock(texts: pd.Series, seconds: np.ndarray, series: pd.Series,
                   frequency: Frequency, time_format: Optional[str]
                   ) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
  """(offsets, zones) when a series' times name two UTC offsets or more on a sub-daily
  grid (a local clock that changes, whose zone `time_zone` can name): the offsets named,
  in order, and the zones whose clock keeps each time's offset; else ((), ())."""
  if not frequency.is_sub_daily:
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


def clock_change_hint(texts: pd.Series, seconds: pd.Series, time_format: Optional[str]) -> str:
  """A hint when every repeated time is a local hour that a clock change repeats (in the
  small hours, in March, April, October or November, without a UTC offset), else ''."""
  moments = pd.to_datetime(seconds.to_numpy(), unit='s')
  if (any(names_utc_offset(text, time_format) for text in texts)
      or (moments == moments.normalize()).all()
      or not ((moments.hour < 4) & moments.month.isin((3, 4, 10, 11))).all()):
    return ''
  return ('; if the clocks went back an hour then, write the times in UTC or with their UTC '
          "offset ('2023-10-29T02:00:00+01:00')")


def grid_of(seconds: np.ndarray, series: pd.Series, times: pd.Series,
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
      line = line_of(pd.Series(seconds == moment, index=times.index))
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


def count_gaps(steps: np.ndarray, series: pd.Series) -> int:
  spans = pd.Series(steps).groupby(series.to_numpy()).agg(['min', 'max', 'count'])
  return int((spans['max'] - spans['min'] + 1 - spans['count']).sum())


def time_text(seconds: int) -> str:
  moment = pd.Timestamp(seconds, unit='s')
  return moment.strftime('%Y-%m-%d' if moment == moment.normalize() else '%Y-%m-%d %H:%M:%S')
