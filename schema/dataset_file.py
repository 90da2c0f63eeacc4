"""Dataset spec files: a data set's columns, forecasting task, split and blessing rule.

A spec file is YAML (or JSON). The built-in data sets are such files (`schema/specs/`);
`tft-pipeline init` drafts one from a CSV. Example:

  name: my_load
  frequency: 15min            # see schema.frequency for the spellings
  encoder_steps: 96           # history length E, in steps
  horizon: 24                 # forecast length H, in steps
  calendar_features: [hour_of_day, day_of_week]
  columns:                    # role: series_key, time, target, static, known, observed
    - {name: site, role: series_key}
    - {name: ts, role: time}
    - {name: kw, role: target}
    - {name: tariff, role: known}
    - {name: outside_temp, role: observed, allow_missing: true}
  split: {eval_start: 0.7, test_start: 0.85}  # timestamps, fractions of the time range,
                              # or 'last 48 steps'; test: held out, judges the model
  blessing: {beat_naive_by: 0.05}  # MAE at most 95% of the best naive forecast's
  schema: my_load.schema.pbtxt  # curated TFDV schema; relative paths are to this file
  data: my_load.csv           # default input when --data is not given
  model: {hidden_size: 32}    # TFTConfig fields over the model preset
  monitoring: {max_mae_vs_expected: 1.3, on_breach: warn}  # scored forecasts' policy

Loading checks everything that can be checked without the data and names the key, the
value and the fix in its `DatasetFileError`.
"""

import dataclasses
import datetime
import os
import re
from typing import Any, Dict, List, Mapping, Optional

import yaml

from common.exit_codes import InputError
from schema.dataset_spec import SPEC_KEYS, DatasetSpec, check_keys
from schema.time_split import TimeSplit
from schema.hparams import TFTConfig, check_seasonal_lag
from schema.monitoring_policy import POLICY_KEYS, Monitoring

FILE_KEYS = SPEC_KEYS + ('split', 'blessing', 'schema', 'data', 'model', 'monitoring')
SPLIT_KEYS = ('eval_start', 'test_start', 'end')
BLESSING_KEYS = ('beat_naive_by', 'max_mae', 'max_relative_regression', 'beat_lightgbm_by')


class DatasetFileError(InputError):
  """A spec file is unreadable or declares something inconsistent."""


class _RepeatedKey(yaml.YAMLError):
  """A mapping of the file gives a key twice."""


class _SpecLoader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
  """YAML's safe loader, but a key given twice in a mapping is an error (YAML keeps the
  last, so an added `horizon: 14` would silently win over the file's `horizon: 7`), and
  `1e-3` is a number (YAML 1.1 wants `1.0e-3`)."""


def _unique_mapping(loader: _SpecLoader, node: yaml.MappingNode, deep: bool = False):
  places: Dict[str, str] = {}
  for key_node, _ in node.value:
    if key_node.tag == 'tag:yaml.org,2002:merge':
      continue  # '<<: *anchor': keys given here may override the merged ones
    key = loader.construct_object(key_node, deep=True)
    if not isinstance(key, str):
      continue  # the spec's keys are text; construct_mapping reports other trouble
    place = f'line {key_node.start_mark.line + 1}, column {key_node.start_mark.column + 1}'
    if key in places:
      raise _RepeatedKey(f'{place}: {key!r} is given twice in one mapping (also at '
                         f'{places[key]}); YAML would keep the last silently: keep one')
    places[key] = place
  return loader.construct_mapping(node, deep=deep)


_SpecLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)
_SpecLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float', re.compile(r'^[-+]?[0-9][0-9_]*(\.[0-9_]*)?[eE][-+]?[0-9]+$'),
    list('-+0123456789'))


