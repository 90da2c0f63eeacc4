"""The exported model: raw-window serving, the Evaluator's signature, a fresh process.

Raw windows are built here by hand from the generated CSV rows, following the format
documented in `trainer_module.export`, independently of the export code.
"""

import dataclasses
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
from typing import List

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from schema.features import SERIES_KEY
from schema import window_layout
from schema.window_layout import FORECAST_START, TARGET_FUTURE
from trainer_module import export, interval_calibration, window_inputs

pytestmark = pytest.mark.slow(seconds=70)  # runs a pipeline or trains a model

QUANTILE_KEYS = ('p10', 'p50', 'p90')
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
HOUR = 3600


def _floats(values) -> tf.train.Feature:
  return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def _raw_window(tiny, transformed_window: bytes) -> tf.train.Example:
  """The raw serving example of the same series and steps as a transformed window."""
  parsed = tf.io.parse_single_example(transformed_window, {
      SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
      FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)})
  station = parsed[SERIES_KEY].numpy()[0]
  start = int(parsed[FORECAST_START].numpy()[0])
  history, horizon = tiny.spec.encoder_steps, tiny.spec.horizon
  times = [start + HOUR * (step - history) for step in range(history + horizon)]
  rows = [tiny.raw_by_series[station.decode()][t] for t in times]
  last = rows[history - 1]
  return tf.train.Example(features=tf.train.Features(feature={
      'station': tf.train.Feature(bytes_list=tf.train.BytesList(value=[station])),
      'region': tf.train.Feature(bytes_list=tf.train.BytesList(value=last['region'])),
      'capacity': _floats(last['capacity']),
      'timestamp': tf.train.Feature(int64_list=tf.train.Int64List(value=times)),
      'price': _floats([row['price'][0] for row in rows]),
      'temperature': _floats([row.get('temperature', [math.nan])[0]
                              for row in rows[:history]]),
      'load': _floats([row['load'][0] for row in rows[:history]]),
  }))


@pytest.fixture(scope='module')
def served(tiny, resumed_run):
  """Raw examples of the eval windows and the exported model's answers to them."""
  raw = [_raw_window(tiny, w) for w in tiny.eval_windows]
  loaded = tf.saved_model.load(resumed_run.fn_args.serving_model_dir)
  outputs = loaded.signatures[export.SERVING_SIGNATURE](
      examples=tf.constant([example.SerializeToString() for example in raw]))
  return raw, loaded, {key: value.numpy() for key, value in outputs.items()}


def _in_memory_forecasts(model, windows: List[bytes], spec, model_dir) -> np.ndarray:
  """The Keras model's forecasts, served with the interval factors the export recorded."""
  inputs, _ = window_inputs.parse_windows(tf.constant(windows), spec)
  factors = interval_calibration.read(model_dir)['factors']
  return export.served_quantiles(model(inputs, training=False)[
      window_inputs.QUANTILES_OUTPUT], (0.1, 0.5, 0.9), factors, spec.forecast_floor).numpy()


def test_raw_windows_cover_missing_values(served):
  raw, _, _ = served
  temperatures = np.array([e.features.feature['temperature'].float_list.value for e in raw])
  assert np.isnan(temperatures).any(), 'pick a data seed with missing temperatures'


def test_serving_on_raw_windows_matches_the_in_memory_model(tiny, resumed_run, served):
  _, _, outputs = served
  expected = _in_memory_forecasts(resumed_run.second.model, tiny.eval_windows, tiny.spec,
                                  resumed_run.fn_args.serving_model_dir)

  assert sorted(outputs) == sorted(QUANTILE_KEYS)
  for i, key in enumerate(QUANTILE_KEYS):
    assert outputs[key].shape == (len(tiny.eval_windows), tiny.spec.horizon)
    np.testing.assert_allclose(outputs[key], expected[:, :, i], rtol=1e-4, atol=1e-3)
  # Original units: the median forecast is on the scale of the actual load.
  actuals = tf.io.parse_example(tf.constant(tiny.eval_windows), {
      TARGET_FUTURE: tf.io.FixedLenFeature([tiny.spec.horizon], tf.float32)})[TARGET_FUTURE]
  assert 0.5 < np.median(outputs['p50']) / np.median(actuals) < 2


