"""The dataset spec: invariants of the shipped specs and clear errors for bad ones."""

import csv
import dataclasses
import os

import pytest

from schema import datasets
from schema.dataset_spec import Column, DatasetSpec, DType, Role, Scaling
from schema.features import (SERIES_ID, Group, features_in, missing_indicator_name,
                             model_features, transformed_name)
from schema.frequency import Frequency



def _spec(*columns, **changes):
  fields = dict(name='tiny', columns=columns, frequency=Frequency.HOURLY, encoder_steps=4,
                horizon=2)
  fields.update(changes)
  return DatasetSpec(**fields)


_KEY = Column('id', Role.SERIES_KEY, DType.CATEGORICAL)
_TIME = Column('t', Role.TIME, DType.CATEGORICAL)
_TARGET = Column('y', Role.TARGET)


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_shipped_specs_round_trip_through_json(name):
  spec = datasets.get_dataset(name).spec
  assert DatasetSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize('name', ['etth1', 'etth1_univariate', 'stallion'])
def test_every_declared_column_exists_in_the_reference_file(name):
  dataset = datasets.get_dataset(name)
  path = dataset.data_path
  if not os.path.exists(path):
    pytest.skip(f'reference data {path} not present')
  with open(path) as f:
    header = next(csv.reader(f))
  assert [c.name for c in dataset.spec.columns if c.name not in header] == []


def test_stallion_groups_follow_the_tutorial_roles():
  spec = datasets.STALLION
  assert spec.series_key_columns == ('agency', 'sku')
  assert spec.target_column == 'volume'
  assert {c.name for c in spec.columns_with(Role.OBSERVED)} == {
      'industry_volume', 'soda_volume', 'avg_max_temp'}
  static_categoricals = [f.name for f in features_in(spec, Group.STATIC_CATEGORICAL)]
  # Each key column, without the composite key's id (series_id_input: false).
  assert static_categoricals == [transformed_name('agency'), transformed_name('sku')]


def test_the_series_id_is_a_static_input_unless_the_spec_leaves_it_out():
  key = (Column('agency', Role.SERIES_KEY, DType.CATEGORICAL),
         Column('sku', Role.SERIES_KEY, DType.CATEGORICAL))
  with_id = _spec(*key, _TIME, _TARGET)
  without_id = _spec(*key, _TIME, _TARGET, series_id_input=False)

  def names(spec):
    return [f.name for f in features_in(spec, Group.STATIC_CATEGORICAL)]

  assert names(with_id) == [SERIES_ID, transformed_name('agency'), transformed_name('sku')]
  assert names(without_id) == [transformed_name('agency'), transformed_name('sku')]
  assert 'series_id_input' not in with_id.to_dict()
  assert DatasetSpec.from_json(without_id.to_json()) == without_id


def test_series_id_input_must_be_a_boolean():
  data = {**datasets.STALLION.to_dict(), 'series_id_input': 'no'}
  with pytest.raises(ValueError, match="'series_id_input' must be true or false, got 'no'"):
    DatasetSpec.from_dict(data)


def test_a_forecast_floor_round_trips_and_must_be_a_finite_number():
  floored = _spec(_KEY, _TIME, _TARGET, forecast_floor=0.0)
  assert floored.to_dict()['forecast_floor'] == 0.0
  assert DatasetSpec.from_json(floored.to_json()) == floored
  assert 'forecast_floor' not in _spec(_KEY, _TIME, _TARGET).to_dict()
  for bad in ('0', True, float('nan')):
    with pytest.raises(ValueError, match="'forecast_floor' must be a finite number such as "
                                         f"0, or left out; got {bad!r}"):
      DatasetSpec.from_dict({**datasets.STALLION.to_dict(), 'forecast_floor': bad})


def test_model_features_add_missing_indicators_and_calendar_features():
  spec = datasets.SYNTHETIC
  by_group = {group: [f.name for f in features_in(spec, group)] for group in Group}
  assert by_group[Group.OBSERVED_REAL] == [transformed_name('temperature'),
                                           missing_indicator_name('temperature')]
  assert by_group[Group.KNOWN_CATEGORICAL] == [transformed_name('hour_of_day'),
                                               transformed_name('day_of_week')]
  assert by_group[Group.KNOWN_REAL] == [transformed_name('price')]
  assert by_group[Group.STATIC_REAL] == [transformed_name('capacity')]
  calendar = [f for f in model_features(spec) if f.cardinality]
  assert [f.cardinality for f in calendar] == [24, 7]


