"""A component that says, before training, how the newest rows differ from the training rows.

The newest rows are the run's judged period (the test period when the split holds one out,
else the eval period: with spans, the newest span's); the training rows are the train
split. Three kinds of drift, each judged by the monitoring policy
(`schema.monitoring_policy`):

- a column's distribution: TFDV's drift comparators on StatisticsGen's statistics of the
  two splits (Jensen-Shannon divergence for the target and the real known and observed
  columns, L-infinity distance for the categorical ones) above `max_drift`;
- a series' level: its newest rows' mean target moved from its training rows' mean by
  more than `max_level_shift` of their standard deviation;
- series that appeared (newest rows, no training rows) or vanished (the reverse).

Placed before Transform: with `drift: fail` it stops the run before anything is trained,
naming the column or series and the size of the shift; with `warn` it logs at WARNING, and
the run summary says so. `drift_report.json` holds every figure.
"""

import json
import logging
import os
import posixpath
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf
import tensorflow_data_validation as tfdv
from tfx import types
from tfx import v1 as tfx
from tfx.types import standard_artifacts

from common import artifact_json
from common.exit_codes import InputError
from components import delivered_forecasts
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.features import series_key
from schema.monitoring_policy import Monitoring
from schema.time_split import TRAINING_SPLIT

REPORT_JSON = 'drift_report.json'
_STATISTICS_FILE = 'FeatureStats.pb'
_SHOWN = 5  # series named in a message, largest first
MEASURES = {'JENSEN_SHANNON_DIVERGENCE': 'Jensen-Shannon divergence',
            'L_INFTY': 'L-infinity distance'}


class DriftReport(types.Artifact):
  """A directory with `drift_report.json`."""
  TYPE_NAME = 'tft.DriftReport'


class DataDriftError(InputError):
  """The newest rows drifted from the training rows, and the policy's `drift` is fail."""


def drift_columns(spec: DatasetSpec) -> List[str]:
  """The columns whose distributions are compared: the target, known and observed."""
  return [column.name for column in spec.columns
          if column.role in (Role.TARGET, Role.KNOWN, Role.OBSERVED)]


def column_drift(training: str, newest: str, spec: DatasetSpec,
                 threshold: float) -> List[Dict[str, object]]:
  """Each compared column's distance between the statistics files `training` and
  `newest` (TFDV's comparators), and whether it exceeds `threshold`."""
  train_stats, new_stats = (tfdv.load_stats_binary(path) for path in (training, newest))
  schema = tfdv.infer_schema(train_stats)
  categorical = {c.name for c in spec.columns if c.dtype == DType.CATEGORICAL}
  compared = [name for name in drift_columns(spec) if tfdv.get_feature(schema, name)]
  for name in compared:
    comparator = tfdv.get_feature(schema, name).drift_comparator
    if name in categorical:
      comparator.infinity_norm.threshold = threshold
    else:
      comparator.jensen_shannon_divergence.threshold = threshold
  anomalies = tfdv.validate_statistics(new_stats, schema, previous_statistics=train_stats)
  found = []
  for info in anomalies.drift_skew_info:
    name = '.'.join(info.path.step)
    for measurement in info.drift_measurements:
      measure = type(measurement).Type.Name(measurement.type)
      found.append({'column': name, 'measure': MEASURES.get(measure, measure),
                    'value': float(measurement.value), 'threshold': threshold,
                    'drift': float(measurement.value) > threshold})
  return sorted(found, key=lambda item: -item['value'])


def level_shifts(training: Mapping[str, Sequence[float]], newest: Mapping[str, Sequence[float]],
                 bound: float) -> List[Dict[str, object]]:
  """Per series with rows in both: its mean target in each, the move in its training
  rows' standard deviations, and whether it exceeds `bound`; largest move first."""
  shifts = []
  for key in sorted(set(training) & set(newest)):
    before, after = np.asarray(training[key], float), np.asarray(newest[key], float)
    if not len(before) or not len(after):
      continue
    spread = float(np.std(before))
    move = float(np.mean(after) - np.mean(before))
    size = abs(move) / spread if spread > 0 else (0.0 if move == 0 else float('inf'))
    shifts.append({'series': key, 'training_mean': float(np.mean(before)),
                   'newest_mean': float(np.mean(after)), 'training_std': spread,
                   'shift_in_std': size, 'drift': size > bound})
  return sorted(shifts, key=lambda item: -item['shift_in_std'])


def target_values(files: Sequence[str], spec: DatasetSpec) -> Dict[str, List[float]]:
  """Each series' target values in ExampleGen's records `files` (missing ones left out)."""
  return {series_key(key_values, spec): [float(row.values[spec.target_column])
                                         for row in rows if row.values[spec.target_column]]
          for key_values, rows in delivered_forecasts.series_from_examples(files, spec).items()}


