"""From transformed windows to the model's grouped input tensors, and the input pipeline.

The groups and their shapes are those of `trainer_module.tft.inputs.InputLayout`:
static_categorical [B, Sc], static_real [B, Sr], known_categorical [B, T, Kc],
known_real [B, T, Kr], observed_real [B, E, Or], target_history [B, E].

Three sources give the same window features (the layout of `schema.window_layout`):
serialized window examples, as the windowing component writes the evaluation splits
(`make_dataset`, the Evaluator); transformed values at every step of whole windows
[B, T], as the raw-example serving signature computes them (`window_features_from_steps`);
and training segments, cut into such windows (`make_training_dataset`). `model_inputs`
turns them into the model's input groups, so training and serving cannot drift apart.
"""

import logging
import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import tensorflow as tf
import tensorflow_transform as tft

from common.file_patterns import files_matching
from schema.dataset_spec import DatasetSpec
from schema.features import (OOV_BUCKETS, SERIES_KEY, Group, features_in, model_features,
                             transformed_name)
from schema.window_layout import (FORECAST_START, TARGET_FUTURE, TARGET_HISTORY, WINDOW_MASK,
                                  feature_length, segment_feature_spec, step_value_names,
                                  window_feature_spec)
from trainer_module import vocabularies
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import KNOWN_EMBEDDING, STATIC_EMBEDDING
from trainer_module.training_config import DEFAULT_SHUFFLE_BUFFER

QUANTILES_OUTPUT = 'quantiles'
_SEGMENT_SHUFFLE_BUFFER = 256  # training segments; a segment holds up to T windows
_SEGMENTS_PER_PARSE = 16
# Which of a batch of segments' windows to read: (series key [S, 1], forecast starts
# [S, T]) -> [S, T] bool, applied on top of the segments' own mask.
WindowFilter = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
# tf.data functions traced as written: none has tensor-dependent Python control flow, and
# AutoGraph's conversion of them took about a second of each reader's first pass.
_as_written = tf.autograph.experimental.do_not_convert


def input_layout(spec: DatasetSpec, transform_output: tft.TFTransformOutput) -> InputLayout:
  """The model's input layout; vocabulary sizes come from the Transform output."""

  def cardinalities(group: Group) -> Tuple[int, ...]:
    return tuple(
        feature.cardinality if feature.cardinality is not None else
        transform_output.vocabulary_size_by_name(feature.vocabulary) + OOV_BUCKETS
        for feature in features_in(spec, group))

  return InputLayout(
      encoder_steps=spec.encoder_steps,
      horizon=spec.horizon,
      static_cardinalities=cardinalities(Group.STATIC_CATEGORICAL),
      static_real_count=len(features_in(spec, Group.STATIC_REAL)),
      known_cardinalities=cardinalities(Group.KNOWN_CATEGORICAL),
      known_real_count=len(features_in(spec, Group.KNOWN_REAL)),
      observed_real_count=len(features_in(spec, Group.OBSERVED_REAL)),
  )


def table_vocabularies(spec: DatasetSpec) -> Dict[str, List[Optional[str]]]:
  """The vocabulary file of each embedding table, by embedding layer, in `input_layout`'s
  order: the static and the known categoricals (None: a calendar feature's fixed size)."""

  def files(group: Group) -> List[Optional[str]]:
    return [vocabularies.file_name(f.vocabulary) if f.vocabulary else None
            for f in features_in(spec, group)]

  return {STATIC_EMBEDDING: files(Group.STATIC_CATEGORICAL),
          KNOWN_EMBEDDING: files(Group.KNOWN_CATEGORICAL)}


def parse_windows(serialized: tf.Tensor, spec: DatasetSpec) -> Tuple[Dict[str, tf.Tensor],
                                                                     tf.Tensor]:
  """Model inputs and the label [B, H] from a batch of serialized windows [B]."""
  parsed = tf.io.parse_example(serialized, window_feature_spec(spec))
  return model_inputs(parsed, spec), parsed[TARGET_FUTURE]


