"""The whole pipeline on the reference data sets in ../shared/data, with a tiny model.

ETTh1 uses the standard borders (rows 8640 / 11520 / 14400) and its own model settings
(no known inputs, the history highway); Stallion has 350 series with static and
known-future covariates. Skipped when the data is not beside the repo.
"""

import glob
import json
import os

import pytest
import tensorflow as tf

from components.split_report import SPLIT_REPORT_FILE
from components.windowing import WINDOW_REPORT_FILE
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets
from schema.features import SERIES_KEY
from schema.time_split import parse_timestamp
from schema.window_layout import FORECAST_START
from trainer_module import training_period

pytestmark = pytest.mark.slow(seconds=215)  # runs a pipeline or trains a model



def _run(name, tmp_path_factory, run_pipeline):
  dataset = datasets.get_dataset(name)
  path = dataset.data_path
  if not os.path.exists(path):
    pytest.skip(f'reference data {path} not present')
  root = tmp_path_factory.mktemp(name)
  os.symlink(path, root / os.path.basename(path))
  config = PipelineConfig(
      pipeline_name=f'tft-{name}', pipeline_root=str(root / 'pipeline_root'),
      data_root=str(root), input_pattern='*.csv', serving_model_dir=str(root / 'serving'),
      dataset=dataset.spec, time_split=dataset.split,
      blessing=Blessing(beat_naive_by=None, max_mae=1e9),
      strides=default_strides(dataset.spec, dataset.split), train_steps=2,
      schema_file=datasets.curated_schema_path(name),
      model_overrides={**dataset.model_overrides, 'hidden_size': 8, 'num_heads': 1,
                       'max_epochs': 1})
  return config, run_pipeline(config)


def _report(config, component, output, name):
  [path] = glob.glob(os.path.join(config.pipeline_root, component, output, '*', name))
  with open(path) as f:
    return json.load(f)


def _windows(config, split, features):
  files = glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                 f'Split-{split}', '*.gz'))
  return [tf.io.parse_single_example(record, features)
          for record in tf.data.TFRecordDataset(files, 'GZIP')]


def test_etth1_with_standard_borders(tmp_path_factory, run_pipeline):
  config, summary = _run('etth1', tmp_path_factory, run_pipeline)
  assert summary.pushed_to
  rows = _report(config, 'TimeSeriesExampleGen', 'examples', SPLIT_REPORT_FILE)
  assert rows == {'train': 8640, 'eval': 2880, 'test': 2880, 'after_end': 17420 - 14400,
                  'spans': [0], 'files': [os.path.join(config.data_root, 'ETTh1.csv')],
                  'undeclared_columns': [], 'untrained_calendar_values': {},
                  'boundaries': {'eval_start': '2017-06-26 00:00:00',
                                 'test_start': '2017-10-24 00:00:00',
                                 'end': '2018-02-21 00:00:00'}}
  windows = _report(config, 'Windowing', 'windows', WINDOW_REPORT_FILE)
  # Forecasts start every 24 h and must fit inside their split.
  assert windows['windows'] == {'train': 8640 - 168 - 24 + 1, 'eval': 120, 'test': 120}
  assert windows['eval_start'] == '2017-06-26 00:00:00'  # as ExampleGen placed it
  assert training_period.trained_before(summary.pushed_to) == '2017-06-26 00:00:00'
  eval_start = parse_timestamp(config.time_split.eval_start)
  starts = [int(w[FORECAST_START][0]) for w in _windows(
      config, 'eval', {FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)})]
  assert min(starts) == eval_start


def test_stallion_with_its_350_series(tmp_path_factory, run_pipeline):
  config, summary = _run('stallion', tmp_path_factory, run_pipeline)
  assert summary.judged_split == 'test' and summary.metrics['example_count'] == 350
  assert summary.eval_metrics['example_count'] == 350
  rows = _report(config, 'TimeSeriesExampleGen', 'examples', SPLIT_REPORT_FILE)
  assert rows == {'train': 350 * 48, 'eval': 350 * 6, 'test': 350 * 6, 'after_end': 0,
                  'spans': [0],
                  'files': [os.path.join(config.data_root, 'stallion.csv')],
                  # Left out of the spec: the actual price and discount follow from the
                  # regular price and the discount in percent; the key is agency and sku.
                  'undeclared_columns': ['price_actual', 'discount', 'timeseries'],
                  'untrained_calendar_values': {},
                  'boundaries': {'eval_start': '2017-01-01 00:00:00',
                                 'test_start': '2017-07-01 00:00:00'}}
  windows = _report(config, 'Windowing', 'windows', WINDOW_REPORT_FILE)
  assert windows['series'] == 350
  assert windows['windows'] == {'train': 350 * (48 - 18 + 1), 'eval': 350, 'test': 350}
  keys = {w[SERIES_KEY].numpy()[0] for w in _windows(
      config, 'eval', {SERIES_KEY: tf.io.FixedLenFeature([1], tf.string)})}
  assert len(keys) == 350 and b'Agency_01|SKU_01' in keys
