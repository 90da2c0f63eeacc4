"""From serialized window examples to the model's grouped input tensors.

The groups and their shapes are those of `trainer_module.tft.inputs.InputLayout`:
static_categorical [B, Sc], static_real [B, Sr], known_categorical [B, T, Kc],
known_real [B, T, Kr], observed_real [B, E, Or], target_history [B, E].
"""

from typing import Dict, List, Tuple

import tensorflow as tf
import tensorflow_transform as tft

from schema.dataset_spec import DatasetSpec
from schema.features import OOV_BUCKETS, Group, features_in
from schema.window_layout import TARGET_FUTURE, TARGET_HISTORY, feature_length, window_feature_spec
from trainer_module.tft.inputs import InputLayout

QUANTILES_OUTPUT = 'quantiles'


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


def parse_windows(serialized: tf.Tensor, spec: DatasetSpec) -> Tuple[Dict[str, tf.Tensor],
                                                                     tf.Tensor]:
  """Model inputs and the label [B, H] from a batch of serialized windows [B]."""
  parsed = tf.io.parse_example(serialized, window_feature_spec(spec))
  batch = tf.shape(serialized)[0]
  inputs = {TARGET_HISTORY: parsed[TARGET_HISTORY]}
  for group in Group:
    inputs[group.value] = _stack(parsed, spec, group, batch)
  return inputs, parsed[TARGET_FUTURE]


def _stack(parsed: Dict[str, tf.Tensor], spec: DatasetSpec, group: Group,
           batch: tf.Tensor) -> tf.Tensor:
  """The group's features stacked on a last axis: [B, V] static, [B, steps, V] temporal."""
  dtype = tf.int32 if group.is_categorical else tf.float32
  names: List[str] = [feature.name for feature in features_in(spec, group)]
  length = feature_length(group, spec)
  static = group in (Group.STATIC_CATEGORICAL, Group.STATIC_REAL)
  if not names:
    shape = [batch, 0] if static else [batch, length, 0]
    return tf.zeros(shape, dtype)
  stacked = tf.stack([tf.cast(parsed[name], dtype) for name in names], axis=-1)
  return stacked[:, 0, :] if static else stacked


def make_dataset(file_patterns: List[str], spec: DatasetSpec, batch_size: int,
                 shuffle: bool, repeat: bool = False, seed: int = 0) -> tf.data.Dataset:
  """Batches of (inputs, {'quantiles': label}) with a fixed batch size."""
  files = tf.io.gfile.glob([pattern for pattern in file_patterns])
  if not files:
    raise ValueError(f'no window files match {file_patterns}')
  dataset = tf.data.TFRecordDataset(files, compression_type='GZIP',
                                    num_parallel_reads=tf.data.AUTOTUNE)
  if shuffle:
    dataset = dataset.shuffle(10_000, seed=seed, reshuffle_each_iteration=True)
  if repeat:
    dataset = dataset.repeat()
  dataset = dataset.batch(batch_size, drop_remainder=True)
  dataset = dataset.map(lambda serialized: _with_label_dict(*parse_windows(serialized, spec)),
                        num_parallel_calls=tf.data.AUTOTUNE)
  return dataset.prefetch(tf.data.AUTOTUNE)


def _with_label_dict(inputs, label):
  return inputs, {QUANTILES_OUTPUT: label}


def count_records(file_patterns: List[str]) -> int:
  files = tf.io.gfile.glob(list(file_patterns))
  return sum(1 for _ in tf.data.TFRecordDataset(files, compression_type='GZIP'))
