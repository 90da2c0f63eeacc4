"""Which last blessed models can score a candidate's evaluation windows, and what is said
of those that cannot."""

import dataclasses
import json
import os

import pytest
from tensorflow.core.protobuf import saved_model_pb2
from tfx.types import standard_artifacts
from tfx.utils import path_utils

from components import baseline_check
from schema.dataset_spec import Role, Scaling
from schema.datasets import SYNTHETIC
from schema.frequency import Frequency
from trainer_module import model_format, training_period
from trainer_module.export import DATASET_SPEC_FILE, SERVING_SIGNATURE
from trainer_module.vocabularies import VOCABULARY_DIR

STATIONS = [b'station_00', b'station_01', b'station_02']


def _model_dir(root, name, spec=SYNTHETIC, vocabularies=None, outputs=('p10', 'p50', 'p90')):
  """A serving model directory with the spec, a saved_model.pb whose serving signature
  has `outputs` (None: no serving signature), and the vocabularies, which the check must
  not need: the baseline reads the raw columns through its own Transform."""
  directory = root / name
  os.makedirs(directory / 'assets.extra')
  (directory / DATASET_SPEC_FILE).write_text(spec.to_json())
  model_format.write(str(directory))
  saved = saved_model_pb2.SavedModel()
  signatures = saved.meta_graphs.add().signature_def
  if outputs is not None:
    for output in outputs:
      signatures[SERVING_SIGNATURE].outputs[output].name = f'{output}:0'
  (directory / 'saved_model.pb').write_bytes(saved.SerializeToString())
  os.makedirs(directory / VOCABULARY_DIR)
  vocabularies = {'series_key': STATIONS, 'region': [b'north', b'south']} if (
      vocabularies is None) else vocabularies
  for file_name, values in vocabularies.items():
    (directory / VOCABULARY_DIR / file_name).write_bytes(b'\n'.join(values))
  return str(directory)


def _with_columns(*columns, spec=SYNTHETIC):
  return dataclasses.replace(spec, columns=columns)


def _reason(tmp_path, candidate_spec, baseline_spec=SYNTHETIC):
  """The check on two new model directories of these specs."""
  root = tmp_path / f'pair_{len(list(tmp_path.iterdir()))}'
  return baseline_check.incompatibility(_model_dir(root, 'candidate', candidate_spec),
                                        _model_dir(root, 'baseline', baseline_spec))


@pytest.mark.parametrize('vocabularies', [
    {'series_key': STATIONS + [b'station_03'], 'region': [b'north', b'south']},  # new series
    {'series_key': STATIONS, 'region': [b'south', b'north']},  # another order
    {'series_key': STATIONS[:2]},  # values and a vocabulary lost
])
def test_other_vocabularies_keep_the_baseline(tmp_path, vocabularies):
  candidate = _model_dir(tmp_path, 'candidate', vocabularies=vocabularies)
  assert baseline_check.incompatibility(candidate, _model_dir(tmp_path, 'baseline')) is None


def test_spec_changes_the_baseline_does_not_read_keep_it(tmp_path):
  # A new column, other calendar features and scalings: its own Transform ignores them.
  promo = dataclasses.replace(SYNTHETIC.column('price'), name='promo')
  price = dataclasses.replace(SYNTHETIC.column('price'), scaling=Scaling.PER_SERIES)
  columns = tuple(price if c.name == 'price' else c for c in SYNTHETIC.columns) + (promo,)
  candidate = dataclasses.replace(SYNTHETIC, name='renamed', calendar_features=(),
                                  columns=columns)
  assert _reason(tmp_path, candidate) is None


def test_a_column_given_another_role_is_named(tmp_path):
  # price known (every step of the window) -> observed (the history only)
  columns = tuple(dataclasses.replace(c, role=Role.OBSERVED) if c.name == 'price' else c
                  for c in SYNTHETIC.columns)
  assert _reason(tmp_path, _with_columns(*columns)) == (
      "the dataset spec changed ('price' known real -> observed real), so it cannot read the "
      'windows')


@pytest.mark.parametrize('window', [(96, 24), (168, 12)])
def test_another_history_or_horizon_is_named(tmp_path, window):
  assert _reason(tmp_path, SYNTHETIC.with_window(*window)) == (
      'the dataset spec changed (168 history + 24 forecast steps of the hourly grid -> '
      f'{window[0]} history + {window[1]} forecast steps of the hourly grid), so it cannot '
      'read the windows')


