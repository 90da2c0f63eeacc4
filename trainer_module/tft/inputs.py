"""The model's input contract: tensor groups by role, their shapes and checks."""

from collections.abc import Mapping
import dataclasses

import tensorflow as tf

STATIC_CATEGORICAL = 'static_categorical'
STATIC_REAL = 'static_real'
KNOWN_CATEGORICAL = 'known_categorical'
KNOWN_REAL = 'known_real'
OBSERVED_REAL = 'observed_real'
TARGET_HISTORY = 'target_history'

INPUT_KEYS = (STATIC_CATEGORICAL, STATIC_REAL, KNOWN_CATEGORICAL, KNOWN_REAL,
              OBSERVED_REAL, TARGET_HISTORY)


@dataclasses.dataclass(frozen=True)
class InputLayout:
  """Window lengths and the width of every input group.

  Attributes:
    encoder_steps: E, history steps per window.
    horizon: H, forecast steps per window.
    static_cardinalities: Vocabulary size of each static categorical; the first
      is usually the series id, and at least one is required.
    static_real_count: Number of static reals.
    known_cardinalities: Vocabulary size of each known-future categorical
      (e.g. 24 for hour of day).
    known_real_count: Number of known-future reals.
    observed_real_count: Number of observed reals, known over the encoder only
      (the target history is a separate input).
  """

  encoder_steps: int
  horizon: int
  static_cardinalities: tuple[int, ...]
  static_real_count: int
  known_cardinalities: tuple[int, ...]
  known_real_count: int
  observed_real_count: int

  def __post_init__(self):
    # Accept lists (e.g. from JSON) but store hashable tuples.
    for name in ('static_cardinalities', 'known_cardinalities'):
      object.__setattr__(self, name, tuple(int(c) for c in getattr(self, name)))
    if self.encoder_steps < 1 or self.horizon < 1:
      raise ValueError(
          f'encoder_steps ({self.encoder_steps}) and horizon ({self.horizon}) '
          'must be at least 1.')
    if not self.static_cardinalities:
      raise ValueError(
          'static_cardinalities is empty; give at least the series id '
          'cardinality (1 for a single series).')
    if any(c < 1 for c in self.static_cardinalities + self.known_cardinalities):
      raise ValueError(
          'every categorical cardinality must be >= 1, got static '
          f'{self.static_cardinalities} and known {self.known_cardinalities}.')
    for name in ('static_real_count', 'known_real_count', 'observed_real_count'):
      if getattr(self, name) < 0:
        raise ValueError(f'{name} must be >= 0, got {getattr(self, name)}.')

  @property
  def total_steps(self) -> int:
    """T = E + H."""
    return self.encoder_steps + self.horizon

  @property
  def static_variable_count(self) -> int:
    """Vs: static categoricals and static reals."""
    return len(self.static_cardinalities) + self.static_real_count

  @property
  def future_variable_count(self) -> int:
    """Known categoricals and known reals (the model's Vf, plus one with
    `TFTConfig.seasonal_lag`)."""
    return len(self.known_cardinalities) + self.known_real_count

  @property
  def history_variable_count(self) -> int:
    """Vh: target history, observed reals and known inputs."""
    return 1 + self.observed_real_count + self.future_variable_count


def input_signature(layout: InputLayout,
                    batch_size: int | None = None) -> dict[str, tf.TensorSpec]:
  """Returns the spec of every model input, e.g. for a serving signature."""
  steps, encoder = layout.total_steps, layout.encoder_steps
  return {
      STATIC_CATEGORICAL: tf.TensorSpec(
          [batch_size, len(layout.static_cardinalities)], tf.int32,
          STATIC_CATEGORICAL),
      STATIC_REAL: tf.TensorSpec(
          [batch_size, layout.static_real_count], tf.float32, STATIC_REAL),
      KNOWN_CATEGORICAL: tf.TensorSpec(
          [batch_size, steps, len(layout.known_cardinalities)], tf.int32,
          KNOWN_CATEGORICAL),
      KNOWN_REAL: tf.TensorSpec(
          [batch_size, steps, layout.known_real_count], tf.float32, KNOWN_REAL),
      OBSERVED_REAL: tf.TensorSpec(
          [batch_size, encoder, layout.observed_real_count], tf.float32,
          OBSERVED_REAL),
      TARGET_HISTORY: tf.TensorSpec([batch_size, encoder], tf.float32,
                                    TARGET_HISTORY),
  }


def check_inputs(inputs, layout: InputLayout) -> None:
  """Checks keys, ranks and static sizes of a model input dict.

  Raises:
    ValueError: a key is missing or unknown, or a tensor has the wrong rank or
      a non-batch size that contradicts `layout`.
  """
  if not isinstance(inputs, Mapping):
    raise ValueError(
        f'TFT inputs must be a dict with keys {INPUT_KEYS}, got '
        f'{type(inputs).__name__}.')
  missing = [key for key in INPUT_KEYS if key not in inputs]
  unknown = sorted(set(inputs) - set(INPUT_KEYS))
  if missing or unknown:
    raise ValueError(
        f'TFT inputs must have exactly the keys {INPUT_KEYS}; missing '
        f'{missing}, unknown {unknown}. Give empty groups a 0-size last axis '
        'and drop other features before the model.')
  for key, spec in input_signature(layout).items():
    shape = tf.TensorShape(inputs[key].shape)
    if shape.rank != spec.shape.rank:
      raise ValueError(
          f'TFT input {key!r} must have rank {spec.shape.rank} '
          f'(shape {spec.shape}), got shape {shape}.')
    if not spec.shape.is_compatible_with(shape):
      raise ValueError(
          f'TFT input {key!r} must have shape {spec.shape} for {layout}, got '
          f'{shape}.')