@dataclasses.dataclass(frozen=True)
class Blessing:
  """When the Evaluator blesses a model: when every rule that is set holds, on the
  judged windows (the test period's when the split holds one out, else the eval
  period's).

  Attributes:
    beat_naive_by: the median forecast's MAE must be at most (1 - beat_naive_by)
      times that of the best naive forecast (repeat-last-value, seasonal naive at the
      frequency's natural seasons, the history's mean) on the same windows; None: no
      such rule.
    max_mae: an absolute bound on the median forecast's MAE, in original units; None:
      none.
    max_relative_regression: the candidate's MAE may exceed the last blessed model's
      on the same windows by at most this fraction (0.0: never worse).
    beat_lightgbm_by: the median forecast's MAE must be at most (1 - beat_lightgbm_by)
      times that of the LightGBM the run fits beside it (`components.gbm_baseline`) on
      the same windows; None (the default): no such rule.
  """
  beat_naive_by: Optional[float] = 0.0
  max_mae: Optional[float] = None
  max_relative_regression: float = 0.0
  beat_lightgbm_by: Optional[float] = None

  def __post_init__(self):
    if self.beat_naive_by is None and self.max_mae is None:
      raise ValueError('the blessing rule needs beat_naive_by or max_mae (or both)')
    for key, what in (('beat_naive_by', 'the best naive MAE'),
                      ('beat_lightgbm_by', "LightGBM's MAE")):
      value = getattr(self, key)
      if value is not None and not 0.0 <= value < 1.0:
        raise ValueError(f"'{key}' must lie in [0, 1) (0.05: at least 5% below {what}), "
                         f'got {value!r}')
    if self.max_mae is not None and not self.max_mae > 0:
      raise ValueError(f"'max_mae' must be greater than 0, got {self.max_mae!r}")
    if not 0.0 <= self.max_relative_regression <= 1.0:
      raise ValueError(f"'max_relative_regression' is a fraction in [0, 1] (0.05: at most "
                       f"5% worse than the last blessed model's MAE), got "
                       f'{self.max_relative_regression!r}')


  def rules(self, compared_with_last: bool) -> List[str]:
    """The rules that are set, in words with their keys (`rule`); the last blessed model's
    only when one was compared."""
    keys = ['beat_naive_by', 'max_mae'] + (['max_relative_regression'] if compared_with_last
                                           else []) + ['beat_lightgbm_by']
    return [self.rule(key, getattr(self, key)) for key in keys if getattr(self, key) is not None]

  @staticmethod
  def rule(key: str, setting: float) -> str:
    """Rule `key` at `setting` in words: "the MAE at most 0.95 times the best naive
    forecast's (beat_naive_by 0.05)". Every sentence the pipeline says of a rule, kept or
    missed, comes from here."""
    bar = {'beat_naive_by': f"{1 - setting:g} times the best naive forecast's",
           'max_mae': f'{setting:g}',
           'max_relative_regression': f"{1 + setting:g} times the last blessed model's",
           'beat_lightgbm_by': f"{1 - setting:g} times LightGBM's"}[key]
    return f'the MAE at most {bar} ({key} {setting:g})'

  @staticmethod
  def missed(key: str, setting: float, judged: str, measured: str) -> str:
    """Why a model missed rule `key` on the `judged` windows, `measured` saying what its MAE
    was ("1.04 times the best naive forecast's")."""
    return f'the {judged} MAE is {measured}, and the rule is {Blessing.rule(key, setting)}'


@dataclasses.dataclass(frozen=True)
class Dataset:
  """A data set: its spec, default split, blessing bound, schema and data files.

  Attributes:
    spec: the dataset spec.
    split: the default time split.
    blessing: when the Evaluator blesses a model.
    schema_path: the curated TFDV schema (absolute path); None: inferred by SchemaGen.
    data_path: the default input file or directory (absolute path); None: none.
    model_overrides: TFTConfig fields this data set needs whatever the model preset.
    monitoring: what a run does when the forecasts it scores miss what was expected.
    source: the spec file it was read from.
  """
  spec: DatasetSpec
  split: TimeSplit
  blessing: Blessing = Blessing()
  schema_path: Optional[str] = None
  data_path: Optional[str] = None
  model_overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  monitoring: Monitoring = Monitoring()
  source: Optional[str] = None


def load(path: str) -> Dataset:
  """The data set declared by the spec file at `path`.

  Raises:
    DatasetFileError: the file cannot be read, or a key or value is wrong; the message
      names the file, the key and the fix.
  """
  try:
    with open(path, encoding='utf-8-sig') as f:
      values = yaml.load(f, Loader=_SpecLoader)  # nosec: a safe loader
  except OSError as error:
    raise DatasetFileError(f'cannot read the spec file {path}: {error.strerror}') from None
  except _RepeatedKey as error:
    raise DatasetFileError(f'{path}: {error}') from None
  except yaml.YAMLError as error:
    raise DatasetFileError(f'{path} is not valid YAML or JSON: {error}') from None
  try:
    return from_dict(values, base_dir=os.path.dirname(os.path.abspath(path)), source=path)
  except ValueError as error:
    raise DatasetFileError(f'{path}: {error}') from None


