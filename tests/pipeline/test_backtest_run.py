"""`tft-pipeline backtest` on generated data: a fit per origin, the figures of the written
forecasts, the same forecasts from the backtest compiled into one pipeline, and no row at
or after an origin reaching its fit."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from pipeline import local_runner
from schema.time_split import parse_timestamp

pytestmark = pytest.mark.slow(seconds=340)  # runs the pipeline twice per origin

ARGS = ['--days', '20', '--series', '3', '--train-steps', '4', '--encoder-steps', '48',
        '--horizon', '12', '--seed', '1']
# Two origins show what a third would (each its own fit, a horizon apart) at 2/3 of the cost.
ORIGINS = (1, 2)


@pytest.fixture(scope='module')
def backtested(tmp_path_factory):
  root = tmp_path_factory.mktemp('backtest')
  assert local_runner.main(['backtest', *ARGS, '--origins', str(len(ORIGINS)),
                            '--output-dir', str(root)]) == 0
  return root / 'synthetic'


def _written(run_dir):
  out = run_dir / 'backtest'
  return (pd.read_csv(out / 'forecasts.csv'), json.loads((out / 'summary.json').read_text()))


def test_each_origin_is_a_fit_of_its_own_a_horizon_apart(backtested):
  frame, summary = _written(backtested)
  assert summary['origins'] == list(ORIGINS)
  for origin in ORIGINS:
    assert os.listdir(backtested / 'backtest' / f'origin-{origin}' / 'pipeline_root' /
                      'Trainer' / 'model')
  starts = [parse_timestamp(summary['origin_starts'][str(origin)]) for origin in ORIGINS]
  assert np.diff(starts).tolist() == [12 * 3600]
  # One window per series and origin, H steps each, every model's quantiles beside it.
  assert len(frame) == 3 * len(ORIGINS) * 12
  assert {'tft_p10', 'tft_p50', 'tft_p90', 'lightgbm_p50', 'naive_repeat_last'} <= set(frame)
  # The refit (the default) of each origin, on its rows before the origin, beside it.
  assert {'tft_refit_p10', 'tft_refit_p50', 'tft_refit_p90'} <= set(frame)
  assert summary['comparisons'][-1]['model'] == 'tft_refit_p50'
  assert (backtested / 'backtest' / 'forecasts.parquet').exists()
  assert (backtested / 'backtest' / 'index.html').read_text().count('<img') == 3


def test_the_summary_is_what_the_written_forecasts_give(backtested):
  frame, summary = _written(backtested)
  for model in ('tft_p50', 'tft_refit_p50', 'lightgbm_p50', summary['best_naive']):
    error = (frame[model] - frame['actual']).abs()
    assert summary['mae'][model] == pytest.approx(error.mean())
    assert summary['mae_by_origin'][model] == pytest.approx(
        [error[frame['origin'] == origin].mean() for origin in ORIGINS])
  naive = [c for c in frame if c.startswith('naive_')]
  assert summary['best_naive'] == min(naive, key=lambda c: (frame[c] - frame['actual']).abs()
                                      .mean())


def test_the_compiled_backtest_on_data_changed_after_an_origin_gives_the_local_forecasts(
    backtested, tmp_path, monkeypatch):
  """The origins as branches of one pipeline, scored by its last step, run here by
  LocalDagRunner as the Kubeflow V2 runner would run them side by side, on the data with
  every value of the newest origin's horizon changed: each origin's forecasts are the
  local run's (nothing at or after an origin reached its fit), only the actuals moved."""
  from tfx import v1 as tfx

  from pipeline import backtest
  from pipeline.pipeline import create_backtest_pipeline

  before, local = _written(backtested)
  data = pd.read_csv(backtested / 'data' / 'synthetic.csv', dtype=str)
  newest_start = before.loc[before['origin'] == ORIGINS[-1], 'time'].min()
  changed = data['timestamp'] >= newest_start
  data.loc[changed, 'load'] = (data.loc[changed, 'load'].astype(float) + 1000).astype(str)
  data.to_csv(tmp_path / 'changed.csv', index=False)
  made = {}
  monkeypatch.setattr(local_runner, '_backtest',
                      lambda args, config, output_dir, beam: made.update(config=config) or 0)
  assert local_runner.main(['backtest', *ARGS, '--origins', str(len(ORIGINS)), '--data',
                            str(tmp_path / 'changed.csv'), '--output-dir', str(tmp_path)]) == 0
  config = made['config'].replace(pipeline_root=str(tmp_path / 'one' / 'pipeline_root'))
  planned = backtest.plan(backtest.data_times(config), config.dataset, config.time_split,
                         len(ORIGINS))
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      str(tmp_path / 'one' / 'metadata.sqlite'))
  tfx.orchestration.LocalDagRunner().run(create_backtest_pipeline(
      config, planned, metadata, beam_pipeline_args=local_runner.BEAM_ARGS))
  report, = (tmp_path / 'one' / 'pipeline_root' / 'BacktestScoring' / 'report').iterdir()
  compiled = json.loads((report / 'summary.json').read_text())
  assert compiled['origin_starts'] == local['origin_starts']
  assert compiled['windows'] == local['windows']
  assert (report / 'index.html').read_text().count('<img') == 3
  order = ['origin', 'series', 'time']
  again = pd.read_csv(report / 'forecasts.csv').sort_values(order).reset_index(drop=True)
  before = before.sort_values(order).reset_index(drop=True)
  assert again[order].equals(before[order])
  # The same forecasts (the TFT's and its refit's to TensorFlow's rounding; LightGBM's
  # exactly); the actuals are the changed ones where they were changed.
  np.testing.assert_allclose(again['tft_p50'], before['tft_p50'], rtol=1e-3, atol=1e-3)
  np.testing.assert_allclose(again['tft_refit_p50'], before['tft_refit_p50'], rtol=1e-3,
                             atol=1e-3)
  np.testing.assert_array_equal(again['lightgbm_p50'], before['lightgbm_p50'])
  moved = (before['time'] >= newest_start).to_numpy()
  assert moved.any() and not moved.all()
  np.testing.assert_allclose(again['actual'], before['actual'] + 1000 * moved, rtol=1e-6)
