"""The TFT's dropout: 16 random bits per element, Keras' seeding, exact rate."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.dropout import BitDropout


@pytest.mark.parametrize('rate', [0.1, 0.3])
def test_drops_the_rate_and_scales_what_it_keeps(rate):
  x = tf.ones([1000, 1000])
  dropped = BitDropout(rate)(x, training=True).numpy()
  kept = dropped != 0
  assert abs(1 - kept.mean() - rate) < 0.003  # a million elements: the sd is under 0.0005
  np.testing.assert_allclose(dropped[kept], 1 / (1 - rate), rtol=1e-6)
  # The two halves of one draw (elements 2i and 2i + 1) are dropped independently.
  both = (~kept[:, 0::2] & ~kept[:, 1::2]).mean()
  assert abs(both - rate ** 2) < 0.003


def test_an_odd_element_count_uses_half_of_the_last_draw():
  dropped = BitDropout(0.5)(tf.ones([3, 5, 7]), training=True).numpy()
  assert dropped.shape == (3, 5, 7) and set(np.unique(dropped)) <= {0.0, 2.0}
  assert 0 < (dropped == 0).sum() < dropped.size


def test_is_the_identity_outside_training_and_at_rate_zero():
  x = tf.random.normal([4, 5, 6])
  np.testing.assert_array_equal(BitDropout(0.5)(x, training=False), x)
  np.testing.assert_array_equal(BitDropout(0.0)(x, training=True), x)


def test_masks_repeat_under_the_global_seed_and_differ_between_calls():
  def two_calls():
    keras.utils.set_random_seed(7)
    layer = BitDropout(0.5)
    step = tf.function(lambda x: layer(x, training=True))
    x = tf.ones([64, 32])
    return step(x).numpy(), step(x).numpy()

  first, second = two_calls()
  again_first, again_second = two_calls()
  np.testing.assert_array_equal(first, again_first)
  np.testing.assert_array_equal(second, again_second)
  assert (first != second).mean() > 0.3


def test_keeps_the_dtype_and_compiles_with_xla():
  layer = BitDropout(0.2, dtype='mixed_bfloat16')
  step = tf.function(lambda x: layer(x, training=True), jit_compile=True)
  dropped = step(tf.ones([8, 7, 3], tf.bfloat16))
  assert dropped.dtype == tf.bfloat16 and dropped.shape == [8, 7, 3]
  assert set(np.unique(dropped.numpy().astype(np.float32))) <= {0.0, 1.25}


def test_gradient_passes_through_the_kept_elements_only():
  x = tf.ones([50, 40])
  with tf.GradientTape() as tape:
    tape.watch(x)
    dropped = BitDropout(0.4)(x, training=True)
    total = tf.reduce_sum(dropped)
  gradient = tape.gradient(total, x).numpy()
  np.testing.assert_allclose(gradient, dropped.numpy(), rtol=1e-6)


@pytest.mark.parametrize('rate', [1.0, 1 - 2 ** -18, -0.1])
def test_rejects_a_rate_it_cannot_draw(rate):
  with pytest.raises(ValueError, match=r'rate must be in \[0, 1 - 2\^-17\)'):
    BitDropout(rate)
