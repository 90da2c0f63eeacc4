"""Where the train, eval and test periods begin, by time.

A boundary is a timestamp (ISO 8601, e.g. '2017-06-26 00:00:00'), a fraction of the data's
time range in (0, 1), the data's last steps ('last 63 steps': that many grid steps
before the end of the data, moved back to where a forecast starts, so that the period
moves with the data as rows are added), or each series' own last steps ('last 63 steps
of each series': placed so from each series' last row, for series that end at different
times). Rows at or after `end` are outside every split; the example generator counts them
in its report and places the boundaries in the data.
"""

import dataclasses
import datetime
import itertools
import json
import re
from typing import Iterable, List, Optional, Tuple, Union

Boundary = Union[str, float]
TRAINING_SPLIT, EVAL_SPLIT, TEST_SPLIT = 'train', 'eval', 'test'  # in time order
_LAST_STEPS = re.compile(r'last (\d+) steps?( of each series)?')
EACH_SERIES = ' of each series'  # ends a boundary placed from each series' own last row


def judged_split(split_names: Iterable[str]) -> str:
  """The split a model is judged on (blessed, and scored first): test when there is one,
  which nothing chose on, else eval."""
  return TEST_SPLIT if TEST_SPLIT in split_names else EVAL_SPLIT


def last_steps(boundary: Boundary) -> Optional[int]:
  """N of a boundary 'last N steps' (of the data or of each series), or None for a
  timestamp or a fraction."""
  match = _LAST_STEPS.fullmatch(boundary.strip()) if isinstance(boundary, str) else None
  return int(match.group(1)) if match else None


def of_each_series(boundary: Optional[Boundary]) -> bool:
  """Whether a boundary is placed from each series' own last row."""
  match = _LAST_STEPS.fullmatch(boundary.strip()) if isinstance(boundary, str) else None
  return bool(match and match.group(2))


@dataclasses.dataclass(frozen=True)
class TimeSplit:
  """Train is [start, eval_start), eval is [eval_start, test_start or end), test follows."""
  eval_start: Boundary
  test_start: Optional[Boundary] = None
  end: Optional[Boundary] = None

  def __post_init__(self):
    for field in ('eval_start', 'test_start', 'end'):
      value = getattr(self, field)
      if value is None:
        continue
      if last_steps(value) is not None:
        if last_steps(value) < 1:
          raise ValueError(f'time split {field}={value!r}: give at least one step')
      elif isinstance(value, str):
        try:
          parse_timestamp(value, what=f'time split {field}')
        except ValueError as error:
          raise ValueError(f"{error}, a fraction such as 0.8, or 'last 48 steps' (of the "
                           "data), or 'last 48 steps of each series'") from None
      elif not 0.0 < float(value) < 1.0:
        raise ValueError(f'time split {field}={value!r}: a fraction of the time range must '
                         'lie strictly between 0 and 1, or give a timestamp string')
    if self.eval_start is None:
      raise ValueError('time split needs eval_start')
    each = [field for field in ('eval_start', 'test_start') if of_each_series(getattr(self, field))]
    if each and self.end is not None:
      raise ValueError(f'time split end={self.end!r}: the periods are placed from each '
                       "series' last row, so every row after the eval start is eval or test "
                       'data; leave the end out (or drop the rows after it from the data)')
    if each and len(each) != len([f for f in ('eval_start', 'test_start')
                                  if getattr(self, f) is not None]):
      raise ValueError(f'time split: {each[0]} is placed from each series\' last row, so the '
                       "other period's start must be too: give both as 'last N steps of "
                       "each series'")
    given = [(field, getattr(self, field)) for field in ('eval_start', 'test_start', 'end')
             if getattr(self, field) is not None]
    for (earlier, first), (later, second) in itertools.combinations(given, 2):
      # Boundaries of one kind: a mix needs the data's time range; ExampleGen checks it
      # (`split_indices`).
      if _kind(first) == _kind(second) and not _position(first) < _position(second):
        raise ValueError(f'time split {later}={second!r} is not after {earlier}={first!r}: '
                         'train runs up to eval_start, eval from it up to test_start (or '
                         'end), test from test_start up to end; put them in that order')

  @property
  def of_each_series(self) -> bool:
    """Whether the periods are placed from each series' own last row."""
    return of_each_series(self.eval_start)

  @property
  def split_names(self):
    return ((TRAINING_SPLIT, EVAL_SPLIT, TEST_SPLIT) if self.test_start is not None
            else (TRAINING_SPLIT, EVAL_SPLIT))

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self))

  @classmethod
  def from_json(cls, text: str) -> 'TimeSplit':
    return cls(**json.loads(text))


