"""`benchmarks.stallion_calibration`: the band's factors fitted on the eval forecasts, on
those and a backtest origin's pooled, and on the backtest's alone, scored on the test
forecasts (hand-made bands and actuals; no model)."""

import numpy as np
import pytest

from benchmarks import stallion_calibration


def _bands(windows: int) -> np.ndarray:
  """Forecasts [N, 2, 3]: P10 0, P50 5, P90 10 at every step."""
  return np.broadcast_to(np.array([0.0, 5.0, 10.0]), (windows, 2, 3)).copy()


def test_the_backtest_scores_move_the_end_its_actuals_miss():
  rng = np.random.default_rng(0)
  eval_actual = rng.uniform(-2.5, 12.5, (200, 2))  # misses both ends alike
  backtest_actual = rng.uniform(5.0, 20.0, (200, 2))  # misses above only
  test_actual = rng.uniform(5.0, 20.0, (200, 2))

  results = stallion_calibration.compare(_bands(200), eval_actual, _bands(200),
                                         backtest_actual, _bands(200), test_actual, None)

  assert results['none']['factors'] == {}
  assert results['none']['test']['coverage'] == pytest.approx(np.mean(test_actual <= 10.0))
  upper = [results[variant]['factors']['0.1:0.9']['upper']
           for variant in ('eval', 'eval and backtest', 'backtest')]
  assert upper[0] < upper[1] < upper[2]
  coverage = [results[variant]['test']['coverage']
              for variant in ('eval', 'eval and backtest', 'backtest')]
  assert coverage[0] < coverage[1] < coverage[2]
  assert results['backtest']['test']['above_p90'] == pytest.approx(0.1, abs=0.05)


def test_band_figures_count_each_end_and_the_width():
  forecasts = _bands(2)
  actual = np.array([[-1.0, 5.0], [11.0, 10.0]])
  figures = stallion_calibration.band_figures(forecasts, actual)
  assert figures['coverage'] == 0.5
  assert figures['below_p10'] == 0.25 and figures['above_p90'] == 0.25
  assert figures['mean_width'] == 10.0


def test_a_directory_that_is_no_pipeline_root_is_named_with_what_to_pass(tmp_path):
  with pytest.raises(SystemExit, match=r'holds 0 Windowing/windows/\*, not one; pass the '
                     'pipeline root of one benchmark run'):
    stallion_calibration.main(['--run-root', str(tmp_path), '--backtest-run-root',
                               str(tmp_path), '--work-dir', str(tmp_path / 'work')])
