"""A real run on data that breaks the curated schema stops before Transform."""

import csv

import pytest

from components.anomaly_gate import DataAnomaliesError
from pipeline import default_data, run_summary
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets

pytestmark = pytest.mark.slow  # runs a pipeline or trains a model


def test_unexpected_category_stops_the_run_before_transform(tmp_path, run_pipeline):
  path = tmp_path / 'data' / 'data.csv'
  default_data.generate(str(path), num_series=2, days=3, seed=0)
  with open(path) as f:
    rows = list(csv.DictReader(f))
  rows[5]['region'] = 'west'  # not in the curated schema's domain
  with open(path, 'w', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
  spec = datasets.SYNTHETIC.with_window(encoder_steps=12, horizon=4)
  split = datasets.get_dataset('synthetic').split
  config = PipelineConfig(
      pipeline_name='tft-anomalies', pipeline_root=str(tmp_path / 'pipeline_root'),
      data_root=str(path.parent), serving_model_dir=str(tmp_path / 'serving'), dataset=spec,
      time_split=split, blessing=Blessing(beat_naive_by=None, max_mae=1e6),
      strides=default_strides(spec, split),
      schema_file=datasets.curated_schema_path('synthetic'))
  with pytest.raises(DataAnomaliesError, match=r"feature 'region': Unexpected string values"):
    run_pipeline(config)

  states = {c.node_id: c.state for c in run_summary.latest_run_summary(
      run_pipeline.last_metadata, config.pipeline_name).components}
  assert states['AnomalyGate'] == 'FAILED'
  assert 'Transform' not in states and 'Trainer' not in states