def model_inputs(window_features: Dict[str, tf.Tensor],
                 spec: DatasetSpec) -> Dict[str, tf.Tensor]:
  """The model's input groups from window features laid out as `window_feature_spec`.

  Args:
    window_features: at least `TARGET_HISTORY` [B, E] and every model feature with
      `feature_length` values per window ([B, 1] static, [B, E] observed, [B, T] known).
    spec: the dataset spec.

  Returns:
    The model's input dict; categoricals int32, reals float32.
  """
  history = window_features[TARGET_HISTORY]
  batch = history.shape[0] if history.shape[0] is not None else tf.shape(history)[0]
  inputs = {TARGET_HISTORY: tf.cast(history, tf.float32)}
  for group in Group:
    inputs[group.value] = _stack(window_features, spec, group, batch)
  return inputs


def _stack(features: Dict[str, tf.Tensor], spec: DatasetSpec, group: Group,
           batch) -> tf.Tensor:
  """The group's features stacked on a last axis: [B, V] static, [B, steps, V] temporal."""
  dtype = tf.int32 if group.is_categorical else tf.float32
  names: List[str] = [feature.name for feature in features_in(spec, group)]
  length = feature_length(group, spec)
  static = group in (Group.STATIC_CATEGORICAL, Group.STATIC_REAL)
  if not names:
    return tf.zeros([batch, 0] if static else [batch, length, 0], dtype)
  stacked = tf.stack([tf.cast(features[name], dtype) for name in names], axis=-1)
  return stacked[:, 0, :] if static else stacked


def window_features_from_steps(steps: Dict[str, tf.Tensor],
                               spec: DatasetSpec) -> Dict[str, tf.Tensor]:
  """Window features from transformed values at every step of each window.

  The mirror of `components.window_builder`: static features are taken at the last
  history step, observed features and the target history over the E history steps,
  known features over all T steps.

  Args:
    steps: Transform outputs reshaped to [B, T], one per window and step, holding at
      least the transformed target and every model feature.
    spec: the dataset spec.

  Returns:
    `TARGET_HISTORY` [B, E] and every model feature with `feature_length` values.
  """
  encoder = spec.encoder_steps
  features = {TARGET_HISTORY: steps[transformed_name(spec.target_column)][:, :encoder]}
  for feature in model_features(spec):
    values = steps[feature.name]
    length = feature_length(feature.group, spec)
    if length == 1:
      features[feature.name] = values[:, encoder - 1:encoder]
    elif length == encoder:
      features[feature.name] = values[:, :encoder]
    else:
      features[feature.name] = values
  return features


def make_dataset(file_patterns: Sequence[str], spec: DatasetSpec, batch_size: int,
                 shuffle: bool, repeat: bool = False, cache: bool = False,
                 shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER, seed: Optional[int] = None,
                 record_count: Optional[int] = None) -> tf.data.Dataset:
  """Batches of (inputs, {'quantiles': label [B, H]}) with fully static shapes.

  Files are read in parallel; batches are whole, so every tensor has a static batch
  dimension, as XLA and TPUs need. A finite dataset puts every window in a batch: its
  last batch is filled up with the first windows again, so no window goes unseen and
  at most `batch_size - 1` count twice. Parsing runs on batches, in parallel, in the
  input pipeline on the host.

  Args:
    file_patterns: gzipped TFRecord files of serialized windows.
    spec: the dataset spec.
    batch_size: windows per batch (the global batch under a distribution strategy).
    shuffle: shuffle windows (training).
    repeat: repeat indefinitely (training with steps per epoch).
    cache: keep the serialized windows in memory after the first pass; only for data
      that fits (see `DEFAULT_CACHE_MAX_BYTES`).
    shuffle_buffer: windows in the shuffle buffer.
    seed: shuffle seed; with a seed, batches also come out in a fixed order. None: a
      different order in every run.
    record_count: the number of windows in the files (`record_stats`); required for a
      finite dataset (`repeat=False`), whose batches it counts.

  Raises:
    ValueError: a finite dataset without `record_count`.
  """
  if not repeat and record_count is None:
    raise ValueError('a finite dataset needs record_count (window_inputs.record_stats) to '
                     'put every window in a whole batch')
  dataset = read_records(file_patterns)
  if cache:
    dataset = dataset.cache()
  if shuffle:
    dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
  if repeat:
    dataset = dataset.repeat()
  else:  # the last batch filled up from the start; Keras sees how many batches there are
    dataset = dataset.repeat().take(math.ceil(record_count / batch_size) * batch_size)
  dataset = dataset.batch(batch_size, drop_remainder=True)
  dataset = dataset.map(_as_written(
      lambda serialized: _with_label_dict(*parse_windows(serialized, spec))),
                        num_parallel_calls=tf.data.AUTOTUNE,
                        deterministic=not shuffle or seed is not None)
  return dataset.prefetch(tf.data.AUTOTUNE)


