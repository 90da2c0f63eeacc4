"""What a trained model looks at, measured on transformed windows.

Runs the exported model's `interpretation` signature (`trainer_module.export`) over
windows as the Windowing component writes them and averages over the windows:
  - variable importance: the mean selection weight of each variable of a selection
    group (static; history and future also over their steps); each group sums to 1;
  - attention [H, T]: for each horizon step, the mean attention over the window's steps,
    from E steps before the forecast start to the step itself (the mask is causal), so
    each row sums to 1.
Each window's series, history, actuals and forecasts are kept for plots.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_KEY
from schema.selection_variables import FUTURE, GROUPS, HISTORY, STATIC
from schema.window_layout import (FORECAST_START, TARGET_FUTURE, TARGET_HISTORY, WINDOW_MASK,
                                  window_feature_spec)
from trainer_module import export
from trainer_module.tft.model import ATTENTION, FUTURE_WEIGHTS, HISTORY_WEIGHTS, STATIC_WEIGHTS
from trainer_module.window_inputs import matching_files

_WEIGHTS = dict(zip(GROUPS, (STATIC_WEIGHTS, HISTORY_WEIGHTS, FUTURE_WEIGHTS)))
_BATCH_SIZE = 256


@dataclasses.dataclass(frozen=True)
class Interpretation:
  """A model's variable importance, attention and forecasts over N windows.

  Attributes:
    spec: the dataset spec saved with the model.
    importance: selection group ('static', 'history', 'future') -> variable name ->
      mean selection weight, in the model's variable order.
    attention: [H, T] mean attention; column j is the step j - E relative to the
      forecast start (`step_offsets`).
    series_keys: [N] each window's series key.
    forecast_starts: [N] epoch seconds of each window's first forecast step.
    target_history: [N, E] the target over each window's history.
    target_future: [N, H] the actuals over each window's horizon.
    forecasts: quantile output name ('p10', 'p50', ...) -> [N, H], in quantile order.
  """
  spec: DatasetSpec
  importance: Dict[str, Dict[str, float]]
  attention: np.ndarray
  series_keys: np.ndarray
  forecast_starts: np.ndarray
  target_history: np.ndarray
  target_future: np.ndarray
  forecasts: Dict[str, np.ndarray]

  @property
  def step_offsets(self) -> List[int]:
    """The attention columns' steps relative to the forecast start: -E ... H - 1."""
    return list(range(-self.spec.encoder_steps, self.spec.horizon))


def read_windows(file_patterns: Sequence[str], max_windows: Optional[int] = None) -> List[bytes]:
  """Serialized windows from the Windowing component's gzipped TFRecords, in file order.

  Raises:
    ValueError: no file matches (naming the Windowing outputs there are), the files are
      not gzipped TFRecords, or they hold training segments rather than windows.
  """
  try:
    files = matching_files(file_patterns)
  except ValueError as error:
    raise ValueError(f'{error}{_outputs_there(file_patterns)}') from None
  dataset = tf.data.TFRecordDataset(files, compression_type='GZIP')
  if max_windows is not None:
    dataset = dataset.take(max_windows)
  try:
    windows = [record.numpy() for record in dataset]
  except tf.errors.OpError:
    raise ValueError(f'{files[0]} and the files with it are not the gzipped TFRecords the '
                     'Windowing component writes; pass the files of its output, e.g. '
                     '<pipeline_root>/Windowing/windows/<id>/Split-eval/*') from None
  if windows and WINDOW_MASK in tf.train.Example.FromString(windows[0]).features.feature:
    raise ValueError(f'{files[0]} holds training segments (Split-train), from which the '
                     'Trainer cuts its windows, not windows: pass Split-eval (or Split-test)')
  return windows


def _outputs_there(file_patterns: Sequence[str]) -> str:
  """'; <dir> holds Windowing outputs 8, 15: e.g. <dir>/15/Split-eval/*' for a pattern
  under a Windowing output directory with another id, or ''."""
  for pattern in file_patterns:
    parts = pattern.split('/')
    if 'windows' not in parts[:-1]:
      continue
    directory = '/'.join(parts[:len(parts) - parts[::-1].index('windows')])
    if not tf.io.gfile.isdir(directory):
      continue
    ids = sorted((name.rstrip('/') for name in tf.io.gfile.listdir(directory)
                  if name.rstrip('/').isdigit()), key=int)
    if ids:
      return (f"; {directory} holds the Windowing outputs {', '.join(ids)}: e.g. "
              f'{directory}/{ids[-1]}/Split-eval/*')
  return ''


