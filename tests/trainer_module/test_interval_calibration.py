"""Conformalized intervals: the factors of each end, their effect on coverage, and what
they leave alone."""

import numpy as np
import pytest
import tensorflow as tf

from trainer_module import export
from trainer_module import interval_calibration as calibration

QUANTILES = (0.1, 0.5, 0.9)


def _forecasts(rng, n, band_scale, shift=0.0):
  """Forecasts [n, 4, 3] of actuals ~ N(0, 1): median `shift`, band shift +-band_scale."""
  actual = rng.normal(size=(n, 4))
  forecasts = shift + np.stack([np.full((n, 4), -band_scale), np.zeros((n, 4)),
                                np.full((n, 4), band_scale)], axis=-1)
  return forecasts, actual


def _share_below_and_above(forecasts, actual):
  return np.mean(actual < forecasts[..., 0]), np.mean(actual > forecasts[..., 2])


@pytest.mark.parametrize('band_scale', [0.5, 1.28, 3.0])  # too narrow, right, too wide
def test_the_calibrated_band_holds_its_nominal_share_on_fresh_data(band_scale):
  rng = np.random.default_rng(0)
  forecasts, actual = _forecasts(rng, 2000, band_scale)
  factors = calibration.fit(forecasts, actual, QUANTILES)
  fresh_forecasts, fresh_actual = _forecasts(rng, 20000, band_scale)
  calibrated = calibration.apply(tf.constant(fresh_forecasts), QUANTILES, factors).numpy()
  covered = calibration.coverage(calibrated, fresh_actual, QUANTILES)['0.1:0.9']
  assert covered == pytest.approx(0.8, abs=0.02)
  # Each end moved out when the band is too narrow, in when too wide, about kept when
  # right (the N(0, 1) P10-P90 band is +-1.2816); the median untouched.
  for factor in factors['0.1:0.9'].values():
    if band_scale == 1.28:
      assert abs(factor) < 0.05
    else:
      assert np.sign(factor) == np.sign(1.2816 - band_scale)
  np.testing.assert_array_equal(calibrated[..., 1], fresh_forecasts[..., 1])


def test_each_end_leaves_its_own_share_beyond_it_when_the_misses_lie_on_one_side():
  """A band of the right width 0.8 too high misses 32% of the actuals below it and 2%
  above; each end moves by its own factor, so each leaves 10% out on fresh data."""
  rng = np.random.default_rng(2)
  forecasts, actual = _forecasts(rng, 2000, 1.28, shift=0.8)
  assert _share_below_and_above(forecasts, actual) == pytest.approx((0.32, 0.02), abs=0.02)
  factors = calibration.fit(forecasts, actual, QUANTILES)['0.1:0.9']
  assert factors['lower'] > 0 > factors['upper']
  fresh_forecasts, fresh_actual = _forecasts(rng, 20000, 1.28, shift=0.8)
  calibrated = calibration.apply(tf.constant(fresh_forecasts), QUANTILES,
                                 {'0.1:0.9': factors}).numpy()
  assert _share_below_and_above(calibrated, fresh_actual) == pytest.approx((0.1, 0.1),
                                                                          abs=0.015)


def test_an_end_factor_is_the_split_conformal_rank_of_its_scores():
  lower, upper = np.zeros(9), np.ones(9)
  actual = np.array([-4, -3, -2, -1, 0.5, 2, 3, 4, 5], float)
  # below scores (lo - y) / 1: 4 3 2 1 -.5 -2 -3 -4 -5; above (y - hi) / 1: -5 -4 -3 -2
  # -.5 1 2 3 4. Tail 0.2: rank ceil(10 * 0.8) = 8 of each, sorted; each plus the margin
  # that keeps its actual inside after rounding.
  margin = calibration._ROUNDING_MARGIN
  assert calibration.conformal_factors(lower, upper, actual, 0.2) == pytest.approx(
      {'lower': 3.0 + margin, 'upper': 3.0 + margin})
  # Tail 0.4: rank 6 of each.
  assert calibration.conformal_factors(lower, upper, actual, 0.4) == pytest.approx(
      {'lower': 1.0 + margin, 'upper': 1.0 + margin})
  shifted = calibration.conformal_factors(lower, upper, actual + 1, 0.2)
  assert shifted == pytest.approx({'lower': 2.0 + margin, 'upper': 4.0 + margin})


