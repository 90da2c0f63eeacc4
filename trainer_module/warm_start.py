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
schedule and Adam moments afresh. A mismatch (another hidden size, another input) is
found before any weight is touched; a restore that fails part-way is rolled back. A base
model of another format version (`trainer_module.model_format`) is not read at all. Either
way training goes on from the fresh initialisation and the log says why.

Embedding rows are matched by value, not by id: each categorical's vocabulary (Transform
numbers values by frequency) may gain values or reorder from one run to the next, so a
row moves to its value's id in this run's vocabulary, and a value the base never saw
keeps its fresh row (`trainer_module.vocabularies` reads both runs' lists).
"""

import collections
import dataclasses
import json
import logging
import os
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

import tensorflow as tf
import tf_keras as keras

from trainer_module import export, model_format, training_period, vocabularies, window_inputs
from schema.hparams import TFTConfig
from trainer_module.tft.inputs import InputLayout

WARM_START_DIR = os.path.join('assets.extra', 'warm_start')
# How the exported model's training began, for the run summary (`write_outcome`).
OUTCOME_FILE = os.path.join('assets.extra', 'warm_start_outcome.json')
_WEIGHTS_PREFIX = 'weights'
ARCHITECTURE_FILE = 'architecture.json'


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


def weights_checkpoint(model: keras.Model,
                       without: Collection[Tuple[str, int]] = ()) -> tf.train.Checkpoint:
  """The model's layers by name, an ensemble's per member: their weights only, no
  optimizer state.

  Args:
    without: (embedding layer name, table index) of tables to leave out.
  """
  members = getattr(model, 'members', None)
  if members:
    return tf.train.Checkpoint(**{member.name: weights_checkpoint(member, without)
                                  for member in members})
  left_out = collections.defaultdict(set)
  for layer_name, index in without:
    left_out[layer_name].add(index)
  return tf.train.Checkpoint(**{
      layer.name: _embedding_without(layer, left_out[layer.name]) if layer.name in left_out
      else layer for layer in model.layers})


def read_member(member: keras.Model, saved_model_dir: str,
                options: Optional[tf.train.CheckpointOptions] = None) -> None:
  """Loads into `member` the weights of its namesake in the ensemble exported to
  `saved_model_dir` (a model of this run's layout: no vocabulary moves).

  Raises:
    ValueError: the checkpoint holds no weights, or not all, of a member of that name.
  """
  checkpoint = tf.train.Checkpoint(**{member.name: weights_checkpoint(member)})
  status = checkpoint.read(checkpoint_path(saved_model_dir), options=options)
  try:
    status.assert_existing_objects_matched()
  except AssertionError:
    status.expect_partial()  # the error says it: no warnings about the unread values
    raise ValueError(
        f'the model in {saved_model_dir} has no weights for every layer of the ensemble '
        f'member {member.name!r}: it was exported with another ensemble_size or '
        'architecture than this run trains; rerun the pipeline, or turn the refit off'
    ) from None


def _embedding_without(layer: keras.layers.Layer,
                       tables: Collection[int]) -> tf.train.Checkpoint:
  """An `InputEmbedding`'s weights under the names it saves them by, but `tables`."""
  kept = {f'table_{index}': table for index, table in enumerate(layer.tables)
          if index not in tables}
  return tf.train.Checkpoint(**kept, real_kernel=layer.real_kernel, real_bias=layer.real_bias)


def save(model: keras.Model, layout: InputLayout, config: TFTConfig, saved_model_dir: str,
         options: Optional[tf.train.CheckpointOptions] = None) -> str:
  """Writes the weights checkpoint and its architecture next to a SavedModel.

  Returns:
    The checkpoint path.
  """
  directory = os.path.join(saved_model_dir, WARM_START_DIR)
  tf.io.gfile.makedirs(directory)
  path = weights_checkpoint(model).write(checkpoint_path(saved_model_dir), options=options)
  with tf.io.gfile.GFile(os.path.join(directory, ARCHITECTURE_FILE), 'w') as f:
    json.dump(architecture(layout, config), f, indent=2, sort_keys=True)
  return path


def recorded_architecture(model_dir: str) -> Dict[str, Any]:
  """The `architecture` saved with the model in `model_dir`."""
  with tf.io.gfile.GFile(os.path.join(model_dir, WARM_START_DIR, ARCHITECTURE_FILE)) as f:
    return json.load(f)


@dataclasses.dataclass(frozen=True)
class Outcome:
  """How a model's training began: from a base model's weights (true) or not, and a
  sentence saying which and why."""
  restored: bool
  message: str

  def __bool__(self) -> bool:
    return self.restored


def _fresh(base_model: str, why: str) -> Outcome:
  """Logs and returns why `base_model` could not warm-start this model."""
  message = (f'not possible from {base_model}: {why}; training from a fresh '
             'initialisation')
  logging.warning('Warm start: %s.', message)
  return Outcome(False, message)


def write_outcome(model_dir: str, outcome: Outcome) -> None:
  """Records `outcome` in an exported model's directory."""
  path = os.path.join(model_dir, OUTCOME_FILE)
  tf.io.gfile.makedirs(os.path.dirname(path))
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump(dataclasses.asdict(outcome), f)


def read_outcome(model_dir: str) -> Outcome:
  """The outcome an exported model recorded.

  Raises:
    model_format.ModelFormatError: the model is in another format than this pipeline reads.
  """
  model_format.check(model_dir)
  with tf.io.gfile.GFile(os.path.join(model_dir, OUTCOME_FILE)) as f:
    return Outcome(**json.load(f))


def restore(model: keras.Model, layout: InputLayout, config: TFTConfig,
            base_model: Optional[str],
            options: Optional[tf.train.CheckpointOptions] = None,
            run_vocabularies: Optional[Mapping[str, Sequence[bytes]]] = None,
            table_vocabularies: Optional[Mapping[str, Sequence[Optional[str]]]] = None,
            eval_start: Optional[str] = None) -> Outcome:
  """Loads the base model's weights into `model` if the architecture matches, and the
  base was not trained on rows of this run's eval period.

  Args:
    model: a built model (under the strategy scope, before training).
    layout: its input layout.
    config: its hyperparameters.
    base_model: the base model's SavedModel directory (`fn_args.base_model`), or None.
    options: checkpoint options (the host IO device under a TPUStrategy).
    run_vocabularies: this run's vocabularies by name (`trainer_module.vocabularies`).
    table_vocabularies: the vocabulary name of each table of each embedding layer
      ({'static_embedding': ['series_key', 'region'], ...}; None for a table of fixed
      size, a calendar feature's). With `run_vocabularies`, a base model whose
      vocabularies number values otherwise (a new series or category, another order)
      still warm-starts: each embedding row moves to its value's id in this run, and
      values the base never saw keep their fresh rows. Without both (tests of other
      parts), tables of the same size are taken row by row, by id.
    eval_start: this run's eval start (UTC); a base trained on rows after it is not used,
      since its weights would carry eval rows into the model (`training_period`).

  Returns:
    Whether the model now holds the base model's weights (true) or not, and why. Logs it
    either way.
  """
  if not base_model:
    logging.info('Warm start: no base model; training from a fresh initialisation.')
    return Outcome(False, 'no base model (no model blessed before); training from a fresh '
                   'initialisation')
  unreadable = model_format.mismatch(base_model)
  if unreadable:
    return _fresh(base_model, unreadable)
  learned = training_period.trained_on_eval_rows(base_model, eval_start)
  if learned:
    return _fresh(base_model, learned)
  base = recorded_architecture(base_model)
  current = architecture(layout, config)
  moves = {}
  if run_vocabularies is not None and table_vocabularies is not None:
    unmatched = _unmatched_tables(table_vocabularies, base_model)
    if unmatched:
      return _fresh(base_model, unmatched)
    moves = _row_moves(run_vocabularies, vocabularies.of_model(base_model), table_vocabularies)
    if moves is None:
      return _fresh(base_model, 'it lacks a vocabulary file to match its embedding rows by '
                    'value')
  differences = _differences(*((_table_counts(base), _table_counts(current)) if moves
                               else (base, current)))
  if differences:
    return _fresh(base_model, f'the architecture differs ({"; ".join(differences)})')
  fresh = model.get_weights()
  try:
    status = weights_checkpoint(model, without=moves).read(checkpoint_path(base_model),
                                                            options=options)
    if moves:  # the base's tables are read below, row by row
      status.assert_existing_objects_matched()
    else:
      status.assert_consumed()
    _move_rows(model, moves, checkpoint_path(base_model))
  except (AssertionError, ValueError, KeyError, tf.errors.OpError) as error:
    model.set_weights(fresh)
    return _fresh(base_model, f'its weights do not fit this model ({type(error).__name__}: '
                  f'{str(error).split(chr(10), 1)[0]})')
  if moves:
    matched = '; '.join(sorted({_describe_move(*move) for move in moves.values()}))
    message = (f'initialised from the base model {base_model}, its embedding rows matched by '
               f'value ({matched}; new values keep fresh rows)')
  else:
    message = f'initialised every weight from the base model {base_model}'
  logging.info('Warm start: %s.', message)
  return Outcome(True, message)


def _unmatched_tables(table_vocabularies: Mapping[str, Sequence[Optional[str]]],
                      base_model: str) -> str:
  """Why the base model's embedding tables are not this run's, table for table ('' if
  they are): each must index the same column's vocabulary."""
  try:
    base_tables = window_inputs.table_vocabularies(export.read_dataset_spec(base_model))
  except (FileNotFoundError, ValueError) as error:
    return f'its dataset spec cannot be read ({error})'
  differing = [f'{layer}: base {base_tables.get(layer)} vs now {list(tables)}'
               for layer, tables in table_vocabularies.items()
               if list(base_tables.get(layer, [])) != list(tables)]
  return ('its embedding tables index other columns (' + '; '.join(differing) + ')'
          if differing else '')


def _describe_move(name: str, now: Sequence[bytes], before: Sequence[bytes]) -> str:
  """'series_key: 12 of 14 values from the base, 2 new'."""
  kept = len(set(now) & set(before))
  return f'{name}: {kept} of {len(now)} values from the base, {len(now) - kept} new'


def _row_moves(now: Mapping[str, Sequence[bytes]], before: Mapping[str, Sequence[bytes]],
               table_vocabularies: Mapping[str, Sequence[Optional[str]]]
               ) -> Optional[Dict[Tuple[str, int], Tuple[str, List[bytes], List[bytes]]]]:
  """(layer name, table index) -> (vocabulary name, this run's entries, the base's) for
  each table whose vocabularies differ; None if a vocabulary is missing on either side."""
  moves = {}
  for layer_name, names in table_vocabularies.items():
    for index, name in enumerate(names):
      if name is None:
        continue
      if name not in now or name not in before:
        return None
      if list(now[name]) != list(before[name]):
        moves[(layer_name, index)] = (name, list(now[name]), list(before[name]))
  return moves


def _table_counts(recorded: Dict[str, Any]) -> Dict[str, Any]:
  """An `architecture` dict with each group's table sizes replaced by their number,
  for tables whose rows are matched by value."""
  layout = dict(recorded['layout'])
  for group in ('static_cardinalities', 'known_cardinalities'):
    layout[group] = len(layout[group])
  return {**recorded, 'layout': layout}


def _move_rows(model: keras.Model,
               moves: Mapping[Tuple[str, int], Tuple[str, List[bytes], List[bytes]]],
               path: str) -> None:
  """Sets each moved table's rows from the base checkpoint at `path`: a value's row at
  its new id, the out-of-vocabulary rows as they were; new values keep their rows."""
  if not moves:
    return
  reader = tf.train.load_checkpoint(path)
  members = getattr(model, 'members', None) or [model]
  for member in members:
    prefix = '' if member is model else f'{member.name}/'
    for (layer_name, index), (_, now, before) in moves.items():
      table = member.get_layer(layer_name).tables[index]
      old = reader.get_tensor(f'{prefix}{layer_name}/table_{index}/.ATTRIBUTES/VARIABLE_VALUE')
      rows = table.numpy()
      old_id = {value: position for position, value in enumerate(before)}
      for position, value in enumerate(now):
        if value in old_id:
          rows[position] = old[old_id[value]]
      out_of_vocabulary = rows.shape[0] - len(now)
      if old.shape[0] - len(before) != out_of_vocabulary:
        raise ValueError(f'{layer_name} table {index}: {old.shape[0] - len(before)} '
                         f'out-of-vocabulary rows in the base, {out_of_vocabulary} now')
      rows[len(now):] = old[len(before):]
      table.assign(rows)


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
