"""Calendar features computed in the Transform graph agree with Python's calendar."""

import datetime
import zoneinfo

import numpy as np
import pytest
import tensorflow as tf

from schema import time_zones
from trainer_module.preprocessing import calendar_feature, local_seconds


@pytest.fixture(scope='module')
def moments():
  rng = np.random.RandomState(0)
  start = datetime.datetime(1999, 12, 25, tzinfo=datetime.timezone.utc).timestamp()
  seconds = (start + rng.randint(0, 40 * 365 * 86400, size=2000)).astype(np.int64)
  # Leap days and year ends, where hand-written calendars go wrong.
  edges = [datetime.datetime(y, m, d, h, tzinfo=datetime.timezone.utc).timestamp()
           for y, m, d, h in ((2000, 2, 29, 0), (2000, 3, 1, 23), (2023, 12, 31, 23),
                              (2024, 1, 1, 0), (2100, 3, 1, 12), (1970, 1, 1, 0))]
  return np.concatenate([seconds, np.array(edges, dtype=np.int64)])


@pytest.mark.parametrize('feature, expected', [
    ('minute_of_hour', lambda m: m.minute),
    ('hour_of_day', lambda m: m.hour),
    ('day_of_week', lambda m: m.weekday()),
    ('day_of_month', lambda m: m.day - 1),
    ('month_of_year', lambda m: m.month - 1),
    ('quarter_of_year', lambda m: (m.month - 1) // 3),
])
def test_calendar_feature_matches_datetime(moments, feature, expected):
  got = calendar_feature(feature, tf.constant(moments)).numpy()
  want = [expected(datetime.datetime.fromtimestamp(int(s), tz=datetime.timezone.utc))
          for s in moments]
  np.testing.assert_array_equal(got, want)


def test_unknown_calendar_feature_is_an_error():
  with pytest.raises(ValueError, match='unknown calendar feature'):
    calendar_feature('week_of_moon', tf.constant([0], tf.int64))


def _utc(*fields):
  return int(datetime.datetime(*fields, tzinfo=datetime.timezone.utc).timestamp())


@pytest.mark.parametrize('zone', ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata',
                                  'Australia/Lord_Howe', 'UTC'])
def test_local_calendar_features_match_zoneinfo(moments, zone):
  """Read on a zone's clock, each feature is what Python's zoneinfo gives, across clock
  changes in both directions, half-hour offsets and the turn of the year."""
  local = local_seconds(tf.constant(moments), zone)
  for feature, expected in (('hour_of_day', lambda m: m.hour),
                            ('minute_of_hour', lambda m: m.minute),
                            ('day_of_week', lambda m: m.weekday()),
                            ('month_of_year', lambda m: m.month - 1)):
    want = [expected(datetime.datetime.fromtimestamp(int(s), zoneinfo.ZoneInfo(zone)))
            for s in moments]
    np.testing.assert_array_equal(calendar_feature(feature, local).numpy(), want,
                                  err_msg=f'{feature} in {zone}')


def test_the_local_hour_follows_a_clock_change():
  """Berlin's clock went from 02:00 (UTC+1) to 03:00 (UTC+2) at 01:00 UTC on 2024-03-31,
  and back from 03:00 to 02:00 at 01:00 UTC on 2024-10-27."""
  times = [_utc(2024, 3, 31, 0, 45), _utc(2024, 3, 31, 1, 0), _utc(2024, 10, 27, 0, 45),
           _utc(2024, 10, 27, 1, 0)]
  local = local_seconds(tf.constant(times, tf.int64), 'Europe/Berlin')
  assert calendar_feature('hour_of_day', local).numpy().tolist() == [1, 3, 2, 2]
  assert calendar_feature('minute_of_hour', local).numpy().tolist() == [45, 0, 45, 0]


@pytest.mark.parametrize('zone', ['America/New_York', 'Australia/Lord_Howe'])
def test_the_local_clock_is_right_either_side_of_every_change_of_a_year(zone):
  """Lord Howe's clock moves by half an hour; New York's back and forth by one."""
  starts, _ = time_zones.offset_table(zone)
  changes = starts[(starts >= _utc(2030, 1, 1)) & (starts < _utc(2031, 1, 1))]
  assert len(changes) == 2
  moments = np.concatenate([changes - 1, changes, changes + 1799])
  local = local_seconds(tf.constant(moments), zone)
  for feature, expected in (('hour_of_day', lambda m: m.hour),
                            ('minute_of_hour', lambda m: m.minute)):
    want = [expected(datetime.datetime.fromtimestamp(int(s), zoneinfo.ZoneInfo(zone)))
            for s in moments]
    np.testing.assert_array_equal(calendar_feature(feature, local).numpy(), want)


def test_outside_the_table_the_first_and_the_last_offsets_hold():
  """Before 1900, the zone's offset of 1900 (Kolkata's local mean time then, +05:21:10);
  after 2100, the offset the table ends on (Berlin's winter time, +01:00, in July too)."""
  assert time_zones.offset_table('Asia/Kolkata')[1][0] == 19270
  assert time_zones.offset_table('Europe/Berlin')[1][-1] == 3600
  early, late = _utc(1850, 6, 1), _utc(2150, 7, 1, 12)
  assert local_seconds(tf.constant([early], tf.int64), 'Asia/Kolkata').numpy() == early + 19270
  assert local_seconds(tf.constant([late], tf.int64), 'Europe/Berlin').numpy() == late + 3600


def test_offsets_are_tabulated_at_their_starts():
  starts, offsets = time_zones.offset_table('Europe/Berlin')
  changes = dict(zip(starts.tolist(), offsets.tolist()))
  assert changes[_utc(2024, 3, 31, 1)] == 7200 and changes[_utc(2024, 10, 27, 1)] == 3600
  assert _utc(2024, 6, 1) not in changes
  assert np.all(np.diff(starts) > 0)
  tokyo_starts, _ = time_zones.offset_table('Asia/Tokyo')
  assert tokyo_starts.max() < _utc(1952, 1, 1)  # no clock change since


def test_a_misspelt_zone_is_named_with_the_closest_ones():
  with pytest.raises(ValueError, match=r"'Europe/Berln' is not a time-zone name \(did you "
                                       r"mean 'Europe/Berlin'"):
    time_zones.check('Europe/Berln', 'spec')
  with pytest.raises(ValueError, match="'localtime' is not a time-zone name"):
    time_zones.check('localtime', 'spec')  # the host's clock, whichever host runs Transform
