"""Time zones, for calendar features read on a local clock.

Times stay instants (UTC epoch seconds); a spec's `time_zone` (an IANA name such as
'Europe/Berlin') only says on which clock its calendar features are read: a load that
follows the local day peaks at the same local hour in winter and summer, one hour apart
in UTC. The Transform graph cannot consult a time-zone database, so the zone's offsets
are tabulated here, once, as the instants at which each offset starts (`offset_table`),
and the graph looks each time up in that table.
"""

import collections
import datetime
import functools
import zoneinfo
from typing import Mapping, Optional, Tuple

import numpy as np

from common.suggestions import did_you_mean
from schema import time_split

# The table covers these years; before them the first offset holds, after them the last.
FIRST_YEAR, LAST_YEAR = 1900, 2100
_DAY = 86400
# Names in the database that are no place's clock: the host's own (which would make the
# features depend on the machine Transform runs on), a rule file, a placeholder.
_NOT_ZONES = frozenset({'localtime', 'posixrules', 'Factory'})


def check(name: object, where: str) -> None:
  """Raises ValueError unless `name` is an IANA time-zone name, with the closest ones."""
  if isinstance(name, str) and name in _names():
    return
  hint = did_you_mean(str(name), _names(), n=3)
  raise ValueError(f'{where}: {name!r} is not a time-zone name{hint}; use an IANA name '
                   "such as 'Europe/Berlin' or 'America/New_York', or 'UTC'")


def format_time(seconds: int, name: str, time_format: Optional[str] = None) -> str:
  """Epoch `seconds` on zone `name`'s clock, with its offset: '2024-04-20 00:15:00+02:00'
  (in strptime format `time_format` if given)."""
  moment = datetime.datetime.fromtimestamp(seconds, zoneinfo.ZoneInfo(name))
  return moment.isoformat(sep=' ') if time_format is None else moment.strftime(time_format)


def writes_on_clock(text: str, seconds: int, name: str,
                    time_format: Optional[str] = None) -> bool:
  """Whether timestamp `text` (the instant `seconds`) is written on zone `name`'s clock:
  it names the offset the zone has then, other than UTC's (a '+00:00' reads as UTC)."""
  offset = time_split.utc_offset_seconds(text, time_format)
  return bool(offset) and offset == _offset_at(seconds, zoneinfo.ZoneInfo(name))


def matching(offsets_at: Mapping[int, int]) -> Tuple[str, ...]:
  """The zones named Area/Place whose UTC offset at each instant of `offsets_at` (epoch
  seconds -> offset in seconds) is the one given: those of the area most of them share
  first ('Europe/...' for Berlin's clock, before 'Africa/Ceuta'), then alphabetically."""
  found = [name for name in _names() if '/' in name and not name.startswith('Etc/')
           and all(_offset_at(seconds, zoneinfo.ZoneInfo(name)) == offset
                   for seconds, offset in offsets_at.items())]
  areas = collections.Counter(name.split('/')[0] for name in found)
  return tuple(sorted(found, key=lambda name: (-areas[name.split('/')[0]], name)))


def _offset_at(seconds: int, zone: zoneinfo.ZoneInfo) -> int:
  return int(datetime.datetime.fromtimestamp(seconds, zone).utcoffset().total_seconds())


@functools.lru_cache(maxsize=None)
def _names() -> Tuple[str, ...]:
  return tuple(sorted(zoneinfo.available_timezones() - _NOT_ZONES))


@functools.lru_cache(maxsize=None)
def offset_table(name: str) -> Tuple[np.ndarray, np.ndarray]:
  """(starts, offsets): the epoch seconds at which each UTC offset of zone `name` starts,
  increasing, and that offset in seconds; starts[0] is the lowest int64, so that every
  time finds its offset at the last start at or before it."""
  zone = zoneinfo.ZoneInfo(name)
  offset_at = lambda seconds: _offset_at(seconds, zone)
  first = int(datetime.datetime(FIRST_YEAR, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
  last = int(datetime.datetime(LAST_YEAR + 1, 1, 1, tzinfo=datetime.timezone.utc).timestamp())
  starts, offsets = [np.iinfo(np.int64).min], [offset_at(first)]
  # Find the days whose offset changes, then the second by bisection (a zone that
  # changed twice in one day, which no current zone does, would keep one change).
  for day in range(first, last, _DAY):
    if offset_at(day + _DAY) == offsets[-1]:
      continue
    low, high = day, day + _DAY  # the offset at `low` is the old one, at `high` the new
    while high - low > 1:
      middle = (low + high) // 2
      low, high = (middle, high) if offset_at(middle) == offsets[-1] else (low, middle)
    starts.append(high)
    offsets.append(offset_at(high))
  return np.array(starts, dtype=np.int64), np.array(offsets, dtype=np.int64)
