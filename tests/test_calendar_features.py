"""Calendar features computed in the Transform graph agree with Python's calendar."""

import datetime

import numpy as np
import pytest
import tensorflow as tf

from trainer_module.preprocessing import calendar_feature


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
