"""What period of the data a model was trained on, recorded beside it.

Every training window lies before the eval start of its run, which ExampleGen places and
Windowing reports (`schema.window_report.eval_start_of`). The Trainer records it with the
model as `assets.extra/training_period.json`, so that a later run can tell whether the
model it warm-starts from, or the last blessed model the Evaluator compares with, was
trained on rows of that run's eval period: when the eval start moves back (a spec
edited, a fraction of a shorter file), those rows would flatter the older model in the
comparison and leak into the new one through its starting weights.
"""

import json
import os
from typing import Optional

import tensorflow as tf

from schema.time_split import parse_timestamp
from trainer_module import model_format

PERIOD_FILE = os.path.join('assets.extra', 'training_period.json')
_TRAINED_BEFORE = 'trained_before'  # the run's eval start, UTC


def write(model_dir: str, eval_start: str) -> None:
  """Records that the model in `model_dir` was trained on rows before `eval_start`."""
  path = os.path.join(model_dir, PERIOD_FILE)
  tf.io.gfile.makedirs(os.path.dirname(path))
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump({_TRAINED_BEFORE: eval_start}, f)


def trained_before(model_dir: str) -> Optional[str]:
  """The time (UTC) before which the model's training rows lie; None if it has no record
  (a run without an eval start, or a refit on every row).

  Raises:
    model_format.ModelFormatError: the model is in another format than this pipeline reads.
  """
  model_format.check(model_dir)
  path = os.path.join(model_dir, PERIOD_FILE)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return json.load(f)[_TRAINED_BEFORE]


def trained_on_eval_rows(model_dir: str, eval_start: Optional[str]) -> Optional[str]:
  """A sentence when the model in `model_dir` was trained on rows at or after
  `eval_start` (UTC, a run's eval start), else None (also when either is unknown)."""
  before = trained_before(model_dir)
  if before is None or eval_start is None or parse_timestamp(before) <= parse_timestamp(
      eval_start):
    return None
  return (f"it was trained on rows before {before}, and this run's eval period begins "
          f'earlier ({eval_start}), so it has learned some of the eval windows')
