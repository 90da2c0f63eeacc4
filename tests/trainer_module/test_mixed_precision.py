"""run_fn in bfloat16 (the TPU's type) against float32 on the same tiny data and seed.

Two seeded runs of the same budget, one in each precision, and a third in bfloat16
warm-started from the float32 run's export: it trains as well, exports a model that
takes and returns float32, and warm-starts across the two policies.
"""

import types

import numpy as np
import pytest
import tensorflow as tf

from trainer_module import train
from trainer_module.export import EVAL_SIGNATURE, quantile_key

pytestmark = pytest.mark.slow(seconds=90)  # trains models

STEPS, EPOCHS, SEED = 60, 3, 5


def _run(tiny, kit, directory, precision, base_model=None):
  fn_args = kit.make_fn_args(
      tiny, str(directory), train_steps=STEPS,
      overrides={'precision': precision, 'max_epochs': EPOCHS},
      training={'seed': SEED}, base_model=base_model)
  recorder = kit.Recorder()
  train.run_fn(fn_args, callbacks=[recorder])
  return types.SimpleNamespace(fn_args=fn_args, recorder=recorder)


@pytest.fixture(scope='module')
def runs(tiny, kit, tmp_path_factory):
  root = tmp_path_factory.mktemp('precision')
  float32 = _run(tiny, kit, root / 'float32', 'float32')
  bfloat16 = _run(tiny, kit, root / 'bfloat16', 'mixed_bfloat16')
  warm = _run(tiny, kit, root / 'warm', 'mixed_bfloat16',
              base_model=float32.fn_args.serving_model_dir)
  return types.SimpleNamespace(float32=float32, bfloat16=bfloat16, warm=warm)


def test_bfloat16_trains_to_the_float32_eval_loss(runs):
  assert runs.bfloat16.recorder.model.history_vsn.compute_dtype == 'bfloat16'
  assert runs.float32.recorder.model.history_vsn.compute_dtype == 'float32'
  best = {name: min(getattr(runs, name).recorder.val_losses)
          for name in ('float32', 'bfloat16')}
  assert best['bfloat16'] == pytest.approx(best['float32'], rel=0.05), best


def test_the_bfloat16_export_takes_and_returns_float32(runs, tiny):
  model = tf.saved_model.load(runs.bfloat16.fn_args.serving_model_dir)
  signature = model.signatures[EVAL_SIGNATURE]
  outputs = signature(examples=tf.constant(tiny.eval_windows[:4]))
  forecasts = outputs[quantile_key(0.5)]
  assert forecasts.dtype == tf.float32 and np.all(np.isfinite(forecasts.numpy()))
  float32 = tf.saved_model.load(runs.float32.fn_args.serving_model_dir).signatures[
      EVAL_SIGNATURE](examples=tf.constant(tiny.eval_windows[:4]))[quantile_key(0.5)]
  # Same data, seed and budget: forecasts of the same order, not bit for bit.
  np.testing.assert_allclose(forecasts.numpy(), float32.numpy(),
                             rtol=0.2, atol=0.2 * float(np.abs(float32.numpy()).mean()))


def test_a_bfloat16_model_warm_starts_from_a_float32_one(runs):
  base = runs.float32.recorder.model.get_weights()
  started_from = runs.warm.recorder.initial_weights
  assert len(started_from) == len(base)
  for got, want in zip(started_from, base):
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
