"""Adam with one fused update op per variable, so the training step traces fast.

Keras's Adam builds each variable's update from about twenty ops: the step's bias
corrections again for every variable, then the moments and the variable one element-wise
op at a time. On the TFT's 287 variables that made 21,600 ops of the training step's graph,
and tracing them and Grappler's first pass over them took most of a run's first step. This
Adam computes the step's scalars once and updates each variable with TensorFlow's fused
Adam kernel (`ResourceApplyAdam`, which has CPU, GPU and XLA kernels, so TPUs too):

  m <- m + (g - m)(1 - beta_1),  v <- v + (g^2 - v)(1 - beta_2),
  w <- w - lr sqrt(1 - beta_2^t) / (1 - beta_1^t) m / (sqrt(v) + epsilon)

the rule Keras's Adam applies, to float rounding. Sparse gradients (an embedding's rows)
and AMSGrad keep Keras's update. `clipnorm` clips each gradient as Keras does, with the
dense gradients' norms computed together (Keras's `tf.clip_by_norm` per variable added ten
ops each). The learning-rate schedule, the slots and so checkpoints are Keras's.
"""

import tensorflow as tf
import tf_keras as keras


@keras.utils.register_keras_serializable(package='tft')
class FusedAdam(keras.optimizers.Adam):
  """`keras.optimizers.Adam` whose dense updates are one `ResourceApplyAdam` op each."""

  _step_scalars = None  # the current step's scalars while its updates are built

  def __init__(self, *args, **kwargs):
    # Keras compiles each variable's update with XLA on GPUs (`jit_compile`), in functions
    # traced once that would keep the first step's scalars; the fused kernel is one op
    # there already.
    super().__init__(*args, **{**kwargs, 'jit_compile': False})

  def _distributed_apply_gradients_fn(self, distribution, grads_and_vars, **kwargs):
    """Keras's per-variable updates, with the step's scalars computed once before them
    (the step count is the one Keras's update reads: `iterations` + 1)."""
    step = tf.cast(self.iterations + 1, tf.float32)
    self._step_scalars = {
        'lr': tf.cast(self.learning_rate, tf.float32),
        'beta1_power': tf.pow(tf.constant(self.beta_1, tf.float32), step),
        'beta2_power': tf.pow(tf.constant(self.beta_2, tf.float32), step),
        'beta1': tf.constant(self.beta_1, tf.float32),
        'beta2': tf.constant(self.beta_2, tf.float32),
        'epsilon': tf.constant(self.epsilon, tf.float32),
    }
    try:
      return super()._distributed_apply_gradients_fn(distribution, grads_and_vars, **kwargs)
    finally:
      self._step_scalars = None

  def _clip_gradients(self, grads):
    """Keras's per-variable `clipnorm` (g clipnorm / max(|g|, clipnorm)), with the dense
    gradients' norms computed as one vector; other clipping is Keras's."""
    if not self.clipnorm or self.clipnorm <= 0:
      return super()._clip_gradients(grads)
    clipped = [tf.clip_by_norm(grad, self.clipnorm) if isinstance(grad, tf.IndexedSlices)
               else grad for grad in grads]
    dense = [index for index, grad in enumerate(clipped)
             if grad is not None and not isinstance(grad, tf.IndexedSlices)]
    if dense:
      norms = tf.sqrt(tf.stack([tf.cast(tf.reduce_sum(tf.square(grads[index])), tf.float32)
                               for index in dense]))
      scales = tf.unstack(self.clipnorm / tf.maximum(norms, self.clipnorm))
      for index, scale in zip(dense, scales):
        clipped[index] = grads[index] * tf.cast(scale, grads[index].dtype)
    return clipped

  def update_step(self, gradient, variable):
    """Updates `variable` and its moments by `gradient` in one fused op when dense."""
    if (isinstance(gradient, tf.IndexedSlices) or self.amsgrad
        or self._step_scalars is None or variable.dtype != tf.float32):
      return super().update_step(gradient, variable)
    index = self._index_dict[self._var_key(variable)]
    return tf.raw_ops.ResourceApplyAdam(
        var=variable.handle, m=self._momentums[index].handle,
        v=self._velocities[index].handle, grad=gradient, **self._step_scalars)
