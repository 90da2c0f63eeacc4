"""The benchmarks: metrics and naive forecasts by hand, and quick runs.

The quick ETTh1 and speed run goes through the real pipeline on the first 480 rows of
ETTh1 with a tiny model; it checks the results are complete and well formed, not what
they say. A pipeline run costs over a minute even so, so the Stallion benchmark gets a
stand-in run that returns known forecasts: what it checks is the protocol it asks the
pipeline for and the scoring. Skipped when the reference data is not beside the repo.
The window-mixing benchmark runs on a few hand-made series.
"""

import dataclasses
import json
import math
import os
import types

import numpy as np
import pandas as pd
import pytest

from benchmarks import (etth1_tuning, host, linear_baseline, metrics, pipeline_run, run_all,
                        stallion, stallion_tuning, time_zone, window_mixing)
from benchmarks.naive_baselines import naive_quantiles
from schema.time_split import TimeSplit
from schema.hparams import TFTConfig
from trainer_module import naive_forecasts

pytestmark = pytest.mark.slow(seconds=65)  # runs a pipeline or trains a model

DATA_DIR = host.SHARED_DATA_DIR
DATA_FILE = os.path.join(DATA_DIR, 'ETTh1.csv')
needs_data = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(DATA_DIR, name))
            for name in ('ETTh1.csv', 'stallion.csv')),
    reason='reference data not beside the repo')


def test_point_errors_on_the_scaled_target():
  forecast = np.array([[1.0, 2.0], [3.0, 4.0]])
  actual = np.array([[1.0, 4.0], [0.0, 4.0]])
  # Errors 0, -2, 3, 0; divided by the scale 2: 0, -1, 1.5, 0.
  assert metrics.point_errors(forecast, actual, scale=2.0) == pytest.approx(
      {'mse': (1 + 2.25) / 4, 'mae': 2.5 / 4})


def test_q_risk_and_coverage():
  actual = np.array([[10.0, -10.0]])
  forecast = np.array([[8.0, -7.0]])
  # Pinball at 0.9: 0.9 * 2 (under-forecast), 0.1 * 3 (over-forecast); sum |y| = 20.
  assert metrics.q_risk(forecast, actual, 0.9) == pytest.approx(2 * (1.8 + 0.3) / 20)
  assert metrics.q_risk(forecast, actual, 0.5) == pytest.approx(2 * (1.0 + 1.5) / 20)
  assert metrics.coverage(np.array([[9.0, -12.0]]), np.array([[10.0, -11.0]]),
                          actual) == 0.5


def test_quantile_errors_use_the_median_for_mae():
  actual = np.array([[4.0, 6.0]])
  forecasts = {0.1: np.array([[3.0, 5.0]]), 0.5: np.array([[5.0, 6.0]]),
               0.9: np.array([[4.0, 5.5]])}
  errors = metrics.quantile_errors(forecasts, actual)
  assert errors['mae'] == pytest.approx(0.5)
  assert errors['mae_by_step'] == pytest.approx([1.0, 0.0])
  assert errors['q_risk_p50'] == pytest.approx(2 * 0.5 * 1.0 / 10)
  assert errors['q_risk_p90'] == pytest.approx(2 * (0.1 * 0.0 + 0.9 * 0.5) / 10)
  assert errors['coverage_p10_p90'] == 0.5


def test_seasonal_naive_repeats_the_last_period():
  history = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
  forecasts = naive_forecasts.naive_forecasts(history, horizon=5, periods=[2, 5])
  np.testing.assert_array_equal(forecasts['repeat_last'], [[5.0] * 5])
  np.testing.assert_array_equal(forecasts['seasonal_2'], [[4.0, 5.0, 4.0, 5.0, 4.0]])
  np.testing.assert_array_equal(forecasts['seasonal_5'], history)


