"""Time grids: every spacing users have, on and off the grid, and what each implies."""

import datetime

import pytest

from schema.frequency import Frequency


def _seconds(*fields) -> int:
  return int(datetime.datetime(*fields, tzinfo=datetime.timezone.utc).timestamp())


@pytest.mark.parametrize('text, canonical', [
    ('hourly', 'hourly'), ('1h', 'hourly'), ('60min', 'hourly'), ('15min', '15min'),
    ('30 min', '30min'), ('24h', 'daily'), ('daily', 'daily'), ('2d', '2d'),
    ('weekly', 'W-MON'), ('w-sun', 'W-SUN'), ('Monthly', 'monthly'), ('quarterly', 'quarterly'),
])
def test_spellings_have_one_canonical_form(text, canonical):
  assert Frequency(text).value == canonical
  assert Frequency(text) == Frequency(canonical)


@pytest.mark.parametrize('text', ['fortnightly', '0min', '15', 'W-XYZ', '', 7])
def test_unknown_frequencies_list_the_spellings(text):
  with pytest.raises(ValueError, match="'<N>min'.*'quarterly'"):
    Frequency(text)


@pytest.mark.parametrize('text, first, second', [
    ('15min', (2024, 3, 1, 23, 45), (2024, 3, 2, 0, 0)),
    ('30min', (2024, 3, 1, 0, 30), (2024, 3, 1, 1, 0)),
    ('hourly', (2024, 12, 31, 23), (2025, 1, 1, 0)),
    ('daily', (2024, 2, 28), (2024, 2, 29)),
    ('W-SUN', (2024, 3, 3), (2024, 3, 10)),  # Sundays
    ('W-MON', (2024, 3, 4), (2024, 3, 11)),
    ('monthly', (2024, 12, 1), (2025, 1, 1)),
    ('quarterly', (2024, 10, 1), (2025, 1, 1)),
])
def test_consecutive_times_are_consecutive_steps_and_map_back(text, first, second):
  frequency = Frequency(text)
  step = frequency.step_of(_seconds(*first))
  assert frequency.step_of(_seconds(*second)) == step + 1
  assert frequency.seconds_of(step) == _seconds(*first)
  assert frequency.seconds_of(step + 1) == _seconds(*second)


@pytest.mark.parametrize('text, moment', [
    ('15min', (2024, 3, 1, 10, 7)),
    ('hourly', (2024, 3, 1, 10, 30)),
    ('daily', (2024, 3, 1, 6)),
    ('W-SUN', (2024, 3, 4)),  # a Monday
    ('monthly', (2024, 3, 15)),
    ('quarterly', (2024, 2, 1)),
])
def test_times_off_the_grid_are_an_error_that_describes_the_grid(text, moment):
  frequency = Frequency(text)
  with pytest.raises(ValueError, match=f'not on the {frequency.value} grid .*align'):
    frequency.step_of(_seconds(*moment))


@pytest.mark.parametrize('text, moment, period_start', [
    ('hourly', (2024, 3, 1, 10, 30), (2024, 3, 1, 10)),
    ('daily', (2024, 3, 1, 23), (2024, 3, 1)),
    ('W-SUN', (2024, 3, 6), (2024, 3, 3)),  # Wednesday, in the week from Sunday
    ('monthly', (2024, 3, 31), (2024, 3, 1)),
    ('quarterly', (2024, 6, 30), (2024, 4, 1)),
])
def test_a_time_off_the_grid_falls_in_the_period_of_the_step_before_it(text, moment,
                                                                       period_start):
  frequency = Frequency(text)
  step = frequency.period_of(_seconds(*moment))
  assert frequency.seconds_of(step) == _seconds(*period_start)
  assert frequency.period_of(_seconds(*period_start)) == frequency.step_of(
      _seconds(*period_start))


@pytest.mark.parametrize('text, seasons', [
    ('15min', (96, 672)), ('hourly', (24, 168)), ('2h', (12, 84)), ('daily', (7,)),
    ('11min', ()), ('7min', (1440,)), ('W-MON', (52,)), ('monthly', (12,)), ('quarterly', (4,)),
])
def test_natural_seasons_in_steps(text, seasons):
  assert Frequency(text).seasons == seasons


@pytest.mark.parametrize('text, varying, constant', [
    ('15min', ['minute_of_hour', 'hour_of_day'], []),
    ('hourly', ['hour_of_day', 'day_of_week'], ['minute_of_hour']),
    ('daily', ['day_of_week', 'month_of_year'], ['hour_of_day']),
    ('W-MON', ['month_of_year'], ['day_of_week', 'hour_of_day']),
    ('monthly', ['month_of_year', 'quarter_of_year'], ['day_of_month', 'day_of_week']),
])
def test_calendar_features_that_vary_on_the_grid(text, varying, constant):
  frequency = Frequency(text)
  assert set(varying) <= set(frequency.varying_calendar_features())
  assert not set(constant) & set(frequency.varying_calendar_features())
  assert set(frequency.default_calendar_features()) <= set(
      frequency.varying_calendar_features())


@pytest.mark.parametrize('text, calendar, sub_daily', [
    ('15min', False, True), ('hourly', False, True), ('daily', False, False),
    ('W-MON', False, False), ('monthly', True, False), ('quarterly', True, False)])
def test_a_grid_says_whether_its_steps_are_calendar_periods_or_shorter_than_a_day(
    text, calendar, sub_daily):
  assert Frequency(text).is_calendar == calendar
  assert Frequency(text).is_sub_daily == sub_daily
