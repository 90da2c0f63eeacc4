"""The naive forecasts' MAEs (`trainer_module.naive_forecasts.naive_maes`, which the
naive-baseline script prints) on hand-made windows, and the script's period check."""

import importlib.util
import os

import numpy as np
import pytest

from trainer_module import naive_forecasts

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     'benchmarks', 'naive_baselines.py')
_spec = importlib.util.spec_from_file_location('naive_baselines', _PATH)
naive_baselines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(naive_baselines)


def test_repeat_last_history_mean_and_seasonal_naive_mae():
  history = np.array([[1.0, 2.0, 3.0, 4.0]])
  future = np.array([[5.0, 8.0]])
  maes = naive_forecasts.naive_maes(history, future, periods=[2, 4])
  assert maes['repeat_last'] == pytest.approx((1.0 + 4.0) / 2)
  assert maes['history_mean'] == pytest.approx((abs(5 - 2.5) + abs(8 - 2.5)) / 2)
  assert maes['seasonal_2'] == pytest.approx((abs(5 - 3) + abs(8 - 4)) / 2)
  assert maes['seasonal_4'] == pytest.approx((abs(5 - 1) + abs(8 - 2)) / 2)


def test_period_outside_the_history_is_an_error():
  with pytest.raises(SystemExit, match='period 5 must lie in'):
    naive_baselines.check_periods([2, 5], encoder=4)
