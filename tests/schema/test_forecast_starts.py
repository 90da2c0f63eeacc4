"""The forecast-start rule that windowing, the pipeline's strides and init's draft share."""

import pytest

from schema import forecast_starts


@pytest.mark.parametrize('step, stride, first, last', [
    (0, 24, 0, 0), (1, 24, 24, 0), (23, 24, 24, 0), (24, 24, 24, 24), (25, 24, 48, 24),
    (-1, 7, 0, -7), (5, 1, 5, 5)])
def test_first_and_last_starts_around_a_step(step, stride, first, last):
  assert forecast_starts.first_start_from(step, stride) == first
  assert forecast_starts.last_start_until(step, stride) == last
  assert forecast_starts.starts_forecast(first, stride)
  assert forecast_starts.starts_forecast(last, stride)
  assert forecast_starts.starts_forecast(step, stride) == (first == step)


def test_training_windows_start_at_every_step_and_the_others_a_horizon_apart():
  assert forecast_starts.default_stride('train', 24) == 1
  assert forecast_starts.default_stride('eval', 24) == 24
  assert forecast_starts.default_stride('test', 6) == 6
