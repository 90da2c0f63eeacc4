"""Saving the trained model with its signatures.

Every signature takes one tensor `examples` of serialized tf.Examples [B], one per
window, and returns one [B, H] forecast per quantile in original units, keyed by
`quantile_key` ('p10', 'p50', 'p90' for the default quantiles): the calibrated bands,
in order from the median out (a P10 never above the P50), at or above the spec's
`forecast_floor` if it has one (`served_quantiles`).

`serving_default` (SERVING_SIGNATURE) takes RAW windows: the columns of the dataset
spec, untransformed, as lists over the window's steps
(`schema.window_layout.raw_window_feature_spec`):
  - series key and static columns: 1 value;
  - the time column and known columns: T = E + H values, one per step, the horizon
    included; time as int64 seconds since the Unix epoch (UTC), as the ExampleGen
    writes it, on consecutive steps of the spec's time grid;
  - observed columns and the target: E values, the history only.
Categorical columns are bytes, real columns floats. A missing value of a column declared
`allow_missing` is written as NaN (the list keeps its full length); Transform imputes it
and sets its missing indicator, as for a missing CSV value. For the synthetic spec
(E=168, H=24): station [1 bytes], region [1 bytes], capacity [1], timestamp [192 int64],
price [192], temperature [168, NaN = missing], load [168].
The signature runs Transform's graph (`TFTransformOutput.transform_features_layer`) on
the B*T rows of the windows, cuts the transformed rows into windows exactly as the
windowing component does, and calls the model.

`transformed_windows` (EVAL_SIGNATURE) takes windows as the windowing component writes
them (already transformed, `schema.window_layout`). The Evaluator scores the candidate
through it, since its examples are those windows, and the last blessed model, whose
Transform may differ, through `serving_default` on the raw columns the windows also
hold (`evaluation.eval_config`). Beside the quantile forecasts it
returns the naive forecasts of each window ('naive_repeat_last', 'naive_seasonal_24',
... at the natural seasons of the spec's frequency that fit in the history,
`trainer_module.naive_forecasts`), which the blessing rule compares the model with.
TFMA needs no `transform_features` signature for that, so none is exported.

`interpretation` (INTERPRETATION_SIGNATURE) takes the same transformed windows and
returns the forecasts plus what the model attends to: `static_weights` [B, Vs],
`history_weights` [B, E, Vh], `future_weights` [B, H, Vf] (variable-selection weights,
each summing to 1 over its variables), `attention` [B, H, T] (over the window's steps,
causal), and the variables' names `static_variables` [Vs], `history_variables` [Vh],
`future_variables` [Vf] (`schema.selection_variables`).

`assets.extra/dataset_spec.json` (DATASET_SPEC_FILE) holds the dataset spec, so tools
that only have the model directory (`tft-predict`, `tft-report`) know its columns and
window; `read_dataset_spec` reads it, after checking the model's format version
(`trainer_module.model_format`, written beside it).

The SavedModel's root is a plain `tf.Module` tracking the model's variables and the
Transform graph, not the Keras model or the Keras Transform layer: saving a Keras object
traces its layers again (about 4x slower for the model) and nothing loads it as Keras.
Warm starts read a weights checkpoint written next to it (`trainer_module.warm_start`).
"""

import os
from typing import Dict, Mapping, Optional, Sequence

import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras

from schema.dataset_spec import DatasetSpec
from schema.features import model_features, transformed_name
from schema.selection_variables import FUTURE, HISTORY, STATIC, selection_variables
from schema.window_layout import raw_value_count, raw_window_feature_spec
from trainer_module import interval_calibration, model_format
from trainer_module import naive_forecasts as naive
from trainer_module.tft import model as tft_model
from trainer_module.tft.inputs import TARGET_HISTORY, InputLayout, input_signature
from trainer_module.window_inputs import (QUANTILES_OUTPUT, model_inputs, parse_windows,
                                          window_features_from_steps)

