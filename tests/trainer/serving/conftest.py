"""A tiny model exported with its signatures, laid out as the Trainer and the Pusher do.

The model is built and exported by `export.save_model`, as `run_fn` does after training,
but not trained: training would triple these tests' time and the tests compare the
exported model with itself and with the model in memory, never with accuracy.
"""

import os
import shutil
import types

import pytest
import tensorflow as tf
import tensorflow_transform as tft

from trainer_module import export, train, window_inputs
from trainer_module.tft.model import build_tft_model

VERSION = '1700000000'
MODEL_CONFIG = {'preset': 'local',
                'overrides': {'hidden_size': 8, 'num_heads': 2, 'dropout': 0.0}}


@pytest.fixture(scope='session')
def exported(tiny, tmp_path_factory):
  """The model in memory; its Model artifact directory (the SavedModel under
  `Format-Serving`); a serving directory holding it as version VERSION."""
  root = tmp_path_factory.mktemp('exported')
  tf.keras.utils.set_random_seed(7)
  transform_output = tft.TFTransformOutput(tiny.transform_dir)
  layout = window_inputs.input_layout(tiny.spec, transform_output)
  config = train.model_config_from(MODEL_CONFIG)
  model = build_tft_model(layout, config)
  artifact_dir = str(root / 'Trainer' / 'model' / '1')
  model_dir = os.path.join(artifact_dir, 'Format-Serving')
  export.save_model(model, layout, tiny.spec, config.quantiles, transform_output, model_dir)
  serving_dir = str(root / 'serving_model')
  shutil.copytree(model_dir, os.path.join(serving_dir, VERSION))
  return types.SimpleNamespace(
      model=model, artifact_dir=artifact_dir, model_dir=model_dir, serving_dir=serving_dir,
      version_dir=os.path.join(serving_dir, VERSION))