def test_the_served_band_is_calibrated_on_the_eval_windows(tiny, resumed_run, served):
  """The recorded factors make P10-P90 hold at least 80% of the eval actuals, and the
  served forecasts are the calibrated ones (the median as the model gives it)."""
  _, _, outputs = served
  report = interval_calibration.read(resumed_run.fn_args.serving_model_dir)
  assert report['eval_windows'] == len(tiny.eval_windows)
  assert set(report['factors']) == {'0.1:0.9'}
  actuals = tf.io.parse_example(tf.constant(tiny.eval_windows), {
      TARGET_FUTURE: tf.io.FixedLenFeature([tiny.spec.horizon], tf.float32)})[
          TARGET_FUTURE].numpy()
  covered = np.mean((actuals >= outputs['p10']) & (actuals <= outputs['p90']))
  # The actuals that set the two factors lie on the band's ends: rounding may leave them
  # out.
  two = 2 / actuals.size
  assert covered == pytest.approx(report['eval_coverage_after']['0.1:0.9'], abs=two + 1e-9)
  assert covered >= 0.8 - two


def test_eval_windows_hold_the_raw_windows_that_serving_reads(tiny, served):
  """The Evaluator's baseline reads the eval windows through `serving_default`: their raw
  columns are the hand-built raw windows, and give the same forecasts."""
  raw, loaded, outputs = served
  parsing = window_layout.raw_window_feature_spec(tiny.spec)
  in_windows = tf.io.parse_example(tf.constant(tiny.eval_windows), parsing)
  by_hand = tf.io.parse_example(tf.constant([e.SerializeToString() for e in raw]), parsing)
  for name in parsing:
    np.testing.assert_array_equal(in_windows[name].numpy(), by_hand[name].numpy(),
                                  err_msg=name)
  direct = loaded.signatures[export.SERVING_SIGNATURE](examples=tf.constant(tiny.eval_windows))
  for key in QUANTILE_KEYS:
    np.testing.assert_allclose(direct[key].numpy(), outputs[key], rtol=1e-6, atol=1e-5)


def test_eval_signature_on_transformed_windows_gives_the_same_forecasts(tiny, served):
  _, loaded, outputs = served
  transformed = loaded.signatures[export.EVAL_SIGNATURE](
      examples=tf.constant(tiny.eval_windows))

  for key in QUANTILE_KEYS:
    np.testing.assert_allclose(transformed[key].numpy(), outputs[key], rtol=1e-4, atol=1e-3)


