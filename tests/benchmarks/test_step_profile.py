"""The step profile's bound: per-variable GRNs reduced to their matmuls, biases and sum."""

import numpy as np
import tensorflow as tf

from benchmarks import step_profile
from trainer_module.tft.grn import GatedResidualNetwork

_UNITS = 4


def _grn(name):
  grn = GatedResidualNetwork(_UNITS, dropout_rate=0.5, name=name)
  grn(tf.zeros([1, _UNITS]))
  return grn


def _projections():
  rng = np.random.default_rng(0)
  return [tf.constant(rng.normal(size=(3, _UNITS)), tf.float32) for _ in range(2)]


def test_matmuls_only_keeps_a_variable_grns_matmuls_and_drops_its_element_wise_work():
  variable_grn, selection_grn = _grn('variable_grn_0'), _grn('selection_grn')
  hidden, skip = _projections()
  as_built = [grn.from_projections(hidden, skip) for grn in (variable_grn, selection_grn)]

  with step_profile.variable_grns_as_matmuls_only():
    # Dropout would be active; the bound leaves it out.
    bound = [variable_grn.from_projections(hidden, skip, training=True),
             selection_grn.from_projections(hidden, skip)]

  gate = variable_grn.gate_add_norm.gate
  output = (hidden.numpy() @ variable_grn.output_dense.kernel.numpy()
            + variable_grn.output_dense.bias.numpy())
  expected = (skip.numpy() + output @ gate.values_dense.kernel.numpy()
              + gate.values_dense.bias.numpy() + output @ gate.gates_dense.kernel.numpy()
              + gate.gates_dense.bias.numpy())
  np.testing.assert_allclose(bound[0].numpy(), expected, rtol=1e-5, atol=1e-5)
  assert not np.allclose(bound[0].numpy(), as_built[0].numpy(), atol=1e-3)
  # Other GRNs run as built, and so does every GRN once the context has closed.
  np.testing.assert_allclose(bound[1].numpy(), as_built[1].numpy())
  np.testing.assert_allclose(variable_grn.from_projections(hidden, skip).numpy(),
                             as_built[0].numpy())