def test_the_actual_an_end_stops_at_stays_inside_after_float32_rounding():
  rng = np.random.default_rng(3)
  forecasts, actual = _forecasts(rng, 2000, 1.28, shift=100.0)
  forecasts, actual = forecasts.astype(np.float32), (actual + 100.0).astype(np.float32)
  factors = calibration.fit(forecasts, actual, QUANTILES)
  served = calibration.apply(tf.constant(forecasts), QUANTILES, factors).numpy()
  lower, upper = served[..., 0], served[..., 2]
  for _ in range(4):  # ends moved in by a few float32 steps, as other kernels may round
    lower, upper = np.nextafter(lower, upper), np.nextafter(upper, lower)
  # What the split-conformal ranks promise, in float64: the actuals at most at the rank.
  width = (forecasts[..., 2] - forecasts[..., 0]).astype(np.float64)
  margin = calibration._ROUNDING_MARGIN
  promised = (((forecasts[..., 0] - actual) / width <= factors['0.1:0.9']['lower'] - margin)
              & ((actual - forecasts[..., 2]) / width <= factors['0.1:0.9']['upper'] - margin))
  assert np.mean((actual >= lower) & (actual <= upper)) >= np.mean(promised)


def test_an_end_never_moves_in_past_the_bands_middle():
  lower, upper = np.zeros(100), np.full(100, 10.0)
  actual = np.full(100, 5.0)  # all in the middle: both scores are -0.5 everywhere
  assert calibration.conformal_factors(lower, upper, actual, 0.1) == {'lower': -0.45,
                                                                      'upper': -0.45}


