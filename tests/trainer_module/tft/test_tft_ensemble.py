"""The ensemble of TFTs: it serves the mean of its members' outputs."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from schema.hparams import TFTConfig
from trainer_module.tft.ensemble import TFTEnsemble
from trainer_module.tft.inputs import input_signature
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model

LAYOUT = InputLayout(encoder_steps=12, horizon=4, static_cardinalities=(3,),
                     static_real_count=0, known_cardinalities=(24,), known_real_count=1,
                     observed_real_count=1)
CONFIG = TFTConfig(hidden_size=8, num_heads=2)


def _inputs(batch=5):
  rng = np.random.default_rng(0)
  inputs = {}
  for key, spec in input_signature(LAYOUT, batch).items():
    if spec.dtype.is_integer:
      inputs[key] = rng.integers(0, 3, size=spec.shape).astype(np.int32)
    else:
      inputs[key] = (20.0 + 5.0 * rng.normal(size=spec.shape)).astype(np.float32)
  return inputs


def test_ensemble_outputs_are_the_mean_of_its_members():
  members = [build_tft_model(LAYOUT, CONFIG, name=f'member_{i}') for i in range(3)]
  ensemble = TFTEnsemble(members)
  inputs = _inputs()

  outputs = ensemble(inputs, training=False)
  member_outputs = [member(inputs, training=False) for member in members]

  assert set(outputs) == set(member_outputs[0])
  for key, value in outputs.items():
    np.testing.assert_allclose(
        value, np.mean([output[key] for output in member_outputs], axis=0), rtol=1e-5,
        atol=1e-6, err_msg=key)
  # Differently initialised members forecast differently: the mean is not any one of them.
  assert not np.allclose(member_outputs[0]['quantiles'], member_outputs[1]['quantiles'])
  np.testing.assert_allclose(tf.reduce_sum(outputs['history_weights'], -1), 1.0, rtol=1e-5)


@pytest.mark.parametrize('names', [['member_0'], ['member_0', 'member_0']])
def test_an_ensemble_needs_several_distinctly_named_members(names):
  members = [build_tft_model(LAYOUT, CONFIG, name=name) for name in names]
  with pytest.raises(ValueError, match='at least 2 members with distinct names'):
    TFTEnsemble(members)


def test_an_ensembles_members_share_one_config():
  members = [build_tft_model(LAYOUT, CONFIG, name='member_0'),
             build_tft_model(LAYOUT, dataclasses.replace(CONFIG, dropout=0.2),
                             name='member_1')]
  with pytest.raises(ValueError, match="must share one TFTConfig"):
    TFTEnsemble(members)
  assert TFTEnsemble(members[:1] + [build_tft_model(LAYOUT, CONFIG, name='member_2')]
                     ).config == CONFIG


def test_an_ensemble_serves_the_mean_of_the_members_it_keeps():
  members = [build_tft_model(LAYOUT, CONFIG, name=f'member_{i}') for i in range(3)]
  ensemble = TFTEnsemble(members)
  inputs = _inputs()
  member_forecasts = [member(inputs, training=False)['quantiles'] for member in members]

  ensemble.keep([1])
  np.testing.assert_allclose(ensemble(inputs, training=False)['quantiles'],
                             member_forecasts[1], rtol=1e-6)
  ensemble.keep([0, 2])
  np.testing.assert_allclose(ensemble(inputs, training=False)['quantiles'],
                             np.mean([member_forecasts[0], member_forecasts[2]], axis=0),
                             rtol=1e-5, atol=1e-6)
  with pytest.raises(ValueError, match=r'members to keep must be some of 0..2, got \[3\]'):
    ensemble.keep([3])
  # Not a member's weight: the warm-start checkpoint of the members' layers leaves it out.
  assert ensemble.member_weights.name.startswith('member_weights')
  assert all('member_weights' not in weight.name for member in members
             for weight in member.weights)