SERVING_SIGNATURE = 'serving_default'
EVAL_SIGNATURE = 'transformed_windows'
INTERPRETATION_SIGNATURE = 'interpretation'
EXAMPLES_INPUT = 'examples'
DATASET_SPEC_FILE = os.path.join('assets.extra', 'dataset_spec.json')
_WEIGHT_OUTPUTS = {STATIC: tft_model.STATIC_WEIGHTS, HISTORY: tft_model.HISTORY_WEIGHTS,
                   FUTURE: tft_model.FUTURE_WEIGHTS}



def quantile_key(quantile: float) -> str:
  """The serving output name of a quantile: 0.5 -> 'p50', 0.025 -> 'p2_5'."""
  return 'p' + f'{quantile * 100:g}'.replace('.', '_')


def key_quantile(key: str) -> float:
  """The quantile of a serving output name, the inverse of `quantile_key`: 'p50' -> 0.5."""
  return float(key[1:].replace('_', '.')) / 100


def variables_key(group: str) -> str:
  """The interpretation output naming a selection group's variables: 'static_variables'."""
  return f'{group}_variables'


def read_dataset_spec(model_dir: str) -> DatasetSpec:
  """The dataset spec saved with the model in `model_dir`.

  Raises:
    model_format.ModelFormatError: the model is in another format than this pipeline reads.
    FileNotFoundError: the directory lacks the spec (a partial copy of a model).
  """
  model_format.check(model_dir)
  path = os.path.join(model_dir, DATASET_SPEC_FILE)
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(f'{model_dir} has no {DATASET_SPEC_FILE}, which every export '
                            'writes: a partial copy of a model? Copy it whole, or train and '
                            'export it again')
  with tf.io.gfile.GFile(path) as f:
    return DatasetSpec.from_json(f.read())


def raw_rows(windows: Mapping[str, tf.Tensor], spec: DatasetSpec,
             raw_feature_spec: Mapping[str, object], batch: tf.Tensor) -> Dict[str, object]:
  """Transform's raw inputs for every step of every window: B*T rows.

  Static values are repeated over the steps; history-only columns get NaN over the
  horizon (absent for a sparse feature), which the model never reads. NaN values of a
  feature Transform reads as sparse become absent values, i.e. missing.

  Args:
    windows: parsed raw windows, [B, count] per column (`raw_window_feature_spec`).
    spec: the dataset spec.
    raw_feature_spec: Transform's raw feature spec (`TFTransformOutput.raw_feature_spec`).
    batch: B.
  """
  steps = spec.window_length
  rows = {}
  for name, feature_spec in raw_feature_spec.items():
    values = windows[name]
    count = raw_value_count(spec.column(name), spec)
    if count == 1:
      values = tf.tile(values, [1, steps])
    elif count < steps:
      values = tf.pad(values, [[0, 0], [0, steps - count]], constant_values=float('nan'))
    values = tf.reshape(values, [-1])
    if isinstance(feature_spec, tf.io.VarLenFeature):
      present = tf.where(~tf.math.is_nan(values) if values.dtype.is_floating
                         else tf.ones_like(values, tf.bool))
      rows[name] = tf.SparseTensor(
          indices=tf.concat([present, tf.zeros_like(present)], axis=1),
          values=tf.gather_nd(values, present),
          dense_shape=tf.stack([tf.cast(batch * steps, tf.int64), tf.constant(1, tf.int64)]))
    else:
      rows[name] = tf.reshape(values, [-1, *feature_spec.shape])
  return rows


def check_raw_feature_spec(spec: DatasetSpec, raw_feature_spec: Mapping[str, object]) -> None:
  """Checks that Transform's raw features are the spec's columns, one value per row.

  Raises:
    ValueError: a raw feature is not declared in the spec, or has another shape.
  """
  declared = {column.name for column in spec.columns}
  for name, feature_spec in raw_feature_spec.items():
    if name not in declared:
      raise ValueError(f"Transform's schema has a raw feature {name!r} that dataset spec "
                       f"'{spec.name}' does not declare; the raw serving signature cannot "
                       'feed it. Declare the column in the spec or drop it from the schema')
    one_value = (isinstance(feature_spec, tf.io.VarLenFeature) or
                 (isinstance(feature_spec, tf.io.FixedLenFeature) and
                  feature_spec.shape in ([], [1], (), (1,))))
    if not one_value:
      raise ValueError(f"raw feature {name!r} has spec {feature_spec} in Transform's "
                       'schema; the serving signature needs at most one value per row '
                       '(shape [1] or variable length)')


