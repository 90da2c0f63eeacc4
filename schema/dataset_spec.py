"""The dataset spec: every column of a data set declared once, with its role and type.

ExampleGen, Transform, windowing, the model's inputs, the serving signature and the
evaluation config all derive what they need from a `DatasetSpec`. A spec is plain data:
it round-trips through JSON so it can travel in a TFX component's `custom_config`.
"""

import dataclasses
import datetime
import enum
import json
import math
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from common.suggestions import did_you_mean
from schema import time_zones
from schema.frequency import CALENDAR_CARDINALITIES, Frequency
from schema.time_split import (check_time_format, format_time, format_time_as_given,
                               parse_timestamp)


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


# Names the pipeline gives to derived features and to the fields of a window example
# (`schema.window_layout`), which also holds the raw columns; no column may use them.
RESERVED_COLUMN_NAMES = ('series_key', 'series_id', 'forecast_start', 'target_history',
                         'target_future', 'window_mask', 'window_split')
TRANSFORMED_SUFFIX = '_xf'  # ends the name of every Transform output (`schema.features`)
RESERVED_NAMES_RULE = (f'are reserved: {list(RESERVED_COLUMN_NAMES)} and names ending in '
                       f"'{TRANSFORMED_SUFFIX}' name what the pipeline derives from the columns")


def reserved_names(names: Iterable[str]) -> List[str]:
  """The names among `names` that no column may have (`RESERVED_NAMES_RULE`)."""
  return sorted(name for name in set(names)
                if name in RESERVED_COLUMN_NAMES or name.endswith(TRANSFORMED_SUFFIX))



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
    series_id_input: whether the model reads the series id, one learned embedding per
      series, as a static input (true, the default). False leaves it out, so that the
      series share what they learn through their key columns and static columns only;
      needs a key of several columns, which stay as static inputs.
    forecast_floor: the lowest value a forecast may take (0 for sales, counts or volumes,
      which cannot be negative), or None for no floor. The exported model serves every
      quantile at or above it; while no actual lies below it no band loses coverage.
    time_zone: the IANA zone ('Europe/Berlin') on whose local clock the calendar features
      are read, for data that follows the local day across clock changes; None reads
      them in UTC. Times stay instants. Sub-daily grids only (`schema.time_zones`).
    time_format: the strptime format the time column is written in ('%d/%m/%Y'), for
      times that are neither ISO 8601 nor a notation `schema.time_split` reads; None
      reads those. Forecast times are written back in it.
  """
  name: str
  columns: Tuple[Column, ...]
  frequency: Frequency
  encoder_steps: int
  horizon: int
  calendar_features: Tuple[str, ...] = ()
  series_id_input: bool = True
  forecast_floor: Optional[float] = None
  time_zone: Optional[str] = None
  time_format: Optional[str] = None

  def __post_init__(self):
    _validate(self)

  def read_time(self, text: str, what: str = 'timestamp') -> int:
    """Epoch seconds of a time as the time column writes it; ValueError names `what`,
    the value and the fix."""
    return parse_timestamp(text, what=what, time_format=self.time_format)

  def write_time(self, seconds: int, as_written: Optional[str] = None) -> str:
    """The instant `seconds` written as the time column writes `as_written`: in its
    notation or format, and on the spec's `time_zone` clock if `as_written` is written on
    it (`time_zones.writes_on_clock`), else in the UTC offset it names; without
    `as_written`, in UTC, in the spec's format if it has one."""
    if as_written is None:
      return (format_time(seconds) if self.time_format is None else
              datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
                  self.time_format))
    if self.time_zone is not None and time_zones.writes_on_clock(
        as_written, self.read_time(as_written), self.time_zone, self.time_format):
      return time_zones.format_time(seconds, self.time_zone, self.time_format)
    return format_time_as_given(seconds, as_written, self.time_format)

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

  def to_dict(self) -> Dict[str, Any]:
    """Plain values, as a spec file holds them (`from_dict` reads them back)."""
    columns = []
    for column in self.columns:
      entry = {'name': column.name, 'role': column.role.value, 'dtype': column.dtype.value}
      if column.allow_missing:
        entry['allow_missing'] = True
      if column.scaling != Scaling.GLOBAL:
        entry['scaling'] = column.scaling.value
      columns.append(entry)
    spec = {'name': self.name, 'frequency': self.frequency.value,
            'encoder_steps': self.encoder_steps, 'horizon': self.horizon,
            'calendar_features': list(self.calendar_features), 'columns': columns}
    if not self.series_id_input:
      spec['series_id_input'] = False
    if self.forecast_floor is not None:
      spec['forecast_floor'] = self.forecast_floor
    if self.time_zone is not None:
      spec['time_zone'] = self.time_zone
    if self.time_format is not None:
      spec['time_format'] = self.time_format
    return spec

  def to_json(self) -> str:
    return json.dumps(self.to_dict())

  @classmethod
  def from_json(cls, text: str) -> 'DatasetSpec':
    return cls.from_dict(json.loads(text))

  @classmethod
  def from_dict(cls, data: Mapping[str, Any]) -> 'DatasetSpec':
    """The spec from plain values; ValueError names the key, the value and the fix."""
    check_keys(data, SPEC_KEYS, 'the spec', required=('name', 'columns', 'frequency',
                                                        'encoder_steps', 'horizon'))
    name = data['name']
    if not isinstance(name, str) or not _NAME.fullmatch(name):
      quote = (f' (YAML reads {name!r} as a number: quote it, name: "{name}")'
               if isinstance(name, (int, float)) and not isinstance(name, bool) else '')
      raise ValueError(f"'name' names the run directory runs/<name> and the pipeline "
                       f"tft-<name>: use letters, digits, '_', '-' and '.', starting with a "
                       f'letter or digit (e.g. shop_sales); got {name!r}{quote}')
    columns = data['columns']
    if not isinstance(columns, (list, tuple)) or not columns:
      raise ValueError("'columns' must be a list of columns, each a mapping such as "
                       "{name: load, role: target}")
    try:
      frequency = Frequency(data['frequency'])
    except ValueError as error:
      raise ValueError(f"'frequency': {error}") from None
    calendar = data.get('calendar_features') or ()
    if isinstance(calendar, str) or not isinstance(calendar, (list, tuple)):
      raise ValueError(f"'calendar_features' must be a list such as [hour_of_day], got "
                       f'{calendar!r}')
    series_id_input = data.get('series_id_input', True)
    if not isinstance(series_id_input, bool):
      raise ValueError(f"'series_id_input' must be true or false, got {series_id_input!r}")
    return cls(name=name, columns=tuple(_column(c, i) for i, c in enumerate(columns)),
               frequency=frequency,
               encoder_steps=_positive_int(data['encoder_steps'], 'encoder_steps'),
               horizon=_positive_int(data['horizon'], 'horizon'),
               calendar_features=tuple(calendar), series_id_input=series_id_input,
               forecast_floor=_optional_number(data.get('forecast_floor'), 'forecast_floor'),
               time_zone=data.get('time_zone'), time_format=data.get('time_format'))