def _check_window_shape(window: bytes, spec, model_dir: str) -> None:
  """Raises ValueError when a window's history or horizon is not the model's."""
  steps = tf.io.parse_single_example(window, {
      name: tf.io.VarLenFeature(tf.float32) for name in (TARGET_HISTORY, TARGET_FUTURE)})
  shape = tuple(int(tf.size(steps[name].values)) for name in (TARGET_HISTORY, TARGET_FUTURE))
  if shape != (spec.encoder_steps, spec.horizon):
    raise ValueError(f'the windows hold {shape[0]} history and {shape[1]} forecast steps; the '
                     f'model in {model_dir} reads {spec.encoder_steps} and {spec.horizon}: '
                     "take the windows of the model's own run (its pipeline_root/Windowing/"
                     'windows/<id>/Split-eval/*)')


def interpret(model_dir: str, windows: Sequence[bytes]) -> Interpretation:
  """Runs the model in `model_dir` (a SavedModel) over `windows` and averages.

  Raises:
    ValueError: no windows, windows of another history or horizon than the model's, or
      the model has no interpretation signature.
  """
  if not windows:
    raise ValueError('no windows to interpret; pass the Windowing output of a split that '
                     'has windows')
  spec = export.read_dataset_spec(model_dir)
  signatures = tf.saved_model.load(model_dir).signatures
  if export.INTERPRETATION_SIGNATURE not in signatures:
    raise ValueError(f"the model in {model_dir} has no '{export.INTERPRETATION_SIGNATURE}' "
                     f'signature (it has {sorted(signatures)}); train and export it again')
  signature = signatures[export.INTERPRETATION_SIGNATURE]
  _check_window_shape(windows[0], spec, model_dir)
  layout = window_feature_spec(spec)
  parsing = {name: layout[name]
             for name in (SERIES_KEY, FORECAST_START, TARGET_HISTORY, TARGET_FUTURE)}
  sums: Dict[str, np.ndarray] = {}
  names: Dict[str, List[str]] = {}
  columns: Dict[str, List[np.ndarray]] = {}
  for start in range(0, len(windows), _BATCH_SIZE):
    batch = tf.constant(windows[start:start + _BATCH_SIZE])
    outputs = {key: value.numpy() for key, value in signature(examples=batch).items()}
    parsed = {key: value.numpy() for key, value in tf.io.parse_example(batch, parsing).items()}
    for group, key in _WEIGHTS.items():
      weights = outputs.pop(key)
      # Summed over windows and steps: [Vs], [Vh] or [Vf].
      sums[group] = sums.get(group, 0) + weights.sum(axis=tuple(range(weights.ndim - 1)))
      names[group] = [name.decode() for name in outputs.pop(export.variables_key(group))]
    sums[ATTENTION] = sums.get(ATTENTION, 0) + outputs.pop(ATTENTION).sum(axis=0)
    for key, values in {**outputs, **parsed}.items():
      columns.setdefault(key, []).append(values)
  stacked = {key: np.concatenate(values) for key, values in columns.items()}
  steps = {STATIC: 1, HISTORY: spec.encoder_steps, FUTURE: spec.horizon}
  count = len(windows)
  quantile_names = sorted((key for key in stacked if key not in parsing), key=export.key_quantile)
  return Interpretation(
      spec=spec,
      importance={group: {name: float(total) / (count * steps[group])
                          for name, total in zip(names[group], sums[group], strict=True)}
                  for group in GROUPS},
      attention=sums[ATTENTION] / count,
      series_keys=np.array([key.decode() for key in stacked[SERIES_KEY][:, 0]]),
      forecast_starts=stacked[FORECAST_START][:, 0],
      target_history=stacked[TARGET_HISTORY],
      target_future=stacked[TARGET_FUTURE],
      forecasts={name: stacked[name] for name in quantile_names})
