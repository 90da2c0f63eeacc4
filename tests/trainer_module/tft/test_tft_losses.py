"""Quantile loss and q-risk against hand computations."""

import numpy as np
import pytest
import tensorflow as tf

from trainer_module.tft.losses import pinball_loss
from trainer_module.tft.losses import QuantileLoss
from trainer_module.tft.losses import QuantileRisk

QUANTILES = (0.1, 0.5, 0.9)
# Two windows, horizon 2.
Y_TRUE = np.array([[10.0, 20.0], [-4.0, 0.0]], np.float32)
Y_PRED = np.array([
    [[8.0, 10.0, 12.0], [20.0, 20.0, 20.0]],
    [[-6.0, -5.0, -1.0], [1.0, 2.0, 3.0]],
], np.float32)
# Errors y - y_hat; pinball = q * e if e >= 0 else (q - 1) * e.
#   window 0, step 0: e = (2, 0, -2)  -> (0.2, 0.0, 0.2)
#   window 0, step 1: e = (0, 0, 0)   -> (0.0, 0.0, 0.0)
#   window 1, step 0: e = (2, 1, -3)  -> (0.2, 0.5, 0.3)
#   window 1, step 1: e = (-1, -2, -3) -> (0.9, 1.0, 0.3)
EXPECTED_PINBALL = np.array([
    [[0.2, 0.0, 0.2], [0.0, 0.0, 0.0]],
    [[0.2, 0.5, 0.3], [0.9, 1.0, 0.3]],
], np.float32)


def test_pinball_loss_matches_hand_computation():
  np.testing.assert_allclose(pinball_loss(Y_TRUE, Y_PRED, QUANTILES),
                             EXPECTED_PINBALL, atol=1e-6)


def test_quantile_loss_sums_quantiles_and_averages_the_rest():
  # Per window: sum over q of the mean over h.
  #   window 0: (0.1 + 0.0 + 0.1) = 0.2; window 1: (0.55 + 0.75 + 0.3) = 1.6
  loss = QuantileLoss(QUANTILES)(Y_TRUE, Y_PRED)
  np.testing.assert_allclose(loss, (0.2 + 1.6) / 2, atol=1e-6)


def test_squared_point_loss_replaces_the_median_term_only():
  # The P50 errors are (0, 0; 1, -2); the targets' population std is 8.5, so the
  # median's per-window terms are mean(e^2) / (2 * 8.5): 0 and 2.5 / 17.
  std = np.std(Y_TRUE)
  loss = QuantileLoss(QUANTILES, point_loss='squared')(Y_TRUE, Y_PRED)
  window_0 = 0.1 + 0.1
  window_1 = 0.55 + (1.0 + 4.0) / 2 / (2 * std) + 0.3
  np.testing.assert_allclose(loss, (window_0 + window_1) / 2, rtol=1e-6)


def test_squared_point_loss_pulls_the_median_towards_the_mean():
  # One window of skewed targets: pinball's best constant is the median (1), squared
  # error's the mean (4).
  y_true = np.array([[0.0, 1.0, 11.0]], np.float32)
  forecasts = {}
  for point_loss in ('pinball', 'squared'):
    level = tf.Variable(0.0)
    loss = QuantileLoss((0.5,), point_loss)
    for _ in range(300):  # gradient descent, step 0.5
      with tf.GradientTape() as tape:
        value = loss(y_true, tf.fill([1, 3, 1], level))
      level.assign_sub(0.5 * tape.gradient(value, level))
    forecasts[point_loss] = float(level.numpy())
  assert abs(forecasts['pinball'] - 1.0) < 0.2
  assert abs(forecasts['squared'] - 4.0) < 0.05


def test_squared_point_loss_of_a_flat_batch_is_finite():
  y_true = np.full([2, 3], 5.0, np.float32)
  loss = QuantileLoss(QUANTILES, 'squared')(y_true, np.full([2, 3, 3], 6.0, np.float32))
  assert np.isfinite(loss.numpy()) and loss.numpy() > 0


def test_squared_point_loss_needs_the_median():
  with pytest.raises(ValueError, match='0.5 quantile'):
    QuantileLoss((0.1, 0.9), 'squared')


def test_quantile_risk_accumulates_sums_across_batches():
  metric = QuantileRisk(0.5, QUANTILES)
  metric.update_state(Y_TRUE[:1], Y_PRED[:1])
  metric.update_state(Y_TRUE[1:], Y_PRED[1:])
  # Not the mean of per-batch ratios (0 and 2 * 1.5 / 4).
  np.testing.assert_allclose(metric.result(), 2 * 1.5 / 34, rtol=1e-6)
  metric.reset_state()
  metric.update_state(Y_TRUE[1:], Y_PRED[1:])
  np.testing.assert_allclose(metric.result(), 2 * 1.5 / 4, rtol=1e-6)


def test_quantile_risk_weights_windows():
  metric = QuantileRisk(0.9, QUANTILES)
  metric.update_state(Y_TRUE, Y_PRED, sample_weight=[0.0, 1.0])
  np.testing.assert_allclose(metric.result(), 2 * 0.6 / 4, rtol=1e-6)


def test_quantile_risk_round_trips_its_config():
  metric = QuantileRisk(0.9, QUANTILES)
  clone = QuantileRisk.from_config(metric.get_config())
  assert (clone.name, clone.quantile, clone.quantiles) == (
      'q_risk_90', 0.9, QUANTILES)


def test_quantile_loss_trains_through_keras_compile():
  loss = QuantileLoss.from_config(QuantileLoss(QUANTILES, 'squared').get_config())
  assert loss.point_loss == 'squared'
  predictions = tf.Variable(tf.zeros([2, 2, 3]))
  with tf.GradientTape() as tape:
    value = loss(Y_TRUE, predictions)
  assert tape.gradient(value, predictions).shape == (2, 2, 3)


def test_unknown_quantile_is_rejected():
  with pytest.raises(ValueError, match='not among'):
    QuantileRisk(0.75, QUANTILES)


@pytest.mark.parametrize('y_true, y_pred, message', [
    (Y_TRUE[..., np.newaxis], Y_PRED, r'targets \[B, H\]'),
    (Y_TRUE, Y_PRED[..., :2], '2 quantiles'),
])
def test_mismatched_shapes_are_rejected(y_true, y_pred, message):
  with pytest.raises(ValueError, match=message):
    pinball_loss(y_true, y_pred, QUANTILES)
