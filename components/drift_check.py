"""A component that says, before training, how the newest rows differ from the training rows.

The newest rows are the run's judged period (the test period when the split holds one out,
else the eval period: with spans, the newest span's); the training rows are the train
split. Three kinds of drift, each judged by the monitoring policy
(`schema.monitoring_policy`):

- a column's distribution: TFDV's drift comparators on StatisticsGen's statistics of the
  two splits (Jensen-Shannon divergence for the target and the real known and observed
  columns, L-infinity distance for the categorical ones);
- a series' level: its newest rows' mean target moved from its training rows' mean, in
  their standard deviations;
- series that appeared (newest rows, no training rows) or vanished (the reverse).

A column or level is drift when its move exceeds its bound: the policy's (`max_drift`,
`max_level_shift`), or, where larger, the most that a stretch of the training rows as long
as the newest ones moved from the rest of them by the same measure. A seasonal covariate
whose winter training rows and spring test rows differ as much as its months always do is
not drift; a broken sensor is.

Placed before Transform: with `drift: fail` it stops the run before anything is trained,
naming the column or series and the size of the shift; with `warn` it logs at WARNING, and
the run summary says so. `drift_report.json` holds every figure.
"""

import json
import logging
import os
import posixpath
from typing import Dict, List, Mapping, Optional

import numpy as np
import pandas as pd
import tensorflow as tf
import tensorflow_data_validation as tfdv
from tfx import types
from tfx import v1 as tfx
from tfx.types import standard_artifacts

from common import artifact_json
from common.exit_codes import InputError
from components import example_columns
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.monitoring_policy import Monitoring
from schema.time_split import TRAINING_SPLIT

REPORT_JSON = 'drift_report.json'
_STATISTICS_FILE = 'FeatureStats.pb'
_SHOWN = 5  # series named in a message, largest first
_STRETCHES = 12  # stretches of the training rows that size the bounds, at most
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


def column_distances(training, newest, spec: DatasetSpec) -> Dict[str, Dict[str, object]]:
  """Each compared column's distance between the statistics `training` and `newest`
  (DatasetFeatureStatisticsLists) by TFDV's comparators, by column."""
  schema = tfdv.infer_schema(training)
  compared = set(drift_columns(spec))
  categorical = {c.name for c in spec.columns if c.dtype == DType.CATEGORICAL}
  for feature in schema.feature:
    if feature.name not in compared:
      continue
    if feature.name in categorical:  # a threshold of 0: TFDV reports every distance
      feature.drift_comparator.infinity_norm.threshold = 0.0
    else:
      feature.drift_comparator.jensen_shannon_divergence.threshold = 0.0
  anomalies = tfdv.validate_statistics(newest, schema, previous_statistics=training)
  found = {}
  for info in anomalies.drift_skew_info:
    for measurement in info.drift_measurements:
      measure = type(measurement).Type.Name(measurement.type)
      found['.'.join(info.path.step)] = {'measure': MEASURES.get(measure, measure),
                                         'value': float(measurement.value)}
  return found


def training_stretches(seconds: np.ndarray, newest_steps: int) -> np.ndarray:
  """Per training row (its time in `seconds`), the stretch it falls in, or -1: stretches
  of `newest_steps` times one before another back from the last training time (a first
  stretch cut short is left out), at most `_STRETCHES` spread evenly; none when the
  training rows hold fewer than two."""
  times = np.unique(seconds)
  stretch = np.full(len(seconds), -1)
  count = len(times) // newest_steps if newest_steps > 0 else 0
  if count < 2:
    return stretch
  back = (len(times) - 1 - np.searchsorted(times, seconds)) // newest_steps
  chosen = np.unique(np.linspace(0, count - 1, min(count, _STRETCHES)).round().astype(int))
  held = np.isin(back, chosen)
  stretch[held] = back[held]
  return stretch


def within_training(rows: pd.DataFrame, stretch: np.ndarray, spec: DatasetSpec
                    ) -> Dict[str, float]:
  """Per compared column: the largest distance between a stretch of the training `rows`
  and the rest of them (`column_distances`)."""
  names = drift_columns(spec)
  most: Dict[str, float] = {}
  for index in np.unique(stretch[stretch >= 0]):
    inside = stretch == index
    distances = column_distances(tfdv.generate_statistics_from_dataframe(rows[~inside][names]),
                                 tfdv.generate_statistics_from_dataframe(rows[inside][names]),
                                 spec)
    for name, distance in distances.items():
      most[name] = max(most.get(name, 0.0), distance['value'])
  return most


def column_drift(training_file: str, newest_file: str, spec: DatasetSpec,
                 within: Mapping[str, float], threshold: float) -> List[Dict[str, object]]:
  """Each compared column's distance between the StatisticsGen files `training_file` and
  `newest_file`, its bound (`threshold`, or its `within` training distance where larger)
  and whether it exceeds the bound; largest first."""
  distances = column_distances(tfdv.load_stats_binary(training_file),
                               tfdv.load_stats_binary(newest_file), spec)
  found = []
  for name, distance in distances.items():
    bound = max(threshold, within.get(name, 0.0))
    found.append({'column': name, **distance, 'threshold': threshold,
                  'within_training': within.get(name), 'bound': bound,
                  'drift': distance['value'] > bound})
  return sorted(found, key=lambda item: -item['value'])