def test_only_symmetric_pairs_are_calibrated():
  assert calibration.quantile_pairs((0.1, 0.5, 0.9)) == ((0, 2),)
  assert calibration.quantile_pairs((0.05, 0.1, 0.5, 0.9, 0.95)) == ((0, 4), (1, 3))
  assert calibration.quantile_pairs((0.1, 0.5, 0.8)) == ()
  forecasts = tf.constant(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
  np.testing.assert_array_equal(
      calibration.apply(forecasts, (0.1, 0.5, 0.8),
                        {'0.1:0.8': {'lower': 1.0, 'upper': 1.0}}).numpy(),
      forecasts.numpy())


def test_crossed_band_ends_are_taken_in_order_in_fitting_and_serving():
  rng = np.random.default_rng(1)
  forecasts, actual = _forecasts(rng, 500, 1.0)
  crossed = forecasts[..., ::-1].copy()  # P10 above P90
  factors = calibration.fit(crossed, actual, QUANTILES)
  assert factors == calibration.fit(forecasts, actual, QUANTILES)
  served = calibration.apply(tf.constant(crossed), QUANTILES, factors).numpy()
  assert np.all(served[..., 0] <= served[..., 2])
  assert calibration.coverage(served, actual, QUANTILES)['0.1:0.9'] >= 0.8


def test_the_report_is_read_back_and_described(tmp_path):
  assert calibration.read(str(tmp_path)) is None  # a model exported without calibration
  report = {'factors': {'0.1:0.9': {'lower': -0.0204, 'upper': 0.3797}}, 'eval_windows': 350,
            'eval_coverage_before': {'0.1:0.9': 0.6567}, 'eval_coverage_after': {'0.1:0.9': 0.8003}}
  calibration.write(str(tmp_path), report)
  assert calibration.read(str(tmp_path)) == report
  assert calibration.describe(report) == (
      'P10-P90 held 65.7% of the eval actuals, 80.0% after calibration (its lower end moved '
      'in by 0.020 of its width, its upper end out by 0.380)')
  assert calibration.describe({**report, 'eval_out_of_order': 0.0}) == calibration.describe(
      report)
  assert calibration.describe({**report, 'eval_out_of_order': 0.0234}).endswith(
      "out by 0.380); the quantiles were out of order at 2.3% of the eval steps (the model's "
      'or after calibration), served in order')


def test_a_band_calibrated_on_few_eval_windows_is_described_with_a_note():
  report = {'factors': {'0.1:0.9': {'lower': 0.1, 'upper': 5.2}}, 'eval_windows': 43,
            'eval_coverage_before': {'0.1:0.9': 0.5}, 'eval_coverage_after': {'0.1:0.9': 0.8}}
  assert calibration.describe(report).endswith(
      'its upper end out by 5.200); calibrated on 43 eval windows, so each end of P10-P90 '
      'rests on about 4.3 of them: the factors may not hold on new data; a longer eval '
      'period (or more series) gives steadier ones')
  assert 'rests on' not in calibration.describe({**report, 'eval_windows': 100})
  # The outermost band counts: P2-P98 leaves fewer windows beyond its ends.
  report['factors']['0.02:0.98'] = {'lower': 0.0, 'upper': 0.0}
  for name in ('eval_coverage_before', 'eval_coverage_after'):
    report[name]['0.02:0.98'] = 0.96
  assert 'each end of P2-P98 rests on about 2.0 of them' in calibration.describe(
      {**report, 'eval_windows': 100})


def test_the_share_out_of_order_counts_steps_with_any_decrease():
  forecasts = np.array([[[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]],
                        [[1.0, 0.0, 2.0], [1.0, 1.0, 1.0]]])  # [N=2, H=2, Q=3]
  assert calibration.out_of_order(forecasts) == 0.5
  # Calibration that moves an end in past the median puts a step out of order too.
  calibrated = forecasts.copy()
  calibrated[0, 0, 0] = 1.5
  assert calibration.out_of_order(forecasts, calibrated) == 0.75


def test_served_bands_are_calibrated_then_raised_to_the_forecast_floor():
  forecasts = tf.constant([[[-4.0, -1.0, 2.0], [-3.0, -2.5, -2.0]]])  # [B=1, H=2, Q=3]
  quantiles, factors = (0.1, 0.5, 0.9), {'0.1:0.9': {'lower': 0.5, 'upper': -0.25}}
  calibrated = calibration.apply(forecasts, quantiles, factors).numpy()
  np.testing.assert_allclose(calibrated, [[[-7.0, -1.0, 0.5], [-3.5, -2.5, -2.25]]])
  served = export.served_quantiles(forecasts, quantiles, factors, 0.0).numpy()
  np.testing.assert_allclose(served, [[[0.0, 0.0, 0.5], [0.0, 0.0, 0.0]]])
  np.testing.assert_allclose(
      export.served_quantiles(forecasts, quantiles, factors, None).numpy(), calibrated)


def test_served_quantiles_are_put_in_order_around_the_median():
  """A P50 outside its band widens the band to it; the median itself never moves."""
  forecasts = tf.constant([[[1.0, 0.0, 2.0],     # P50 below P10
                            [-1.0, 3.0, 2.0],    # P50 above P90
                            [2.0, 1.0, 0.0],     # reversed: the band's ends swap
                            [-1.0, 0.5, 1.0]]])  # in order: unchanged
  served = export.served_quantiles(forecasts, QUANTILES, {}, None).numpy()
  np.testing.assert_array_equal(served, [[[0.0, 0.0, 2.0], [-1.0, 3.0, 3.0],
                                          [0.0, 1.0, 2.0], [-1.0, 0.5, 1.0]]])


def test_an_outer_band_is_widened_to_hold_the_inner_one():
  """Bands calibrated one by one can leave P10-P90 inside P25-P75; served, each
  quantile is at least as far out as the one inside it."""
  quantiles = (0.1, 0.25, 0.5, 0.75, 0.9)
  forecasts = tf.constant([[[-1.0, -2.0, 0.0, 3.0, 1.0]]])
  served = export.in_order_from_median(forecasts, quantiles).numpy()
  np.testing.assert_array_equal(served, [[[-2.0, -2.0, 0.0, 3.0, 3.0]]])


def test_without_a_median_the_quantile_closest_to_it_keeps_its_forecast():
  served = export.in_order_from_median(tf.constant([[[5.0, 1.0, 0.0]]]), (0.2, 0.4, 0.9))
  np.testing.assert_array_equal(served.numpy(), [[[1.0, 1.0, 1.0]]])


def test_calibration_that_moves_ends_in_still_serves_them_around_the_median():
  """An end moved in past the median (a narrow band, negative factors) is served at it."""
  forecasts = tf.constant([[[-1.0, 0.8, 1.0], [-1.0, -0.8, 1.0]]])
  factors = {'0.1:0.9': {'lower': -0.4, 'upper': -0.4}}
  moved = calibration.apply(forecasts, QUANTILES, factors).numpy()
  np.testing.assert_allclose(moved, [[[-0.2, 0.8, 0.2], [-0.2, -0.8, 0.2]]], atol=1e-6)
  served = export.served_quantiles(forecasts, QUANTILES, factors, None).numpy()
  np.testing.assert_allclose(served, [[[-0.2, 0.8, 0.8], [-0.8, -0.8, 0.2]]], atol=1e-6)