def test_another_time_grid_is_named(tmp_path):
  assert 'of the hourly grid -> 168 history + 24 forecast steps of the daily grid' in _reason(
      tmp_path, dataclasses.replace(SYNTHETIC, frequency=Frequency.DAILY, calendar_features=()))


def test_a_column_gone_or_newly_missing_values_are_named(tmp_path):
  kept = tuple(c for c in SYNTHETIC.columns if c.name != 'capacity')
  assert _reason(tmp_path, _with_columns(*kept)) == (
      "the dataset spec changed (columns ['capacity'] gone), so it cannot read the windows")
  missing = tuple(dataclasses.replace(c, allow_missing=True) if c.name == 'price' else c
                  for c in SYNTHETIC.columns)
  assert _reason(tmp_path, _with_columns(*missing)) == (
      "the dataset spec changed ('price' may now miss values), so it cannot read the windows")
  # The other way round the baseline reads the windows: they hold no missing values.
  assert _reason(tmp_path, SYNTHETIC, _with_columns(*missing)) is None


def test_a_model_without_a_median_or_serving_signature_is_left_out(tmp_path):
  candidate = _model_dir(tmp_path, 'candidate')
  assert baseline_check.incompatibility(candidate, _model_dir(
      tmp_path, 'other_quantiles', outputs=('p5', 'p50', 'p95'))) is None
  assert baseline_check.incompatibility(candidate, _model_dir(
      tmp_path, 'no_median', outputs=('p10', 'p90'))) == (
          "it serves ['p10', 'p90'], without the median ('p50') that the MAE scores")
  assert baseline_check.incompatibility(candidate, _model_dir(
      tmp_path, 'no_serving', outputs=None)) == (
          'it has no serving_default signature to read raw windows')
  broken = _model_dir(tmp_path, 'broken')
  with open(os.path.join(broken, 'saved_model.pb'), 'wb') as f:
    f.write(b'not a SavedModel')
  assert baseline_check.incompatibility(candidate, broken).startswith(
      'its SavedModel cannot be read (')


def test_a_baseline_trained_on_rows_of_the_eval_period_is_left_out(tmp_path):
  candidate, baseline = _model_dir(tmp_path, 'candidate'), _model_dir(tmp_path, 'baseline')
  assert baseline_check.incompatibility(candidate, baseline) is None  # no periods recorded
  training_period.write(candidate, '2024-03-14 00:00:00')
  assert baseline_check.incompatibility(candidate, baseline) is None  # the baseline's unknown
  for before in ('2024-03-01 00:00:00', '2024-03-14 00:00:00'):  # the eval start moved on
    training_period.write(baseline, before)
    assert baseline_check.incompatibility(candidate, baseline) is None
  training_period.write(baseline, '2024-03-14 01:00:00')  # back: it trained on an eval row
  assert baseline_check.incompatibility(candidate, baseline) == (
      "it was trained on rows before 2024-03-14 01:00:00, and this run's eval period begins "
      'earlier (2024-03-14 00:00:00), so it has learned some of the eval windows')


def test_a_baseline_of_another_format_version_is_left_out_and_says_which(tmp_path):
  baseline = _model_dir(tmp_path, 'baseline')
  with open(os.path.join(baseline, model_format.FORMAT_FILE), 'w') as f:
    json.dump({'model_format': model_format.VERSION + 1}, f)
  assert baseline_check.incompatibility(_model_dir(tmp_path, 'candidate'), baseline) == (
      f'its {model_format.FORMAT_FILE} names model format {model_format.VERSION + 1}, and '
      f'this pipeline reads format {model_format.VERSION}')
  os.remove(os.path.join(baseline, model_format.FORMAT_FILE))
  assert baseline_check.incompatibility(
      os.path.join(tmp_path, 'candidate'), baseline).startswith(
          f'it has no {model_format.FORMAT_FILE}')


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

  candidate = model('candidate', spec=SYNTHETIC.with_window(96, 24))
  older = model('older')
  assert scoped_evaluator.baseline_left_out({'model': [candidate]}) is None
  assert scoped_evaluator.baseline_left_out(
      {'model': [model('new_series', vocabularies={'series_key': STATIONS + [b'station_03']})],
       'baseline_model': [older]}) is None
  assert '-> 96 history + 24 forecast steps' in scoped_evaluator.baseline_left_out(
      {'model': [candidate], 'baseline_model': [older]})
