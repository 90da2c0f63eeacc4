"""Tiny real inputs for the Trainer: a Transform output, windows and FnArgs.

Rows come from the project's data generator (2 stations, 5 days), are parsed as the
ExampleGen parses them, split by time, transformed by the real `preprocessing_fn` under
tft_beam (analyzers on train only) and cut into windows (training: segments) by
`window_builder` with the synthetic spec shrunk to E=12, H=4, the eval windows with their
raw columns as Windowing writes them. Built once per session.
"""

import collections
import contextlib
import logging
import math
import os
import types
from typing import Dict, List

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
import tf_keras as keras
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils
from tfx.components.trainer.fn_args_utils import FnArgs

from components import input_rows
from schema import split_placement
from components import window_builder, windowing
from pipeline import default_data
from schema import datasets, window_report
from schema.dataset_spec import DType, Role
from schema.features import SERIES_KEY, transformed_name
from schema.time_split import format_time
from trainer_module import train, window_inputs
from trainer_module.preprocessing import preprocessing_fn

SPEC = datasets.SYNTHETIC.with_window(12, 4)
SPLIT = datasets.get_dataset('synthetic').split
STRIDES = {'train': 1, 'eval': SPEC.horizon}
TIME = transformed_name(SPEC.time_column)
# Small enough for tests on a shared 2-core machine, big enough to learn a little.
MODEL_OVERRIDES = {'hidden_size': 8, 'num_heads': 2, 'batch_size': 8, 'dropout': 0.0}


def _raw_feature_spec() -> Dict[str, object]:
  schema = text_format.Parse(
      open(datasets.curated_schema_path('synthetic')).read(), schema_pb2.Schema())
  return schema_utils.schema_as_feature_spec(schema).feature_spec


def _instance(example: tf.train.Example, feature_spec) -> dict:
  """A tf.Example as a tft_beam instance dict."""
  instance = {}
  for name, spec in feature_spec.items():
    feature = example.features.feature.get(name)
    values = list(getattr(feature, feature.WhichOneof('kind')).value) if feature else []
    if isinstance(spec, tf.io.FixedLenFeature) and len(values) != 1:
      raise ValueError(f'{name} needs one value, got {values}')
    instance[name] = values
  return instance


def _raw_values(rows: List[Dict[str, list]]) -> Dict[str, np.ndarray]:
  """The raw values of rows as Windowing passes them on: every column but the time, NaN
  for a missing real."""
  values = {}
  for column in SPEC.columns:
    if column.role != Role.TIME:
      given = [row.get(column.name, [math.nan])[0] for row in rows]
      values[column.name] = np.array(given, object if column.dtype == DType.CATEGORICAL
                                     else float)
  return values


def _write(path: str, records: List[bytes]) -> None:
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with tf.io.TFRecordWriter(path, options='GZIP') as writer:
    for record in records:
      writer.write(record)