SPEC_KEYS = ('name', 'frequency', 'encoder_steps', 'horizon', 'calendar_features',
             'time_zone', 'time_format', 'series_id_input', 'forecast_floor', 'columns')
COLUMN_KEYS = ('name', 'role', 'dtype', 'allow_missing', 'scaling')


def check_keys(data: Any, known: Sequence[str], where: str,
                required: Sequence[str] = ()) -> None:
  """ValueError for a non-mapping, an unknown key (with the closest known one) or a
  missing required key."""
  if not isinstance(data, Mapping):
    raise ValueError(f'{where} must be a mapping of {list(known)}, got {data!r}')
  for key in data:
    if key not in known:
      raise ValueError(f"{where}: unknown key '{key}'{did_you_mean(str(key), known)}; "
                       f'known keys: {list(known)}')
  missing = [key for key in required if key not in data]
  if missing:
    raise ValueError(f'{where} is missing {missing}')


_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]*')
# What other tools call the two dtypes.
_DTYPE_WORDS = {word: DType.REAL.value for word in
                ('float', 'double', 'number', 'numeric', 'int', 'integer', 'decimal')}
_DTYPE_WORDS.update({word: DType.CATEGORICAL.value for word in
                     ('string', 'str', 'text', 'category', 'object', 'bytes')})


def _choice(enum_type, value: Any, where: str):
  choices = [member.value for member in enum_type]
  if value not in choices:
    synonym = _DTYPE_WORDS.get(str(value).lower()) if enum_type is DType else None
    hint = f" (did you mean '{synonym}'?)" if synonym else did_you_mean(str(value), choices)
    raise ValueError(f'{where}: {value!r} is not one of {choices}{hint}')
  return enum_type(value)


def _positive_int(value: Any, key: str) -> int:
  if isinstance(value, bool) or not isinstance(value, int) or value < 1:
    raise ValueError(f"'{key}' must be a whole number of time steps, at least 1; got "
                     f'{value!r}')
  return value