def test_naive_quantiles_centre_the_history_changes_on_the_last_value():
  # One-step changes 1, 1, 3, 3 (median 2); two-step changes 2, 4, 6 (median 4).
  history = np.array([[0.0, 1.0, 2.0, 5.0, 8.0]])
  quantiles = naive_quantiles(history, horizon=2, quantiles=[0.0, 0.5, 1.0])
  np.testing.assert_allclose(quantiles[0.5], [[8.0, 8.0]])
  np.testing.assert_allclose(quantiles[0.0], [[8.0 + 1 - 2, 8.0 + 2 - 4]])
  np.testing.assert_allclose(quantiles[1.0], [[8.0 + 3 - 2, 8.0 + 6 - 4]])


def test_sliding_windows_cover_the_series_at_stride_1():
  histories, futures = linear_baseline.sliding_windows(np.arange(6.0), lookback=3, horizon=2)
  np.testing.assert_array_equal(histories, [[0, 1, 2], [1, 2, 3]])
  np.testing.assert_array_equal(futures, [[3, 4], [4, 5]])
  with pytest.raises(ValueError, match='cannot hold one window of lookback 5 \\+ horizon 2'):
    linear_baseline.sliding_windows(np.arange(6.0), lookback=5, horizon=2)


def test_least_squares_nlinear_recovers_a_linear_recurrence():
  # A sinusoid plus a level obeys y[t] = c + 2 cos(w) y[t-1] - y[t-2]: NLinear's model
  # (a linear map of the history less its last value, plus a bias) forecasts it exactly.
  steps = np.arange(400)
  series = 20.0 + 3.0 * np.sin(2 * np.pi * steps / 24 + 0.3)
  train, test = series[:300], series[300:]
  coefficients = linear_baseline.fit(*linear_baseline.sliding_windows(train, 48, 12))
  histories, futures = linear_baseline.sliding_windows(test, 48, 12)
  np.testing.assert_allclose(linear_baseline.forecast(coefficients, histories), futures,
                             atol=1e-6)
  # Repeat-last is far off on the same windows: the fit is what forecasts the cycle.
  assert np.abs(histories[:, -1:] - futures).max() > 1.0


@needs_data
def test_quick_run_writes_complete_results(tmp_path):
  results_dir = tmp_path / 'results'
  assert run_all.main(['--quick', '--only', 'etth1', 'speed', '--data-dir', DATA_DIR,
                       '--work-dir', str(tmp_path / 'work'),
                       '--results-dir', str(results_dir)]) == 0

  etth1 = json.loads((results_dir / 'etth1.json').read_text())
  assert etth1['quick'] and etth1['machine']['cpu_count'] >= 1
  assert etth1['protocol']['train_rows'] == 240 and etth1['protocol']['test_rows'] == 120
  [run] = etth1['runs']
  assert run['test_windows'] == 120 - 12 + 1
  for errors in [run['model'], run['linear']] + list(run['naive'].values()):
    assert all(math.isfinite(errors[key]) and errors[key] >= 0 for key in ('mse', 'mae'))
  assert set(run['naive']) == {'repeat_last', 'history_mean', 'seasonal_24'}
  assert run['training']['epochs_run'] == 1
  assert {'Transform', 'Windowing', 'Trainer', 'Evaluator'} <= set(
      run['pipeline']['components'])
  assert run['pipeline']['peak_rss_mib'] > 0

  speed = json.loads((results_dir / 'speed.json').read_text())
  [figures] = speed['throughput'].values()
  assert figures['windows_per_second'] > 0 and figures['peak_rss_mib'] > 0

  table = (results_dir / 'results.md').read_text()
  for heading in ('## ETTh1', '## Local pipeline', '## Training throughput'):
    assert heading in table
  for name in ('etth1', 'speed'):  # when and on what each benchmark ran
    assert f'- {name}: quick smoke run (tiny data, a few steps) started ' in table


