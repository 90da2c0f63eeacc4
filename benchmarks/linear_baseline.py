"""NLinear's model fitted by least squares: the strongest simple bar on ETTh1.

NLinear (Zeng et al. 2023) subtracts the history's last value, maps the history linearly
to the horizon and adds the last value back. Here its weights and bias are the least-
squares fit on every stride-1 window of the train rows, the optimum of its training MSE,
instead of the paper's Adam with early stopping on the eval split: a deterministic
figure, the same in every run, that needs no eval split.
"""

from typing import Tuple

import numpy as np


def sliding_windows(series: np.ndarray, lookback: int, horizon: int
                    ) -> Tuple[np.ndarray, np.ndarray]:
  """Histories [N, lookback] and futures [N, horizon] of every stride-1 window of `series`.

  Raises:
    ValueError: `series` is shorter than one window.
  """
  series = np.asarray(series, np.float64)
  count = len(series) - lookback - horizon + 1
  if count < 1:
    raise ValueError(f'{len(series)} values cannot hold one window of lookback {lookback} '
                     f'+ horizon {horizon}; use more train rows or shorter windows')
  rows = np.arange(count)[:, None] + np.arange(lookback + horizon)[None]
  windows = series[rows]
  return windows[:, :lookback], windows[:, lookback:]


def _design(histories: np.ndarray) -> np.ndarray:
  """[history - last value, 1] per window: [N, E + 1]."""
  histories = np.asarray(histories, np.float64)
  return np.hstack([histories - histories[:, -1:], np.ones((len(histories), 1))])


def fit(histories: np.ndarray, futures: np.ndarray) -> np.ndarray:
  """Weights and bias [E + 1, H] minimising the squared error of `forecast` on the windows.

  The last column of the design (the last value minus itself) is zero; `lstsq` takes
  the minimum-norm solution, which gives it no weight.
  """
  futures = np.asarray(futures, np.float64)
  histories = np.asarray(histories, np.float64)
  return np.linalg.lstsq(_design(histories), futures - histories[:, -1:], rcond=None)[0]


def forecast(coefficients: np.ndarray, histories: np.ndarray) -> np.ndarray:
  """Point forecasts [N, H] from histories [N, E]."""
  histories = np.asarray(histories, np.float64)
  return histories[:, -1:] + _design(histories) @ coefficients
