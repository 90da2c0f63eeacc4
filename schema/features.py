"""Feature names and groups derived from a dataset spec.

Transform writes one feature per row for each `ModelFeature`; the windowing component
stacks rows into windows; the trainer feeds each group to the model. The only place that
builds transformed feature names is `transformed_name`.
"""

import dataclasses
import enum
from typing import Optional, Sequence, Tuple

from schema.dataset_spec import (CALENDAR_CARDINALITIES, TRANSFORMED_SUFFIX, DatasetSpec, DType,
                                 Role)


class Group(str, enum.Enum):
  """The model input a feature belongs to (see trainer_module.tft.inputs)."""
  STATIC_CATEGORICAL = 'static_categorical'
  STATIC_REAL = 'static_real'
  KNOWN_CATEGORICAL = 'known_categorical'
  KNOWN_REAL = 'known_real'
  OBSERVED_REAL = 'observed_real'

  @property
  def is_categorical(self) -> bool:
    return self in (Group.STATIC_CATEGORICAL, Group.KNOWN_CATEGORICAL)


@dataclasses.dataclass(frozen=True)
class ModelFeature:
  """A transformed, per-row feature that the model reads.

  Attributes:
    name: the transformed feature name.
    group: the model input it belongs to.
    vocabulary: for categoricals encoded by Transform, the vocabulary file name;
      the cardinality is the vocabulary size plus one out-of-vocabulary bucket.
    cardinality: for categoricals with a fixed range (calendar features).
  """
  name: str
  group: Group
  vocabulary: Optional[str] = None
  cardinality: Optional[int] = None


def transformed_name(name: str) -> str:
  """The name of the Transform output derived from column or feature `name`."""
  return f'{name}{TRANSFORMED_SUFFIX}'


def missing_indicator_name(column: str) -> str:
  """The name of the 0/1 feature marking imputed values of `column`."""
  return transformed_name(f'{column}_missing')


SERIES_KEY = transformed_name('series_key')  # composite key string, kept for grouping
SERIES_ID = transformed_name('series_id')  # integer id of the composite key
SERIES_VOCABULARY = 'series_key'  # one of dataset_spec.RESERVED_COLUMN_NAMES
OOV_BUCKETS = 1
SERIES_KEY_SEPARATOR = '|'


def series_key(key_values: Sequence[str], spec: DatasetSpec) -> str:
  """The composite key Transform builds from a row's key column values (the spec's name
  for data without key columns)."""
  return SERIES_KEY_SEPARATOR.join(key_values) if spec.series_key_columns else spec.name


def model_features(spec: DatasetSpec) -> Tuple[ModelFeature, ...]:
  """Every feature the model reads, grouped, in a stable order."""
  features = ([ModelFeature(SERIES_ID, Group.STATIC_CATEGORICAL, vocabulary=SERIES_VOCABULARY)]
              if spec.series_id_input else [])
  key_columns = spec.series_key_columns
  if len(key_columns) > 1:
    features += [ModelFeature(transformed_name(name), Group.STATIC_CATEGORICAL,
                              vocabulary=name) for name in key_columns]
  for role, categorical_group, real_group in (
      (Role.STATIC, Group.STATIC_CATEGORICAL, Group.STATIC_REAL),
      (Role.KNOWN, Group.KNOWN_CATEGORICAL, Group.KNOWN_REAL),
      (Role.OBSERVED, None, Group.OBSERVED_REAL)):
    if role == Role.KNOWN:
      features += [ModelFeature(transformed_name(name), Group.KNOWN_CATEGORICAL,
                                cardinality=CALENDAR_CARDINALITIES[name])
                   for name in spec.calendar_features]
    for column in spec.columns_with(role):
      if column.dtype == DType.CATEGORICAL:
        features.append(ModelFeature(transformed_name(column.name), categorical_group,
                                     vocabulary=column.name))
        continue
      features.append(ModelFeature(transformed_name(column.name), real_group))
      if column.allow_missing:
        features.append(ModelFeature(missing_indicator_name(column.name), real_group))
  return tuple(features)


def features_in(spec: DatasetSpec, group: Group) -> Tuple[ModelFeature, ...]:
  return tuple(f for f in model_features(spec) if f.group == group)
