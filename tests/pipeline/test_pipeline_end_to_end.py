"""The real pipeline, run by LocalDagRunner on a tiny generated data set, with the refit
(as `tft-pipeline` runs it).

Asserts on what the metadata store recorded: every component executed, the model was
evaluated with finite metrics on the eval and the held-out test windows, blessed on the
test windows, refit on every period's rows and pushed, and the pushed model serves
forecasts; a second run whose test-period targets are absurd, with Beam's multi-process
runner (as on Vertex AI), wrote the same splits and windows, chose and fitted everything
as the first did and, not blessed, was not refit.
"""

import csv
import glob
import json
import math
import os

import numpy as np
import pytest
import tensorflow as tf
from tfx.utils import path_utils

from components import delivered_forecasts
from components.windowing import REFIT_SPLIT, WINDOW_REPORT_FILE
from evaluation import results
from evaluation.eval_config import split_slice
from pipeline import default_data, local_runner
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets
from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START, TARGET_FUTURE, TARGET_HISTORY
from tests.pipeline.training_segments import training_windows
from trainer_module import interval_calibration, training_record
from trainer_module.export import EVAL_SIGNATURE, quantile_key

pytestmark = pytest.mark.slow(seconds=185)  # runs a pipeline twice

EXPECTED_NODES = {
    'TimeSeriesExampleGen', 'StatisticsGen', 'ImportSchemaGen', 'ExampleValidator',
    'AnomalyGate', 'Transform', 'Windowing', 'GbmBaseline', 'Trainer', 'Refit',
    'latest_blessed_model_resolver', 'Evaluator',
    'InterpretationReportGen', 'Pusher', 'ForecastGen', 'DriftCheck',
    'latest_forecasts_resolver', 'ForecastScoring'}


ABSURD = 1e7  # added to every test-period target of the second run
DAYS, SERIES = 12, 3  # of the generated data


def _config(root, **blessing) -> PipelineConfig:
  """The pipeline over `root`/data, seeded, its split the default data set's (train, eval,
  test), blessed when the MAE is below 1e6 (and by the other `blessing` rules given), and
  a blessed model refit on every period's rows."""
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=6)
  split = datasets.get_dataset('synthetic').split
  return PipelineConfig(
      pipeline_name='tft-e2e', pipeline_root=str(root / 'pipeline_root'),
      data_root=str(root / 'data'), serving_model_dir=str(root / 'serving'),
      dataset=spec, time_split=split,
      blessing=Blessing(beat_naive_by=None, max_mae=1e6, **blessing),
      strides=default_strides(spec, split), train_steps=6,
      refit_splits=tuple(split.split_names),
      schema_file=datasets.curated_schema_path('synthetic'),
      training_options={'seed': 1, 'warm_start': False},
      model_overrides={'hidden_size': 8, 'batch_size': 16, 'max_epochs': 3})


def _generate(root) -> None:
  default_data.generate(str(root / 'data' / 'data.csv'), num_series=SERIES, days=DAYS, seed=1)


@pytest.fixture(scope='module')
def finished_run(tmp_path_factory, run_pipeline):
  root = tmp_path_factory.mktemp('run')
  _generate(root)
  config = _config(root)
  return config, run_pipeline(config)


def _not_forecast(summary):
  """What ForecastGen's report says of the series, and its list of those not forecast."""
  report = delivered_forecasts.read_report(summary.forecasts_uri)
  with open(os.path.join(summary.forecasts_uri, delivered_forecasts.NOT_FORECAST_CSV)) as f:
    return ({key: report[key] for key in ('series_forecast', 'series_not_forecast',
                                          'reasons_not_forecast')},
            list(csv.DictReader(f)))


def test_every_component_executed(finished_run):
  _, summary = finished_run
  states = {c.node_id: c.state for c in summary.components}
  assert set(states) == EXPECTED_NODES
  assert set(states.values()) == {'COMPLETE'}


def test_the_blessing_names_its_pipeline(finished_run):
  """What the Vertex baseline query filters on (`components.scoped_evaluator`)."""
  from ml_metadata import metadata_store
  from tfx import v1 as tfx

  config, _ = finished_run
  store = metadata_store.MetadataStore(tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(os.path.dirname(config.pipeline_root), 'metadata.sqlite')))
  blessing, = store.get_artifacts_by_type('ModelBlessing')
  assert blessing.custom_properties['pipeline_name'].string_value == 'tft-e2e'
  assert blessing.custom_properties['blessed'].int_value == 1


