"""Whether the last blessed model can score this run's evaluation windows.

The Evaluator scores the last blessed model (the baseline) on the raw columns of the
evaluation windows, through its serving signature and so its own Transform
(`evaluation.eval_config`): new series or categories, vocabularies in another order and
new statistics are read as the baseline would read them in serving. What it cannot read
is a window of another shape: another time grid, history or horizon, a column it reads
gone or declared with another role or type, or missing values in a column it was
trained without them, nor a model of another format version (`trainer_module.model_format`).
A baseline that serves no median has no MAE to compare, and one
trained on rows of this run's eval period (the eval start moved back) would be scored on
windows it learned (`trainer_module.training_period`). The scoped Evaluator leaves such a
baseline out and says why (`components.scoped_evaluator`).
"""

import os
from typing import List, Optional

import tensorflow as tf
from google.protobuf import message
from tensorflow.core.protobuf import saved_model_pb2

from schema.dataset_spec import DatasetSpec
from trainer_module import export, model_format, training_period

MEDIAN_FORECAST = export.quantile_key(0.5)


def incompatibility(candidate_dir: str, baseline_dir: str) -> Optional[str]:
  """Why the baseline cannot score the candidate's evaluation windows, or None if it can.

  Args:
    candidate_dir: the candidate's serving model directory.
    baseline_dir: the baseline's serving model directory.
  """
  unreadable = model_format.mismatch(baseline_dir)
  if unreadable:
    return unreadable
  try:
    candidate, baseline = (export.read_dataset_spec(candidate_dir),
                           export.read_dataset_spec(baseline_dir))
  except (FileNotFoundError, ValueError) as error:
    return f'its dataset spec cannot be read ({error})'
  unreadable = _unreadable(candidate, baseline)
  if unreadable:
    return f'the dataset spec changed ({"; ".join(unreadable)}), so it cannot read the windows'
  learned = training_period.trained_on_eval_rows(
      baseline_dir, training_period.trained_before(candidate_dir))
  if learned:
    return learned
  try:
    outputs = _serving_outputs(baseline_dir)
  except (tf.errors.OpError, message.DecodeError) as error:
    return f'its SavedModel cannot be read ({error})'
  if outputs is None:
    return f'it has no {export.SERVING_SIGNATURE} signature to read raw windows'
  if MEDIAN_FORECAST not in outputs:
    return (f"it serves {outputs}, without the median ('{MEDIAN_FORECAST}') that the MAE "
            'scores')
  return None


def _unreadable(candidate: DatasetSpec, baseline: DatasetSpec) -> List[str]:
  """What in the candidate's windows the baseline cannot read, in the spec's terms; a
  column the baseline does not know is no obstacle: its serving signature ignores it."""
  parts = []
  window = lambda spec: (f'{spec.encoder_steps} history + {spec.horizon} forecast steps of '
                         f'the {spec.frequency.value} grid')
  if window(candidate) != window(baseline):
    parts.append(f'{window(baseline)} -> {window(candidate)}')
  now = {column.name: column for column in candidate.columns}
  gone = [column.name for column in baseline.columns if column.name not in now]
  if gone:
    parts.append(f'columns {gone} gone')
  describe = lambda column: f'{column.role.value} {column.dtype.value}'
  for before in baseline.columns:
    after = now.get(before.name)
    if after is None:
      continue
    if describe(after) != describe(before):
      parts.append(f"'{before.name}' {describe(before)} -> {describe(after)}")
    elif after.allow_missing and not before.allow_missing:
      parts.append(f"'{before.name}' may now miss values")
  return parts


def _serving_outputs(model_dir: str) -> Optional[List[str]]:
  """The output names of a SavedModel's serving signature, read from its saved_model.pb
  without loading it; None if it has no such signature."""
  saved = saved_model_pb2.SavedModel()
  with tf.io.gfile.GFile(os.path.join(model_dir, 'saved_model.pb'), 'rb') as f:
    saved.ParseFromString(f.read())
  for meta_graph in saved.meta_graphs:
    if export.SERVING_SIGNATURE in meta_graph.signature_def:
      return sorted(meta_graph.signature_def[export.SERVING_SIGNATURE].outputs)
  return None
