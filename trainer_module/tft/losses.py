"""Quantile (pinball) loss and the paper's normalised quantile loss (q-risk)."""

from collections.abc import Sequence

import tensorflow as tf
import tf_keras as keras

from schema.hparams import check_point_loss


def pinball_loss(y_true, y_pred, quantiles: Sequence[float]) -> tf.Tensor:
  """Elementwise pinball loss max(q (y - y_hat), (q - 1) (y - y_hat)).

  Args:
    y_true: Targets [B, H].
    y_pred: Quantile forecasts [B, H, Q].
    quantiles: The Q quantile levels of `y_pred`'s last axis.

  Returns:
    [B, H, Q] float32.
  """
  y_true = tf.convert_to_tensor(y_true, tf.float32)
  y_pred = tf.cast(y_pred, tf.float32)
  if y_true.shape.rank != 2 or y_pred.shape.rank != 3:
    raise ValueError(
        f'quantile losses need targets [B, H] and forecasts [B, H, Q], got '
        f'{y_true.shape} and {y_pred.shape}; pass the label as a [B, H] tensor '
        'for the "quantiles" output.')
  if y_pred.shape[-1] != len(quantiles):
    raise ValueError(
        f'forecasts have {y_pred.shape[-1]} quantiles on the last axis but '
        f'{len(quantiles)} quantile levels were given: {tuple(quantiles)}.')
  errors = y_true[..., tf.newaxis] - y_pred
  levels = tf.constant(quantiles, tf.float32)
  return tf.maximum(levels * errors, (levels - 1.0) * errors)


@keras.utils.register_keras_serializable(package='tft')
class QuantileLoss(keras.losses.Loss):
  """Pinball loss summed over quantiles and averaged over horizon and batch.

  Use it for the model's `quantiles` output: y_true [B, H], y_pred [B, H, Q].
  With `point_loss='squared'` the 0.5 quantile's term is the squared error
  divided by twice the batch's target standard deviation instead: its optimum
  is the mean, not the median, and it keeps the pinball terms' units and weight
  (at an error of one standard deviation both are half of it). Under a
  distribution strategy the standard deviation is the global batch's, gathered
  from every replica, so the loss is the one a single device would compute.

  Args:
    quantiles: The Q quantile levels of the forecasts' last axis.
    point_loss: 'pinball' or 'squared' (`TFTConfig.point_loss`).
  """

  def __init__(self, quantiles: Sequence[float], point_loss: str = 'pinball',
               name: str = 'quantile_loss', **kwargs):
    super().__init__(name=name, **kwargs)
    self.quantiles = tuple(quantiles)
    check_point_loss(point_loss, self.quantiles)
    self.point_loss = point_loss

  def call(self, y_true, y_pred):
    """Returns the per-window loss [B]."""
    losses = pinball_loss(y_true, y_pred, self.quantiles)
    if self.point_loss == 'squared':
      losses = self._with_squared_point_error(y_true, y_pred, losses)
    return tf.reduce_sum(tf.reduce_mean(losses, axis=1), axis=-1)

  def _with_squared_point_error(self, y_true, y_pred, losses):
    """`losses` [B, H, Q] with the 0.5 quantile's column replaced."""
    y_true = tf.cast(y_true, tf.float32)
    point = self.quantiles.index(0.5)
    std, mean_magnitude = _global_batch_std_and_mean_magnitude(y_true)
    # Floored like the model's window scaler, so a flat batch does not divide by zero.
    floor = 1e-3 * tf.maximum(mean_magnitude, 1.0)
    scale = tf.stop_gradient(tf.maximum(std, floor))
    squared = tf.square(y_true - tf.cast(y_pred[..., point], tf.float32)) / (2.0 * scale)
    return tf.concat([losses[..., :point], squared[..., tf.newaxis],
                      losses[..., point + 1:]], axis=-1)

  def get_config(self):
    return {**super().get_config(), 'quantiles': self.quantiles,
            'point_loss': self.point_loss}


def _global_batch_std_and_mean_magnitude(values):
  """Population std and mean |value| of `values` over the global batch.

  In a replica context with several replicas (inside `strategy.run`, where Keras
  computes losses) the statistics are all-reduced over the replicas' batches;
  otherwise `values` is the whole batch.
  """
  context = tf.distribute.get_replica_context()
  if context is None or context.num_replicas_in_sync == 1:
    return tf.math.reduce_std(values), tf.reduce_mean(tf.abs(values))
  count, total, magnitude = context.all_reduce(
      tf.distribute.ReduceOp.SUM,
      [tf.cast(tf.size(values), tf.float32), tf.reduce_sum(values),
       tf.reduce_sum(tf.abs(values))])
  mean = total / count
  squared_deviations = context.all_reduce(
      tf.distribute.ReduceOp.SUM, tf.reduce_sum(tf.square(values - mean)))
  return tf.sqrt(squared_deviations / count), magnitude / count


@keras.utils.register_keras_serializable(package='tft')
class QuantileRisk(keras.metrics.Metric):
  """q-risk of one quantile, accumulated exactly over batches.

  Keeps sum(weight * pinball_q) and sum(weight * |y|) over all updates.

  Args:
    quantile: The quantile level to score, one of `quantiles`.
    quantiles: The Q quantile levels of the forecasts' last axis.
  """

  def __init__(self, quantile: float, quantiles: Sequence[float],
               name: str | None = None, **kwargs):
    quantiles = tuple(quantiles)
    if quantile not in quantiles:
      raise ValueError(
          f'quantile {quantile} is not among the forecast quantiles '
          f'{quantiles}.')
    super().__init__(name=name or f'q_risk_{round(quantile * 100)}', **kwargs)
    self.quantile = quantile
    self.quantiles = quantiles
    self.quantile_index = quantiles.index(quantile)
    self.pinball_sum = self.add_weight('pinball_sum', initializer='zeros')
    self.target_sum = self.add_weight('target_sum', initializer='zeros')

  def update_state(self, y_true, y_pred, sample_weight=None):
    """Adds a batch: y_true [B, H], y_pred [B, H, Q], sample_weight [B]."""
    losses = pinball_loss(y_true, y_pred, self.quantiles)[
        ..., self.quantile_index]
    magnitudes = tf.abs(tf.cast(y_true, tf.float32))
    if sample_weight is not None:
      weights = tf.reshape(tf.cast(sample_weight, tf.float32), [-1, 1])
      losses *= weights
      magnitudes *= weights
    self.pinball_sum.assign_add(tf.reduce_sum(losses))
    self.target_sum.assign_add(tf.reduce_sum(magnitudes))

  def result(self):
    return tf.math.divide_no_nan(2.0 * self.pinball_sum, self.target_sum)

  def reset_state(self):
    self.pinball_sum.assign(0.0)
    self.target_sum.assign(0.0)

  def get_config(self):
    return {**super().get_config(), 'quantile': self.quantile,
            'quantiles': self.quantiles}