def test_evaluation_metrics_are_present_and_finite(finished_run):
  _, summary = finished_run
  for name in ('mean_absolute_error', 'mean_squared_error', 'example_count'):
    assert math.isfinite(summary.metrics[name]), (name, summary.metrics)
  assert summary.metrics['example_count'] > 0
  assert summary.metrics['mean_squared_error'] >= summary.metrics['mean_absolute_error'] ** 2


def test_the_summary_reports_the_calibrated_band_the_evaluator_scored(finished_run):
  config, summary = finished_run
  after = summary.calibration['eval_coverage_after']['0.1:0.9']
  # The Evaluator scores the served (calibrated) band on the same eval windows; the
  # actual that sets the factor lies on the band's edge, so rounding may move one step.
  one_step = 1 / (summary.eval_metrics['example_count'] * config.dataset.horizon)
  assert summary.eval_metrics['coverage_p10_p90'] == pytest.approx(after, abs=one_step + 1e-6)
  assert f'P10-P90 held {100 * summary.calibration["eval_coverage_before"]["0.1:0.9"]:.1f}%' \
      in summary.format(config.pipeline_root)


def _split_metrics(summary, split):
  """The summary's figures of one split's windows."""
  return summary.metrics if split == summary.judged_split else summary.eval_metrics


def test_the_test_windows_are_judged_and_the_eval_ones_reported_beside_them(finished_run):
  config, summary = finished_run
  assert summary.judged_split == 'test'
  test_windows, eval_windows = len(_window_order(config, 'test')), len(_window_order(
      config, 'eval'))
  assert summary.metrics['example_count'] == test_windows > 0
  assert summary.eval_metrics['example_count'] == eval_windows > 0
  text = summary.format(config.pipeline_root)
  held_out = text.index('  test metrics, held out (original units; nothing chose on the test '
                        'windows, and the blessing was decided on them):')
  eval_block = text.index('  eval windows (they chose the epoch and the bands, so their '
                          'figures flatter the model):')
  assert held_out < eval_block < text.index('  blessed:     yes')


@pytest.mark.parametrize('split', ['eval', 'test'])
def test_the_naive_forecasts_are_scored_on_the_same_windows(finished_run, split):
  config, summary = finished_run
  actuals, forecasts, _ = _windows_and_forecasts(config, summary, split)
  files = glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                 f'Split-{split}', '*.gz'))
  histories = np.array([tf.train.Example.FromString(r.numpy()).features.feature[
      TARGET_HISTORY].float_list.value for r in tf.data.TFRecordDataset(files, 'GZIP')])
  repeat_last = np.abs(actuals - histories[:, -1:]).mean()
  history_mean = np.abs(actuals - histories.mean(axis=1, keepdims=True)).mean()
  seasonal_24 = np.abs(actuals - histories[:, -24:][:, :actuals.shape[1]]).mean()
  metrics = _split_metrics(summary, split)
  assert metrics['naive_mae_repeat_last'] == pytest.approx(repeat_last, rel=1e-5)
  assert metrics['naive_mae_history_mean'] == pytest.approx(history_mean, rel=1e-5)
  assert metrics['naive_mae_seasonal_24'] == pytest.approx(seasonal_24, rel=1e-5)
  assert metrics['mae_vs_best_naive'] == pytest.approx(
      np.abs(actuals - forecasts[1]).mean() / min(repeat_last, history_mean, seasonal_24),
      rel=1e-4)


def test_the_gradient_boosted_baseline_is_scored_on_the_evaluators_windows(finished_run):
  config, summary = finished_run
  gbm = summary.gbm_baseline
  # Its naive forecasts, computed by its own code, score as the Evaluator's: same windows.
  for split in ('eval', 'test'):
    for name, value in gbm['by_split'][split]['naive_mae'].items():
      assert _split_metrics(summary, split)[f'naive_mae_{name}'] == pytest.approx(
          value, rel=1e-5), (split, name)
  assert gbm['scored_split'] == 'test' and gbm['mae'] == gbm['by_split']['test']['mae']
  assert gbm['eval_windows'] == summary.eval_metrics['example_count']
  assert gbm['scored_windows'] == summary.metrics['example_count']
  assert gbm['training_windows'] == gbm['training_windows_available'] > 0
  assert math.isfinite(gbm['mae']) and min(gbm['rounds'].values()) >= 1
  text = summary.format(config.pipeline_root)
  assert (f'MAE beside a global LightGBM and the naive forecasts: model '
          f'{summary.metrics["mean_absolute_error"]:.4g} | LightGBM {gbm["mae"]:.4g} |' in text)
  # A model per quantile of the TFT's, its band calibrated on the eval windows as the TFT's.
  assert gbm['quantiles'] == list(config.model_config.quantiles)
  assert set(gbm['interval_factors']) == {'0.1:0.9'}
  assert gbm['by_split']['eval']['coverage']['0.1:0.9'] >= 0.8
  assert (f"q-risk P10 / P50 / P90 beside LightGBM's: model "
          f"{summary.metrics['q_risk_p10']:.4g} / " in text)
  assert (f'    MAE beside a global LightGBM and the naive forecasts: model '
          f'{summary.eval_metrics["mean_absolute_error"]:.4g} | LightGBM '
          f'{gbm["by_split"]["eval"]["mae"]:.4g} |' in text)