def _stallion_months_before_test(series: int) -> pd.DataFrame:
  """Volume of the first `series` Stallion series (rows) by month before the test period."""
  frame = pd.read_csv(os.path.join(DATA_DIR, stallion.DATA_FILE), parse_dates=['date'])
  frame = frame[frame['date'] < pd.Timestamp(stallion.SPLIT.test_start)]
  frame['key'] = frame['agency'] + '|' + frame['sku']
  keys = frame['key'].drop_duplicates().head(series)
  return frame.pivot_table(index='key', columns='date', values='volume').loc[keys]


@needs_data
def test_stallion_asks_for_the_protocol_and_scores_each_run(tmp_path, monkeypatch):
  asked = []
  months = _stallion_months_before_test(6)
  last = months.to_numpy()[:, -1]

  def stand_in(config, score_split):
    asked.append((config, score_split))
    # The windows' 12 months of history, in another order than the data file's.
    order = np.arange(6)[::-1]
    history = months.to_numpy(np.float32)[order, -config.dataset.encoder_steps:]
    actual = np.full((6, 6), 40.0)
    offset = float(len(asked))  # run 1 is off by 1 at the median, run 2 by 2
    forecasts = {0.1: actual - 2.0, 0.5: actual - offset, 0.9: actual + 1.0}
    return pipeline_run.RunResult(
        seconds=1.0, components={'Trainer': 1.0}, peak_rss_mib=1.0,
        window_counts={'train': 42, 'eval': 6, 'test': 6}, validation_losses=[[2.0, 1.0]],
        blessed=True, eval_metrics={}, scored=pipeline_run.ScoredWindows(
            series=months.index.to_numpy()[order].astype(bytes),
            forecast_start=np.full(6, 1498867200), history=history,
            actual=actual, forecasts=forecasts),
        test_metrics={'mean_absolute_error': offset},
        gbm_baseline={'by_split': {'test': dict(gbm_test, mae=250.0 + offset)},
                      'rounds': {'p10': 7, 'p50': 9, 'p90': 8}})

  monkeypatch.setattr(stallion.pipeline_run, 'run', stand_in)
  gbm_test = {'q_risk': {'p10': 0.05, 'p50': 0.15, 'p90': 0.07},
              'coverage': {'0.1:0.9': 0.8},
              'naive_mae': {'repeat_last': float(np.abs(40.0 - last).mean())}}
  result = stallion.run(dataclasses.replace(stallion.QUICK, repeats=2, ensemble_sizes=(1, 3)),
                        DATA_DIR, str(tmp_path))

  assert len(asked) == 4
  assert [config.model_config.ensemble_size for config, _ in asked] == [1, 1, 3, 3]
  assert [(run['ensemble_size'], run['repeat']) for run in result['runs']] == [
      (1, 1), (1, 2), (3, 1), (3, 2)]
  # Each run has a pipeline of its own, so none warm-starts from or resumes another.
  assert [config.pipeline_root for config, _ in asked] == [
      os.path.join(stallion.run_dir(str(tmp_path), size, repeat), 'pipeline_root')
      for size, repeat in ((1, 1), (1, 2), (3, 1), (3, 2))]
  assert len({config.pipeline_root for config, _ in asked}) == 4
  # The pipeline's gradient-boosted baseline, the same in every run: the first run's.
  assert result['pipeline_gbm'] == {**gbm_test, 'mae': 251.0,
                                    'rounds': {'p10': 7, 'p50': 9, 'p90': 8}}
  for config, split in asked:
    assert split == 'test'
    assert (config.dataset.encoder_steps, config.dataset.horizon) == (12, 6)
    assert (config.time_split.eval_start, config.time_split.test_start) == (
        '2017-01-01', '2017-07-01')
    assert config.strides == {'train': 1, 'eval': 6, 'test': 6}
  assert result['test_windows'] == result['protocol']['series'] == 6
  first, second = result['runs'][:2]
  # Run 1: off by 1 at the median, P90 1 above, P10-P90 covers every actual.
  assert first['model'].pop('mae_by_step') == pytest.approx([1.0] * 6)
  assert first['model'] == pytest.approx({
      'mae': 1.0, 'q_risk_p50': 2 * 0.5 * 36 / (36 * 40),
      'q_risk_p90': 2 * 0.1 * 36 / (36 * 40), 'coverage_p10_p90': 1.0, 'product_test_mae': 1.0})
  assert second['model']['mae'] == pytest.approx(2.0)
  assert second['model']['product_test_mae'] == 2.0  # the Evaluator's, checked against it
  # Naive: the last value of each series, its interval from the protocol's 36 months.
  naive = result['naive_last_value']
  assert naive['mae'] == pytest.approx(np.abs(40.0 - last).mean())
  assert naive['q_risk_p50'] == pytest.approx(np.abs(40.0 - last).sum() / (6 * 40.0))
  assert result['protocol']['history_months'] == 36
  assert result['protocol']['encoder_months'] == 12
  assert first['training']['epochs_run'] == 2 and first['training']['best_epoch'] == 2