def _kind(boundary: Boundary) -> str:
  if last_steps(boundary) is not None:
    return 'last steps of each series' if of_each_series(boundary) else 'last steps'
  return 'timestamp' if isinstance(boundary, str) else 'fraction'


def _position(boundary: Boundary) -> float:
  """Orders boundaries of one kind: the more last steps, the earlier."""
  if last_steps(boundary) is not None:
    return -last_steps(boundary)
  return parse_timestamp(boundary) if isinstance(boundary, str) else float(boundary)


def parse_timestamp(text: str, what: str = 'timestamp',
                    time_format: Optional[str] = None) -> int:
  """Seconds since the Unix epoch for an ISO 8601 timestamp, naive meaning UTC (and so
  does a 'Z' after the time), or a period in a notation of `PERIOD_NOTATIONS`, at its
  first instant (00:00 UTC); with `time_format`, for text written in that strptime format
  instead ('%d/%m/%Y'), naive again meaning UTC.

  Raises:
    ValueError: neither; a date with the day and the month in an order the text cannot
      tell (06/07/2016) is refused with both readings.
  """
  try:
    moment = _moment(text, time_format)
  except ValueError as error:
    if time_format is not None:
      raise ValueError(f'{what}: cannot read {text!r} in the time format {time_format!r} '
                       f'({error}); write every time in it, or give the format the times '
                       'are written in') from None
    raise ValueError(f'{what}: cannot parse {text!r} as a timestamp; '
                     f'{_ambiguous_date(text) or _WRITE_ISO}') from None
  if moment.tzinfo is None:
    moment = moment.replace(tzinfo=datetime.timezone.utc)
  return int(moment.timestamp())


def format_time(seconds: int) -> str:
  """Epoch seconds as UTC text, '2024-01-31 13:00:00'."""
  return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
      '%Y-%m-%d %H:%M:%S')


def format_time_as_given(seconds: int, text: str, time_format: Optional[str] = None) -> str:
  """The instant `seconds` in the UTC offset that timestamp `text` names
  ('2024-01-31 14:00:00+01:00', and '+00:00' for a 'Z'); in the period notation `text` is
  written in (`PERIOD_NOTATIONS`: '2001 Q2' after '2001 Q1') if the instant starts such a
  period; as a date if `text` is a date and the instant a UTC midnight ('2025-01-06');
  else as `format_time`. With `time_format`, in that format, in the offset `text` names
  or else UTC."""
  if time_format is not None:
    offset = _moment(text, time_format).tzinfo or datetime.timezone.utc
    return datetime.datetime.fromtimestamp(seconds, offset).strftime(time_format)
  read = _read_notation(text)
  in_notation = read[0].format(seconds) if read is not None else None
  if in_notation is not None:
    return in_notation
  offset = None if read is not None else _moment(text).tzinfo
  if offset is None:
    written = format_time(seconds)
    is_date = read is not None or len(text.strip()) == len('2025-01-06')
    return written[:10] if is_date and written.endswith(' 00:00:00') else written
  return datetime.datetime.fromtimestamp(seconds, offset).isoformat(sep=' ')


def utc_offset_seconds(text: str, time_format: Optional[str] = None) -> Optional[int]:
  """The offset from UTC a timestamp names, in seconds (0 for a 'Z'), or None if it names
  none."""
  offset = _moment(text, time_format).utcoffset()
  return None if offset is None else int(offset.total_seconds())


def utc_offset(text: str) -> Optional[str]:
  """The offset from UTC an ISO 8601 timestamp names, as '+01:00' ('+00:00' for a 'Z'),
  or None if it names none."""
  seconds = utc_offset_seconds(text)
  return None if seconds is None else format_utc_offset(seconds)


