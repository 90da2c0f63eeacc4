"""Which members of an ensemble the exported model averages (`trainer_module.member_selection`)."""

import numpy as np
import pytest

from trainer_module import member_selection


def test_a_member_that_raises_the_means_loss_is_left_out():
  actual = np.array([[1.0, 2.0, 3.0]])
  members = np.array([actual + 0.1, actual - 0.1, actual + 5.0])  # [M=3, N=1, H=3]
  loss_of = lambda chosen: float(np.mean(np.abs(members[list(chosen)].mean(0) - actual)))
  assert member_selection.greedy_selection(loss_of, 3) == [0, 1]  # the third only hurts
  assert member_selection.greedy_selection(lambda chosen: 1.0 / len(chosen), 4) == [0, 1, 2, 3]
  assert member_selection.greedy_selection(lambda chosen: float(len(chosen)), 3) == [0]


def test_the_loss_of_a_mean_is_the_pinball_loss_of_the_members_mean_forecast():
  rng = np.random.default_rng(0)
  forecasts, actual = rng.normal(size=(3, 5, 4, 2)), rng.normal(size=(5, 4))
  quantiles = (0.1, 0.9)
  mean = forecasts[[0, 2]].mean(axis=0)
  error = actual[..., None] - mean
  by_hand = np.mean([np.maximum(q * error[..., i], (q - 1) * error[..., i])
                     for i, q in enumerate(quantiles)])
  assert member_selection.mean_loss(forecasts, actual, quantiles)([0, 2]) == pytest.approx(
      by_hand, rel=1e-6)
