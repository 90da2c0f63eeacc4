"""Spec files: the built-in data sets are files, and a bad file names the key and the fix."""

import os
import textwrap

import pytest
import yaml

from schema import dataset_file, datasets
from schema.dataset_spec import Role

GOOD = textwrap.dedent("""\
    name: shops
    frequency: W-SUN
    encoder_steps: 12
    horizon: 4
    calendar_features: [month_of_year]
    columns:
      - {name: shop, role: series_key}
      - {name: week, role: time}
      - {name: sales, role: target}
      - {name: promo, role: known}
      - {name: footfall, role: observed, allow_missing: true}
    split: {eval_start: 2024-06-02}
    blessing: {beat_naive_by: 0.05, max_mae: 10}
    schema: shops.schema.pbtxt
    data: ../data/shops.csv
    model: {hidden_size: 8}
    """)


def _load(tmp_path, text, name='spec.yaml'):
  path = tmp_path / name
  path.write_text(text)
  return dataset_file.load(str(path))


def test_a_spec_file_declares_columns_task_split_blessing_and_paths(tmp_path):
  dataset = _load(tmp_path, GOOD)
  spec = dataset.spec
  assert (spec.name, spec.frequency.value, spec.encoder_steps, spec.horizon) == (
      'shops', 'W-SUN', 12, 4)
  assert spec.series_key_columns == ('shop',)
  assert spec.column('week').dtype.value == 'categorical'  # keys and time default so
  assert spec.column('footfall').allow_missing
  assert [c.name for c in spec.columns_with(Role.KNOWN)] == ['promo']
  assert dataset.split.eval_start == '2024-06-02'  # an unquoted YAML date
  assert (dataset.blessing.beat_naive_by, dataset.blessing.max_mae) == (0.05, 10.0)
  assert dataset.schema_path == str(tmp_path / 'shops.schema.pbtxt')
  assert dataset.data_path == os.path.normpath(tmp_path / '..' / 'data' / 'shops.csv')
  assert dataset.model_overrides == {'hidden_size': 8}


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_built_in_data_sets_round_trip_through_their_files(name, tmp_path):
  dataset = datasets.get_dataset(name)
  text = yaml.safe_dump(dataset_file.to_dict(dataset, base_dir=str(tmp_path)),
                        sort_keys=False)
  again = _load(tmp_path, text)
  assert again.spec == dataset.spec
  assert (again.split, again.blessing, again.schema_path, again.data_path,
          dict(again.model_overrides)) == (dataset.split, dataset.blessing,
                                           dataset.schema_path, dataset.data_path,
                                           dict(dataset.model_overrides))


def test_a_spec_file_with_a_byte_order_mark_loads(tmp_path):
  path = tmp_path / 'spec.yaml'
  path.write_bytes(b'\xef\xbb\xbf' + GOOD.encode())
  assert dataset_file.load(str(path)).spec.name == 'shops'