def format_utc_offset(seconds: int) -> str:
  """An offset from UTC in seconds as ISO 8601 writes it: '+05:30', '-00:25:21'."""
  hours, rest = divmod(abs(seconds), 3600)
  minutes, seconds_left = divmod(rest, 60)
  return (f"{'-' if seconds < 0 else '+'}{hours:02d}:{minutes:02d}"
          + (f':{seconds_left:02d}' if seconds_left else ''))


def names_utc_offset(text: str, time_format: Optional[str] = None) -> bool:
  """Whether a timestamp names its offset from UTC ('+01:00', 'Z')."""
  return _moment(text, time_format).tzinfo is not None


def written_apart_from_utc(text: str, time_format: Optional[str] = None) -> bool:
  """Whether times written as `text` need their own text to be written back, beyond the
  instant: they are in a format of their own, name a UTC offset, or are in a period
  notation ('2001 Q1')."""
  return (time_format is not None or names_utc_offset(text)
          or _read_notation(text) is not None)


_FORMAT_SAMPLE = datetime.datetime(2001, 2, 3, 4, 5, 6)  # each field told apart


def check_time_format(time_format: str, what: str = 'time_format',
                      sub_daily: bool = False) -> None:
  """Refuses a strptime format that cannot write and read back a time with its year (and,
  for a `sub_daily` grid, its hour and minute).

  Raises:
    ValueError: naming the format and the fix.
  """
  if not isinstance(time_format, str) or '%' not in time_format:
    raise ValueError(f'{what} {time_format!r}: give a strptime format such as '
                     "'%d/%m/%Y' (day first) or '%m/%d/%Y %H:%M' (month first, with the time)")
  try:
    written = _FORMAT_SAMPLE.strftime(time_format)
    read = datetime.datetime.strptime(written, time_format)
  except ValueError as error:
    raise ValueError(f'{what} {time_format!r}: {error}; its directives are those of '
                     "Python's strptime (%Y year, %m month, %d day, %H hour, %M minute, %z "
                     'UTC offset)') from None
  if read.year != _FORMAT_SAMPLE.year:
    raise ValueError(f'{what} {time_format!r} holds no year: add %Y (or %y)')
  if sub_daily and (read.hour, read.minute) != (_FORMAT_SAMPLE.hour, _FORMAT_SAMPLE.minute):
    raise ValueError(f'{what} {time_format!r} holds no time of day, and the grid has steps '
                     "shorter than a day: add the hour and minute, e.g. '%d/%m/%Y %H:%M'")


def _moment(text: str, time_format: Optional[str] = None) -> datetime.datetime:
  if time_format is not None:
    return datetime.datetime.strptime(text.strip(), time_format)
  read = _read_notation(text)
  if read is not None:
    return read[1]
  iso = text.strip()
  if iso.endswith(('Z', 'z')):  # Python 3.10's fromisoformat reads '+00:00' only
    iso = iso[:-1] + '+00:00'
  return datetime.datetime.fromisoformat(iso)


_WRITE_ISO = "use ISO 8601, e.g. '2024-01-31' or '2024-01-31 13:00:00'"
_AMBIGUOUS_DATE = re.compile(r'\s*(\d{1,2})([/.])(\d{1,2})\2(\d{4})\s*')


def _ambiguous_date(text: str) -> Optional[str]:
  """What to do with a date written day and month first ('06/07/2016'), naming each order
  it reads in; None for other text."""
  match = _AMBIGUOUS_DATE.fullmatch(text)
  if not match:
    return None
  readings = _readings(match)
  if not readings:
    return _WRITE_ISO
  separator = match.group(2)
  if len(readings) == 2 and readings[0][0] == readings[1][0]:
    read = f'it reads as {readings[0][0]} either way, but its notation does not say whether '
    read += 'the day or the month comes first'
  else:
    read = f"it reads as {' or '.join(f'{date} ({order})' for date, order in readings)}"
  return (f"{read}; write the dates as ISO 8601 (year-month-day, {readings[0][0]}), which "
          f"reads one way only, or give their format: init --time-format "
          f"'%d{separator}%m{separator}%Y' (day first) or '%m{separator}%d{separator}%Y' "
          '(month first), time_format in the spec')