def test_stallion_backtest_run_trains_one_tft_with_the_earlier_eval_period(
    tmp_path, monkeypatch, capsys):
  asked = []

  def stand_in(plan, data_dir, work_dir):
    asked.append((plan, data_dir, work_dir))
    return {'benchmark': 'stallion', 'runs': [{'seed': 1}]}

  monkeypatch.setattr(stallion, 'run', stand_in)
  assert stallion.main(['--eval-start', '2016-07-01', '--work-dir', str(tmp_path),
                        '--data-dir', 'somewhere']) == 0

  [(plan, data_dir, work_dir)] = asked
  assert (data_dir, work_dir) == ('somewhere', str(tmp_path))
  assert plan.split == TimeSplit(eval_start='2016-07-01', test_start='2017-07-01')
  assert (plan.repeats, plan.ensemble_sizes) == (1, (1,))
  assert (plan.model_overrides, plan.train_steps) == (stallion.FULL.model_overrides,
                                                      stallion.FULL.train_steps)
  with open(tmp_path / 'stallion.json') as f:
    assert json.load(f) == {'benchmark': 'stallion', 'runs': [{'seed': 1}]}
  root = os.path.join(str(tmp_path), 'stallion', 'e1-run-1', 'pipeline_root')
  assert f'--run-root {root}' in capsys.readouterr().out


def test_stallion_tuning_splits_the_eval_mae_by_forecast_start():
  july, january = 1467331200, 1483228800  # 2016-07-01 and 2017-01-01, epoch seconds
  actual = np.array([[10.0, 10.0], [20.0, 20.0], [30.0, 30.0]])
  median = actual + np.array([[1.0], [3.0], [-5.0]])
  windows = pipeline_run.ScoredWindows(
      series=np.array([b'a', b'a', b'b']), forecast_start=np.array([july, january, july]),
      history=np.zeros((3, 4)), actual=actual,
      forecasts={0.1: median - 1.0, 0.5: median, 0.9: median + 1.0})
  assert stallion_tuning.mae_by_forecast_start(windows) == {'2016-07-01': 3.0,
                                                            '2017-01-01': 3.0}
  windows.forecasts[0.5][1] += 1.0
  assert stallion_tuning.mae_by_forecast_start(windows)['2017-01-01'] == 4.0


@needs_data
def test_stallion_naive_history_refuses_windows_that_do_not_end_before_the_test():
  months = _stallion_months_before_test(2)
  keys = months.index.to_numpy().astype(bytes)
  data_file = os.path.join(DATA_DIR, stallion.DATA_FILE)
  np.testing.assert_array_equal(
      stallion.protocol_history(data_file, keys, months.to_numpy()[:, -1]),
      months.to_numpy(np.float32)[:, -stallion.NAIVE_HISTORY:])
  with pytest.raises(RuntimeError, match='do not end where the data file says'):
    stallion.protocol_history(data_file, keys, months.to_numpy()[:, -2])


