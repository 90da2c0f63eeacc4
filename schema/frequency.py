"""Time grids: the regular spacing of the rows of a series.

A frequency is written in a dataset spec as one of:
  '<N>min'              every N minutes from 00:00 ('15min', '30min')
  'hourly', '<N>h'      every N hours from 00:00
  'daily', '<N>d'       every N days, at 00:00 (N-day steps count from 1970-01-01)
  'W-MON' ... 'W-SUN'   once a week on that weekday at 00:00; 'weekly' is 'W-MON'
  'monthly'             the first day of each month at 00:00
  'quarterly'           the first day of January, April, July and October at 00:00
Times are UTC epoch seconds (naive timestamps are read as UTC). A grid step is the
integer index of a time on the grid; consecutive rows of a series are one step apart.
"""

import dataclasses
import datetime
import re
from typing import List, Optional, Tuple

from schema.time_split import names_utc_offset

MINUTE = 60
HOUR = 3600
DAY = 86400
WEEK = 7 * DAY
WEEKDAYS = ('MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN')
# 1970-01-01, day 0 of the epoch, was a Thursday (weekday 3, Monday being 0).
_EPOCH_WEEKDAY = 3
_FIXED = re.compile(r'^(\d+)\s*(min|h|d)$')
_NAMED_FIXED = {'hourly': HOUR, 'daily': DAY}
_UNIT_SECONDS = {'min': MINUTE, 'h': HOUR, 'd': DAY}
FORMATS = ("'<N>min' (e.g. '15min')", "'hourly' or '<N>h'", "'daily' or '<N>d'",
           "'weekly' or 'W-MON'...'W-SUN'", "'monthly'", "'quarterly'")

# Calendar features, with their cardinality and the cycle (in seconds) that makes them
# constant on a fixed-step grid whose step is a multiple of it.
CALENDAR_CARDINALITIES = {
    'minute_of_hour': 60,
    'hour_of_day': 24,
    'day_of_week': 7,
    'day_of_month': 31,
    'month_of_year': 12,
    'quarter_of_year': 4,
}
_CALENDAR_CYCLES = {'minute_of_hour': HOUR, 'hour_of_day': DAY, 'day_of_week': WEEK}
_CALENDAR_BY_MONTH = ('month_of_year', 'quarter_of_year')