def _check_time_grid(seconds: tf.Tensor, spec: DatasetSpec) -> list:
  """Assertions that each window's times are consecutive steps of the time grid."""
  if spec.frequency.is_calendar or spec.window_length < 2:
    return []  # months and quarters differ in length: not checked here
  step = spec.frequency.step_seconds
  gaps = seconds[:, 1:] - seconds[:, :-1]
  return [tf.debugging.assert_equal(
      gaps, tf.constant(step, tf.int64),
      message=(f"raw windows need '{spec.time_column}' at {spec.window_length} "
               f'consecutive {spec.frequency.value} steps (E history + H horizon), in order'))]


class _Exported(tf.Module):
  """The SavedModel's root: the model's variables, the Transform graph the signatures
  call (its tables and vocabulary assets), the signatures.

  It tracks the graph the Transform layer loaded, not the layer: the layer is a Keras
  model, which saving traces again for Keras's own metadata (2 to 3 s of every export)
  that nothing reads. `TransformFeaturesLayer` holds that graph in its loader
  (tensorflow_transform 1.16, pinned); a release that moves it fails here, loudly.
  """

  def __init__(self, model: keras.Model, transform_layer: keras.Model):
    super().__init__()
    self.model_variables = list(model.variables)
    loader = transform_layer._saved_model_loader  # pylint: disable=protected-access
    self.transform_graph = loader._imported  # pylint: disable=protected-access


def median_index(quantiles: Sequence[float]) -> int:
  """The position of the quantile closest to 0.5, whose forecast is the point forecast."""
  return min(range(len(quantiles)), key=lambda i: abs(quantiles[i] - 0.5))


def in_order_from_median(quantile_forecasts: tf.Tensor, quantiles: Sequence[float]
                         ) -> tf.Tensor:
  """Forecasts [B, H, Q] of increasing `quantiles` put in order without moving the median.

  The quantile closest to 0.5 keeps its forecast; each quantile below it takes the lowest
  of its own forecast and those between it and the median, each one above the highest.
  A band whose end fell inside it (a P50 below the P10, a P10-P90 band narrower than the
  P25-P75) is widened to hold it, and a forecast already in order is unchanged.
  """
  columns = tf.unstack(quantile_forecasts, axis=-1)
  middle = median_index(quantiles)
  for i in range(middle - 1, -1, -1):
    columns[i] = tf.minimum(columns[i], columns[i + 1])
  for i in range(middle + 1, len(quantiles)):
    columns[i] = tf.maximum(columns[i], columns[i - 1])
  return tf.stack(columns, axis=-1)


def served_quantiles(quantile_forecasts: tf.Tensor, quantiles: Sequence[float],
                     interval_factors: interval_calibration.BandFactors,
                     forecast_floor: Optional[float]) -> tf.Tensor:
  """The model's quantile forecasts [B, H, Q] as every signature serves them: each band's
  ends moved by their factors (`interval_calibration`), put in order from the median out
  (`in_order_from_median`), then raised to `forecast_floor`."""
  served = in_order_from_median(
      interval_calibration.apply(quantile_forecasts, quantiles, interval_factors), quantiles)
  return served if forecast_floor is None else tf.maximum(served, forecast_floor)