@needs_data
def test_tuning_run_scores_the_protocol_windows(tmp_path):
  rows, lookback, horizon = 960, 48, 12
  output = tmp_path / 'tuning.jsonl'
  etth1_tuning.main(['--data', DATA_FILE, '--rows', str(rows), '--lookback', str(lookback),
                     '--horizon', str(horizon), '--steps', '2', '--epoch-steps', '1',
                     '--hidden-size', '8', '--num-heads', '1', '--output', str(output)])
  [result] = [json.loads(line) for line in output.read_text().splitlines()]

  # Test windows forecast every row of the last quarter; repeat-last by hand.
  target = pd.read_csv(DATA_FILE, nrows=rows).OT.to_numpy()
  scale = target[:rows // 2].std()
  starts = range(rows * 3 // 4, rows - horizon + 1)
  errors = np.array([(target[s:s + horizon] - target[s - 1]) / scale for s in starts])
  assert result['test']['windows'] == len(starts)
  assert result['test']['repeat_last']['mse'] == pytest.approx(np.mean(errors ** 2), rel=1e-5)
  assert result['epochs_run'] == 2 and np.isfinite(result['test']['tft']['mse'])


@needs_data
def test_tuning_run_can_train_on_the_loads_as_series_on_ots_scale(tmp_path):
  rows, lookback, horizon = 960, 48, 12
  args = etth1_tuning.parse_args(['--data', DATA_FILE, '--rows', str(rows), '--lookback',
                                  str(lookback), '--horizon', str(horizon), '--calendar',
                                  '--train-series', 'all'])
  frame, (train_end, _, _) = etth1_tuning.load(args)
  rows_by_name = etth1_tuning.series(frame, args, train_end)
  ot_only = etth1_tuning.windows(rows_by_name, args, lookback, train_end, 1)
  inputs, actual = etth1_tuning.with_loads_as_series(ot_only, rows_by_name, args, train_end,
                                                     frame.OT[:train_end])

  per_series = len(ot_only[1])
  assert per_series == train_end - lookback - horizon + 1
  assert len(actual) == 7 * per_series
  series_ids = inputs['static_categorical'][:, 0]
  np.testing.assert_array_equal(series_ids, np.repeat(np.arange(7), per_series))
  np.testing.assert_array_equal(actual[:per_series], ot_only[1])
  # The first load's first window, by hand: HUFL z-scored, on OT's train mean and std.
  hufl, ot = frame.HUFL[:train_end], frame.OT[:train_end]
  expected = (hufl - hufl.mean()) / hufl.std(ddof=0) * ot.std() + ot.mean()
  np.testing.assert_allclose(actual[per_series], expected[lookback:lookback + horizon],
                             rtol=1e-5)
  np.testing.assert_allclose(inputs['target_history'][per_series], expected[:lookback],
                             rtol=1e-5)


@needs_data
def test_tuning_run_trains_on_the_loads_only_in_the_univariate_setting():
  with pytest.raises(SystemExit, match='--train-series all is for the univariate'):
    etth1_tuning.main(['--data', DATA_FILE, '--rows', '960', '--lookback', '48',
                       '--multivariate', '--train-series', 'all'])


@needs_data
def test_tuning_run_rejects_too_few_rows():
  with pytest.raises(SystemExit, match='cannot hold one window'):
    etth1_tuning.main(['--data', DATA_FILE, '--rows', '100', '--lookback', '48'])


def test_training_figures_are_given_per_member_for_an_ensemble():
  # What `training` reads of a PipelineConfig.
  config = types.SimpleNamespace(
      train_steps=100, model_config=TFTConfig(max_epochs=10, ensemble_size=2))

  def training(validation_losses):
    return pipeline_run.RunResult(
        seconds=1.0, components={'Trainer': 4.0}, peak_rss_mib=1.0, window_counts={},
        validation_losses=validation_losses, blessed=True, eval_metrics={},
        scored=None).training(config)

  one = training([[3.0, 1.0, 2.0]])
  two = training([[3.0, 1.0, 2.0], [2.0, 1.5]])

  assert (one['epochs_run'], one['steps_run'], one['best_epoch']) == (3, 30, 2)
  assert one['best_validation_loss'] == 1.0 and 'members' not in one
  assert two['members'] == [
      {'epochs_run': 3, 'steps_run': 30, 'best_epoch': 2, 'best_validation_loss': 1.0},
      {'epochs_run': 2, 'steps_run': 20, 'best_epoch': 2, 'best_validation_loss': 1.5}]
  assert (two['max_steps'], two['trainer_seconds']) == (100, 4.0)


def test_window_mixing_counts_the_series_batches_draw_from(tmp_path, capsys):
  output = tmp_path / 'mixing.json'
  assert window_mixing.main(['--series', '20', '--windows', '50', '--shards', '2',
                             '--shuffle-buffer', '50', '--batch-size', '10', '--share', '0.2',
                             '--output', str(output)]) == 0
  results = json.loads(output.read_text())
  for name in ('series_order', 'mixed'):
    assert results[name]['shards'] == 2 and results[name]['batches'] == 20
    assert 1 <= results[name]['series_per_batch'] <= 10
  # 200 windows through a buffer of 50: series-ordered files give a few series.
  assert results['series_order']['series_seen'] < 10
  assert results['mixed']['series_seen'] == 20
  assert '| mixed | 2 | 20 | 20 |' in capsys.readouterr().out


@pytest.mark.parametrize('argv, message', [
    (['--shards', '0'], '--shards must be at least 1'),
    (['--share', '1.5'], '--share must be in'),
    (['--series', '2', '--shards', '3'], 'cannot exceed --series'),
])
def test_window_mixing_rejects_bad_settings(argv, message, capsys):
  with pytest.raises(SystemExit):
    window_mixing.main(argv)
  assert message in capsys.readouterr().err


def test_the_time_zone_benchmark_data_follow_the_local_clock(tmp_path):
  """The evening peak stays at 19:00 local time across the clock change: 18:00 UTC in
  winter, 17:00 UTC in summer; the times are written with their offsets."""
  path = str(tmp_path / 'load.csv')
  rows = time_zone.generate(path)
  data = pd.read_csv(path)
  assert rows == len(data) == time_zone.AREAS * len(data[data.area == 'area_0'])
  assert data.time.str.endswith('+01:00').any() and data.time.str.endswith('+02:00').any()
  utc = pd.to_datetime(data.time, utc=True)
  for month, peak in ((2, 18), (4, 17)):
    in_month = data[utc.dt.month == month]
    assert in_month.groupby(utc[utc.dt.month == month].dt.hour).load_mw.mean().idxmax() == peak
  assert time_zone.spec(time_zone.ZONE).time_zone == 'Europe/Berlin'
  assert time_zone.spec(None).time_zone is None


def test_a_run_whose_evaluator_disagrees_with_numpy_is_refused():
  result = pipeline_run.RunResult(
      seconds=1.0, components={}, peak_rss_mib=1.0, window_counts={}, validation_losses=[],
      blessed=True, eval_metrics={}, scored=None, test_metrics={'mean_absolute_error': 6.0})
  assert result.product_test_mae(2.0, scale=3.0) == 2.0
  with pytest.raises(RuntimeError, match="the Evaluator's test MAE 2.0 is not NumPy's 2.5"):
    result.product_test_mae(2.5, scale=3.0)
  without = dataclasses.replace(result, test_metrics={})
  with pytest.raises(RuntimeError, match='no test figures of the Evaluator'):
    without.product_test_mae(2.0)
