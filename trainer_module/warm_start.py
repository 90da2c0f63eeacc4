"""Warm start: initialise a new model from the weights of a previous one.

At export, a weights-only checkpoint is written into the SavedModel directory under
`assets.extra/warm_start/` (the SavedModel convention for files that travel with the
model but that the graph does not load), with the architecture it belongs to. When the
Trainer gets a base model (the pipeline passes the last blessed one), `restore` loads that
checkpoint into the freshly built model if the architecture matches.

Why a separate checkpoint rather than the SavedModel's own variables: the checkpoint
names each weight by its layer path (`history_vsn/.../kernel`; an ensemble's with its
member first, `member_0/history_vsn/...`), so weights are matched by meaning, not by
position, and it holds no optimizer state, so the new run starts its learning-rate
schedule and Adam moments afresh. A mismatch (another hidden size, a
vocabulary that grew or numbers its values in another order) is found before any weight
is touched; a restore that fails
part-way is rolled back. Either way training goes on from the fresh initialisation and
the log says why.
"""

import dataclasses
import json
import logging
import os
from typing import Any, Dict, Mapping, Optional, Sequence

import tensorflow as tf
import tf_keras as keras

from trainer_module import vocabularies
from trainer_module.hparams import TFTConfig
from trainer_module.tft.inputs import InputLayout

WARM_START_DIR = os.path.join('assets.extra', 'warm_start')
_WEIGHTS_PREFIX = 'weights'
_ARCHITECTURE_FILE = 'architecture.json'


def architecture(layout: InputLayout, config: TFTConfig) -> Dict[str, Any]:
  """What decides the shapes of the model's weights, and what they mean."""
  return {'layout': dataclasses.asdict(layout), 'hidden_size': config.hidden_size,
          'num_heads': config.num_heads, 'quantiles': list(config.quantiles),
          'target_location': config.target_location,
          'history_highway': config.history_highway,
          'ensemble_size': config.ensemble_size, 'seasonal_lag': config.seasonal_lag}


def checkpoint_path(saved_model_dir: str) -> str:
  """The weights checkpoint's path (prefix) in a SavedModel directory."""
  return os.path.join(saved_model_dir, WARM_START_DIR, _WEIGHTS_PREFIX)


def weights_checkpoint(model: keras.Model) -> tf.train.Checkpoint:
  """The model's layers by name, an ensemble's per member: their weights only, no
  optimizer state."""
  members = getattr(model, 'members', None)
  if members:
    return tf.train.Checkpoint(**{member.name: weights_checkpoint(member)
                                  for member in members})
  return tf.train.Checkpoint(**{layer.name: layer for layer in model.layers})


def save(model: keras.Model, layout: InputLayout, config: TFTConfig, saved_model_dir: str,
         options: Optional[tf.train.CheckpointOptions] = None) -> str:
  """Writes the weights checkpoint and its architecture next to a SavedModel.

  Returns:
    The checkpoint path.
  """
  directory = os.path.join(saved_model_dir, WARM_START_DIR)
  tf.io.gfile.makedirs(directory)
  path = weights_checkpoint(model).write(checkpoint_path(saved_model_dir), options=options)
  with tf.io.gfile.GFile(os.path.join(directory, _ARCHITECTURE_FILE), 'w') as f:
    json.dump(architecture(layout, config), f, indent=2, sort_keys=True)
  return path


def restore(model: keras.Model, layout: InputLayout, config: TFTConfig,
            base_model: Optional[str],
            options: Optional[tf.train.CheckpointOptions] = None,
            run_vocabularies: Optional[Mapping[str, Sequence[bytes]]] = None) -> bool:
  """Loads the base model's weights into `model` if the architecture and the
  vocabularies match.

  Args:
    model: a built model (under the strategy scope, before training).
    layout: its input layout.
    config: its hyperparameters.
    base_model: the base model's SavedModel directory (`fn_args.base_model`), or None.
    options: checkpoint options (the host IO device under a TPUStrategy).
    run_vocabularies: this run's vocabularies (`trainer_module.vocabularies`); the base
      model's embedding rows belong to its own ids, so they must number the same values.
      None: not compared.

  Returns:
    Whether the model now holds the base model's weights. Logs the outcome either way.
  """
  if not base_model:
    logging.info('Warm start: no base model; training from a fresh initialisation.')
    return False
  directory = os.path.join(base_model, WARM_START_DIR)
  architecture_path = os.path.join(directory, _ARCHITECTURE_FILE)
  if not tf.io.gfile.exists(architecture_path):
    logging.warning('Warm start: not possible from %s: it has no %s (it was exported '
                    'before warm-start checkpoints existed, or by another trainer); '
                    'training from a fresh initialisation.', base_model, WARM_START_DIR)
    return False
  with tf.io.gfile.GFile(architecture_path) as f:
    base = json.load(f)
  # Exported before these options existed.
  base.setdefault('target_location', 'mean')
  base.setdefault('history_highway', False)
  base.setdefault('ensemble_size', 1)
  base.setdefault('seasonal_lag', 0)
  if run_vocabularies is not None:
    differ = vocabularies.difference(run_vocabularies, vocabularies.of_model(base_model))
    if differ:
      logging.warning('Warm start: not possible from %s: its vocabularies number values '
                      'otherwise (%s), so its embedding rows would stand for other values; '
                      'training from a fresh initialisation.', base_model, differ)
      return False
  differences = _differences(base, architecture(layout, config))
  if differences:
    logging.warning('Warm start: not possible from %s: the architecture differs (%s); '
                    'training from a fresh initialisation.', base_model,
                    '; '.join(differences))
    return False
  fresh = model.get_weights()
  try:
    status = weights_checkpoint(model).read(checkpoint_path(base_model), options=options)
    status.assert_consumed()
  except (AssertionError, ValueError, tf.errors.OpError) as error:
    model.set_weights(fresh)
    logging.warning('Warm start: not possible from %s: its weights do not fit this model '
                    '(%s: %s); training from a fresh initialisation.', base_model,
                    type(error).__name__, str(error).split('\n', 1)[0])
    return False
  logging.info('Warm start: initialised every weight from the base model %s.', base_model)
  return True


def _differences(base: Dict[str, Any], current: Dict[str, Any]) -> list:
  """Readable differences between two `architecture` dicts."""
  flat_base, flat_current = _flatten(base), _flatten(current)
  return [f'{key}: base {flat_base.get(key)} vs now {flat_current.get(key)}'
          for key in sorted(set(flat_base) | set(flat_current))
          if flat_base.get(key) != flat_current.get(key)]


def _flatten(nested: Dict[str, Any], prefix: str = '') -> Dict[str, Any]:
  flat = {}
  for key, value in nested.items():
    if isinstance(value, dict):
      flat.update(_flatten(value, f'{prefix}{key}.'))
    else:
      flat[f'{prefix}{key}'] = list(value) if isinstance(value, (list, tuple)) else value
  return flat