def _readings(match: 're.Match') -> List[Tuple[str, str]]:
  """(ISO date, 'day first' or 'month first') of each order a date of `_AMBIGUOUS_DATE`
  reads in."""
  first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
  readings = []
  for day, month, order in ((first, second, 'day first'), (second, first, 'month first')):
    try:
      readings.append((datetime.date(year, month, day).isoformat(), order))
    except ValueError:
      pass
  return readings


def day_month_order(texts: Iterable[str]) -> Optional[Tuple[str, str]]:
  """The strptime format that dates written day and month first ('06/07/2016') are in,
  told by one of them that reads one way only ('13/07/2016'), with that date: ('%d/%m/%Y',
  '13/07/2016'); None when every text is such a date that reads both ways, or one is no
  such date, or they read in different orders."""
  found = {}
  for text in texts:
    match = _AMBIGUOUS_DATE.fullmatch(text)
    if not match:
      return None
    readings = _readings(match)
    if not readings:
      return None
    if len(readings) == 1:
      separator, order = match.group(2), readings[0][1]
      found.setdefault(f'%d{separator}%m{separator}%Y' if order == 'day first'
                       else f'%m{separator}%d{separator}%Y', text)
  return next(iter(found.items())) if len(found) == 1 else None


# Period notations people export besides ISO 8601, each unambiguous: read as the period's
# first instant (00:00 UTC), and written back in the same notation (`format_time_as_given`).
PERIOD_NOTATIONS = {
    'quarter': re.compile(r'(?P<year>\d{4})(?P<sep>[ -]?)(?P<letter>[Qq])(?P<number>[1-4])'),
    'ISO week': re.compile(r'(?P<year>\d{4})(?P<sep>-?)(?P<letter>W)(?P<number>\d{2})'),
    'month': re.compile(r'(?P<year>\d{4})(?P<sep>[-/])(?P<number>\d{1,2})'),
    'date with slashes': re.compile(
        r'(?P<year>\d{4})(?P<sep>/)(?P<number>\d{1,2})/(?P<day>\d{1,2})'),
}


@dataclasses.dataclass(frozen=True)
class _Notation:
  """One text's period notation: its kind, separator, the letter before a quarter or week
  number and the digits of the number and the day, so that times are written as it is."""
  kind: str
  sep: str
  letter: str
  digits: int
  day_digits: int

  def format(self, seconds: int) -> Optional[str]:
    """The period starting at `seconds` in this notation; None if none starts then."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    if moment.time() != datetime.time():
      return None
    if self.kind == 'quarter':
      if moment.day != 1 or moment.month % 3 != 1:
        return None
      return f'{moment.year}{self.sep}{self.letter}{(moment.month + 2) // 3}'
    if self.kind == 'ISO week':
      year, week, weekday = moment.isocalendar()
      return f'{year}{self.sep}{self.letter}{week:02d}' if weekday == 1 else None
    if self.kind == 'month':
      return (f'{moment.year}{self.sep}{moment.month:0{self.digits}d}' if moment.day == 1
              else None)
    return (f'{moment.year}/{moment.month:0{self.digits}d}/'
            f'{moment.day:0{self.day_digits}d}')


def _read_notation(text: str) -> Optional[Tuple[_Notation, datetime.datetime]]:
  """The period notation `text` is written in and the period's first instant (naive, UTC),
  or None (ISO 8601, or no time).

  Raises:
    ValueError: the notation's numbers name no period (week 53 of a year of 52).
  """
  for kind, pattern in PERIOD_NOTATIONS.items():
    match = pattern.fullmatch(text.strip())
    if match:
      break
  else:
    return None
  groups = match.groupdict()
  year, number = int(groups['year']), int(groups['number'])
  if kind == 'quarter':
    start = datetime.datetime(year, 3 * number - 2, 1)
  elif kind == 'ISO week':
    start = datetime.datetime.fromisocalendar(year, number, 1)
  else:
    start = datetime.datetime(year, number, int(groups.get('day') or 1))
  return _Notation(kind, groups['sep'], groups.get('letter') or '', len(groups['number']),
                   len(groups.get('day') or '')), start
