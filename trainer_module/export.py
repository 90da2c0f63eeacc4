"""Saving the trained model with its serving signature.

`serving_default` takes a batch of serialized window examples (the layout of
`schema.window_layout`) and returns one [B, H] forecast per quantile, in original units,
keyed by `quantile_key` ('p10', 'p50', 'p90' for the default quantiles). The Evaluator
(TFMA) calls this signature.
"""

from typing import Sequence

import tensorflow as tf
import tf_keras as keras

from schema.dataset_spec import DatasetSpec
from trainer_module.window_inputs import QUANTILES_OUTPUT, parse_windows

SERVING_SIGNATURE = 'serving_default'
EXAMPLES_INPUT = 'examples'


def quantile_key(quantile: float) -> str:
  """The serving output name of a quantile: 0.5 -> 'p50', 0.025 -> 'p2_5'."""
  return 'p' + f'{quantile * 100:g}'.replace('.', '_')


def make_serving_fn(model: keras.Model, spec: DatasetSpec, quantiles: Sequence[float]):
  """The `serving_default` function over serialized window examples."""

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=EXAMPLES_INPUT)])
  def serve(serialized):
    inputs, _ = parse_windows(serialized, spec)
    forecast = model(inputs, training=False)[QUANTILES_OUTPUT]
    return {quantile_key(q): forecast[:, :, i] for i, q in enumerate(quantiles)}

  return serve


def save_model(model: keras.Model, spec: DatasetSpec, quantiles: Sequence[float],
               path: str) -> None:
  serve = make_serving_fn(model, spec, quantiles)
  tf.saved_model.save(model, path, signatures={SERVING_SIGNATURE: serve})
