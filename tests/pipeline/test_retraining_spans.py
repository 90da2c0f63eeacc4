"""Retraining as new data arrives: spans 1, 2 and 3, through the real pipeline.

The second run ingests span 2 and, listing the data directory, span 1 (`train_spans=2`),
trains on both, evaluates on span 2's eval rows only, warm-starts from the model blessed
in the first run, and the served model changes only if the new one is blessed. Each run
scores the forecasts the run before published, now that its data holds their actuals
(the forecast ledger): span 2's run scores span 1's, span 3's scores span 2's.
"""

import glob
import json
import os
import re

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from ml_metadata import metadata_store

from serving import model_publishing
from components import forecast_scoring
from components.split_report import SPLIT_REPORT_FILE
from pipeline import default_data
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets
from schema.window_layout import FORECAST_START
from tests.pipeline.span_futures import span_future
from tests.pipeline.training_segments import training_windows

pytestmark = pytest.mark.slow(seconds=205)  # runs a pipeline or trains a model

SPAN_2_START = pd.Timestamp('2024-01-13')
SPAN_3_START = pd.Timestamp('2024-01-20')
HORIZON = 6


@pytest.fixture(scope='module')
def spans(tmp_path_factory, run_pipeline):
  root = tmp_path_factory.mktemp('spans')
  all_rows = root / 'all.csv'
  default_data.generate(str(all_rows), num_series=3, days=27, seed=3)
  rows = pd.read_csv(all_rows)
  times = pd.to_datetime(rows['timestamp'])
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=HORIZON)
  split = datasets.get_dataset('synthetic').split
  config = PipelineConfig(
      pipeline_name='tft-spans', pipeline_root=str(root / 'pipeline_root'),
      data_root=str(root / 'data'), serving_model_dir=str(root / 'serving'),
      dataset=spec, time_split=split, blessing=Blessing(beat_naive_by=None, max_mae=1e6),
      strides=default_strides(spec, split), train_steps=20, train_spans=2,
      input_pattern='span-{SPAN}/*.csv',
      schema_file=datasets.curated_schema_path('synthetic'),
      model_overrides={'hidden_size': 8, 'batch_size': 32, 'max_epochs': 2})
  summaries = []
  for span, span_rows, end in (
      (1, rows[times < SPAN_2_START], SPAN_2_START),
      (2, rows[(times >= SPAN_2_START) & (times < SPAN_3_START)], SPAN_3_START),
      (3, rows[times >= SPAN_3_START], None)):
    os.makedirs(root / 'data' / f'span-{span}')
    span_rows.to_csv(root / 'data' / f'span-{span}' / 'rows.csv', index=False)
    future_file = None
    if end is not None:
      future_file = str(root / f'future-{span}.csv')
      span_future(rows, end, HORIZON).to_csv(future_file, index=False)
    summaries.append((run_pipeline(config.replace(future_file=future_file)),
                      model_publishing.versions(config.serving_model_dir)))
  store = metadata_store.MetadataStore(run_pipeline.last_metadata)
  return config, summaries, store, rows


def _inputs(store, node_id):
  """Per execution of `node_id`, oldest first: input key -> artifacts."""
  context = store.get_context_by_type_and_name('node', f'tft-spans.{node_id}')
  executions = sorted(store.get_executions_by_context(context.id), key=lambda e: e.id)
  result = []
  for execution in executions:
    events = [e for e in store.get_events_by_execution_ids([execution.id])
              if e.type == e.INPUT]
    by_key = {}
    for event in events:
      key = event.path.steps[0].key
      by_key.setdefault(key, []).extend(store.get_artifacts_by_id([event.artifact_id]))
    result.append(by_key)
  return result


def _outputs(store, node_id, key):
  context = store.get_context_by_type_and_name('node', f'tft-spans.{node_id}')
  executions = sorted(store.get_executions_by_context(context.id), key=lambda e: e.id)
  result = []
  for execution in executions:
    ids = [e.artifact_id for e in store.get_events_by_execution_ids([execution.id])
           if e.type == e.OUTPUT and e.path.steps[0].key == key]
    result.append(store.get_artifacts_by_id(ids))
  return result


def _span(artifact):
  return artifact.custom_properties['span'].int_value


def test_the_second_run_reads_the_new_span_and_trains_on_both(spans):
  config, [(first, _), (second, _), _], store, _ = spans
  ingested = _outputs(store, 'TimeSeriesExampleGen', 'examples')
  assert [[_span(a) for a in run] for run in ingested] == [[1], [2], [3]]
  reports = [json.loads(tf.io.gfile.GFile(os.path.join(
      run[0].uri, SPLIT_REPORT_FILE)).read()) for run in ingested]
  assert [report['spans'] for report in reports] == [[1], [1, 2], [2, 3]]
  # Span 1's rows are all training rows of the second run, beside span 2's own.
  span_1_rows = sum(reports[0][split] for split in config.time_split.split_names)
  span_2_rows = len(pd.read_csv(os.path.join(config.data_root, 'span-2', 'rows.csv')))
  span_2_train = reports[1]['train'] - span_1_rows
  assert 0 < span_2_train < span_2_rows
  assert span_2_train + reports[1]['eval'] + reports[1]['test'] == span_2_rows
  # The run summary says so.
  periods = [f"eval from {report['boundaries']['eval_start']} UTC; test from "
             f"{report['boundaries']['test_start']} UTC" for report in reports]
  counts = [f"train {report['train']} | eval {report['eval']} | test {report['test']}"
            for report in reports]
  assert first.rows_read() == f'{counts[0]} ({periods[0]})'
  assert (f'{counts[1]} ({periods[1]}; spans 1, 2: every row of the older spans is training '
          'data') in second.format('root')
  # Transform and Windowing read that one artifact.
  for node in ('Transform', 'Windowing'):
    assert [[a.id for a in run['examples']] for run in _inputs(store, node)] == [
        [run[0].id] for run in ingested]