def test_series_without_known_values_for_the_horizon_are_listed_not_dropped(finished_run):
  _, summary = finished_run
  report = delivered_forecasts.read_report(summary.forecasts_uri)
  assert (report['series_forecast'], report['series_not_forecast']) == (0, 3)
  with open(os.path.join(summary.forecasts_uri, delivered_forecasts.NOT_FORECAST_CSV)) as f:
    listed = list(csv.DictReader(f))
  assert sorted(row['station'] for row in listed) == ['station_00', 'station_01',
                                                       'station_02']
  assert all("known columns ['price'] have no values" in row['reason'] for row in listed)


def test_blessed_model_is_pushed_and_serves_forecasts(finished_run):
  config, summary = finished_run
  assert summary.blessed is True
  assert summary.pushed_to and summary.pushed_to.startswith(config.serving_model_dir)
  model = tf.saved_model.load(summary.pushed_to)
  eval_files = glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                      'Split-eval', '*.gz'))
  serialized = [r.numpy() for r in tf.data.TFRecordDataset(eval_files, 'GZIP').take(4)]
  # The Evaluator's signature: windows as the windowing component writes them. (Raw
  # windows through `serving_default` are tested in tests/trainer_module/test_export.py.)
  outputs = model.signatures[EVAL_SIGNATURE](examples=tf.constant(serialized))
  horizon = config.dataset.horizon
  forecasts = {q: outputs[quantile_key(q)].numpy() for q in (0.1, 0.5, 0.9)}
  assert all(f.shape == (4, horizon) and np.all(np.isfinite(f)) for f in forecasts.values())
  median = forecasts[0.5]
  # Forecasts are in original units: the same order of magnitude as the actuals.
  actuals = np.array([tf.io.parse_single_example(
      s, {TARGET_FUTURE: tf.io.FixedLenFeature([horizon], tf.float32)})[TARGET_FUTURE].numpy()
      for s in serialized])
  assert 0.1 < np.median(median) / np.median(actuals) < 10


def _window_order(config, split):
  """(series key, forecast start) of the split's windows, its files read in name order."""
  files = sorted(glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                        f'Split-{split}', '*.gz')))
  parsed = tf.io.parse_example(
      [r.numpy() for r in tf.data.TFRecordDataset(files, 'GZIP')],
      {SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
       FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)})
  return list(zip(parsed[SERIES_KEY].numpy()[:, 0], parsed[FORECAST_START].numpy()[:, 0]))


def test_eval_windows_are_written_in_series_then_time_order(finished_run):
  order = _window_order(finished_run[0], 'eval')
  assert len({key for key, _ in order}) == 3
  assert order == sorted(order)


