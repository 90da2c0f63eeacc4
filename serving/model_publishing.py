"""Publishing a SavedModel into a versioned serving directory, atomically.

A serving directory holds one subdirectory per version, named by an integer that grows
with time (TF Serving's layout): `<base>/<version>/saved_model.pb`. A reader lists the
integer-named entries and takes the largest (`latest_version_dir`).

On a local file system a version is copied into a hidden staging directory in `<base>`
and renamed into place, so a reader never sees a half-copied version. Object stores
(gs://) have no atomic directory rename: there the files are copied in place with
`saved_model.pb` last, the file TF Serving waits for (TFX's Pusher order).
"""

import os
import time
import uuid
from typing import List, Optional

from tfx.dsl.io import fileio
from tfx.utils import io_utils

_SAVED_MODEL_FILE = 'saved_model.pb'
_STAGING_PREFIX = '.staging-'


def versions(base_directory: str) -> List[int]:
  """The published versions in `base_directory`, oldest first ([] when there is none)."""
  if not fileio.exists(base_directory):
    return []
  found = []
  for name in fileio.listdir(base_directory):
    name = name.rstrip('/')
    if name.isdigit() and fileio.exists(
        os.path.join(base_directory, name, _SAVED_MODEL_FILE)):
      found.append(int(name))
  return sorted(found)


def latest_version_dir(base_directory: str) -> Optional[str]:
  """The directory of the newest published version, or None."""
  published = versions(base_directory)
  return os.path.join(base_directory, str(published[-1])) if published else None


def publish(model_dir: str, base_directory: str, clock=time.time) -> str:
  """Copies the SavedModel in `model_dir` to a new version in `base_directory`.

  The version is the current Unix time in seconds, or one more than the newest
  existing version if that is not older, so versions only grow and never collide.

  Returns:
    The new version's directory.
  """
  if not fileio.exists(os.path.join(model_dir, _SAVED_MODEL_FILE)):
    raise FileNotFoundError(f'{model_dir} holds no {_SAVED_MODEL_FILE}: nothing to publish')
  fileio.makedirs(base_directory)
  while True:
    existing = versions(base_directory)
    version = max(int(clock()), existing[-1] + 1 if existing else 0)
    target = os.path.join(base_directory, str(version))
    if _is_local(base_directory):
      if _publish_by_rename(model_dir, base_directory, target):
        return target
    elif not fileio.exists(target):
      _copy_saved_model_last(model_dir, target)
      return target


def _is_local(path: str) -> bool:
  return '://' not in path


def _publish_by_rename(model_dir: str, base_directory: str, target: str) -> bool:
  """Stages a copy and renames it to `target`; False if `target` appeared meanwhile."""
  staging = os.path.join(base_directory, f'{_STAGING_PREFIX}{uuid.uuid4().hex}')
  try:
    io_utils.copy_dir(model_dir, staging)
    try:
      os.rename(staging, target)  # fails when target exists and is not empty
    except OSError:
      if os.path.exists(os.path.join(target, _SAVED_MODEL_FILE)):
        return False
      raise
    return True
  finally:
    if fileio.exists(staging):
      fileio.rmtree(staging)


def _copy_saved_model_last(model_dir: str, target: str) -> None:
  io_utils.copy_dir(model_dir, target, deny_regex_patterns=[r'saved_model\.pb'])
  io_utils.copy_file(os.path.join(model_dir, _SAVED_MODEL_FILE),
                     os.path.join(target, _SAVED_MODEL_FILE))