def _shift(before: np.ndarray, after: np.ndarray) -> float:
  """The move of `after`'s mean from `before`'s, in `before`'s standard deviations."""
  spread, move = float(np.std(before)), float(np.mean(after) - np.mean(before))
  return abs(move) / spread if spread > 0 else (0.0 if move == 0 else float('inf'))


def level_shifts(training: pd.DataFrame, stretch: np.ndarray, newest: pd.DataFrame,
                 target: str, bound: float) -> List[Dict[str, object]]:
  """Per series with `target` values in both tables: its mean in each, the move in its
  training rows' standard deviations, its bound (`bound`, or where larger the most a
  stretch of its training rows moved from the rest of them) and whether the move exceeds
  it; largest move first."""
  present = training[target].notna().to_numpy()
  training = training[present].assign(stretch=stretch[present])
  before_of = dict(tuple(training.groupby('series')))
  shifts = []
  for key, after in newest.dropna(subset=[target]).groupby('series'):
    if key not in before_of:
      continue
    values, stretches = before_of[key][target].to_numpy(), before_of[key]['stretch'].to_numpy()
    moves = [_shift(values[stretches != index], values[stretches == index])
             for index in np.unique(stretches[stretches >= 0]) if (stretches != index).any()]
    most = max(moves, default=None)
    size = _shift(values, after[target].to_numpy())
    limit = max(bound, most or 0.0)
    shifts.append({'series': key, 'training_mean': float(np.mean(values)),
                   'newest_mean': float(after[target].mean()),
                   'training_std': float(np.std(values)), 'shift_in_std': size,
                   'within_training': most, 'bound': limit, 'drift': size > limit})
  return sorted(shifts, key=lambda item: -item['shift_in_std'])


def _bound_text(bound: float, within: Optional[float], threshold: float, key: str) -> str:
  """What set a bound: the policy's `key` (`threshold`), or the training rows' own
  stretches (`within`) where they moved more."""
  if within is None:
    return f'{bound:g} (monitoring: {key})'
  if within > threshold:
    return (f'{bound:.3g}, the most a stretch of the training rows as long as the newest '
            f'moved from the rest (monitoring: {key} {threshold:g})')
  return (f'{bound:g} (monitoring: {key}; stretches of the training rows as long as the '
          f'newest moved at most {within:.3g} from the rest)')


def findings(report: Mapping[str, object]) -> List[str]:
  """The drift in `report`, in words: each a column or series, the size and the bound."""
  lines = [f"column '{c['column']}': {c['measure']} {c['value']:.3g} between the training "
           f"and the newest rows, above "
           f"{_bound_text(c['bound'], c['within_training'], c['threshold'], 'max_drift')}"
           for c in report['columns'] if c['drift']]
  moved = [s for s in report['levels'] if s['drift']]
  threshold, key = report['policy']['max_level_shift'], 'max_level_shift'
  if moved:
    named = '; '.join(f"'{s['series']}' from {s['training_mean']:.4g} to "
                      f"{s['newest_mean']:.4g} ({s['shift_in_std']:.1f} std, above "
                      f"{_bound_text(s['bound'], s['within_training'], threshold, key)})"
                      for s in moved[:_SHOWN])
    more = f' and {len(moved) - _SHOWN} more' if len(moved) > _SHOWN else ''
    lines.append(f"the level of {len(moved)} series moved by more than its bound, in its "
                 f'training standard deviations: {named}{more}')
  for kind in ('appeared', 'vanished'):
    if report[kind]:
      lines.append(f"{len(report[kind])} series {kind} in the newest rows: "
                   f"{', '.join(report[kind][:_SHOWN])}"
                   f"{' and more' if len(report[kind]) > _SHOWN else ''}")
  return lines


def check(statistics_uri: str, examples_uri: str, spec: DatasetSpec, newest_split: str,
          policy: Monitoring) -> Dict[str, object]:
  """The drift report of the newest split against the training split."""
  names = drift_columns(spec)
  training, newest = (
      example_columns.frame(tf.io.gfile.glob(os.path.join(examples_uri, f'Split-{split}', '*')),
                            spec, names)
      for split in (TRAINING_SPLIT, newest_split))
  stretch = training_stretches(training['seconds'].to_numpy(), newest['seconds'].nunique())
  columns = column_drift(
      os.path.join(statistics_uri, f'Split-{TRAINING_SPLIT}', _STATISTICS_FILE),
      os.path.join(statistics_uri, f'Split-{newest_split}', _STATISTICS_FILE),
      spec, within_training(training, stretch, spec), policy.max_drift)
  series = (set(training['series']), set(newest['series']))
  report = {'newest_split': newest_split, 'policy': policy.to_dict(),
            'training_stretches': int(len(np.unique(stretch[stretch >= 0]))),
            'columns': columns,
            'levels': level_shifts(training, stretch, newest, spec.target_column,
                                   policy.max_level_shift),
            'appeared': sorted(series[1] - series[0]),
            'vanished': sorted(series[0] - series[1])}
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
    stretches = report['training_stretches']
    sized = (f", or as far as {stretches} stretches of the training rows as long moved from "
             'the rest, where farther' if stretches else '')
    return [f"none: the {report['newest_split']} rows are like the training rows "
            f"(max_drift {policy['max_drift']:g}, max_level_shift "
            f"{policy['max_level_shift']:g}{sized})"]
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