def test_single_series_data_needs_no_key_column():
  spec = datasets.ETTH1
  assert spec.series_key_columns == ()
  assert [f.name for f in features_in(spec, Group.STATIC_CATEGORICAL)] == [SERIES_ID]


@pytest.mark.parametrize('columns, changes, message', [
    ((_KEY, _TIME, _TARGET, _TARGET), {}, 'more than once'),
    ((_KEY, _TIME), {}, 'exactly one target'),
    ((_KEY, _TIME, Column('t2', Role.TIME, DType.CATEGORICAL), _TARGET), {},
     'exactly one time'),
    ((_KEY, _TIME, Column('y', Role.TARGET, DType.CATEGORICAL)), {}, 'must be real'),
    ((_KEY, _TIME, dataclasses.replace(_TARGET, allow_missing=True)), {},
     'cannot allow missing'),
    ((_KEY, _TIME, _TARGET, Column('c', Role.OBSERVED, DType.CATEGORICAL)), {},
     'observed inputs must be real'),
    ((_KEY, _TIME, _TARGET, Column('series_id', Role.STATIC)), {}, 'reserved'),
    ((_KEY, _TIME, _TARGET, Column('target_history', Role.OBSERVED)), {},
     r"\['target_history'\] are reserved"),
    ((_KEY, _TIME, _TARGET, Column('price_xf', Role.KNOWN)), {},
     r"\['price_xf'\] are reserved: .*names ending in '_xf'"),
    ((_KEY, _TIME, _TARGET), {'calendar_features': ('week_of_moon',)},
     'unknown calendar features'),
    ((_KEY, _TIME, _TARGET, Column('hour_of_day', Role.KNOWN)),
     {'calendar_features': ('hour_of_day',)}, 'names of calendar features'),
    ((_KEY, _TIME, _TARGET), {'horizon': 0}, 'must both be at least 1'),
    ((_KEY, _TIME, _TARGET), {'series_id_input': False},
     r"series key has 1 column\(s\), \['id'\], so the model would not know the series apart"),
    ((_TIME, _TARGET), {'series_id_input': False}, r'series key has 0 column\(s\)'),
    ((_KEY, _TIME, _TARGET, Column('size', Role.STATIC, scaling=Scaling.PER_SERIES)), {},
     'cannot be scaled per series'),
])
def test_bad_specs_raise_clear_errors(columns, changes, message):
  with pytest.raises(ValueError, match=message):
    _spec(*columns, **changes)


def test_unknown_dataset_names_the_choices():
  with pytest.raises(ValueError, match='choose one of'):
    datasets.get_dataset('electricity_2011')


def test_column_lookup_names_the_spec():
  with pytest.raises(KeyError, match="not declared in dataset spec 'synthetic'"):
    datasets.SYNTHETIC.column('humidity')


def test_a_time_zone_round_trips_and_is_checked():
  zoned = dataclasses.replace(datasets.SYNTHETIC, time_zone='Europe/Berlin')
  assert zoned.to_dict()['time_zone'] == 'Europe/Berlin'
  assert DatasetSpec.from_json(zoned.to_json()) == zoned
  assert 'time_zone' not in datasets.SYNTHETIC.to_dict()
  for changes, message in (
      ({'time_zone': 'Berlin'}, r"'time_zone': 'Berlin' is not a time-zone name .*'Europe/Berlin'"),
      ({'time_zone': 'Europe/Berlin', 'calendar_features': []},
       r"'time_zone' sets the clock the calendar features are read on, and the spec has none"),
      ({'time_zone': 'Europe/Berlin', 'frequency': 'daily', 'calendar_features': ['day_of_week']},
       r"'time_zone' is for sub-daily grids.*on the daily grid")):
    with pytest.raises(ValueError, match=message):
      DatasetSpec.from_dict({**datasets.SYNTHETIC.to_dict(), **changes})