def test_evaluation_windows_come_from_the_newest_span_only(spans):
  config, _, _, _ = spans
  [first, second, _] = sorted(glob.glob(os.path.join(config.pipeline_root, 'Windowing',
                                                  'windows', '*')), key=lambda d: int(
                                                      os.path.basename(d)))
  def starts(windows_dir, split):
    files = glob.glob(os.path.join(windows_dir, f'Split-{split}', '*.gz'))
    if split == 'train':  # segments
      return np.array([start for _, start in training_windows(files, config.dataset)])
    return np.array([tf.io.parse_single_example(r, {FORECAST_START: tf.io.FixedLenFeature(
        [1], tf.int64)})[FORECAST_START].numpy()[0]
        for r in tf.data.TFRecordDataset(files, 'GZIP')])
  span_2_start = SPAN_2_START.tz_localize('UTC').timestamp()
  assert starts(second, 'eval').min() >= span_2_start
  assert starts(first, 'eval').max() < span_2_start
  # Training windows of the second run span both spans, across the border.
  second_train = starts(second, 'train')
  assert second_train.min() < span_2_start <= second_train.max()
  assert len(second_train) > len(starts(first, 'train'))


def test_the_second_run_warm_starts_from_the_first_blessed_model(spans):
  _, [(first, _), (second, _), _], store, _ = spans
  assert first.blessed is True
  trainer_inputs = _inputs(store, 'Trainer')
  assert 'base_model' not in trainer_inputs[0]
  [base_model] = trainer_inputs[1]['base_model']
  [first_model] = _outputs(store, 'Trainer', 'model')[0]
  assert base_model.id == first_model.id
  # Each run's summary says how its training began.
  assert first.warm_start.startswith('warm start: no base model')
  assert second.warm_start.startswith('warm start: initialised ')
  assert f'from the base model {os.path.join(base_model.uri, "Format-Serving")}' in (
      second.warm_start)
  lines = second.format('root').splitlines()
  at = lines.index(f'  training:    {second.training}')
  assert lines[at + 1] == f'               {second.warm_start}'
  assert re.fullmatch(r'(stopped early after \d+ of|all) \d+ epochs of \d+ steps, the weights '
                      r'of epoch \d+ kept \(the lowest eval loss\)', second.training)


def test_the_served_model_changes_only_when_blessed(spans):
  _, [(first, first_versions), (second, second_versions), _], _, _ = spans
  assert len(first_versions) == 1
  if second.blessed:
    assert len(second_versions) == 2 and second.pushed_to.endswith(str(second_versions[-1]))
  else:
    assert second_versions == first_versions and second.pushed_to is None


def test_each_run_scores_the_forecasts_the_run_before_published(spans):
  config, summaries, store, rows = spans
  published = [run[0].uri for run in _outputs(store, 'ForecastGen', 'forecasts')]
  scored = [forecast_scoring.read_report(summary.scores_uri) for summary, _ in summaries]
  # The first run has nothing to score; it keeps nothing either.
  assert scored[0]['forecasts'] == [] and scored[0]['earlier_forecast'] is None
  assert 'nothing to score yet' in summaries[0][0].format('root')
  for run, start in ((1, SPAN_2_START), (2, SPAN_3_START)):
    report = scored[run]
    assert report['earlier_forecast'] == published[run - 1]
    [newest] = [e for e in report['forecasts'] if e['forecast_id'] == report['newest_scored']]
    assert newest['first_time'] == str(start)
    assert (newest['rows'], newest['rows_scored'], newest['not_yet_due']) == (18, 18, 0)
    # The figures are NumPy's on the forecasts that run published and the actuals.
    forecasts = pd.read_csv(os.path.join(published[run - 1], 'forecasts.csv')).merge(
        rows, on=['station', 'timestamp'])
    assert len(forecasts) == 18
    assert newest['mean_absolute_error'] == pytest.approx(
        np.mean(np.abs(forecasts['p50'] - forecasts['load'])), rel=1e-4)
    assert newest['coverage_p10_p90'] == pytest.approx(np.mean(
        (forecasts['p10'] <= forecasts['load']) & (forecasts['load'] <= forecasts['p90'])))
    repeat_last = rows[pd.to_datetime(rows['timestamp']) == start - pd.Timedelta(hours=1)]
    expected_naive = forecasts.merge(repeat_last[['station', 'load']], on='station',
                                     suffixes=('', '_last'))
    assert newest['naive_mae']['repeat_last'] == pytest.approx(
        np.mean(np.abs(expected_naive['load_last'] - expected_naive['load'])), rel=1e-4)
    # What the forecasts were expected to score: their model's held-out test MAE.
    assert newest['expected']['split'] == 'test'
    assert newest['expected']['mean_absolute_error'] > 0
    assert f"the forecasts from {start}" in summaries[run][0].format('root')
  # The ledger: both forecasts kept, each row scored once.
  ledger = pd.concat([pd.read_parquet(os.path.join(config.ledger_dir, 'scored', name))
                      for name in sorted(os.listdir(os.path.join(config.ledger_dir, 'scored')))])
  assert len(ledger) == 36 and not ledger.duplicated(['forecast_id', 'series',
                                                      'horizon_step']).any()
  assert len(os.listdir(os.path.join(config.ledger_dir, 'forecasts'))) == 2
