"""Finding a published model, and the series and categories it knows.

A serving directory holds one SavedModel per version (`serving.model_publishing`:
`<base>/<version>/saved_model.pb`, versions named by growing integers); other entries,
such as the hidden directory a publish writes to before renaming it, are not versions.
"""

import os
from typing import FrozenSet, Optional

import tensorflow as tf
from tfx.utils import path_utils

from serving.model_publishing import latest_version_dir
from common.run_layout import RUN_SUMMARY_FILE, SERVING_MODEL_DIR
from schema.features import SERIES_VOCABULARY
from trainer_module import vocabularies

SAVED_MODEL_FILE = 'saved_model.pb'


class ModelNotFoundError(FileNotFoundError):
  """No SavedModel at the given path, nor any published version under it."""


def resolve_model_dir(path: str) -> str:
  """`path` if it holds a SavedModel, else its newest published version's directory.

  Also taken: a Trainer's model artifact (the run summary's `model:` line; its SavedModel
  is in `Format-Serving`), and a data set's run directory (`runs/<name>`: its
  `serving_model`).

  Raises:
    ModelNotFoundError: none of these holds one.
  """
  if tf.io.gfile.exists(os.path.join(path, SAVED_MODEL_FILE)):
    return path
  if tf.io.gfile.exists(os.path.join(path_utils.serving_model_path(path), SAVED_MODEL_FILE)):
    return path_utils.serving_model_path(path)
  if not tf.io.gfile.isdir(path):
    unpublished = never_published(path)
    if unpublished:
      raise ModelNotFoundError(unpublished)
    raise ModelNotFoundError(f'{path} does not exist; pass the serving directory the '
                             f'pipeline pushes to (e.g. runs/synthetic/{SERVING_MODEL_DIR}) or '
                             'one version directory in it')
  if tf.io.gfile.isdir(os.path.join(path, SERVING_MODEL_DIR)):
    return resolve_model_dir(os.path.join(path, SERVING_MODEL_DIR))
  latest = latest_version_dir(path)
  if latest is None:
    held = [name.rstrip('/') for name in tf.io.gfile.listdir(path)
            if tf.io.gfile.isdir(os.path.join(path, name, SERVING_MODEL_DIR))]
    if held:
      raise ModelNotFoundError(
          f'{path} holds the runs of data sets {sorted(held)}; pass one\'s serving '
          f'directory, e.g. {os.path.join(path, sorted(held)[0], SERVING_MODEL_DIR)}')
    raise ModelNotFoundError(f'{path} holds no {SAVED_MODEL_FILE} and no version '
                             'subdirectory (an integer name) with one; run the pipeline '
                             'until a model is blessed and pushed, or pass a model directory')
  return latest


def never_published(serving_dir: str) -> Optional[str]:
  """Why a run directory's serving directory `serving_dir` does not exist, from the last
  run's summary beside it: its verdict, and the model it trained, to forecast with anyway;
  None when there is no such summary (not a run's serving directory)."""
  run_dir = os.path.dirname(os.path.normpath(serving_dir))
  summary_path = os.path.join(run_dir, RUN_SUMMARY_FILE)
  if os.path.basename(os.path.normpath(serving_dir)) != SERVING_MODEL_DIR or not (
      tf.io.gfile.exists(summary_path)):
    return None
  with tf.io.gfile.GFile(summary_path) as f:
    lines = f.read().splitlines()
  field = lambda name: next((line.split(':', 1)[1].strip() for line in lines
                             if line.strip().startswith(f'{name}:')), None)
  verdict, model = field('blessed'), field('model')
  because = [line.strip() for line in lines if line.strip().startswith('because ')]
  text = (f'no model of {os.path.basename(run_dir)} has been blessed yet, so none is '
          f'published in {serving_dir}; the last run ({summary_path}) says: blessed: '
          f"{verdict or 'not recorded'}")
  if because:
    text += f' ({because[0]})'
  if model:
    text += (f'. To forecast with that run\'s model anyway, unblessed, pass --model-dir '
             f'{model}')
  return text


def series_vocabulary(model_dir: str) -> FrozenSet[str]:
  """The series keys the model was trained on (`vocabulary` of the series key)."""
  return vocabulary(model_dir, SERIES_VOCABULARY)


def vocabulary(model_dir: str, name: str) -> FrozenSet[str]:
  """The values of a categorical input (a column's name, or the series key's vocabulary)
  the model was trained on; others get its out-of-vocabulary embedding.

  Transform's vocabularies travel in the SavedModel's assets under their (sanitised)
  names, because the serving signature's Transform layer looks values up in them.

  Raises:
    ModelNotFoundError: the model has no such asset.
  """
  path = vocabularies.asset_path(model_dir, name)
  if not tf.io.gfile.exists(path):
    raise ModelNotFoundError(f"{model_dir} has no vocabulary asset "
                             f"'{os.path.relpath(path, model_dir)}'; it was not exported by "
                             "this project's Trainer")
  return frozenset(entry.decode() for entry in vocabularies.entries(path) if entry.strip())
