"""The backtest's origins, its paired comparisons and its figures, on data made here."""


import numpy as np
import pandas as pd
import pytest

from evaluation import backtest_scores
from pipeline import backtest
from schema.datasets import SYNTHETIC
from schema.time_split import TimeSplit, format_time, parse_timestamp

SPEC = SYNTHETIC.with_window(encoder_steps=24, horizon=6)  # hourly, forecasts every 6 h


def _hours(first: str, count: int) -> np.ndarray:
  return parse_timestamp(first) + 3600 * np.arange(count)


def test_origins_are_a_horizon_apart_at_the_end_and_keep_the_specs_eval_length():
  times = _hours('2024-01-01', 240)  # to 2024-01-10 23:00
  split = TimeSplit(eval_start='last 48 steps', test_start='last 24 steps')
  origins = backtest.plan(times, SPEC, split, origins=3)
  assert [format_time(origin.start) for origin in origins] == [
      '2024-01-10 06:00:00', '2024-01-10 12:00:00', '2024-01-10 18:00:00']
  newest = origins[-1].split
  # The test period is the H steps from the origin; the eval period, 24 steps as in the
  # spec, ends where it begins; rows after the horizon are unused.
  assert (newest.eval_start, newest.test_start, newest.end) == (
      '2024-01-09 18:00:00', '2024-01-10 18:00:00', '2024-01-11 00:00:00')
  wider = backtest.plan(times, SPEC, split, origins=2, every=12)
  assert [format_time(origin.start) for origin in wider] == ['2024-01-10 06:00:00',
                                                             '2024-01-10 18:00:00']


@pytest.mark.parametrize('kwargs, split, message', [
    ({'origins': 2, 'every': 4}, TimeSplit(eval_start=0.8),
     r'--every 4: origins must lie a multiple of the horizon \(6 steps\) apart'),
    ({'origins': 0}, TimeSplit(eval_start=0.8), '--origins must be at least 1'),
    ({'origins': 30}, TimeSplit(eval_start='last 48 steps'),
     r'origin 1 of 30 \(2024-01-03 12:00:00\) leaves \d+ steps before its eval period of 48, '
     r'too few for one training window of 30'),
    ({'origins': 1}, TimeSplit(eval_start='last 48 steps of each series'),
     "the spec's periods are each series' last steps"),
])
def test_a_backtest_that_cannot_be_placed_says_why(kwargs, split, message):
  with pytest.raises(backtest.BacktestError, match=message):
    backtest.plan(_hours('2024-01-01', 240), SPEC, split, **kwargs)


def test_the_sign_test_is_the_binomial_tail_twice():
  assert backtest_scores.sign_test_p_value(9, 1) == pytest.approx(2 * 11 / 1024)
  assert backtest_scores.sign_test_p_value(5, 5) == 1.0
  assert backtest_scores.sign_test_p_value(0, 0) == 1.0
  assert backtest_scores.sign_test_p_value(0, 12) == pytest.approx(2 / 4096)
  # 350 series x 3 origins: beyond a float's 2 ** 1024.
  assert backtest_scores.sign_test_p_value(525, 525) == 1.0
  assert backtest_scores.sign_test_p_value(600, 450) == pytest.approx(4.0e-6, rel=0.05)
  assert backtest_scores.sign_test_p_value(0, 1100) == 0.0  # below the smallest float


def _frame(rng, origins=2, series=5, horizon=3) -> pd.DataFrame:
  rows = []
  for origin in range(1, origins + 1):
    for key in range(series):
      for step in range(1, horizon + 1):
        actual = 10.0 + rng.normal()
        tft, gbm = actual + rng.normal(0, 0.5), actual + rng.normal(0, 1.0)
        rows.append({'origin': origin, 'series': f's{key}', 'step': step, 'time': '',
                     'actual': actual, 'tft_p10': tft - 1, 'tft_p50': tft, 'tft_p90': tft + 1,
                     'lightgbm_p10': gbm - 1, 'lightgbm_p50': gbm, 'lightgbm_p90': gbm + 1,
                     'naive_repeat_last': actual + 2.0, 'naive_seasonal_24': actual - 1.5})
  return pd.DataFrame(rows)


