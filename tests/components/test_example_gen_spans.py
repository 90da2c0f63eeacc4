"""The time-series ExampleGen under LocalDagRunner: spans and the split report."""

import json
import os

import pandas as pd
import tensorflow as tf
from tfx import v1 as tfx

from components.split_report import SPLIT_REPORT_FILE
from components.time_series_example_gen import TimeSeriesExampleGen
from pipeline import default_data
from pipeline.local_runner import BEAM_ARGS
from schema.datasets import SYNTHETIC
from schema.time_split import TimeSplit


def _ingest(tmp_path, train_spans,
            time_split=TimeSplit(eval_start='2024-01-03', test_start='2024-01-04')):
  """Spans 1 (2 series x 2 days, Wednesday and Thursday 2023-12-27 and 28, with a column
  the spec does not declare) and 4 (3 x 4 days from Monday 2024-01-01), ingested by one
  run; returns the split report and the artifact's directory."""
  data = tmp_path / 'data'
  older = data / 'span-1' / 'rows.csv'
  default_data.generate(str(older), num_series=2, days=2, seed=1)
  rows = pd.read_csv(older)
  rows['timestamp'] = (pd.to_datetime(rows['timestamp']) - pd.Timedelta(days=5)).dt.strftime(
      '%Y-%m-%d %H:%M:%S')
  rows['promo'] = 1
  rows.to_csv(older, index=False)
  default_data.generate(str(data / 'span-4' / 'rows.csv'), num_series=3, days=4, seed=2)
  example_gen = TimeSeriesExampleGen(
      input_base=str(data), dataset_spec=SYNTHETIC, input_pattern='span-{SPAN}/*.csv',
      time_split=time_split,
      train_spans=train_spans)
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      str(tmp_path / 'metadata.sqlite'))
  tfx.orchestration.LocalDagRunner().run(tfx.dsl.Pipeline(
      pipeline_name='spans', pipeline_root=str(tmp_path / 'root'),
      components=[example_gen], metadata_connection_config=metadata,
      beam_pipeline_args=BEAM_ARGS))
  [artifact_dir] = os.listdir(tmp_path / 'root' / 'TimeSeriesExampleGen' / 'examples')
  uri = tmp_path / 'root' / 'TimeSeriesExampleGen' / 'examples' / artifact_dir
  return json.loads((uri / SPLIT_REPORT_FILE).read_text()), uri


def test_latest_span_is_read_and_rows_are_split_by_time(tmp_path):
  report, uri = _ingest(tmp_path, train_spans=1)
  # Span 4 only: 3 series x 4 days x 24 h, days 1-2 train, day 3 eval, day 4 test.
  boundaries = {'eval_start': '2024-01-03 00:00:00', 'test_start': '2024-01-04 00:00:00'}
  assert report == {'train': 144, 'eval': 72, 'test': 72, 'after_end': 0, 'spans': [4],
                    'files': [str(tmp_path / 'data' / 'span-4' / 'rows.csv')],
                    'undeclared_columns': [], 'boundaries': boundaries,
                    # Trained on Monday and Tuesday; Wednesday, Thursday and Friday (the
                    # forecasts after the data) are new.
                    'untrained_calendar_values': {'day_of_week': [3, 3]}}
  assert sorted(os.listdir(uri)) == ['Split-eval', 'Split-test', 'Split-train',
                                     SPLIT_REPORT_FILE]
  # The same boundaries as the newest span's last steps (its last hour: 2024-01-04 23:00).
  relative, _ = _ingest(tmp_path / 'relative', train_spans=1, time_split=TimeSplit(
      eval_start='last 48 steps', test_start='last 24 steps'))
  assert relative == {**report, 'files': [str(tmp_path / 'relative' / 'data' / 'span-4' /
                                              'rows.csv')]}


def test_older_spans_are_listed_from_the_files_and_are_training_rows(tmp_path):
  report, uri = _ingest(tmp_path, train_spans=3)
  # Spans 1 and 4 (3 asked, 2 there): span 1's 2 x 2 x 24 rows join the training split;
  # the eval and test rows are span 4's, split by its own time range.
  assert report == {'train': 144 + 96, 'eval': 72, 'test': 72, 'after_end': 0,
                    'spans': [1, 4], 'files': [str(tmp_path / 'data' / f'span-{span}' / 'rows.csv')
                                               for span in (1, 4)],
                    'undeclared_columns': ['promo'],
                    'boundaries': {'eval_start': '2024-01-03 00:00:00',
                                   'test_start': '2024-01-04 00:00:00'},
                    # Span 1's Wednesday and Thursday train two of them; Friday is new.
                    'untrained_calendar_values': {'day_of_week': [1, 3]}}
  train = [tf.train.Example.FromString(record.numpy()) for record in tf.data.TFRecordDataset(
      tf.io.gfile.glob(str(uri / 'Split-train' / '*')), 'GZIP')]
  assert len(train) == 240
