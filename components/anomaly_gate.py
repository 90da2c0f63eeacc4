"""A component that stops the run when ExampleValidator found anomalies in the data.

TFX's ExampleValidator records anomalies but lets the run go on. Placed before
Transform, this gate raises with a readable summary (mode 'stop') or only logs it
(mode 'warn'), so a model is never trained on data that broke the schema unnoticed.
"""

import logging
import os
from typing import List

import tensorflow as tf
from tensorflow_metadata.proto.v0 import anomalies_pb2
from tfx import v1 as tfx
from tfx.types import artifact_utils

from common.exit_codes import InputError
SCHEMA_DIFF_FILE = 'SchemaDiff.pb'  # written by ExampleValidator per split
MODES = ('stop', 'warn')


class DataAnomaliesError(InputError):
  """The data does not match its schema."""


def anomaly_lines(anomalies_uri: str, splits: List[str]) -> List[str]:
  """One readable line per anomaly: split, feature, what is wrong."""
  lines = []
  for split in splits:
    path = os.path.join(anomalies_uri, f'Split-{split}', SCHEMA_DIFF_FILE)
    anomalies = anomalies_pb2.Anomalies()
    with tf.io.gfile.GFile(path, 'rb') as f:
      anomalies.ParseFromString(f.read())
    for feature, info in sorted(anomalies.anomaly_info.items()):
      lines.append(f"{split}: feature '{feature}': {info.short_description}. "
                   f'{info.description}')
    if anomalies.HasField('dataset_anomaly_info'):
      info = anomalies.dataset_anomaly_info
      lines.append(f'{split}: data set: {info.short_description}. {info.description}')
  return lines


def check_anomalies(anomalies_uri: str, splits: List[str], mode: str) -> int:
  """Raises DataAnomaliesError (mode 'stop') or logs (mode 'warn'); returns the count."""
  if mode not in MODES:
    raise ValueError(f"anomaly mode must be one of {MODES}, got '{mode}'")
  lines = anomaly_lines(anomalies_uri, splits)
  if lines and mode == 'stop':
    raise DataAnomaliesError(
        f'the data does not match its schema ({len(lines)} anomalies):\n  ' +
        '\n  '.join(lines) + '\nFix the data; or, if the data is right, update the curated '
        "schema (the spec's schema file: a new category goes into its feature's domain); "
        'or let the run go on with tft-pipeline --on-anomalies warn.')
  for line in lines:
    logging.warning('Data anomaly: %s', line)
  return len(lines)


@tfx.dsl.components.component
def AnomalyGate(  # pylint: disable=invalid-name
    anomalies: tfx.dsl.components.InputArtifact[tfx.types.standard_artifacts.ExampleAnomalies],
    mode: tfx.dsl.components.Parameter[str] = 'stop',
) -> tfx.dsl.components.OutputDict(anomaly_count=int):
  """Stops (or warns) when `anomalies` lists any anomaly."""
  splits = artifact_utils.decode_split_names(anomalies.split_names)
  return {'anomaly_count': check_anomalies(anomalies.uri, splits, mode)}