def make_training_dataset(file_patterns: Sequence[str], spec: DatasetSpec, batch_size: int,
                          cache: bool = False,
                          shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER,
                          seed: Optional[int] = None,
                          only: Optional[WindowFilter] = None) -> tf.data.Dataset:
  """Shuffled, endlessly repeated batches of training windows cut from segments, shaped
  as `make_dataset`'s.

  Segments (`schema.window_layout`) are shuffled, parsed a few at a time, cut into their
  T windows each, of which those their mask keeps go through a shuffle buffer of
  `shuffle_buffer` windows into whole batches.

  Args:
    file_patterns: gzipped TFRecord files of serialized segments.
    spec: the dataset spec.
    batch_size: windows per batch (the global batch under a distribution strategy).
    cache: keep the serialized segments in memory after the first pass.
    shuffle_buffer: windows in the shuffle buffer.
    seed: shuffle seed; with a seed, batches also come out in a fixed order.
    only: read only the windows this filter keeps (all training windows: None).
  """
  dataset = read_records(file_patterns)
  if cache:
    dataset = dataset.cache()
  # Each pass over the windows is a whole permutation of them, as `make_dataset`'s.
  dataset = (dataset.shuffle(_SEGMENT_SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)
             .batch(_SEGMENTS_PER_PARSE)
             .map(_as_written(lambda serialized: _segment_windows(serialized, spec, only)),
                  num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None)
             .unbatch()
             .shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
             .repeat()
             .batch(batch_size, drop_remainder=True)
             .map(_as_written(
                 lambda steps: _with_label_dict(*_window_inputs_and_label(steps, spec))),
                  num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None))
  return dataset.prefetch(tf.data.AUTOTUNE)


def windows_in_order(file_patterns: Sequence[str], spec: DatasetSpec, segments: bool,
                     one_in: int = 1, batch_size: int = 1024,
                     only: Optional[WindowFilter] = None) -> tf.data.Dataset:
  """Batches of (inputs, label [B, H]) of every window of the files once, in a fixed order,
  the last batch short: for reading windows whole rather than training on them.

  Args:
    file_patterns: gzipped TFRecord files of serialized windows or segments.
    spec: the dataset spec.
    segments: the files hold training segments (their kept windows are read), not windows.
    one_in: keep about one window in `one_in`, chosen by a hash of its position. Not every
      k-th: a segment's windows start at consecutive steps, so that would keep a few
      phases of the day or week only.
    batch_size: windows per batch.
    only: segments: read only the windows this filter keeps.
  """
  if segments:
    dataset = (read_records(file_patterns).batch(_SEGMENTS_PER_PARSE)
               .map(_as_written(lambda serialized: _segment_windows(serialized, spec, only)))
               .unbatch())
    parse = _as_written(lambda steps: _window_inputs_and_label(steps, spec))
  else:
    dataset = read_records(file_patterns)
    parse = _as_written(lambda serialized: parse_windows(serialized, spec))
  if one_in > 1:
    dataset = dataset.enumerate().filter(_as_written(lambda index, _: tf.equal(
        tf.strings.to_hash_bucket_fast(tf.strings.as_string(index), one_in), 0))).map(
            _as_written(lambda _, window: window))
  return dataset.batch(batch_size).map(parse).prefetch(tf.data.AUTOTUNE)


