"""The format version of an exported model: written by the export, checked by every loader.

Beside its SavedModel a model holds files the pipeline reads back (the dataset spec, the
warm-start checkpoint and architecture, the training record and period, the calibration,
the warm-start outcome). A loader checks the version first and refuses a model of another
one with a message that names the fix, so that no loader guesses at what an older export
did or did not write. Raise `VERSION` when a change alters which of those files exist or
what they hold.
"""

import json
import os
from typing import Optional

import tensorflow as tf

VERSION = 1
FORMAT_FILE = os.path.join('assets.extra', 'model_format.json')
_KEY = 'model_format'


class ModelFormatError(ValueError):
  """A model directory written in another format than this pipeline reads."""


def write(model_dir: str) -> None:
  """Records `VERSION` in an exported model's directory."""
  path = os.path.join(model_dir, FORMAT_FILE)
  tf.io.gfile.makedirs(os.path.dirname(path))
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump({_KEY: VERSION}, f)


def mismatch(model_dir: str) -> Optional[str]:
  """Why the model in `model_dir` cannot be read ('it was exported in model format 0 ...'),
  or None when its format is `VERSION`."""
  path = os.path.join(model_dir, FORMAT_FILE)
  if not tf.io.gfile.exists(path):
    return (f'it has no {FORMAT_FILE}: it was not exported by this pipeline, or by a version '
            f'before model format {VERSION}')
  with tf.io.gfile.GFile(path) as f:
    try:
      version = json.load(f).get(_KEY)
    except (ValueError, AttributeError):
      version = None
  if version != VERSION:
    return (f'its {FORMAT_FILE} names model format {version!r}, and this pipeline reads '
            f'format {VERSION}')
  return None


def check(model_dir: str) -> None:
  """Raises ModelFormatError unless the model in `model_dir` is in format `VERSION`."""
  reason = mismatch(model_dir)
  if reason:
    raise ModelFormatError(f'the model in {model_dir} cannot be read: {reason}; train and '
                           'export it again with this version (tft-pipeline --spec ...)')
