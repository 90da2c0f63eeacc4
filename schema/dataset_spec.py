"""The dataset spec: every column of a data set declared once, with its role and type.

ExampleGen, Transform, windowing, the model's inputs, the serving signature and the
evaluation config all derive what they need from a `DatasetSpec`. A spec is plain data:
it round-trips through JSON so it can travel in a TFX component's `custom_config`.
"""

import dataclasses
import enum
import json
from typing import Any, Dict, Optional, Sequence, Tuple


class Role(str, enum.Enum):
  """What a column means for forecasting."""
  SERIES_KEY = 'series_key'  # identifies a series; several columns form a composite key
  TIME = 'time'  # the timestamp of a row
  TARGET = 'target'  # the value to forecast
  STATIC = 'static'  # constant per series
  KNOWN = 'known'  # known in advance, over history and horizon (prices, holidays)
  OBSERVED = 'observed'  # only known up to the forecast time


class DType(str, enum.Enum):
  """How a column's values are read and encoded."""
  CATEGORICAL = 'categorical'  # strings, encoded through a vocabulary
  REAL = 'real'  # floats


class Scaling(str, enum.Enum):
  """How Transform z-scores a real covariate and imputes its missing values."""
  GLOBAL = 'global'  # train-period mean and std over all series
  PER_SERIES = 'per_series'  # each series' own train-period mean and std


class Frequency(str, enum.Enum):
  """Spacing of consecutive rows of one series."""
  HOURLY = 'hourly'
  DAILY = 'daily'
  MONTHLY = 'monthly'


# Names the pipeline gives to derived features; no column may use them.
RESERVED_COLUMN_NAMES = ('series_key', 'series_id')

# Calendar features that can be derived from the time column, with their cardinality.
CALENDAR_CARDINALITIES = {
    'hour_of_day': 24,
    'day_of_week': 7,
    'day_of_month': 31,
    'month_of_year': 12,
}


@dataclasses.dataclass(frozen=True)
class Column:
  """One column of the data set.

  Attributes:
    name: the column name in the input files.
    role: what the column means for forecasting.
    dtype: how its values are read.
    allow_missing: whether values may be empty. Missing values of real covariates are
      imputed by Transform and flagged by a missing-indicator feature.
    scaling: for known and observed reals, whether the z-score (and the imputed mean)
      is over all series or per series; series unseen in training use all series'.
  """
  name: str
  role: Role
  dtype: DType = DType.REAL
  allow_missing: bool = False
  scaling: Scaling = Scaling.GLOBAL


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
  """A data set's columns and its forecasting task.

  Attributes:
    name: short name used in the CLI and in artifact paths.
    columns: every column the pipeline reads; other columns in the files are ignored.
    frequency: spacing of the rows of a series.
    encoder_steps: history length E of a window.
    horizon: forecast length H of a window.
    calendar_features: known-future categoricals derived from the time column.
  """
  name: str
  columns: Tuple[Column, ...]
  frequency: Frequency
  encoder_steps: int
  horizon: int
  calendar_features: Tuple[str, ...] = ()

  def __post_init__(self):
    _validate(self)

  def columns_with(self, role: Role, dtype: Optional[DType] = None) -> Tuple[Column, ...]:
    """Columns with the given role (and dtype, if given), in declaration order."""
    return tuple(c for c in self.columns
                 if c.role == role and (dtype is None or c.dtype == dtype))

  @property
  def series_key_columns(self) -> Tuple[str, ...]:
    """The columns forming the series key; none means the data is a single series."""
    return tuple(c.name for c in self.columns_with(Role.SERIES_KEY))

  @property
  def time_column(self) -> str:
    return self.columns_with(Role.TIME)[0].name

  @property
  def target_column(self) -> str:
    return self.columns_with(Role.TARGET)[0].name

  @property
  def window_length(self) -> int:
    """Rows in one window: encoder steps plus horizon."""
    return self.encoder_steps + self.horizon

  def column(self, name: str) -> Column:
    for column in self.columns:
      if column.name == name:
        return column
    raise KeyError(f"column '{name}' is not declared in dataset spec '{self.name}'")

  def with_window(self, encoder_steps: int, horizon: int) -> 'DatasetSpec':
    """A copy with another window shape."""
    return dataclasses.replace(self, encoder_steps=encoder_steps, horizon=horizon)

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self))

  @classmethod
  def from_json(cls, text: str) -> 'DatasetSpec':
    return cls.from_dict(json.loads(text))

  @classmethod
  def from_dict(cls, data: Dict[str, Any]) -> 'DatasetSpec':
    columns = tuple(
        Column(name=c['name'], role=Role(c['role']), dtype=DType(c['dtype']),
               allow_missing=bool(c.get('allow_missing', False)),
               scaling=Scaling(c.get('scaling', Scaling.GLOBAL)))
        for c in data['columns'])
    return cls(name=data['name'], columns=columns, frequency=Frequency(data['frequency']),
               encoder_steps=int(data['encoder_steps']), horizon=int(data['horizon']),
               calendar_features=tuple(data.get('calendar_features', ())))


