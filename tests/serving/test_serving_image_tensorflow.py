"""The exported model in the TensorFlow of the default Vertex AI serving image.

The Trainer exports with TensorFlow 2.16; the default serving image
(`kubeflow.deployment.DEFAULT_SERVING_IMAGE`, tf2-cpu.2-15, the newest TensorFlow image
the installed Vertex SDK lists) serves with TensorFlow 2.15. A SavedModel that used an op
or attribute 2.15 lacks would deploy and then fail to load. Here TensorFlow 2.15, in a
venv of its own (`.serving-tf-venv`, created on first use from the package registry),
loads a model exported with calibrated bands and a forecast floor and serves raw windows
with the same forecasts as this process. What is not run: TF Serving's own binary.
"""

import dataclasses
import json
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from kubeflow.deployment import DEFAULT_SERVING_IMAGE
from trainer_module import export, train, window_inputs
from trainer_module.tft.model import build_tft_model

pytestmark = pytest.mark.slow(seconds=40)  # creates a venv with another TensorFlow

SERVING_TENSORFLOW = 'tensorflow-cpu==2.15.1'
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(PROJECT_ROOT, '.serving-tf-venv')
_SERVE = """
import json, pickle, sys
import tensorflow as tf
model_dir, examples_path = sys.argv[1:]
with open(examples_path, 'rb') as f:
  examples = pickle.load(f)
signatures = tf.saved_model.load(model_dir).signatures
outputs = signatures['serving_default'](examples=tf.constant(examples))
print(json.dumps({'version': tf.__version__, 'signatures': sorted(signatures),
                  'outputs': {name: value.numpy().tolist() for name, value in outputs.items()}}))
"""


@pytest.fixture(scope='module')
def serving_python():
  """The Python of a venv with the serving image's TensorFlow."""
  python = os.path.join(VENV, 'bin', 'python')
  ready = os.path.join(VENV, 'installed')  # written once the install has finished
  if not os.path.exists(ready):
    shutil.rmtree(VENV, ignore_errors=True)  # an install that stopped part-way
    subprocess.run([sys.executable, '-m', 'venv', VENV], check=True)
    subprocess.run([python, '-m', 'pip', 'install', '--quiet', SERVING_TENSORFLOW], check=True)
    with open(ready, 'w') as f:
      f.write(SERVING_TENSORFLOW)
  return python


def test_the_default_serving_image_is_the_tensorflow_checked_here():
  assert DEFAULT_SERVING_IMAGE.endswith('/tf2-cpu.2-15:latest')
  assert SERVING_TENSORFLOW.startswith('tensorflow-cpu==2.15.')


def test_the_serving_images_tensorflow_serves_the_export_as_exported(
    tiny, serving_python, tmp_path):
  transform_output = tft.TFTransformOutput(tiny.transform_dir)
  layout = window_inputs.input_layout(tiny.spec, transform_output)
  config = train.model_config_from({'preset': 'local', 'overrides': {
      'hidden_size': 8, 'num_heads': 2, 'dropout': 0.0}})
  model = build_tft_model(layout, config)
  model_dir = str(tmp_path / 'model')
  calibration = {'factors': {'0.1:0.9': {'lower': 0.2, 'upper': -0.1}}}
  export.save_model(model, layout, dataclasses.replace(tiny.spec, forecast_floor=0.0),
                    config.quantiles, transform_output, model_dir, calibration=calibration)
  examples = [_raw_example(tiny, station) for station in sorted(tiny.raw_by_series)]
  with open(tmp_path / 'examples.pkl', 'wb') as f:
    pickle.dump(examples, f)
  signatures = tf.saved_model.load(model_dir).signatures
  here = signatures[export.SERVING_SIGNATURE](examples=tf.constant(examples))

  run = subprocess.run([serving_python, '-c', _SERVE, model_dir, str(tmp_path / 'examples.pkl')],
                       capture_output=True, text=True, check=False, timeout=600)

  assert run.returncode == 0, run.stderr[-3000:]
  served = json.loads(run.stdout.strip().splitlines()[-1])
  assert served['version'].startswith('2.15.')
  assert served['signatures'] == sorted(signatures)
  assert sorted(served['outputs']) == sorted(here)
  for name, values in here.items():
    np.testing.assert_allclose(served['outputs'][name], values.numpy(), rtol=1e-5, atol=1e-5)


def _raw_example(tiny, station: str) -> bytes:
  """The raw serving window of `station` over its last E + H hours (`export`'s format)."""
  spec = tiny.spec
  times = sorted(tiny.raw_by_series[station])[-(spec.encoder_steps + spec.horizon):]
  rows = [tiny.raw_by_series[station][time] for time in times]
  history = rows[:spec.encoder_steps]

  def floats(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))

  last = history[-1]
  return tf.train.Example(features=tf.train.Features(feature={
      'station': tf.train.Feature(bytes_list=tf.train.BytesList(value=[station.encode()])),
      'region': tf.train.Feature(bytes_list=tf.train.BytesList(value=last['region'])),
      'capacity': floats(last['capacity']),
      'timestamp': tf.train.Feature(int64_list=tf.train.Int64List(value=times)),
      'price': floats([row['price'][0] for row in rows]),
      'temperature': floats([row.get('temperature', [float('nan')])[0] for row in history]),
      'load': floats([row['load'][0] for row in history]),
  })).SerializeToString()
