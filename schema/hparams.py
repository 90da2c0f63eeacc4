"""Hyperparameters of the Temporal Fusion Transformer, with the paper's presets.

Window lengths (encoder steps, horizon) belong to the data set, not to the model
hyperparameters; `PAPER_WINDOWS` records the ones the paper used with each preset.
"""

import dataclasses
from typing import NamedTuple

TARGET_LOCATIONS = ('mean', 'last')
POINT_LOSSES = ('pinball', 'squared')
PRECISIONS = ('auto', 'float32', 'mixed_bfloat16')


def check_point_loss(point_loss: str, quantiles: tuple[float, ...]) -> None:
  """Raises ValueError unless `point_loss` is known and its quantile is forecast."""
  if point_loss not in POINT_LOSSES:
    raise ValueError(
        f'point_loss must be one of {POINT_LOSSES}, got {point_loss!r}.')
  if point_loss == 'squared' and 0.5 not in quantiles:
    raise ValueError(
        f"point_loss 'squared' trains the 0.5 quantile's forecast, but the "
        f"quantiles are {quantiles}; add 0.5 or use point_loss 'pinball'.")


def check_seasonal_lag(lag: int, encoder_steps: int, horizon: int) -> None:
  """Checks that each horizon step finds the target `lag` steps before it in the history.

  Raises:
    ValueError: `lag` is neither 0 (none) nor between `horizon` and `encoder_steps`.
  """
  if lag and not horizon <= lag <= encoder_steps:
    raise ValueError(
        f'seasonal_lag {lag} must lie between the horizon ({horizon}) and the encoder '
        f'steps ({encoder_steps}): each horizon step reads the target {lag} steps before '
        'it from the history. Lengthen the history or set seasonal_lag to 0.')


@dataclasses.dataclass(frozen=True)
class TFTConfig:
  """Model and optimisation hyperparameters of a TFT.

  The defaults are a small model for a local run on a laptop.

  Attributes:
    hidden_size: Width D of every hidden layer (the paper's d_model).
    dropout: Dropout rate applied before every gating layer and on attention.
    num_heads: Attention heads; must divide `hidden_size`.
    learning_rate: Adam learning rate.
    batch_size: Windows per training batch on each replica; the global batch is this
      times the strategy's replicas.
    clipnorm: Adam `clipnorm`: each gradient tensor is clipped to this norm,
      as in the paper's code (`max_gradient_norm`).
    quantiles: Forecast quantiles, strictly increasing within (0, 1).
    max_epochs: Upper bound on training epochs.
    early_stopping_patience: Epochs without validation improvement before
      training stops.
    jit_compile: Compile the training step with XLA. Off by default: on CPU
      the recurrent layers run far slower under XLA; use it as a check that
      the model obeys TPU rules, and on TPU where XLA is implicit anyway.
    lstm_unroll: Unroll the LSTMs; worth measuring on TPU for short windows.
    target_location: What each window's target history is centred on before
      the model sees it, and what the forecast is added back to: 'mean' (of
      the history) or 'last' (its last value; better when the level drifts,
      as in ETTh1).
    history_highway: Add a linear forecast from the scaled target history to
      every quantile (`tft.highway.HistoryHighway`), so the forecast follows the
      recent history's level and the shape of its last cycles. On by default, as
      measured on the development suite (benchmarks/pages/suite.md, "What was
      tried"). Not explained by the selection weights.
    point_loss: The loss of the 0.5 quantile's forecast, the point forecast:
      'pinball', as for every quantile (it forecasts the median; best for MAE),
      or 'squared' error (it forecasts the mean; best for MSE, which the ETTh1
      protocol scores). The other quantiles keep the pinball loss. Needs 0.5
      among `quantiles`.
    ensemble_size: Members of the model: 1 is one TFT; more are TFTs trained one
      after the other, each from its own initialisation with its own optimizer and
      early stopping, and the exported model serves the mean of their outputs
      (`tft.ensemble.TFTEnsemble`). Averaging cuts the run-to-run variance of the
      forecast; training and serving cost grow with the members.
    precision: The Keras dtype policy the model is built under: 'float32';
      'mixed_bfloat16', the TPU's native type (variables float32, the layers'
      computations bfloat16; the selection softmaxes, the attention weights, the
      quantile outputs and the losses float32); or 'auto': mixed_bfloat16 under a TPU
      strategy, float32 elsewhere (on CPU its speed depends on the host: slower than
      float32 without bfloat16 instructions, 2 to 35% faster with AVX-512 BF16;
      benchmarks/pages/speed.md). The weights are float32 either way, so a model
      warm-starts from one of the other precision, and the exported model takes and
      returns float32.
    seasonal_lag: The season L of the target in steps (12 for monthly data with a
      yearly season), or 0 for none. When set, each horizon step also reads the target
      L steps before it (the same month last year), scaled as the history, as one more
      future input (`tft.model`); it is taken from the history, so it needs
      horizon <= L <= encoder steps.
  """

  hidden_size: int = 16
  dropout: float = 0.1
  num_heads: int = 2
  learning_rate: float = 1e-3
  batch_size: int = 64
  clipnorm: float = 1.0
  quantiles: tuple[float, ...] = (0.1, 0.5, 0.9)
  max_epochs: int = 20
  early_stopping_patience: int = 3
  jit_compile: bool = False
  lstm_unroll: bool = False
  target_location: str = 'mean'
  history_highway: bool = True
  point_loss: str = 'pinball'
  ensemble_size: int = 1
  precision: str = 'auto'
  seasonal_lag: int = 0

  def __post_init__(self):
    # Accept lists (e.g. from JSON) but store a hashable tuple.
    object.__setattr__(self, 'quantiles', tuple(float(q) for q in self.quantiles))
    if self.hidden_size < 1 or self.num_heads < 1:
      raise ValueError(
          f'hidden_size ({self.hidden_size}) and num_heads ({self.num_heads}) '
          'must be positive.')
    if self.hidden_size % self.num_heads:
      raise ValueError(
          f'hidden_size ({self.hidden_size}) must be a multiple of num_heads '
          f'({self.num_heads}); change one of them.')
    if not 0.0 <= self.dropout < 1.0:
      raise ValueError(f'dropout must lie in [0, 1), got {self.dropout}.')
    if not self.quantiles or any(not 0.0 < q < 1.0 for q in self.quantiles):
      raise ValueError(
          f'quantiles must be a non-empty sequence within (0, 1), got '
          f'{self.quantiles}.')
    if any(a >= b for a, b in zip(self.quantiles, self.quantiles[1:])):
      raise ValueError(
          f'quantiles must be strictly increasing, got {self.quantiles}.')
    for name in ('learning_rate', 'clipnorm', 'batch_size', 'max_epochs'):
      if getattr(self, name) <= 0:
        raise ValueError(f'{name} must be positive, got {getattr(self, name)}.')
    if self.target_location not in TARGET_LOCATIONS:
      raise ValueError(
          f'target_location must be one of {TARGET_LOCATIONS}, got '
          f'{self.target_location!r}.')
    check_point_loss(self.point_loss, self.quantiles)
    if (isinstance(self.ensemble_size, bool) or not isinstance(self.ensemble_size, int)
        or self.ensemble_size < 1):
      raise ValueError(
          f'ensemble_size must be an integer >= 1, got {self.ensemble_size!r}.')
    if self.precision not in PRECISIONS:
      raise ValueError(
          f'precision must be one of {PRECISIONS}, got {self.precision!r}.')
    if (isinstance(self.seasonal_lag, bool) or not isinstance(self.seasonal_lag, int)
        or self.seasonal_lag < 0):
      raise ValueError(
          f'seasonal_lag must be an integer >= 0 (0: none), got {self.seasonal_lag!r}.')
    if self.early_stopping_patience < 0:
      raise ValueError(
          'early_stopping_patience must be >= 0, got '
          f'{self.early_stopping_patience}.')

  def dtype_policy(self, on_tpu: bool) -> str:
    """The Keras dtype policy `precision` means on this hardware."""
    if self.precision == 'auto':
      return 'mixed_bfloat16' if on_tpu else 'float32'
    return self.precision

  @property
  def head_size(self) -> int:
    """Width of each attention head's queries, keys and the shared values."""
    return self.hidden_size // self.num_heads

  @property
  def quantile_count(self) -> int:
    """Number Q of forecast quantiles."""
    return len(self.quantiles)


