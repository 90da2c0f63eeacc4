"""The gap rule windows are cut by (`schema.window_cuts`), against a direct count."""

import numpy as np
import pytest

from schema.window_cuts import whole_windows


@pytest.mark.parametrize('window', [1, 2, 3, 5, 9])
def test_a_window_is_whole_where_every_one_of_its_steps_holds_a_value(window):
  present = np.random.default_rng(window).random(40) < 0.8
  expected = [start + window <= len(present) and bool(present[start:start + window].all())
              for start in range(len(present))]
  assert whole_windows(present, window).tolist() == expected


def test_a_series_shorter_than_a_window_holds_none():
  assert whole_windows(np.ones(3, dtype=bool), 4).tolist() == [False] * 3
  assert whole_windows(np.ones(4, dtype=bool), 4).tolist() == [True, False, False, False]
