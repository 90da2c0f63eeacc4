"""Interpretable multi-head attention with a causal mask."""

import math

import numpy as np
import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.dropout import BitDropout


@keras.utils.register_keras_serializable(package='tft')
class InterpretableMultiHeadAttention(keras.layers.Layer):
  """Multi-head attention whose heads share values, so weights can be averaged.

  Each head h has its own query and key projections; one value projection is
  shared. Since mean_h(A_h V W_v) = (mean_h A_h) V W_v, the head-averaged
  attention A is computed first and applied once:
  output = A (V W_v) W_o.

  Queries are the last Tq positions of the Tk memory positions. The causal mask
  (query i attends to memory positions <= Tk - Tq + i) is fixed at build time.

  Args:
    num_heads: Number of heads; must divide the model width D.
    dropout_rate: Dropout on the averaged attention weights during training.
  """

  def __init__(self, num_heads: int, dropout_rate: float = 0.0, **kwargs):
    super().__init__(**kwargs)
    self.num_heads = num_heads
    self.dropout_rate = dropout_rate
    self.attention_dropout = BitDropout(dropout_rate)

  def build(self, input_shape):
    query_shape, memory_shape = (tf.TensorShape(s) for s in input_shape)
    query_steps, memory_steps = query_shape[1], memory_shape[1]
    model_size = query_shape[-1]
    if None in (query_steps, memory_steps, model_size):
      raise ValueError(
          f'{self.name}: time and feature axes need static sizes, got queries '
          f'{query_shape} and memory {memory_shape}.')
    if query_steps > memory_steps or model_size % self.num_heads:
      raise ValueError(
          f'{self.name}: queries {query_shape} must be the last steps of memory '
          f'{memory_shape}, and D={model_size} a multiple of num_heads='
          f'{self.num_heads}.')
    head_size = model_size // self.num_heads
    self.head_size = head_size
    self.logit_scale = 1.0 / math.sqrt(head_size)
    self.query_kernel = self.add_weight(
        'query_kernel', (model_size, self.num_heads * head_size),
        initializer='glorot_uniform')
    self.key_kernel = self.add_weight(
        'key_kernel', (model_size, self.num_heads * head_size),
        initializer='glorot_uniform')
    self.value_kernel = self.add_weight(
        'value_kernel', (model_size, head_size), initializer='glorot_uniform')
    self.output_kernel = self.add_weight(
        'output_kernel', (head_size, model_size), initializer='glorot_uniform')
    query_positions = np.arange(memory_steps - query_steps, memory_steps)
    self.causal_mask = (
        np.arange(memory_steps)[np.newaxis, :] <= query_positions[:, np.newaxis])
    super().build(input_shape)

  def call(self, inputs, training=None):
    """Attends from the queries to the memory.

    Args:
      inputs: (queries [B, Tq, D], memory [B, Tk, D]); keys and values both
        come from the memory.
      training: Whether dropout is active.

    Returns:
      (outputs [B, Tq, D], attention [B, Tq, Tk] float32, averaged over heads,
       rows summing to 1).
    """
    queries, memory = inputs
    query_heads = self._split_heads(
        tf.einsum('bqd,dm->bqm', queries, self.query_kernel))  # [B, n, Tq, k]
    key_heads = self._split_heads(
        tf.einsum('btd,dm->btm', memory, self.key_kernel))  # [B, n, Tk, k]
    logits = tf.matmul(query_heads, key_heads, transpose_b=True)
    logits = tf.cast(logits, tf.float32) * self.logit_scale  # [B, n, Tq, Tk]
    logits = tf.where(self.causal_mask, logits, -1e9)
    attention = tf.reduce_mean(tf.nn.softmax(logits), axis=1)  # [B, Tq, Tk]
    values = tf.einsum('btd,dk->btk', memory, self.value_kernel)
    dropped = self.attention_dropout(attention, training=training)
    context = tf.matmul(tf.cast(dropped, values.dtype), values)  # [B, Tq, k]
    outputs = tf.einsum('bqk,kd->bqd', context, self.output_kernel)
    return outputs, attention

  def _split_heads(self, projected):
    """[B, S, n * k] -> [B, n, S, k] for S query or memory steps."""
    steps = projected.shape[1]
    heads = tf.reshape(projected, [-1, steps, self.num_heads, self.head_size])
    return tf.transpose(heads, [0, 2, 1, 3])

  def get_config(self):
    return {**super().get_config(), 'num_heads': self.num_heads,
            'dropout_rate': self.dropout_rate}
