"""Curated schemas agree with the dataset specs; anomalies stop the run with a summary."""

import os

import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2

from components.anomaly_gate import SCHEMA_DIFF_FILE, DataAnomaliesError, check_anomalies
from schema import datasets
from schema.dataset_spec import DType, Role


def _load_schema(path):
  with open(path) as f:
    return text_format.Parse(f.read(), schema_pb2.Schema())


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_every_data_set_has_a_curated_schema_matching_its_spec(name):
  path = datasets.curated_schema_path(name)
  assert path is not None, f'no curated schema for {name}'
  spec = datasets.get_dataset(name).spec
  features = {f.name: f for f in _load_schema(path).feature}
  assert sorted(features) == sorted(c.name for c in spec.columns)
  for column in spec.columns:
    feature = features[column.name]
    expected_type = (schema_pb2.INT if column.role == Role.TIME else
                     schema_pb2.BYTES if column.dtype == DType.CATEGORICAL else schema_pb2.FLOAT)
    assert feature.type == expected_type, column.name
    required = feature.presence.min_fraction == 1.0
    assert required != column.allow_missing, column.name


def _write_anomalies(root, split, anomaly_info):
  anomalies = anomalies_pb2.Anomalies()
  for feature, (short, long) in anomaly_info.items():
    anomalies.anomaly_info[feature].short_description = short
    anomalies.anomaly_info[feature].description = long
  os.makedirs(os.path.join(root, f'Split-{split}'))
  with tf.io.gfile.GFile(os.path.join(root, f'Split-{split}', SCHEMA_DIFF_FILE), 'wb') as f:
    f.write(anomalies.SerializeToString())


def test_anomalies_stop_the_run_with_one_line_each(tmp_path):
  _write_anomalies(str(tmp_path), 'train', {})
  _write_anomalies(str(tmp_path), 'eval', {
      'region': ('Unexpected string values', "Examples contain values missing from the "
                 "schema: west (~2%).")})
  with pytest.raises(DataAnomaliesError, match=r"\(1 anomalies\):\n  eval: feature 'region': "
                     r'Unexpected string values. Examples contain values missing'):
    check_anomalies(str(tmp_path), ['train', 'eval'], 'stop')


def test_warn_mode_logs_and_counts(tmp_path, caplog):
  _write_anomalies(str(tmp_path), 'train', {'load': ('Out-of-range values', 'below 0')})
  assert check_anomalies(str(tmp_path), ['train'], 'warn') == 1
  assert "train: feature 'load': Out-of-range values" in caplog.text


def test_clean_data_passes(tmp_path):
  _write_anomalies(str(tmp_path), 'train', {})
  assert check_anomalies(str(tmp_path), ['train'], 'stop') == 0


def test_unknown_mode_is_an_error(tmp_path):
  with pytest.raises(ValueError, match='must be one of'):
    check_anomalies(str(tmp_path), [], 'ignore')