def from_dict(values: Any, base_dir: str, source: Optional[str] = None) -> Dataset:
  """The data set from a spec file's values; relative paths are under `base_dir`."""
  check_keys(values, FILE_KEYS, 'the spec file',
              required=('name', 'columns', 'frequency', 'encoder_steps', 'horizon', 'split'))
  spec = DatasetSpec.from_dict({key: values[key] for key in SPEC_KEYS if key in values})
  split_values = values['split']
  check_keys(split_values, SPLIT_KEYS, "'split'", required=('eval_start',))
  # YAML reads an unquoted 2017-07-01 as a date: the split takes it as its ISO text.
  split = TimeSplit(**{key: value.isoformat() if isinstance(value, datetime.date) else value
                       for key, value in split_values.items()})
  blessing = values.get('blessing') or {}
  check_keys(blessing, BLESSING_KEYS, "'blessing'")
  for key, value in blessing.items():
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
      raise ValueError(f"'blessing: {key}' must be a number, got {value!r}")
  try:
    rule = Blessing(**blessing)
  except ValueError as error:
    raise ValueError(f"'blessing': {error}") from None
  model = values.get('model') or {}
  check_keys(model, [f.name for f in dataclasses.fields(TFTConfig)], "'model'")
  model = {key: _model_value(key, value) for key, value in model.items()}
  if 'seasonal_lag' in model:
    try:  # the value's own rule (TFTConfig's), then against this file's window
      TFTConfig(seasonal_lag=model['seasonal_lag'])
      check_seasonal_lag(model['seasonal_lag'], spec.encoder_steps, spec.horizon)
    except ValueError as error:
      raise ValueError(f"'model': {error}") from None
  monitoring = values.get('monitoring') or {}
  check_keys(monitoring, POLICY_KEYS, "'monitoring'")
  try:
    policy = Monitoring.from_dict(monitoring)
  except ValueError as error:
    raise ValueError(f"'monitoring': {error}") from None
  return Dataset(spec=spec, split=split, blessing=rule,
                 schema_path=_path(values.get('schema'), base_dir, 'schema'),
                 data_path=_path(values.get('data'), base_dir, 'data'),
                 model_overrides=dict(model), monitoring=policy, source=source)


def _model_value(key: str, value: Any) -> Any:
  """A `model` value as its TFTConfig field takes it (a whole number written 1e2 as an
  int); ValueError when it is not of the field's kind."""
  default = getattr(TFTConfig(), key)
  number = isinstance(value, (int, float)) and not isinstance(value, bool)
  if isinstance(default, bool):
    fits, kind = isinstance(value, bool), 'true or false'
  elif isinstance(default, int):
    fits, kind = number and float(value).is_integer(), 'a whole number'
  elif isinstance(default, float):
    fits, kind = number, 'a number'
  elif isinstance(default, tuple):
    fits, kind = isinstance(value, list) and all(
        isinstance(item, (int, float)) and not isinstance(item, bool) for item in value), (
            'a list of numbers, e.g. [0.1, 0.5, 0.9]')
  else:
    fits, kind = isinstance(value, str), 'text'
  if not fits:
    raise ValueError(f"'model: {key}' must be {kind}, got {value!r}")
  return int(value) if isinstance(default, int) and not isinstance(default, bool) else value


def to_dict(dataset: Dataset, base_dir: str) -> Dict[str, Any]:
  """The spec file's values for `dataset`; paths are written relative to `base_dir`."""
  values = dataset.spec.to_dict()
  values['split'] = {key: getattr(dataset.split, key) for key in SPLIT_KEYS
                     if getattr(dataset.split, key) is not None}
  values['blessing'] = dataclasses.asdict(dataset.blessing)
  for key, path in (('schema', dataset.schema_path), ('data', dataset.data_path)):
    if path is not None:
      values[key] = os.path.relpath(path, base_dir)
  if dataset.model_overrides:
    values['model'] = dict(dataset.model_overrides)
  if dataset.monitoring != Monitoring():
    values['monitoring'] = dataset.monitoring.to_dict()
  return values


def _path(value: Any, base_dir: str, key: str) -> Optional[str]:
  if value is None:
    return None
  if not isinstance(value, str) or not value.strip():
    raise ValueError(f"'{key}' must be a file path, got {value!r}")
  if '://' in value:
    return value
  return os.path.normpath(os.path.join(base_dir, os.path.expanduser(value)))
