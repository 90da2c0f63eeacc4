"""Forecast metrics in NumPy, over every (window, step) pair of [N, H] arrays.

The benchmarks score forecasts with these, from the windows' forecasts and actuals as
arrays (tests check them against hand-computed values). q-risk is the product's NumPy one
(`evaluation.metrics.q_risk`), the normalized quantile loss of the TFT paper (Lim et al.
2021), 2 sum(pinball_q) / sum(|y|).
"""

from typing import Dict

import numpy as np

from evaluation.metrics import q_risk


def point_errors(forecast: np.ndarray, actual: np.ndarray, scale: float = 1.0
                 ) -> Dict[str, float]:
  """MSE and MAE of `forecast` against `actual`, both divided by `scale` first.

  Dividing by the target's train-split standard deviation gives the errors on the
  z-scored target (the mean cancels), as the ETTh1 protocol asks.
  """
  error = (np.asarray(forecast, np.float64) - np.asarray(actual, np.float64)) / scale
  return {'mse': float(np.mean(error ** 2)), 'mae': float(np.mean(np.abs(error)))}


def coverage(lower: np.ndarray, upper: np.ndarray, actual: np.ndarray) -> float:
  """Share of actuals inside [lower, upper]."""
  actual = np.asarray(actual)
  return float(np.mean((actual >= lower) & (actual <= upper)))


def quantile_errors(forecasts: Dict[float, np.ndarray], actual: np.ndarray
                    ) -> Dict[str, float]:
  """MAE of the median (over all steps, and by horizon step), q-risk at 0.5 and 0.9, and
  coverage of [P10, P90].

  Args:
    forecasts: quantile -> forecast [N, H]; needs 0.1, 0.5 and 0.9.
    actual: [N, H].
  """
  errors = np.abs(np.asarray(forecasts[0.5], np.float64) - np.asarray(actual, np.float64))
  return {'mae': float(errors.mean()), 'mae_by_step': errors.mean(axis=0).tolist(),
          'q_risk_p50': q_risk(forecasts[0.5], actual, 0.5),
          'q_risk_p90': q_risk(forecasts[0.9], actual, 0.9),
          'coverage_p10_p90': coverage(forecasts[0.1], forecasts[0.9], actual)}
