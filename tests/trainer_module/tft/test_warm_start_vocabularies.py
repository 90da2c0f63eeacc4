"""Warm start across vocabularies that changed: embedding rows follow their values."""

import dataclasses
import logging
import os

import numpy as np
import pytest

from schema.datasets import SYNTHETIC
from trainer_module import model_format, warm_start, window_inputs
from trainer_module.export import DATASET_SPEC_FILE
from schema.hparams import TFTConfig
from trainer_module.tft.ensemble import TFTEnsemble
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import KNOWN_EMBEDDING, STATIC_EMBEDDING, build_tft_model
from trainer_module.vocabularies import VOCABULARY_DIR

CONFIG = TFTConfig(hidden_size=8, num_heads=2)
BASE_VOCABULARIES = {'series_key': [b's0', b's1', b's2'], 'region': [b'north', b'south']}
# s3 is new; the others are counted in another order.
RUN_VOCABULARIES = {'series_key': [b's2', b's0', b's3', b's1'], 'region': [b'north', b'south']}
# The base's spec names each table's vocabulary: the station key's, then the region's.
SPEC = dataclasses.replace(SYNTHETIC, calendar_features=())
TABLES = {STATIC_EMBEDDING: ['series_key', 'region'], KNOWN_EMBEDDING: []}


def _layout(vocabularies):
  # One out-of-vocabulary row per table.
  return InputLayout(encoder_steps=4, horizon=2,
                     static_cardinalities=(len(vocabularies['series_key']) + 1,
                                           len(vocabularies['region']) + 1),
                     static_real_count=1, known_cardinalities=(), known_real_count=1,
                     observed_real_count=1)


def _build(layout, ensemble_size):
  if ensemble_size == 1:
    return build_tft_model(layout, CONFIG)
  return TFTEnsemble([build_tft_model(layout, CONFIG, name=f'member_{index}')
                      for index in range(ensemble_size)])


def _base(tmp_path, ensemble_size):
  config = dataclasses.replace(CONFIG, ensemble_size=ensemble_size)
  layout = _layout(BASE_VOCABULARIES)
  model = _build(layout, ensemble_size)
  warm_start.save(model, layout, config, str(tmp_path))
  (tmp_path / DATASET_SPEC_FILE).write_text(SPEC.to_json())
  model_format.write(str(tmp_path))
  os.makedirs(tmp_path / VOCABULARY_DIR)
  for name, values in BASE_VOCABULARIES.items():
    (tmp_path / VOCABULARY_DIR / name).write_bytes(b'\n'.join(values) + b'\n')
  return model, config


def _members(model):
  return getattr(model, 'members', None) or [model]


@pytest.mark.parametrize('ensemble_size', [1, 2])
def test_rows_move_to_their_values_new_ids_and_new_values_keep_fresh_rows(
    tmp_path, caplog, ensemble_size):
  base, config = _base(tmp_path, ensemble_size)
  model = _build(_layout(RUN_VOCABULARIES), ensemble_size)
  fresh = [member.get_layer(STATIC_EMBEDDING).tables[0].numpy() for member in _members(model)]

  with caplog.at_level(logging.INFO):
    assert warm_start.restore(model, _layout(RUN_VOCABULARIES), config, str(tmp_path),
                              run_vocabularies=RUN_VOCABULARIES, table_vocabularies=TABLES)

  for member, base_member, fresh_rows in zip(_members(model), _members(base), fresh):
    rows = member.get_layer(STATIC_EMBEDDING).tables[0].numpy()
    before = base_member.get_layer(STATIC_EMBEDDING).tables[0].numpy()
    for new_id, old_id in ((0, 2), (1, 0), (3, 1), (4, 3)):  # s2, s0, s1, out of vocabulary
      np.testing.assert_array_equal(rows[new_id], before[old_id])
    np.testing.assert_array_equal(rows[2], fresh_rows[2])  # s3: the base never saw it
    # Every other weight is the base's, the unchanged region table included.
    for got, want in zip(member.weights, base_member.weights):
      if got is not member.get_layer(STATIC_EMBEDDING).tables[0]:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
  assert window_inputs.table_vocabularies(SPEC) == TABLES
  assert any('its embedding rows matched by value (series_key: 3 of 4 values from the base, '
             '1 new; new values keep fresh rows)' in m for m in caplog.messages)


def test_a_base_without_vocabulary_files_is_not_warm_started_from(tmp_path, caplog):
  _, config = _base(tmp_path, 1)
  for name in BASE_VOCABULARIES:
    os.remove(tmp_path / VOCABULARY_DIR / name)
  model = _build(_layout(RUN_VOCABULARIES), 1)
  fresh = model.get_weights()

  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, _layout(RUN_VOCABULARIES), config, str(tmp_path),
                                  run_vocabularies=RUN_VOCABULARIES, table_vocabularies=TABLES)

  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert any('it lacks a vocabulary file to match its embedding rows by value' in m
             for m in caplog.messages)


def test_tables_of_other_columns_are_not_matched(tmp_path, caplog):
  # The spec now lists the region before the station key: table 0 is another column's.
  _, config = _base(tmp_path, 1)
  model = _build(_layout(RUN_VOCABULARIES), 1)
  swapped = {STATIC_EMBEDDING: ['region', 'series_key'], KNOWN_EMBEDDING: []}
  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, _layout(RUN_VOCABULARIES), config, str(tmp_path),
                                  run_vocabularies=RUN_VOCABULARIES, table_vocabularies=swapped)
  assert any("its embedding tables index other columns (static_embedding: base ['series_key', "
             "'region'] vs now ['region', 'series_key'])" in m for m in caplog.messages)


def test_a_failed_row_move_leaves_the_fresh_weights(tmp_path, caplog):
  _, config = _base(tmp_path, 1)
  # One more row than the vocabulary and its out-of-vocabulary row: the move cannot fit.
  layout = dataclasses.replace(_layout(RUN_VOCABULARIES), static_cardinalities=(6, 3))
  model = _build(layout, 1)
  fresh = model.get_weights()
  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, layout, config, str(tmp_path),
                                  run_vocabularies=RUN_VOCABULARIES, table_vocabularies=TABLES)
  for got, want in zip(model.get_weights(), fresh):
    np.testing.assert_array_equal(got, want)
  assert any('do not fit this model' in m and 'out-of-vocabulary rows' in m
             for m in caplog.messages)


def test_other_inputs_still_refuse_the_warm_start(tmp_path, caplog):
  _, config = _base(tmp_path, 1)
  layout = dataclasses.replace(_layout(RUN_VOCABULARIES), static_real_count=2)
  model = _build(layout, 1)
  with caplog.at_level(logging.INFO):
    assert not warm_start.restore(model, layout, config, str(tmp_path),
                                  run_vocabularies=RUN_VOCABULARIES, table_vocabularies=TABLES)
  assert any('layout.static_real_count: base 1 vs now 2' in m for m in caplog.messages)