def test_training_windows_are_written_mixed_across_series(finished_run):
  config = finished_run[0]
  files = sorted(glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                        'Split-train', '*.gz')))
  order = training_windows(files, config.dataset)
  assert len(set(order)) == len(order)
  # Segments in series order would give the first half two series at most; mixed, it
  # holds all three.
  assert len({key for key, _ in order[:len(order) // 2]}) == 3


def _windows_and_forecasts(config, summary, split='eval'):
  """Every window of `split`: its actuals, series and the Trainer model's quantile
  forecasts."""
  model = tf.saved_model.load(path_utils.serving_model_path(summary.model_uri))
  files = glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                 f'Split-{split}', '*.gz'))
  serialized = [r.numpy() for r in tf.data.TFRecordDataset(files, 'GZIP')]
  outputs = model.signatures[EVAL_SIGNATURE](examples=tf.constant(serialized))
  forecasts = np.stack([outputs[quantile_key(q)].numpy() for q in (0.1, 0.5, 0.9)])
  parsed = tf.io.parse_example(serialized, {
      TARGET_FUTURE: tf.io.FixedLenFeature([config.dataset.horizon], tf.float32),
      SERIES_KEY: tf.io.FixedLenFeature([1], tf.string)})
  actuals = parsed[TARGET_FUTURE].numpy().astype(np.float64)
  series = np.array([s.decode() for s in parsed[SERIES_KEY].numpy()[:, 0]])
  return actuals, forecasts.astype(np.float64), series


def _numpy_metrics(actuals, forecasts):
  """The Evaluator's metrics, computed directly: forecasts [Q=3, N, H], actuals [N, H]."""
  quantiles = np.array([0.1, 0.5, 0.9])[:, None, None]
  error = actuals[None] - forecasts
  pinball = np.maximum(quantiles * error, (quantiles - 1) * error)
  median_error = actuals - forecasts[1]
  expected = {
      'example_count': float(len(actuals)),
      'mean_absolute_error': np.mean(np.abs(median_error)),
      'mean_squared_error': np.mean(median_error ** 2),
      'coverage_p10_p90': np.mean((actuals >= forecasts[0]) & (actuals <= forecasts[2])),
      'mean_absolute_error_by_step': np.mean(np.abs(median_error), axis=0),
  }
  for i, name in enumerate(('p10', 'p50', 'p90')):
    expected[f'quantile_loss_{name}'] = np.mean(pinball[i])
    expected[f'q_risk_{name}'] = 2 * np.sum(pinball[i]) / np.sum(np.abs(actuals))
  return expected


def test_served_quantiles_are_in_order(finished_run):
  """The model is briefly trained; whatever order its own quantiles came in, it serves
  P10 <= P50 <= P90 at every step."""
  _, forecasts, _ = _windows_and_forecasts(*finished_run)
  assert (np.diff(forecasts, axis=0) >= 0).all()


@pytest.mark.parametrize('split', ['eval', 'test'])
def test_tfma_metrics_equal_a_numpy_computation_on_the_same_predictions(finished_run, split):
  config, summary = finished_run
  actuals, forecasts, series = _windows_and_forecasts(config, summary, split)
  evaluated = results.candidate_metrics(summary.evaluation_uri)
  one_series = sorted(set(series))[0]
  in_series = series == one_series
  for slice_key, expected in (
      (split_slice(split), _numpy_metrics(actuals, forecasts)),
      (((SERIES_KEY, one_series),) + split_slice(split),
       _numpy_metrics(actuals[in_series], forecasts[:, in_series]))):
    got = evaluated[slice_key]
    for name, value in expected.items():
      np.testing.assert_allclose(got[name], value, rtol=1e-4, err_msg=f'{name} {slice_key}')
  if split == summary.judged_split:
    assert summary.metrics_by_step['mean_absolute_error_by_step'] == pytest.approx(
        list(evaluated[split_slice(split)]['mean_absolute_error_by_step']))


def test_the_interpretation_report_is_written_next_to_the_model(finished_run):
  _, summary = finished_run
  assert summary.report_uri
  files = os.listdir(summary.report_uri)
  assert 'index.html' in files and 'report.json' in files
  assert any(name.endswith('.png') for name in files)


def test_nothing_chose_on_the_test_windows_and_the_blessing_was_decided_on_them(
    finished_run, tmp_path_factory, run_pipeline):
  """The same data but for absurd test-period targets: the Trainer keeps the same epoch,
  calibrates the same bands and LightGBM fits the same rounds, as none of them read the
  test windows; the blessing, decided on them, changes. The run also bars a model behind
  LightGBM, so the Evaluator reads GbmBaseline's figures too.

  It runs Beam's multi-process DirectRunner, as Vertex AI runs the Beam components
  without Dataflow (every DoFn pickled into two worker processes), and must read the same
  rows into the same periods, write the same training windows and the eval and test
  windows in the same order, and forecast the same series as the in-process run."""
  config, summary = finished_run
  root = tmp_path_factory.mktemp('absurd_test_run')
  (root / 'data').mkdir()
  with open(os.path.join(config.data_root, 'data.csv')) as f:
    rows = list(csv.DictReader(f))
  test_start = summary.split_report['boundaries']['test_start']
  for row in rows:
    if row['timestamp'] >= test_start:  # ISO times of one grid: text order is time order
      row['load'] = str(float(row['load']) + ABSURD)
  with open(root / 'data' / 'data.csv', 'w', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
  absurd_config = _config(root, beat_lightgbm_by=0.0)
  absurd = run_pipeline(absurd_config, local_runner.beam_args(workers=2))

  assert {c.node_id: c.state for c in absurd.components} == dict.fromkeys(
      EXPECTED_NODES, 'COMPLETE')
  assert absurd.rows_read() == summary.rows_read() != ''  # counts and boundaries
  training_files = lambda run: sorted(glob.glob(os.path.join(
      run.pipeline_root, 'Windowing', 'windows', '*', 'Split-train', '*.gz')))
  assert (training_windows(training_files(absurd_config), absurd_config.dataset)
          == training_windows(training_files(config), config.dataset))
  for split in ('eval', 'test'):
    assert _window_order(absurd_config, split) == _window_order(config, split)
  assert _not_forecast(absurd) == _not_forecast(summary)

  model_dir = lambda run: path_utils.serving_model_path(run.model_uri)
  [record], [absurd_record] = (training_record.read(model_dir(run)) for run in (summary,
                                                                               absurd))
  assert absurd_record['best_epoch'] == record['best_epoch']
  # TensorFlow's kernels are not bit-for-bit deterministic: the same to rounding.
  assert absurd_record['best_val_loss'] == pytest.approx(record['best_val_loss'], rel=1e-3)
  factors, absurd_factors = (interval_calibration.read(model_dir(run))['factors']
                             for run in (summary, absurd))
  for band, ends in factors.items():
    for end, value in ends.items():
      assert absurd_factors[band][end] == pytest.approx(value, rel=1e-2, abs=1e-3), (band, end)
  assert absurd.gbm_baseline['rounds'] == summary.gbm_baseline['rounds']
  assert absurd.eval_metrics['naive_mae_repeat_last'] == pytest.approx(
      summary.eval_metrics['naive_mae_repeat_last'])
  assert summary.blessed is True
  assert absurd.blessed is False
  assert absurd.metrics['mean_absolute_error'] > 1e6
  assert any(reason.startswith('the test MAE is') and reason.endswith(
      'and the rule is the MAE at most 1e+06 (max_mae 1e+06)')
             for reason in absurd.not_blessed_because), absurd.not_blessed_because
  gbm_mae = absurd.gbm_baseline['by_split']['test']['mae']
  assert (f"the test MAE is {absurd.metrics['mean_absolute_error']:.4g}, LightGBM's "
          f"{gbm_mae:.4g} on the same windows, and the rule is the MAE at most 1 times "
          "LightGBM's (beat_lightgbm_by 0)" in absurd.not_blessed_because)
  assert absurd.decided_by == (
      'the test windows (held out: nothing chose on them): the MAE at most 1e+06 (max_mae '
      '1e+06); '
      "the MAE at most 1 times LightGBM's (beat_lightgbm_by 0)")
  # Not blessed, so not refit: the Refit passes the judged model on.
  assert absurd.pushed_to is None
  assert (training_record.read(_model_of(absurd_config, 'Refit'))
          == training_record.read(_model_of(absurd_config, 'Trainer')))
  assert absurd.refit == 'none: the judged model was not blessed, so it was not refit'


def _only_dir(config, component, output):
  parent = os.path.join(config.pipeline_root, component, output)
  found, = os.listdir(parent)
  return os.path.join(parent, found)


def _model_of(config, component):
  """The serving model directory of the Trainer's or the Refit's model."""
  return path_utils.serving_model_path(_only_dir(config, component, 'model'))


def test_the_refit_trains_on_every_window_of_every_period(finished_run):
  config, _ = finished_run
  report = json.load(open(os.path.join(_only_dir(config, 'Windowing', 'windows'),
                                       WINDOW_REPORT_FILE)))
  # Hourly rows without gaps: every start of a window over a series' whole span.
  assert report['windows'][REFIT_SPLIT] == SERIES * (DAYS * 24 - config.dataset.window_length
                                                     + 1)
  assert report['windows'][REFIT_SPLIT] > report['windows']['train'] + report['windows'][
      'eval'] + report['windows']['test']


def test_the_refit_trains_for_the_judged_epochs_and_serves_the_judged_bands(finished_run):
  config, summary = finished_run
  judged, refit = _model_of(config, 'Trainer'), _model_of(config, 'Refit')
  kept, = training_record.read(judged)
  record, = training_record.read(refit)
  assert record['refit'] is True and 'best_epoch' not in record
  assert record['epochs_run'] == kept['best_epoch']
  assert record['steps_per_epoch'] == kept['steps_per_epoch']
  assert (interval_calibration.read(refit)['factors']
          == interval_calibration.read(judged)['factors'])
  assert summary.model_uri == _only_dir(config, 'Trainer', 'model')
  assert summary.refit.startswith(f"refit on every period: {kept['best_epoch']} epochs")


def test_the_refit_model_is_published_and_forecast_with(finished_run):
  config, summary = finished_run
  assert summary.blessed is True
  refit = _model_of(config, 'Refit')
  assert training_record.read(summary.pushed_to) == training_record.read(refit)
  report = json.load(open(os.path.join(summary.forecasts_uri, 'forecast_report.json')))
  assert report['model'] == refit and report['model_blessed'] is True
