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
