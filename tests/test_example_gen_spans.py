"""The time-series ExampleGen under LocalDagRunner: spans and the split report."""

import json
import os

from tfx import v1 as tfx

from components.time_series_example_gen import SPLIT_REPORT_FILE, TimeSeriesExampleGen
from pipeline import default_data
from pipeline.local_runner import BEAM_ARGS
from schema.datasets import SYNTHETIC
from schema.time_split import TimeSplit


def test_latest_span_is_read_and_rows_are_split_by_time(tmp_path):
  data = tmp_path / 'data'
  default_data.generate(str(data / 'span-1' / 'rows.csv'), num_series=2, days=2, seed=1)
  default_data.generate(str(data / 'span-2' / 'rows.csv'), num_series=3, days=4, seed=2)
  example_gen = TimeSeriesExampleGen(
      input_base=str(data), dataset_spec=SYNTHETIC, input_pattern='span-{SPAN}/*.csv',
      time_split=TimeSplit(eval_start='2024-01-03', test_start='2024-01-04'))
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      str(tmp_path / 'metadata.sqlite'))
  tfx.orchestration.LocalDagRunner().run(tfx.dsl.Pipeline(
      pipeline_name='spans', pipeline_root=str(tmp_path / 'root'),
      components=[example_gen], metadata_connection_config=metadata,
      beam_pipeline_args=BEAM_ARGS))

  [artifact_dir] = os.listdir(tmp_path / 'root' / 'TimeSeriesExampleGen' / 'examples')
  uri = tmp_path / 'root' / 'TimeSeriesExampleGen' / 'examples' / artifact_dir
  report = json.loads((uri / SPLIT_REPORT_FILE).read_text())
  # Span 2 only: 3 series x 4 days x 24 h, days 1-2 train, day 3 eval, day 4 test.
  assert report == {'train': 144, 'eval': 72, 'test': 72, 'after_end': 0}
  assert sorted(os.listdir(uri)) == ['Split-eval', 'Split-test', 'Split-train',
                                     SPLIT_REPORT_FILE]