def _validate(spec: DatasetSpec) -> None:
  """Raises ValueError naming the first inconsistency in `spec`."""
  where = f"dataset spec '{spec.name}'"
  names = [c.name for c in spec.columns]
  duplicates = sorted({n for n in names if names.count(n) > 1})
  if duplicates:
    raise ValueError(f'{where}: columns declared more than once: {duplicates}; '
                     'declare each column once with a single role')
  for role, count in ((Role.TIME, 1), (Role.TARGET, 1)):
    found = [c.name for c in spec.columns if c.role == role]
    if len(found) != count:
      raise ValueError(f'{where}: needs exactly one {role.value} column, found {found}')
  _require_dtype(spec, (Role.SERIES_KEY, Role.TIME), DType.CATEGORICAL, where)
  _require_dtype(spec, (Role.TARGET,), DType.REAL, where)
  for column in spec.columns:
    if column.allow_missing and column.role in (Role.SERIES_KEY, Role.TIME, Role.TARGET):
      raise ValueError(f"{where}: {column.role.value} column '{column.name}' cannot allow "
                       'missing values')
    if column.allow_missing and column.dtype == DType.CATEGORICAL:
      raise ValueError(f"{where}: categorical column '{column.name}' cannot allow missing "
                       'values; fill them with an explicit category such as "unknown"')
  for column in spec.columns:
    per_series_ok = column.role in (Role.KNOWN, Role.OBSERVED) and column.dtype == DType.REAL
    if column.scaling == Scaling.PER_SERIES and not per_series_ok:
      raise ValueError(f"{where}: column '{column.name}' cannot be scaled per series; only "
                       'known and observed reals can (the target is scaled per window)')
  for column in spec.columns_with(Role.OBSERVED, DType.CATEGORICAL):
    raise ValueError(f"{where}: observed column '{column.name}' is categorical; observed "
                     'inputs must be real (encode the category as numbers, or declare it '
                     'static or known if it is)')
  reserved = sorted(set(names) & set(RESERVED_COLUMN_NAMES))
  if reserved:
    raise ValueError(f'{where}: column names {reserved} are reserved for derived '
                     'features; rename the columns')
  clashing = sorted(set(names) & set(spec.calendar_features))
  if clashing:
    raise ValueError(f'{where}: columns {clashing} have the names of calendar features; '
                     'rename the columns or drop those calendar features')
  unknown = sorted(set(spec.calendar_features) - set(CALENDAR_CARDINALITIES))
  if unknown:
    raise ValueError(f'{where}: unknown calendar features {unknown}; choose from '
                     f'{sorted(CALENDAR_CARDINALITIES)}')
  if spec.encoder_steps < 1 or spec.horizon < 1:
    raise ValueError(f'{where}: encoder_steps ({spec.encoder_steps}) and horizon '
                     f'({spec.horizon}) must both be at least 1')


def _require_dtype(spec: DatasetSpec, roles: Sequence[Role], dtype: DType, where: str):
  for column in spec.columns:
    if column.role in roles and column.dtype != dtype:
      raise ValueError(f"{where}: {column.role.value} column '{column.name}' must be "
                       f'{dtype.value}, not {column.dtype.value}')