@pytest.mark.parametrize('change, message', [
    (('{name: sales, role: target}', '{name: sales, role: targt}'),
     r"column 'sales' \(columns\[2\]\) role: 'targt' is not one of .* \(did you mean "
     r"'target'\?\)"),
    (('{name: promo, role: known}', '{name: sales, role: known}'),
     r"columns declared more than once: \['sales'\]"),
    (('horizon: 4', 'horizon: 0'), "'horizon' must be a whole number of time steps, at "
     'least 1; got 0'),
    (('frequency: W-SUN', 'frequency: fortnightly'),
     r"'frequency': unknown frequency 'fortnightly'; use one of '<N>min'"),
    (('horizon: 4', 'horizont: 4'), r"unknown key 'horizont' \(did you mean 'horizon'\?\)"),
    (('calendar_features: [month_of_year]', 'calendar_features: [day_of_week]'),
     r"calendar features \['day_of_week'\] take a single value on the W-SUN grid"),
    (('{name: footfall, role: observed, allow_missing: true}',
      '{name: footfall, role: observed, allow_missing: yes please}'),
     "allow_missing must be true or false, got 'yes please'"),
    (('max_mae: 10}', 'max_mae: -1}'), "'blessing': 'max_mae' must be greater than 0, got -1"),
    (('beat_naive_by: 0.05', 'beat_naive_by: 5'), r"'beat_naive_by' must lie in \[0, 1\)"),
    (('max_mae: 10}', 'max_mae: 10, beat_lightgbm_by: -0.1}'),
     r"'beat_lightgbm_by' must lie in \[0, 1\) \(0.05: at least 5% below LightGBM's MAE\)"),
    (('beat_naive_by: 0.05, max_mae: 10', 'beat_naive_by: null'),
     'the blessing rule needs beat_naive_by or max_mae'),
    (('model: {hidden_size: 8}', 'model: {hiden_size: 8}'),
     r"'model': unknown key 'hiden_size' \(did you mean 'hidden_size'\?\)"),
    (('model: {hidden_size: 8}', 'model: {seasonal_lag: 52}'),
     r"'model': seasonal_lag 52 must lie between the horizon \(4\) and the encoder steps "
     r"\(12\).*Lengthen the history or set seasonal_lag to 0"),
    (('model: {hidden_size: 8}', 'model: {seasonal_lag: yearly}'),
     r"'model: seasonal_lag' must be a whole number, got 'yearly'"),
    (('model: {hidden_size: 8}', 'model: {hidden_size: "32"}'),
     r"'model: hidden_size' must be a whole number, got '32'"),
    (('model: {hidden_size: 8}', 'model: {quantiles: 0.5}'),
     r"'model: quantiles' must be a list of numbers, e.g. \[0.1, 0.5, 0.9\], got 0.5"),
    (('model: {hidden_size: 8}', 'model: {history_highway: 1}'),
     r"'model: history_highway' must be true or false, got 1"),
    (('split: {eval_start: 2024-06-02}', 'split: {eval_start: 2024-06-02, test_start: '
      '2024-03-03}'), r"time split test_start='2024-03-03' is not after "
     r"eval_start='2024-06-02'.*put them in that order"),
    (('split: {eval_start: 2024-06-02}', 'split: {eval_start: 0.8, test_start: 0.9, '
      'end: 0.85}'), r"time split end=0.85 is not after test_start=0.9"),
    (('max_mae: 10}', 'max_mae: 10, max_relative_regression: 5}'),
     r"'max_relative_regression' is a fraction in \[0, 1\] \(0.05: at most 5% worse"),
    (('{name: sales, role: target}', '{name: sales, role: target, dtype: float}'),
     r"column 'sales' \(columns\[2\]\) dtype: 'float' is not one of \['categorical', "
     r"'real'\] \(did you mean 'real'\?\)"),
    (('{name: shop, role: series_key}', '{name: shop, role: series_key, dtype: int}'),
     r"column 'shop' \(columns\[0\]\) dtype: 'int' is not one of \['categorical', 'real'\]; "
     'a series_key column is categorical whatever its values look like'),
    (('name: shops', 'name: 2024'), r"got 2024 \(YAML reads 2024 as a number: quote it, "
     r'name: "2024"\)'),
    (('name: shops', 'name: shops/v2'), r"'name' names the run directory runs/<name> and "
     r"the pipeline tft-<name>: use letters, digits.*got 'shops/v2'"),
    (('horizon: 4', 'horizon: 4\nhorizon: 14'),
     r"line 5, column 1: 'horizon' is given twice in one mapping \(also at line 4, column 1\); "
     r"YAML would keep "
     'the last silently: keep one'),
    (('{name: promo, role: known}', '{name: promo, role: known, role: observed}'),
     r"line 10, column 32: 'role' is given twice in one mapping \(also at line 10, column "
     r'19\)'),
    (('split: {eval_start: 2024-06-02}', 'split: {eval_start: 1.5}'),
     'a fraction of the time range must lie strictly between 0 and 1'),
    (('split: {eval_start: 2024-06-02}\n', ''), r"the spec file is missing \['split'\]"),
])
def test_bad_spec_files_name_the_file_the_key_and_the_fix(tmp_path, change, message):
  old, new = change
  assert old in GOOD
  with pytest.raises(dataset_file.DatasetFileError, match=r'spec.yaml: .*' + message):
    _load(tmp_path, GOOD.replace(old, new))


def test_numbers_written_with_an_exponent_are_numbers(tmp_path):
  dataset = _load(tmp_path, GOOD.replace(
      'model: {hidden_size: 8}', 'model: {learning_rate: 1e-3, clipnorm: 2E+1, '
      'max_epochs: 1e2, hidden_size: 32.0}'))
  assert dataset.model_overrides == {'learning_rate': 0.001, 'clipnorm': 20.0,
                                     'max_epochs': 100, 'hidden_size': 32}
  assert all(type(dataset.model_overrides[key]) is int  # pylint: disable=unidiomatic-typecheck
             for key in ('max_epochs', 'hidden_size'))


def test_merge_keys_may_give_a_key_again_to_override_it(tmp_path):
  text = GOOD.replace('  - {name: sales, role: target}',
                      '  - &sales {name: sales, role: target}')
  text = text.replace('{name: promo, role: known}', '{<<: *sales, name: promo, role: known}')
  dataset = _load(tmp_path, text)
  assert {c.name: c.role for c in dataset.spec.columns}['promo'] == Role.KNOWN


def test_unreadable_and_malformed_files_are_named(tmp_path):
  with pytest.raises(dataset_file.DatasetFileError, match='cannot read the spec file'):
    dataset_file.load(str(tmp_path / 'absent.yaml'))
  with pytest.raises(dataset_file.DatasetFileError, match='is not valid YAML'):
    _load(tmp_path, 'name: [unclosed')
  with pytest.raises(dataset_file.DatasetFileError, match='must be a mapping'):
    _load(tmp_path, '- just\n- a list\n')