def _optional_number(value: Any, key: str) -> Optional[float]:
  if value is None:
    return None
  if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
    raise ValueError(f"'{key}' must be a finite number such as 0, or left out; got {value!r}")
  return float(value)


def _column(data: Any, index: int) -> Column:
  where = f'columns[{index}]'
  if isinstance(data, Mapping) and isinstance(data.get('name'), str):
    where = f"column '{data['name']}' (columns[{index}])"
  check_keys(data, COLUMN_KEYS, where, required=('name', 'role'))
  if not isinstance(data['name'], str) or not data['name']:
    raise ValueError(f'{where}: name must be a non-empty string, got {data["name"]!r}')
  role = _choice(Role, data['role'], f'{where} role')
  default_dtype = DType.CATEGORICAL if role in (Role.SERIES_KEY, Role.TIME) else DType.REAL
  allow_missing = data.get('allow_missing', False)
  if not isinstance(allow_missing, bool):
    raise ValueError(f'{where}: allow_missing must be true or false, got {allow_missing!r}')
  dtype = data.get('dtype', default_dtype.value)
  if role in (Role.SERIES_KEY, Role.TIME) and str(dtype).lower() in _DTYPE_WORDS:
    raise ValueError(f'{where} dtype: {dtype!r} is not one of {[d.value for d in DType]}; a '
                     f'{role.value} column is categorical whatever its values look like: write '
                     'dtype: categorical, or leave it out')
  return Column(name=data['name'], role=role,
                dtype=_choice(DType, dtype, f'{where} dtype'),
                allow_missing=allow_missing,
                scaling=_choice(Scaling, data.get('scaling', Scaling.GLOBAL.value),
                                f'{where} scaling'))


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
  if not spec.series_id_input and len(spec.series_key_columns) < 2:
    raise ValueError(f'{where}: series_id_input is false, but the series key has '
                     f'{len(spec.series_key_columns)} column(s), '
                     f'{list(spec.series_key_columns)}, so the model would not know the '
                     'series apart; remove series_id_input (with a key of one column the '
                     'series id is how the model tells the series apart), or key the '
                     'series by several columns')
  reserved = reserved_names(names)
  if reserved:
    raise ValueError(f'{where}: column names {reserved} {RESERVED_NAMES_RULE}; rename the '
                     'columns')
  clashing = sorted(set(names) & set(spec.calendar_features))
  if clashing:
    raise ValueError(f'{where}: columns {clashing} have the names of calendar features; '
                     'rename the columns or drop those calendar features')
  unknown = sorted(set(spec.calendar_features) - set(CALENDAR_CARDINALITIES))
  if unknown:
    raise ValueError(f'{where}: unknown calendar features {unknown}; choose from '
                     f'{sorted(CALENDAR_CARDINALITIES)}')
  varying = spec.frequency.varying_calendar_features()
  constant = [name for name in spec.calendar_features if name not in varying]
  if constant:
    raise ValueError(f'{where}: calendar features {constant} take a single value on the '
                     f'{spec.frequency.value} grid; drop them (features that vary on it: '
                     f'{list(varying)})')
  if spec.time_zone is not None:
    _check_time_zone(spec, where)
  if spec.time_format is not None:
    check_time_format(spec.time_format, f"{where}: 'time_format'",
                      sub_daily=spec.frequency.is_sub_daily)
  if spec.encoder_steps < 1 or spec.horizon < 1:
    raise ValueError(f'{where}: encoder_steps ({spec.encoder_steps}) and horizon '
                     f'({spec.horizon}) must both be at least 1')


def _check_time_zone(spec: DatasetSpec, where: str) -> None:
  """ValueError unless the spec's time zone is a zone name that its calendar features on
  a sub-daily grid can be read in."""
  time_zones.check(spec.time_zone, f"{where}: 'time_zone'")
  if not spec.frequency.is_sub_daily:
    raise ValueError(f"{where}: 'time_zone' is for sub-daily grids, whose calendar features "
                     f'a clock change moves; on the {spec.frequency.value} grid each time '
                     'names a day (or a longer period) as it is: remove time_zone')
  if not spec.calendar_features:
    raise ValueError(f"{where}: 'time_zone' sets the clock the calendar features are read "
                     'on, and the spec has none: remove time_zone, or add calendar_features '
                     '(e.g. [hour_of_day, day_of_week])')


def _require_dtype(spec: DatasetSpec, roles: Sequence[Role], dtype: DType, where: str):
  for column in spec.columns:
    if column.role in roles and column.dtype != dtype:
      raise ValueError(f"{where}: {column.role.value} column '{column.name}' must be "
                       f'{dtype.value}, not {column.dtype.value}')