def make_signatures(model: keras.Model, layout: InputLayout, spec: DatasetSpec,
                    quantiles: Sequence[float], transform_layer: keras.Model,
                    raw_feature_spec: Mapping[str, object],
                    interval_factors: interval_calibration.BandFactors
                    ) -> Dict[str, tf.types.experimental.ConcreteFunction]:
  """The signatures (see the module docstring), keyed by signature name; every one serves
  the quantile bands with their ends moved by `interval_factors` (`interval_calibration`),
  then raised to the spec's `forecast_floor` where they fall below it."""
  check_raw_feature_spec(spec, raw_feature_spec)
  raw_parsing = raw_window_feature_spec(spec)
  needed = [transformed_name(spec.target_column)] + [f.name for f in model_features(spec)]
  variables = selection_variables(spec, model.config.seasonal_lag)

  # One trace of the model, shared by every signature. No signature has tensor-dependent
  # Python control flow, so none is converted by AutoGraph, which took half the export's
  # trace converting the Transform layer's and Keras's call paths.
  @tf.function(input_signature=[input_signature(layout)], autograph=False)
  def run_model(inputs):
    return model(inputs, training=False)

  def forecast(outputs):
    quantile_forecasts = served_quantiles(  # [B, H, Q]
        outputs[QUANTILES_OUTPUT], quantiles, interval_factors, spec.forecast_floor)
    return {quantile_key(q): quantile_forecasts[:, :, i] for i, q in enumerate(quantiles)}

  examples = tf.TensorSpec([None], tf.string, name=EXAMPLES_INPUT)

  @tf.function(input_signature=[examples], autograph=False)
  def serve_raw(serialized):
    windows = tf.io.parse_example(serialized, raw_parsing)
    batch = tf.shape(serialized)[0]
    with tf.control_dependencies(_check_time_grid(windows[spec.time_column], spec)):
      transformed = transform_layer(raw_rows(windows, spec, raw_feature_spec, batch))
    steps = {name: tf.reshape(transformed[name], [batch, spec.window_length])
             for name in needed}
    return forecast(run_model(model_inputs(window_features_from_steps(steps, spec), spec)))

  periods = naive.periods_for(spec.frequency.seasons, spec.encoder_steps)

  @tf.function(input_signature=[examples], autograph=False)
  def serve_transformed(serialized):
    inputs, _ = parse_windows(serialized, spec)
    naive_forecasts = naive.naive_forecasts(inputs[TARGET_HISTORY], spec.horizon, periods)
    return {**forecast(run_model(inputs)),
            **{naive.OUTPUT_PREFIX + name: values for name, values in naive_forecasts.items()}}

  @tf.function(input_signature=[examples], autograph=False)
  def interpret(serialized):
    inputs, _ = parse_windows(serialized, spec)
    outputs = run_model(inputs)
    interpretation = {tft_model.ATTENTION: outputs[tft_model.ATTENTION]}
    for group, key in _WEIGHT_OUTPUTS.items():
      if outputs[key].shape[-1] != len(variables[group]):
        raise ValueError(f'the model weighs {outputs[key].shape[-1]} {group} variables, but '
                         f'{len(variables[group])} are named: {variables[group]}')
      interpretation[key] = outputs[key]
      interpretation[variables_key(group)] = tf.constant(variables[group], tf.string,
                                                         shape=[len(variables[group])])
    return {**forecast(outputs), **interpretation}

  return {SERVING_SIGNATURE: serve_raw.get_concrete_function(),
          EVAL_SIGNATURE: serve_transformed.get_concrete_function(),
          INTERPRETATION_SIGNATURE: interpret.get_concrete_function()}


def save_model(model: keras.Model, layout: InputLayout, spec: DatasetSpec,
               quantiles: Sequence[float], transform_output: tft.TFTransformOutput,
               path: str, options: Optional[tf.saved_model.SaveOptions] = None,
               calibration: Optional[Mapping[str, object]] = None) -> None:
  """Saves the model with its signatures and its dataset spec to `path`.

  Call outside `strategy.scope()`: the Transform layer belongs to the host, never to
  the accelerator. Under a TPUStrategy pass `distribution.save_options(strategy)`.
  `calibration` (`train`'s report, with 'factors') moves the served bands' ends and is
  written to `interval_calibration.CALIBRATION_FILE`; None serves the model's own.
  """
  transform_layer = transform_output.transform_features_layer()
  factors = dict((calibration or {}).get('factors', {}))
  signatures = make_signatures(model, layout, spec, quantiles, transform_layer,
                               transform_output.raw_feature_spec(), factors)
  tf.saved_model.save(_Exported(model, transform_layer), path, signatures=signatures,
                      options=options)
  spec_path = os.path.join(path, DATASET_SPEC_FILE)
  tf.io.gfile.makedirs(os.path.dirname(spec_path))
  with tf.io.gfile.GFile(spec_path, 'w') as f:
    f.write(spec.to_json())
  if calibration is not None:
    interval_calibration.write(path, calibration)
  model_format.write(path)