def _segment_windows(serialized: tf.Tensor, spec: DatasetSpec,
                     only: Optional[WindowFilter] = None) -> Dict[str, tf.Tensor]:
  """The kept windows of a batch of serialized segments [S] (those `only` keeps, if
  given): each step value [W, T]."""
  parsed = tf.io.parse_example(serialized, segment_feature_spec(spec))
  window = spec.window_length
  # Window k of a segment covers its steps k .. k + T - 1.
  positions = tf.range(window)[:, tf.newaxis] + tf.range(window)[tf.newaxis, :]
  kept = tf.cast(parsed[WINDOW_MASK], tf.bool)
  if only is not None:
    kept &= only(parsed[SERIES_KEY], parsed[FORECAST_START])
  return {name: tf.boolean_mask(tf.gather(parsed[name], positions, axis=1), kept)
          for name in step_value_names(spec)}


def _window_inputs_and_label(steps: Dict[str, tf.Tensor], spec: DatasetSpec):
  """Model inputs and the label [B, H] from step values [B, T]."""
  label = tf.cast(steps[transformed_name(spec.target_column)][:, spec.encoder_steps:],
                  tf.float32)
  return model_inputs(window_features_from_steps(steps, spec), spec), label


def read_records(file_patterns: Sequence[str]) -> tf.data.Dataset:
  """The serialized windows of the files matching `file_patterns`, read in parallel.

  Raises:
    ValueError: no file matches.
  """
  return tf.data.TFRecordDataset(matching_files(file_patterns), compression_type='GZIP',
                                 num_parallel_reads=tf.data.AUTOTUNE)


def _with_label_dict(inputs, label):
  return inputs, {QUANTILES_OUTPUT: label}


def matching_files(file_patterns: Sequence[str]) -> List[str]:
  """Every file matching `file_patterns`, sorted.

  Raises:
    ValueError: no file matches.
  """
  return files_matching(file_patterns, ValueError(
      f'no window files match {list(file_patterns)}; check that the '
      "Windowing component's output holds the split"))


def record_stats(file_patterns: Sequence[str]) -> Tuple[int, int]:
  """(number of records, their total serialized size in bytes) of gzipped TFRecords."""
  return _totals(file_patterns, lambda record: tf.constant(1, tf.int64))


def training_window_stats(file_patterns: Sequence[str]) -> Tuple[int, int]:
  """(training windows, serialized bytes) of gzipped TFRecords of segments."""
  mask = {WINDOW_MASK: tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)}
  return _totals(file_patterns, lambda record: tf.reduce_sum(
      tf.io.parse_single_example(record, mask)[WINDOW_MASK]))


def _totals(file_patterns: Sequence[str], count) -> Tuple[int, int]:
  """(the sum of `count(record)` over the records, their serialized bytes); `count` is
  traced as written inside the map."""
  total, size = read_records(file_patterns).map(_as_written(
      lambda record: (count(record), tf.cast(tf.strings.length(record), tf.int64)))
  ).reduce((tf.constant(0, tf.int64), tf.constant(0, tf.int64)),
           _as_written(lambda total, record: (total[0] + record[0], total[1] + record[1])))
  return int(total), int(size)


def should_cache(serialized_bytes: int, max_bytes: int, what: str) -> bool:
  """Whether windows of `serialized_bytes` fit the cache bound; logs the decision."""
  fits = serialized_bytes <= max_bytes
  logging.info('%s windows: %.1f MiB serialized, %s (cache bound %.1f MiB)', what,
               serialized_bytes / 2**20, 'cached in memory' if fits else 'read every epoch',
               max_bytes / 2**20)
  return fits