def test_the_figures_are_those_of_the_rows():
  frame = _frame(np.random.default_rng(4))
  summary = backtest_scores.summarize(frame, [0.1, 0.5, 0.9])
  tft_error = np.abs(frame['tft_p50'] - frame['actual']).to_numpy()
  assert summary['mae']['tft_p50'] == pytest.approx(tft_error.mean())
  assert summary['mae_by_origin']['tft_p50'] == pytest.approx(
      [tft_error[:15].mean(), tft_error[15:].mean()])
  assert summary['mae_by_step']['tft_p50'][0] == pytest.approx(tft_error[::3].mean())
  inside = (frame['actual'] >= frame['tft_p10']) & (frame['actual'] <= frame['tft_p90'])
  assert summary['coverage']['tft'] == pytest.approx(inside.mean())
  assert summary['best_naive'] == 'naive_seasonal_24' and summary['windows'] == 10
  versus_gbm, versus_naive = summary['comparisons']
  window_tft = tft_error.reshape(10, 3).mean(axis=1)
  window_gbm = np.abs(frame['lightgbm_p50'] - frame['actual']).to_numpy().reshape(10, 3).mean(1)
  wins = int((window_tft < window_gbm).sum())
  assert (versus_gbm['windows_won'], versus_gbm['windows_lost']) == (wins, 10 - wins)
  assert versus_gbm['p_value'] == pytest.approx(backtest_scores.sign_test_p_value(wins, 10 - wins))
  # The TFT's errors are about a third of the seasonal naive forecast's 1.5 on every window.
  assert (versus_naive['windows_won'], versus_naive['verdict']) == (10, 'better')
  lines = backtest_scores.verdict(summary)
  assert lines[1].startswith('the TFT against the best naive forecast (seasonal_24): MAE ')
  assert lines[1].endswith('sign test p = 0.00195: the TFT is better')


def test_a_comparison_the_sign_test_cannot_tell_is_called_a_tie():
  frame = _frame(np.random.default_rng(5))
  frame['lightgbm_p50'] = frame['tft_p50'] + np.where(np.arange(len(frame)) % 6 < 3, 0.1, -0.1)
  summary = backtest_scores.summarize(frame, [0.1, 0.5, 0.9])
  assert summary['comparisons'][0]['verdict'] == 'tie'
  assert backtest_scores.verdict(summary)[0].endswith(': a tie')


def test_the_report_holds_every_forecast_the_summary_and_its_figures(tmp_path):
  from evaluation import backtest_report

  frame = _frame(np.random.default_rng(6))
  summary = backtest_scores.summarize(frame, [0.1, 0.5, 0.9])
  summary['origin_starts'] = {1: '2024-01-10 06:00:00', 2: '2024-01-10 12:00:00'}
  backtest_report.write(frame, summary, str(tmp_path), SPEC)
  pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / 'forecasts.parquet'), frame)
  assert len(pd.read_csv(tmp_path / 'forecasts.csv')) == len(frame)
  page = (tmp_path / 'index.html').read_text()
  assert '<td>2</td><td>2024-01-10 12:00:00</td>' in page
  assert backtest_scores.verdict(summary)[0] in page
  for figure in ('mae_by_step.png', 'coverage_by_step.png', 'series.png'):
    assert (tmp_path / figure).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_a_refit_is_scored_beside_the_tft_and_compared_with_it(tmp_path):
  from evaluation import backtest_report

  frame = _frame(np.random.default_rng(7))
  for quantile in ('p10', 'p50', 'p90'):
    frame[f'tft_refit_{quantile}'] = frame[f'tft_{quantile}'] - 0.2 * np.sign(
        frame['tft_p50'] - frame['actual'])
  summary = backtest_scores.summarize(frame, [0.1, 0.5, 0.9])
  assert set(summary['coverage']) == {'tft', 'tft_refit', 'lightgbm'}
  versus_tft = summary['comparisons'][-1]
  assert (versus_tft['model'], versus_tft['other']) == ('tft_refit_p50', 'tft_p50')
  assert summary['mae']['tft_refit_p50'] < summary['mae']['tft_p50']
  lines = backtest_scores.verdict(summary)
  assert lines[2].startswith('the refit TFT against the TFT: MAE ')
  assert 'the refit TFT' in lines[3]
  summary['origin_starts'] = {1: 'a', 2: 'b'}
  backtest_report.write(frame, summary, str(tmp_path), SPEC)
  assert '<th>refit TFT P50</th>' in (tmp_path / 'index.html').read_text()