@pytest.fixture(scope='session')
def tiny(tmp_path_factory):
  """The tiny data set: spec, transform graph, window files and raw rows by series."""
  root = tmp_path_factory.mktemp('tiny')
  csv_path = str(root / 'data.csv')
  default_data.generate(csv_path, num_series=2, days=5, seed=3)
  examples = list(input_rows.read_csv_examples(csv_path, SPEC))
  seconds = [input_rows.example_time(e, SPEC) for e in examples]
  time_range = (min(seconds), max(seconds))
  split_of = [SPLIT.split_names[input_rows.split_index(e, SPEC, SPLIT, time_range)]
              for e in examples]
  feature_spec = _raw_feature_spec()
  instances = [_instance(e, feature_spec) for e in examples]
  by_split = {name: [i for i, s in zip(instances, split_of) if s == name]
              for name in ('train', 'eval')}

  metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(feature_spec))
  transform_dir = str(root / 'transform_graph')
  with tft_beam.Context(temp_dir=str(root / 'tft_tmp'), force_tf_compat_v1=False):
    transform_fn = (by_split['train'], metadata) | tft_beam.AnalyzeDataset(
        lambda inputs: preprocessing_fn(inputs, {'dataset_spec': SPEC.to_json()}))
    transformed = {}
    for name, rows in by_split.items():
      (transformed[name], _) = (((rows, metadata), transform_fn)
                                | f'Transform[{name}]' >> tft_beam.TransformDataset())
    _ = transform_fn | tft_beam.WriteTransformFn(transform_dir)
  # TFX's Transform also writes the raw schema, which the serving signature reads.
  metadata_io.write_metadata(metadata, os.path.join(transform_dir,
                                                    tft.TFTransformOutput.RAW_METADATA_DIR))

  raw_by_series = collections.defaultdict(dict)  # series key -> epoch seconds -> raw row
  for example in examples:
    row = {name: list(getattr(f, f.WhichOneof('kind')).value)
           for name, f in example.features.feature.items()}
    raw_by_series[row['station'][0].decode()][row['timestamp'][0]] = row

  series_rows = collections.defaultdict(list)
  for name, rows in transformed.items():
    batch = {feature: np.array([row[feature] for row in rows]) for feature in rows[0]}
    raw_rows = [raw_by_series[row[SERIES_KEY].decode()][row[TIME]] for row in rows]
    for key, chunk in window_builder.series_chunks(batch, _raw_values(raw_rows), SPEC, name):
      series_rows[key].append(chunk)
  windows = collections.defaultdict(list)  # training: segments
  train_window_count = 0
  for key, rows in sorted(series_rows.items()):
    built, counts = window_builder.build_windows(key, rows, SPEC, STRIDES,
                                                 segment_splits=('train',))
    train_window_count += counts['windows_train']
    for name, serialized in built:
      windows[name].append(serialized)
  files = {}
  for name in ('train', 'eval'):
    _write(str(root / 'windows' / f'Split-{name}' / 'windows-00000-of-00001.gz'), windows[name])
    files[name] = [str(root / 'windows' / f'Split-{name}' / '*')]
  # Where ExampleGen placed the eval start, as Windowing reports it.
  eval_start = format_time(split_placement.resolve_boundary(SPLIT.eval_start, time_range, SPEC))
  windowing.write_window_report({'series': len(series_rows), 'windows_train': train_window_count,
                                 'windows_eval': len(windows['eval'])},
                                str(root / 'windows' / window_report.WINDOW_REPORT_FILE),
                                ['train', 'eval'], SPEC, eval_start)
  return types.SimpleNamespace(
      spec=SPEC, transform_dir=transform_dir, train_files=files['train'],
      eval_files=files['eval'], eval_windows=windows['eval'], eval_start=eval_start,
      train_window_count=train_window_count, raw_by_series=dict(raw_by_series))


def make_fn_args(tiny, run_dir, train_steps=6, overrides=None, training=None,
                 distribution='cpu', base_model=None) -> FnArgs:
  """FnArgs for run_fn on the tiny data, writing under `run_dir`."""
  custom_config = {
      'dataset_spec': tiny.spec.to_json(),
      'model_config': {'preset': 'local',
                       'overrides': {'max_epochs': 3, **MODEL_OVERRIDES, **(overrides or {})}},
      'distribution': distribution,
  }
  if training is not None:
    custom_config['training'] = training
  return FnArgs(
      train_files=tiny.train_files, eval_files=tiny.eval_files, train_steps=train_steps,
      transform_graph_path=tiny.transform_dir,
      serving_model_dir=os.path.join(run_dir, 'serving_model'),
      model_run_dir=os.path.join(run_dir, 'model_run'), base_model=base_model,
      custom_config=custom_config)


def warm_start_base(tiny, fn_args: FnArgs) -> types.SimpleNamespace:
  """A finished run's export as a warm-start base: its directory, layout and config."""
  config = train.model_config_from(fn_args.custom_config['model_config'])
  layout = window_inputs.input_layout(tiny.spec, tft.TFTransformOutput(tiny.transform_dir))
  return types.SimpleNamespace(path=fn_args.serving_model_dir, layout=layout, config=config)