@dataclasses.dataclass(frozen=True)
class Frequency:
  """A regular time grid. `Frequency('30min')`; `value` is the canonical spelling.

  Raises:
    ValueError: the text is not a frequency this module knows.
  """
  value: str
  step_seconds: Optional[int] = dataclasses.field(init=False, compare=False, repr=False)
  _weekday: Optional[int] = dataclasses.field(init=False, compare=False, repr=False)
  _months: Optional[int] = dataclasses.field(init=False, compare=False, repr=False)

  def __post_init__(self):
    value, seconds, weekday, months = _parse(self.value)
    object.__setattr__(self, 'value', value)
    object.__setattr__(self, 'step_seconds', seconds)
    object.__setattr__(self, '_weekday', weekday)
    object.__setattr__(self, '_months', months)

  def step_of(self, seconds: int) -> int:
    """The grid step of epoch `seconds`.

    Raises:
      ValueError: the time is not on the grid (e.g. 10:30 on an hourly grid, or the
        15th on a monthly grid).
    """
    step = self.period_of(seconds)
    if self.seconds_of(step) == int(seconds):
      return step
    moment = datetime.datetime.fromtimestamp(int(seconds), tz=datetime.timezone.utc)
    raise ValueError(f'{moment:%Y-%m-%d %H:%M:%S} is not on the {self.value} grid '
                     f'({self.description}); align the timestamps or declare another '
                     'frequency')

  def period_of(self, seconds: int) -> int:
    """The grid step whose period holds epoch `seconds`: the last step at or before it."""
    if self._months:
      moment = datetime.datetime.fromtimestamp(int(seconds), tz=datetime.timezone.utc)
      return (moment.year * 12 + moment.month - 1) // self._months
    return (int(seconds) - self._offset) // self.step_seconds

  def seconds_of(self, step: int) -> int:
    """Epoch seconds of grid step `step` (the inverse of `step_of`)."""
    if self._months:
      month = int(step) * self._months
      moment = datetime.datetime(month // 12, month % 12 + 1, 1, tzinfo=datetime.timezone.utc)
      return int(moment.timestamp())
    return int(step) * self.step_seconds + self._offset

  def seconds_after(self, step: int, count: int) -> List[int]:
    """Epoch seconds of the `count` grid steps after step `step`: a horizon's, forecast
    from the row at `step`."""
    return [self.seconds_of(int(step) + offset) for offset in range(1, count + 1)]

  @property
  def _offset(self) -> int:
    """Seconds from the epoch to a step of a fixed grid (weekly grids start on their day)."""
    return (self._weekday - _EPOCH_WEEKDAY) * DAY if self._weekday is not None else 0

  @property
  def is_calendar(self) -> bool:
    """Whether the grid's steps are calendar months or quarters, of unequal length (no
    `step_seconds`)."""
    return self.step_seconds is None

  @property
  def is_sub_daily(self) -> bool:
    """Whether the grid's steps are shorter than a day, so that its times have a time of
    day (and a clock change moves its calendar features)."""
    return not self.is_calendar and self.step_seconds < DAY

  @property
  def description(self) -> str:
    """The grid in words, for messages."""
    if self._months == 1:
      return 'first day of a month, 00:00'
    if self._months:
      return 'first day of January, April, July or October, 00:00'
    if self._weekday is not None:
      return f'{WEEKDAYS[self._weekday]} at 00:00, every week'
    return f'every {_duration(self.step_seconds)} from 00:00 UTC'

  @property
  def seasons(self) -> Tuple[int, ...]:
    """The natural seasonal periods in steps (a day and a week, a year), for seasonal
    naive forecasts; periods of one step or of a fraction of a step are left out."""
    if self._months:
      return (12 // self._months,)
    if self._weekday is not None:
      return (52,)
    return tuple(cycle // self.step_seconds for cycle in (DAY, WEEK)
                 if cycle % self.step_seconds == 0 and cycle // self.step_seconds > 1)

  def varying_calendar_features(self) -> Tuple[str, ...]:
    """The calendar features that take more than one value on this grid."""
    if self._months:
      return _CALENDAR_BY_MONTH
    return tuple(name for name in CALENDAR_CARDINALITIES
                 if name not in _CALENDAR_CYCLES
                 or self.step_seconds % _CALENDAR_CYCLES[name] != 0)

  def default_calendar_features(self) -> Tuple[str, ...]:
    """What a new spec gets: the cycles a few steps long that the data repeats."""
    if self._months:
      return ('month_of_year',) if self._months == 1 else ('quarter_of_year',)
    if self._weekday is not None:
      return ('month_of_year',)
    if self.step_seconds < DAY:
      return ('hour_of_day', 'day_of_week')
    return ('day_of_week', 'month_of_year') if self.step_seconds == DAY else ('month_of_year',)


def _parse(text) -> Tuple[str, Optional[int], Optional[int], Optional[int]]:
  """(canonical text, step seconds, weekday, months per step) of a frequency's text."""
  if not isinstance(text, str):
    raise ValueError(f'frequency {text!r} must be a string: one of {", ".join(FORMATS)}')
  cleaned = text.strip().lower()
  if cleaned == 'monthly':
    return 'monthly', None, None, 1
  if cleaned == 'quarterly':
    return 'quarterly', None, None, 3
  if cleaned == 'weekly':
    cleaned = 'w-mon'
  if cleaned.startswith('w-') and cleaned[2:].upper() in WEEKDAYS:
    weekday = WEEKDAYS.index(cleaned[2:].upper())
    return f'W-{WEEKDAYS[weekday]}', WEEK, weekday, None
  seconds = _NAMED_FIXED.get(cleaned)
  match = _FIXED.match(cleaned)
  if match:
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
  if not seconds:
    raise ValueError(f'unknown frequency {text!r}; use one of {", ".join(FORMATS)}')
  return fixed_frequency_text(seconds), seconds, None, None


def fixed_frequency_text(seconds: int) -> str:
  """The canonical spelling of a fixed step of `seconds` (a multiple of a minute)."""
  if seconds % DAY == 0:
    return 'daily' if seconds == DAY else f'{seconds // DAY}d'
  if seconds % HOUR == 0:
    return 'hourly' if seconds == HOUR else f'{seconds // HOUR}h'
  return f'{seconds // MINUTE}min'


def _duration(seconds: int) -> str:
  for unit, size in (('day', DAY), ('hour', HOUR), ('minute', MINUTE)):
    if seconds % size == 0:
      count = seconds // size
      return f'{unit}' if count == 1 else f'{count} {unit}s'
  return f'{seconds} seconds'


Frequency.HOURLY = Frequency('hourly')
Frequency.DAILY = Frequency('daily')
Frequency.MONTHLY = Frequency('monthly')


def off_grid_hint(frequency: Frequency, seconds: int, text: str,
                  time_format: Optional[str] = None) -> str:
  """How to put the time `text` (the instant `seconds`, written in `time_format` if
  given), off `frequency`'s grid, on it."""
  if frequency.value in ('monthly', 'quarterly'):
    moment = datetime.datetime.fromtimestamp(
        frequency.seconds_of(frequency.period_of(seconds)), datetime.timezone.utc)
    first_day = moment.strftime(time_format or '%Y-%m-%d')
    return (f'write each time as the first day of its period ({first_day} for '
            f'{text!r}), or remove the row')
  if frequency.step_seconds >= DAY and names_utc_offset(text, time_format):
    return ('times are placed on the grid in UTC, and a UTC offset moves a midnight off '
            'it: write the dates without the offset, or remove the row')
  return 'align the times to the grid, or remove the row'