class PaperWindow(NamedTuple):
  """Window lengths the paper used for a data set."""
  encoder_steps: int
  horizon: int


DEFAULT_PRESET = 'local'


def largest_batch_within(windows: int) -> int:
  """The largest power of two at most `windows` (at least 1): a batch that fits."""
  return 2 ** max(windows, 1).bit_length() // 2

# The paper's optimal hyperparameters (Lim et al. 2021, appendix), as in its
# code (google-research `tft/data_formatters/*.py`).
PRESETS: dict[str, TFTConfig] = {
    DEFAULT_PRESET: TFTConfig(),
    'electricity': TFTConfig(
        hidden_size=160, dropout=0.1, num_heads=4, learning_rate=1e-3,
        batch_size=64, clipnorm=0.01, max_epochs=100, early_stopping_patience=5),
    'traffic': TFTConfig(
        hidden_size=320, dropout=0.3, num_heads=4, learning_rate=1e-3,
        batch_size=128, clipnorm=100.0, max_epochs=100,
        early_stopping_patience=5),
    'volatility': TFTConfig(
        hidden_size=160, dropout=0.3, num_heads=1, learning_rate=1e-2,
        batch_size=64, clipnorm=0.01, max_epochs=100, early_stopping_patience=5),
    'retail': TFTConfig(
        hidden_size=240, dropout=0.1, num_heads=4, learning_rate=1e-3,
        batch_size=128, clipnorm=100.0, max_epochs=100,
        early_stopping_patience=5),
}

# The retail (Favorita) window is the paper's 90 days of history for 30 days
# ahead; the released code's `num_encoder_steps=30` is a known mistake
# (google-research issue #412).
PAPER_WINDOWS: dict[str, PaperWindow] = {
    'electricity': PaperWindow(encoder_steps=168, horizon=24),
    'traffic': PaperWindow(encoder_steps=168, horizon=24),
    'volatility': PaperWindow(encoder_steps=252, horizon=5),
    'retail': PaperWindow(encoder_steps=90, horizon=30),
}


def from_name(name: str) -> TFTConfig:
  """Returns the preset called `name`.

  Raises:
    ValueError: `name` is not a preset.
  """
  try:
    return PRESETS[name]
  except KeyError:
    raise ValueError(
        f'unknown TFT preset {name!r}; choose one of {sorted(PRESETS)}.'
    ) from None
