"""Readable names of the variables each variable-selection network of the model weighs.

The order is the model's (see `trainer_module.tft`): static categoricals then static
reals; the history's target, observed reals, known categoricals, known reals; the
future's known categoricals then known reals. Names are the spec's column names, the
calendar feature names, 'series_id', '<column> (missing)' for missing indicators and
'<target> (L steps before)' for the model's seasonal lag input.
"""

from typing import Dict, Tuple

from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_ID, Group, features_in, missing_indicator_name, transformed_name

STATIC = 'static'
HISTORY = 'history'
FUTURE = 'future'
GROUPS = (STATIC, HISTORY, FUTURE)


def _readable_names(spec: DatasetSpec) -> Dict[str, str]:
  """Transformed feature name -> readable name."""
  names = {SERIES_ID: 'series_id'}
  for column in spec.columns:
    names[transformed_name(column.name)] = column.name
    if column.allow_missing:
      names[missing_indicator_name(column.name)] = f'{column.name} (missing)'
  for feature in spec.calendar_features:
    names[transformed_name(feature)] = feature
  return names


def selection_variables(spec: DatasetSpec,
                        seasonal_lag: int = 0) -> Dict[str, Tuple[str, ...]]:
  """{'static': names, 'history': names, 'future': names}, each in the model's order.

  Args:
    spec: The data set's spec.
    seasonal_lag: The model's `TFTConfig.seasonal_lag`; when set, the future inputs end
      with the target that many steps before.
  """
  readable = _readable_names(spec)

  def names(*groups: Group) -> Tuple[str, ...]:
    return tuple(readable[feature.name] for group in groups for feature in features_in(spec, group))

  known = names(Group.KNOWN_CATEGORICAL, Group.KNOWN_REAL)
  return {
      STATIC: names(Group.STATIC_CATEGORICAL, Group.STATIC_REAL),
      HISTORY: (spec.target_column,) + names(Group.OBSERVED_REAL) + known,
      FUTURE: known + ((f'{spec.target_column} ({seasonal_lag} steps before)',)
                       if seasonal_lag else ()),
  }
