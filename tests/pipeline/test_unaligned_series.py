"""Series that end at different times: the eval and test periods are each series' own last
steps, so every series gets eval and test windows and a forecast from its own last row."""

import csv
import glob
import os

import pandas as pd
import pytest
import tensorflow as tf

from components import delivered_forecasts
from pipeline import default_data
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets
from schema.features import SERIES_KEY
from schema.time_split import TimeSplit

pytestmark = pytest.mark.slow(seconds=70)  # runs a pipeline

YEARS_APART = {'station_00': 0, 'station_01': 1, 'station_02': 2}  # each series' shift


def _shifted(path: str) -> None:
  """Moves each station's rows (in `path`, a CSV with a 'timestamp') its years on."""
  frame = pd.read_csv(path, dtype=str, keep_default_na=False)
  moved = pd.to_datetime(frame['timestamp']) + pd.to_timedelta(
      frame['station'].map(YEARS_APART) * 364, unit='D')  # 52 weeks: the same weekdays
  frame['timestamp'] = moved.dt.strftime('%Y-%m-%d %H:%M:%S')
  frame.to_csv(path, index=False)


@pytest.fixture(scope='module')
def unaligned_run(tmp_path_factory, run_pipeline):
  root = tmp_path_factory.mktemp('unaligned')
  data, future = root / 'data' / 'data.csv', root / 'future.csv'
  default_data.generate(str(data), num_series=3, days=12, seed=3, future_path=str(future),
                        future_steps=6)
  _shifted(str(data))
  _shifted(str(future))
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=6)
  split = TimeSplit(eval_start='last 48 steps of each series',
                    test_start='last 24 steps of each series')
  config = PipelineConfig(
      pipeline_name='tft-unaligned', pipeline_root=str(root / 'pipeline_root'),
      data_root=str(root / 'data'), serving_model_dir=str(root / 'serving'),
      dataset=spec, time_split=split, blessing=Blessing(beat_naive_by=None, max_mae=1e6),
      strides=default_strides(spec, split), train_steps=4, future_file=str(future),
      schema_file=datasets.curated_schema_path('synthetic'),
      model_overrides={'hidden_size': 8, 'batch_size': 16, 'max_epochs': 1})
  return config, run_pipeline(config)


def _series_of(config, split):
  files = glob.glob(os.path.join(config.pipeline_root, 'Windowing', 'windows', '*',
                                 f'Split-{split}', '*.gz'))
  return sorted({tf.train.Example.FromString(record.numpy()).features.feature[
      SERIES_KEY].bytes_list.value[0].decode()
                 for record in tf.data.TFRecordDataset(files, 'GZIP')})


@pytest.mark.parametrize('split', ['eval', 'test'])
def test_every_series_gets_windows_of_its_own_eval_and_test_periods(unaligned_run, split):
  config, summary = unaligned_run
  assert _series_of(config, split) == sorted(YEARS_APART)
  # 24 rows of each series in its own test period, 24 in its eval period.
  assert summary.split_report[split] == 3 * 24
  earliest, latest = summary.split_report['series_boundaries'][f'{split}_start']
  assert (earliest[:4], latest[:4]) == ('2024', '2026')
  assert summary.judged_split == 'test'


def test_every_series_is_forecast_from_its_own_last_row(unaligned_run):
  _, summary = unaligned_run
  with open(os.path.join(summary.forecasts_uri, delivered_forecasts.FORECASTS_CSV)) as f:
    rows = list(csv.DictReader(f))
  firsts = {row['station']: row['timestamp'] for row in rows if row['horizon_step'] == '1'}
  # 12 days from 2024-01-01, 52 weeks apart: each forecast starts after its own last hour.
  assert firsts == {'station_00': '2024-01-13 00:00:00', 'station_01': '2025-01-11 00:00:00',
                    'station_02': '2026-01-10 00:00:00'}
  assert delivered_forecasts.read_report(summary.forecasts_uri)['series_not_forecast'] == 0
