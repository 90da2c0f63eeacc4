"""benchmarks.calibration_transfer: the bands before calibration, recovered from the served ones."""

import numpy as np
import pytest
import tensorflow as tf

from benchmarks import calibration_transfer
from trainer_module import interval_calibration

QUANTILES = (0.1, 0.5, 0.9)


@pytest.mark.parametrize('factors', [{'lower': 0.3, 'upper': 0.1},
                                     {'lower': -0.2, 'upper': 0.6}])
def test_the_band_before_calibration_is_recovered_from_the_served_one(factors):
  rng = np.random.default_rng(3)
  low = rng.normal(size=(20, 4)).astype(np.float32)
  forecasts = np.stack([low, low + 0.5, low + rng.uniform(1.0, 2.0, size=low.shape)], -1)
  served = interval_calibration.apply(tf.constant(forecasts), QUANTILES,
                                      {'0.1:0.9': factors}).numpy()

  lower, upper = calibration_transfer.uncalibrated_band(served[..., 0], served[..., 2],
                                                        factors)

  np.testing.assert_allclose(lower, forecasts[..., 0], atol=1e-5)
  np.testing.assert_allclose(upper, forecasts[..., 2], atol=1e-5)


def test_coverage_counts_the_actuals_inside_the_band_by_step():
  actual = np.array([[0.0, 5.0], [1.0, 2.0]])
  lower, upper = np.zeros_like(actual), np.full_like(actual, 2.0)

  np.testing.assert_allclose(calibration_transfer.coverage(lower, upper, actual, axis=0),
                             [1.0, 0.5])


def test_blocks_that_cover_alike_leave_no_spread():
  covered = np.array([[True, False], [True, True], [False, True], [True, True]])
  # Each block holds 3 of its 4 actuals.
  low, high = calibration_transfer.block_interval(covered, np.array([7, 7, 9, 9]))
  assert low == high == pytest.approx(0.75)


def test_a_block_draws_its_windows_together():
  # Block 1 holds every actual, block 2 none: a resample holds 0, 1/2 or all of them, and
  # with 2000 draws both ends turn up among the outer 5%.
  covered = np.array([[True, True], [True, True], [False, False]])
  low, high = calibration_transfer.block_interval(covered, np.array([1, 1, 2]))
  assert (low, high) == (0.0, 1.0)
  # Windows drawn one by one could not give 0 so often: the same actuals in 3 blocks.
  alone = calibration_transfer.block_interval(covered, np.array([1, 2, 3]))
  assert alone[0] > 0.0


def test_pooling_an_origin_whose_band_needs_nothing_moves_the_factors_part_way():
  rng = np.random.default_rng(5)

  def band_and_actual(spread):
    # Bands [-1, 1] around 0; actuals N(0, spread): the wider the spread, the more miss.
    actual = rng.normal(scale=spread, size=(400, 3))
    return (np.full_like(actual, -1.0), np.full_like(actual, 1.0)), actual

  eval_band, eval_actual = band_and_actual(1.6)
  backtest_band, backtest_actual = band_and_actual(0.78)  # P10-P90 of N(0, 0.78): +-1
  test_band, test_actual = band_and_actual(0.78)

  figures = calibration_transfer.pooled(test_band, test_actual, eval_band, eval_actual,
                                        backtest_band, backtest_actual)

  eval_only = interval_calibration.conformal_factors(*eval_band, eval_actual, 0.1)
  assert figures['backtest_windows'] == 400
  assert abs(figures['factors_backtest']['lower']) < 0.1
  assert 0.1 < figures['factors_pooled']['lower'] < eval_only['lower']
  assert 0.75 < figures['tft_backtest'] < 0.85 < figures['tft_pooled']
