"""FusedAdam: Keras's Adam update in one fused op per dense variable."""

import numpy as np
import tensorflow as tf
import tf_keras as keras

from trainer_module.tft.optimizer import FusedAdam

STEPS = 5


def _model():
  """An embedding (sparse gradients) and two dense layers, with fixed weights."""
  ids = keras.Input((3,), dtype=tf.int32)
  hidden = keras.layers.Flatten()(keras.layers.Embedding(7, 4)(ids))
  hidden = keras.layers.Dense(5, activation='tanh')(hidden)
  model = keras.Model(ids, keras.layers.Dense(2)(hidden))
  rng = np.random.default_rng(0)
  model.set_weights([rng.normal(size=w.shape).astype(np.float32)
                     for w in model.get_weights()])
  return model


def _train(optimizer_class, clipnorm=0.05):
  """The weights after STEPS steps under a warm-up and cosine schedule and per-variable
  clipping, and the traced update step's ops."""
  model = _model()
  schedule = keras.optimizers.schedules.CosineDecay(
      0.0, 4, alpha=0.1, warmup_target=0.05, warmup_steps=2)
  optimizer = optimizer_class(schedule, clipnorm=clipnorm)
  optimizer.build(model.trainable_variables)
  rng = np.random.default_rng(1)
  ids = tf.constant(rng.integers(0, 7, size=(STEPS, 8, 3)), tf.int32)
  targets = tf.constant(rng.normal(size=(STEPS, 8, 2)), tf.float32)

  @tf.function
  def step(batch_ids, batch_targets):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(model(batch_ids) - batch_targets))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                  model.trainable_variables))

  for index in range(STEPS):
    step(ids[index], targets[index])
  ops = step.get_concrete_function(ids[0], targets[0]).graph.get_operations()
  return model.get_weights(), [op.type for op in ops], optimizer


def test_the_same_updates_as_keras_adam_with_one_fused_op_per_dense_variable():
  fused_weights, fused_ops, fused = _train(FusedAdam)
  keras_weights, keras_ops, _ = _train(keras.optimizers.Adam)
  for fused_weight, keras_weight, initial in zip(fused_weights, keras_weights,
                                                 _model().get_weights()):
    assert not np.allclose(fused_weight, initial, atol=1e-3)  # training moved it
    np.testing.assert_allclose(fused_weight, keras_weight, rtol=1e-5, atol=1e-6)
  # The embedding's rows (sparse) take Keras's update; the four dense variables one op.
  assert fused_ops.count('ResourceApplyAdam') == 4
  assert 'ResourceApplyAdam' not in keras_ops
  assert len(fused_ops) < len(keras_ops)
  assert int(fused.iterations) == STEPS
  # The clipping acted: without it the weights come out otherwise.
  unclipped, _, _ = _train(keras.optimizers.Adam, clipnorm=None)
  assert not np.allclose(unclipped[-1], keras_weights[-1], atol=1e-3)


def test_it_round_trips_through_keras_serialization():
  optimizer = FusedAdam(0.01, clipnorm=1.5)
  restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
  assert isinstance(restored, FusedAdam)
  assert restored.get_config()['clipnorm'] == 1.5