def findings(report: Mapping[str, object]) -> List[str]:
  """The drift in `report`, in words: each a column or series, the size and the bound."""
  lines = [f"column '{c['column']}': {c['measure']} {c['value']:.3g} between the training "
           f"and the newest rows, above {c['threshold']:g} (monitoring: max_drift)"
           for c in report['columns'] if c['drift']]
  moved = [s for s in report['levels'] if s['drift']]
  if moved:
    named = '; '.join(f"'{s['series']}' from {s['training_mean']:.4g} to "
                      f"{s['newest_mean']:.4g} ({s['shift_in_std']:.1f} std)"
                      for s in moved[:_SHOWN])
    more = f' and {len(moved) - _SHOWN} more' if len(moved) > _SHOWN else ''
    lines.append(f"the level of {len(moved)} series moved by more than "
                 f"{report['policy']['max_level_shift']:g} training standard deviations "
                 f"(monitoring: max_level_shift): {named}{more}")
  for kind in ('appeared', 'vanished'):
    if report[kind]:
      lines.append(f"{len(report[kind])} series {kind} in the newest rows: "
                   f"{', '.join(report[kind][:_SHOWN])}"
                   f"{' and more' if len(report[kind]) > _SHOWN else ''}")
  return lines


def check(statistics_uri: str, examples_uri: str, spec: DatasetSpec, newest_split: str,
          policy: Monitoring) -> Dict[str, object]:
  """The drift report of the newest split against the training split."""
  def split_files(split):
    return tf.io.gfile.glob(os.path.join(examples_uri, f'Split-{split}', '*'))

  columns = column_drift(
      os.path.join(statistics_uri, f'Split-{TRAINING_SPLIT}', _STATISTICS_FILE),
      os.path.join(statistics_uri, f'Split-{newest_split}', _STATISTICS_FILE),
      spec, policy.max_drift)
  training, newest = (target_values(split_files(split), spec)
                      for split in (TRAINING_SPLIT, newest_split))
  report = {'newest_split': newest_split, 'policy': policy.to_dict(), 'columns': columns,
            'levels': level_shifts(training, newest, policy.max_level_shift),
            'appeared': sorted(set(newest) - set(training)),
            'vanished': sorted(set(training) - set(newest))}
  report['findings'] = findings(report)
  return report


def enforce(report: Mapping[str, object], policy: Monitoring) -> None:
  """Logs each finding at WARNING; raises DataDriftError when `policy` says fail."""
  for line in report['findings']:
    logging.warning('Drift: %s.', line)
  if report['findings'] and policy.drift == 'fail':
    raise DataDriftError(
        f"the newest rows ({report['newest_split']} period) drifted from the training rows, "
        'so the run stops before training (monitoring: drift fail):\n  ' +
        '\n  '.join(report['findings']) + '\nLook at the data: if the change is real and '
        "the model should learn it, raise the spec's monitoring bound that names it, or set "
        'monitoring: {drift: warn} to train on it.')


def describe(report: Mapping[str, object]) -> List[str]:
  """The run summary's lines: the drift found, with the policy's choice, or none."""
  policy = report['policy']
  if not report['findings']:
    return [f"none: the {report['newest_split']} rows are like the training rows "
            f"(max_drift {policy['max_drift']:g}, max_level_shift "
            f"{policy['max_level_shift']:g})"]
  return [f"({policy['drift']}) {line}" for line in report['findings']]


def read_report(directory: str) -> Optional[Dict[str, object]]:
  return artifact_json.read_json(directory, REPORT_JSON)


@tfx.dsl.components.component
def DriftCheck(  # pylint: disable=invalid-name
    statistics: tfx.dsl.components.InputArtifact[standard_artifacts.ExampleStatistics],
    examples: tfx.dsl.components.InputArtifact[standard_artifacts.Examples],
    drift: tfx.dsl.components.OutputArtifact[DriftReport],
    dataset_spec: tfx.dsl.components.Parameter[str] = '',
    newest_split: tfx.dsl.components.Parameter[str] = 'eval',
    monitoring: tfx.dsl.components.Parameter[str] = '{}',
) -> None:
  """Writes the drift report of `newest_split` against the training split; stops the run
  on drift when the policy (`Monitoring.to_dict`, JSON) says fail."""
  spec = DatasetSpec.from_json(dataset_spec)
  policy = Monitoring.from_dict(json.loads(monitoring))
  report = check(statistics.uri, examples.uri, spec, newest_split, policy)
  tf.io.gfile.makedirs(drift.uri)
  with tf.io.gfile.GFile(posixpath.join(drift.uri, REPORT_JSON), 'w') as f:
    json.dump(report, f, indent=2)
  enforce(report, policy)