class Recorder(keras.callbacks.Callback):
  """Records what training did, for assertions; its `model` is the trained model."""

  def __init__(self):
    super().__init__()
    self.epochs_begun: List[int] = []
    self.batch_ends_per_epoch = collections.Counter()
    self.initial_weights = None
    self.losses: List[float] = []
    self.val_losses: List[float] = []
    self.initial_iterations = None
    self.weights_after_epoch: Dict[int, list] = {}
    self._epoch = None

  def on_train_begin(self, logs=None):
    self.initial_weights = self.model.get_weights()
    self.initial_iterations = int(self.model.optimizer.iterations.numpy())

  def on_epoch_begin(self, epoch, logs=None):
    self.epochs_begun.append(epoch)
    self._epoch = epoch

  def on_train_batch_end(self, batch, logs=None):
    self.batch_ends_per_epoch[self._epoch] += 1

  def on_epoch_end(self, epoch, logs=None):
    self.losses.append(float(logs['loss']))
    self.val_losses.append(float(logs['val_loss']))
    self.weights_after_epoch[epoch] = self.model.get_weights()


class Interrupted(Exception):
  """Raised by `InterruptAfter` in place of a killed worker."""


class InterruptAfter(keras.callbacks.Callback):
  """Stops training with `Interrupted` at the end of epoch `epoch` (0-based)."""

  def __init__(self, epoch: int):
    super().__init__()
    self.epoch = epoch

  def on_epoch_end(self, epoch, logs=None):
    if epoch == self.epoch:
      raise Interrupted(f'interrupted after epoch {epoch}')


# The first run is interrupted after 2 of 4 epochs (2 steps each), the second resumes.
RESUME_EPOCHS = 4
INTERRUPTED_AFTER = 1


@pytest.fixture(scope='session')
def resumed_run(tiny, tmp_path_factory):
  """run_fn interrupted after its second epoch, then run again to completion.

  Both attempts request 'tpu' in custom_config while TFT_DISTRIBUTION=cpu is set, so
  they also show that the environment overrides the config. The completed run's model
  (in memory as `second.model`, exported under `fn_args.serving_model_dir`) serves the
  export tests and is the base model of the warm-start test: training is the slow part
  of these tests, so runs are shared.
  """
  fn_args = make_fn_args(tiny, str(tmp_path_factory.mktemp('resumed')),
                         train_steps=2 * RESUME_EPOCHS,
                         overrides={'max_epochs': RESUME_EPOCHS,
                                    'early_stopping_patience': RESUME_EPOCHS},
                         distribution='tpu')
  first, second = Recorder(), Recorder()
  with pytest.MonkeyPatch.context() as patch:
    patch.setenv('TFT_DISTRIBUTION', 'cpu')
    with pytest.raises(Interrupted):
      train.run_fn(fn_args, callbacks=[first, InterruptAfter(INTERRUPTED_AFTER)])
    train.run_fn(fn_args, callbacks=[second])
  return types.SimpleNamespace(fn_args=fn_args, first=first, second=second,
                               epochs=RESUME_EPOCHS, interrupted_after=INTERRUPTED_AFTER)


@contextlib.contextmanager
def logged_messages(logger_name: str = ''):
  """Yields the list of the INFO and higher messages `logger_name` (the root logger by
  default) and its children log inside the block."""
  messages = []

  class _Handler(logging.Handler):
    def emit(self, record):
      messages.append(record.getMessage())

  logger, handler = logging.getLogger(logger_name or None), _Handler(logging.INFO)
  level = logger.level
  logger.addHandler(handler)
  logger.setLevel(logging.INFO)
  try:
    yield messages
  finally:
    logger.removeHandler(handler)
    logger.setLevel(level)


@pytest.fixture(scope='session')
def kit():
  """Helpers for tests that run run_fn in their own fixtures."""
  return types.SimpleNamespace(make_fn_args=make_fn_args, Recorder=Recorder,
                               warm_start_base=warm_start_base,
                               logged_messages=logged_messages)


@pytest.fixture
def fn_args_for(tiny, tmp_path):
  """`make_fn_args` for the tiny data under the test's tmp_path."""
  return lambda **changes: make_fn_args(tiny, str(tmp_path), **changes)
