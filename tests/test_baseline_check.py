"""Which last blessed models can score a candidate's evaluation windows, and what is said
of those that cannot."""

import dataclasses
import json
import os

import pytest
from tfx.types import standard_artifacts
from tfx.utils import path_utils

from components import baseline_check
from schema.dataset_spec import Role
from schema.datasets import SYNTHETIC
from trainer_module import warm_start
from trainer_module.vocabularies import VOCABULARY_DIR
from trainer_module.export import DATASET_SPEC_FILE

STATIONS = [b'station_00', b'station_01', b'station_02']


def _model_dir(root, name, spec=SYNTHETIC, vocabularies=None):
  """A serving model directory with the files the check reads: the spec and the
  vocabularies."""
  directory = root / name
  os.makedirs(directory / 'assets.extra')
  (directory / DATASET_SPEC_FILE).write_text(spec.to_json())
  os.makedirs(directory / VOCABULARY_DIR)
  vocabularies = {'series_key': STATIONS, 'region': [b'north', b'south']} if (
      vocabularies is None) else vocabularies
  for file_name, values in vocabularies.items():
    (directory / VOCABULARY_DIR / file_name).write_bytes(b'\n'.join(values))
  return str(directory)


def test_a_model_of_the_same_spec_and_vocabularies_can_score_the_windows(tmp_path):
  assert baseline_check.incompatibility(_model_dir(tmp_path, 'candidate'),
                                        _model_dir(tmp_path, 'baseline')) is None


def test_a_new_series_is_named_and_the_baseline_left_out(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies={
      'series_key': STATIONS + [b'station_03', b'station_04', b'station_05', b'station_06'],
      'region': [b'north', b'south']})
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("this run's vocabularies give other ids than its own ('series_key' "
                    "gained 4 values: 'station_03', 'station_04', 'station_05' and 1 more)")


def test_the_same_values_in_another_order_are_not_comparable(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies={
      'series_key': STATIONS, 'region': [b'south', b'north']})
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("this run's vocabularies give other ids than its own ('region' holds its "
                    'values in another order)')


def test_every_vocabulary_that_differs_is_named(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies={
      'series_key': STATIONS + [b'station_03'], 'region': [b'south', b'north']})
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("this run's vocabularies give other ids than its own ('region' holds its "
                    "values in another order; 'series_key' gained 1 value: 'station_03')")


def test_a_column_given_another_role_is_named(tmp_path):
  # price known (every step of the window) -> observed (the history only)
  columns = tuple(dataclasses.replace(c, role=Role.OBSERVED) if c.name == 'price' else c
                  for c in SYNTHETIC.columns)
  candidate = _model_dir(tmp_path, 'candidate',
                         spec=dataclasses.replace(SYNTHETIC, columns=columns))
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("the dataset spec changed ('price' known real -> observed real), so it "
                    'reads other window features')


@pytest.mark.parametrize('window', [(96, 24), (168, 12)])
def test_another_history_or_horizon_is_named(tmp_path, window):
  candidate = _model_dir(tmp_path, 'candidate', spec=SYNTHETIC.with_window(*window))
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ('the dataset spec changed (168 history + 24 forecast steps -> '
                    f'{window[0]} history + {window[1]} forecast steps), so it reads other '
                    'window features')


def test_a_column_added_to_the_spec_is_named(tmp_path):
  columns = SYNTHETIC.columns + (dataclasses.replace(SYNTHETIC.column('price'), name='promo'),)
  candidate = _model_dir(tmp_path, 'candidate',
                         spec=dataclasses.replace(SYNTHETIC, columns=columns))
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("the dataset spec changed (new columns ['promo']), so it reads other "
                    'window features')


def test_a_spec_change_that_leaves_the_windows_alike_keeps_the_baseline(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate',
                         spec=dataclasses.replace(SYNTHETIC, name='renamed'))
  assert baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline')) is None


def test_a_vocabulary_of_one_model_only_is_named(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies={'series_key': STATIONS})
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("this run's vocabularies give other ids than its own ('region' is in one "
                    'model only)')


def test_values_lost_are_named_as_lost_not_reordered(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies={
      'series_key': STATIONS[:2], 'region': [b'north', b'south']})
  reason = baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline'))
  assert reason == ("this run's vocabularies give other ids than its own ('series_key' lost 1 "
                    "value: 'station_02')")


def test_a_model_forecasting_other_quantiles_is_left_out(tmp_path):
  candidate, baseline = _model_dir(tmp_path, 'candidate'), _model_dir(tmp_path, 'baseline')
  for directory, quantiles in ((candidate, [0.1, 0.5, 0.9]), (baseline, [0.5])):
    os.makedirs(os.path.join(directory, warm_start.WARM_START_DIR))
    with open(os.path.join(directory, warm_start.WARM_START_DIR,
                           warm_start.ARCHITECTURE_FILE), 'w') as f:
      json.dump({'quantiles': quantiles}, f)
  assert baseline_check.incompatibility(candidate, baseline) == (
      'it forecasts the quantiles [0.5], the candidate [0.1, 0.5, 0.9], so the scores of one '
      'are not the scores of the other')


def test_a_baseline_without_its_spec_is_left_out_not_a_crash(tmp_path):
  baseline = _model_dir(tmp_path, 'baseline')
  os.remove(os.path.join(baseline, DATASET_SPEC_FILE))
  reason = baseline_check.incompatibility(_model_dir(tmp_path, 'candidate'), baseline)
  assert reason.startswith('its dataset spec cannot be read (')


def test_the_scoped_evaluator_leaves_out_only_a_baseline_it_cannot_compare(tmp_path):
  from components import scoped_evaluator

  def model(name, **kwargs):
    artifact = standard_artifacts.Model()
    artifact.uri = str(tmp_path / name)
    serving = path_utils.serving_model_path(artifact.uri)  # the directory the check reads
    _model_dir(tmp_path / name, os.path.relpath(serving, artifact.uri), **kwargs)
    return artifact

  candidate = model('candidate', vocabularies={'series_key': STATIONS + [b'station_03'],
                                               'region': [b'north', b'south']})
  older = model('older')
  assert scoped_evaluator.baseline_left_out({'model': [candidate]}) is None
  assert scoped_evaluator.baseline_left_out(
      {'model': [model('alike')], 'baseline_model': [older]}) is None
  assert "'series_key' gained 1 value: 'station_03'" in scoped_evaluator.baseline_left_out(
      {'model': [candidate], 'baseline_model': [older]})