def test_a_forecast_floor_raises_every_served_quantile_below_it(tiny, resumed_run, served,
                                                               tmp_path):
  raw, _, outputs = served
  floor = float(np.median(outputs['p50']))  # binds for about half the medians
  spec = dataclasses.replace(tiny.spec, forecast_floor=floor)
  transform_output = tft.TFTransformOutput(tiny.transform_dir)
  calibration = interval_calibration.read(resumed_run.fn_args.serving_model_dir)
  path = str(tmp_path / 'floored')
  export.save_model(resumed_run.second.model, window_inputs.input_layout(spec, transform_output),
                    spec, (0.1, 0.5, 0.9), transform_output, path, calibration=calibration)
  reloaded = tf.saved_model.load(path)
  floored = reloaded.signatures[export.SERVING_SIGNATURE](
      examples=tf.constant([example.SerializeToString() for example in raw]))
  # What the Evaluator scores: the floored forecasts, beside naive ones left as they are.
  evaluated = reloaded.signatures[export.EVAL_SIGNATURE](examples=tf.constant(tiny.eval_windows))
  unfloored = served[1].signatures[export.EVAL_SIGNATURE](examples=tf.constant(tiny.eval_windows))

  assert (outputs['p50'] < floor).any() and (outputs['p50'] > floor).any()
  for key in QUANTILE_KEYS:
    np.testing.assert_allclose(floored[key].numpy(), np.maximum(outputs[key], floor),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(evaluated[key].numpy(), np.maximum(outputs[key], floor),
                               rtol=1e-4, atol=1e-3)
  naive = [key for key in unfloored if key.startswith('naive_')]
  assert naive
  for key in naive:
    np.testing.assert_array_equal(evaluated[key].numpy(), unfloored[key].numpy())


def test_the_export_carries_its_transform_graph_and_vocabularies(tiny, resumed_run, served,
                                                                 tmp_path):
  """Exported from a copy of the Transform output that is then deleted, the model still
  serves raw windows: the export holds the Transform graph's tables and vocabulary
  files itself."""
  raw, _, outputs = served
  transform_dir = str(tmp_path / 'transform_graph')
  shutil.copytree(tiny.transform_dir, transform_dir)
  transform_output = tft.TFTransformOutput(transform_dir)
  path = str(tmp_path / 'model')
  calibration = interval_calibration.read(resumed_run.fn_args.serving_model_dir)
  export.save_model(resumed_run.second.model,
                    window_inputs.input_layout(tiny.spec, transform_output), tiny.spec,
                    (0.1, 0.5, 0.9), transform_output, path, calibration=calibration)
  shutil.rmtree(transform_dir)

  assert tf.io.gfile.glob(os.path.join(path, 'assets', '*'))
  reloaded = tf.saved_model.load(path).signatures[export.SERVING_SIGNATURE](
      examples=tf.constant([example.SerializeToString() for example in raw]))
  for key in QUANTILE_KEYS:
    np.testing.assert_allclose(reloaded[key].numpy(), outputs[key], rtol=1e-5, atol=1e-5)


def test_raw_windows_with_misplaced_times_are_rejected(served):
  raw, loaded, _ = served
  broken = tf.train.Example()
  broken.CopyFrom(raw[0])
  times = broken.features.feature['timestamp'].int64_list.value
  times[3], times[4] = times[4], times[3]

  with pytest.raises(tf.errors.InvalidArgumentError, match='consecutive hourly steps'):
    loaded.signatures[export.SERVING_SIGNATURE](
        examples=tf.constant([broken.SerializeToString()]))


def test_raw_windows_of_the_wrong_length_are_rejected(served):
  raw, loaded, _ = served
  short = tf.train.Example()
  short.CopyFrom(raw[0])
  del short.features.feature['load'].float_list.value[-1]

  with pytest.raises(tf.errors.InvalidArgumentError, match='load'):
    loaded.signatures[export.SERVING_SIGNATURE](
        examples=tf.constant([short.SerializeToString()]))


_RELOAD_SCRIPT = """
import json, sys
import tensorflow as tf
examples = [r.numpy() for r in tf.data.TFRecordDataset(sys.argv[2])]
outputs = tf.saved_model.load(sys.argv[1]).signatures['serving_default'](
    examples=tf.constant(examples))
print(json.dumps({key: value.numpy().tolist() for key, value in outputs.items()}))
"""


def test_exported_model_reloads_in_a_fresh_process(resumed_run, served, tmp_path):
  raw, _, outputs = served
  examples_file = str(tmp_path / 'raw_windows.tfrecord')
  with tf.io.TFRecordWriter(examples_file) as writer:
    for example in raw:
      writer.write(example.SerializeToString())

  # Outside the repository and without its packages: the SavedModel stands alone.
  completed = subprocess.run(
      [sys.executable, '-c', _RELOAD_SCRIPT, resumed_run.fn_args.serving_model_dir,
       examples_file], cwd=tmp_path, capture_output=True, text=True, timeout=180,
      env={**{k: v for k, v in os.environ.items() if k != 'PYTHONPATH'},
           'TF_CPP_MIN_LOG_LEVEL': '2'})
  assert completed.returncode == 0, completed.stderr[-3000:]
  reloaded = json.loads(completed.stdout.strip().splitlines()[-1])

  for key in QUANTILE_KEYS:
    np.testing.assert_allclose(reloaded[key], outputs[key], rtol=1e-5, atol=1e-5)
