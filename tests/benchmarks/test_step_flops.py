"""The matmul flops counted in a training step's graph."""

import tensorflow as tf

from benchmarks import step_flops


def _graph(function, *shapes):
  return tf.function(function).get_concrete_function(
      *[tf.TensorSpec(shape, tf.float32) for shape in shapes]).graph


def test_a_matmul_and_its_two_gradients_count_three_times_its_forward_flops():
  def step(x, w):
    with tf.GradientTape() as tape:
      tape.watch([x, w])
      y = tf.reduce_sum(tf.matmul(x, w))
    return tape.gradient(y, [x, w])  # dy w^T (transpose_b) and x^T dy (transpose_a)

  forward = 2 * 4 * 3 * 5
  assert step_flops.graph_matmul_flops(_graph(step, [4, 3], [3, 5])) == {'MatMul': 3 * forward}


def test_batched_matmuls_and_einsums_count_every_index_they_range_over():
  def products(a, b):
    return (tf.matmul(a, b, adjoint_a=True),  # [2, 6, 3]^T x [2, 6, 5] -> [2, 3, 5]
            tf.einsum('btv,vd->btvd', a[..., :2], b[0, :2, :]))  # no summed index

  counted = step_flops.graph_matmul_flops(_graph(products, [2, 6, 3], [2, 6, 5]))
  assert counted == {'BatchMatMulV2': 2 * 2 * 3 * 5 * 6, 'Einsum': 2 * 2 * 6 * 2 * 5}
