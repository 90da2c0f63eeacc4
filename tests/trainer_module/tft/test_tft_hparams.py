"""Tests for the TFT hyperparameters, presets and input layout."""

import dataclasses

import pytest

from schema import hparams
from trainer_module.tft.inputs import InputLayout


def test_electricity_preset_matches_the_paper():
  config = hparams.from_name('electricity')
  assert (config.hidden_size, config.dropout, config.num_heads) == (160, 0.1, 4)
  assert (config.learning_rate, config.batch_size, config.clipnorm) == (
      1e-3, 64, 0.01)
  assert config.quantiles == (0.1, 0.5, 0.9)
  assert hparams.PAPER_WINDOWS['electricity'] == (168, 24)


def test_every_paper_preset_has_its_window():
  assert set(hparams.PRESETS) - {'local'} == set(hparams.PAPER_WINDOWS)


def test_local_default_is_small():
  config = hparams.TFTConfig()
  assert hparams.from_name('local') == config
  assert (config.hidden_size, config.num_heads) == (16, 2)
  assert config.jit_compile is False


def test_unknown_preset_lists_valid_names():
  with pytest.raises(ValueError, match="electricity.*retail"):
    hparams.from_name('electricty')


def test_derived_sizes_follow_fields():
  config = hparams.TFTConfig(hidden_size=160, num_heads=4,
                             quantiles=[0.2, 0.8])
  assert config.head_size == 40
  assert config.quantile_count == 2
  assert config.quantiles == (0.2, 0.8)


def test_config_is_frozen():
  with pytest.raises(dataclasses.FrozenInstanceError):
    hparams.TFTConfig().hidden_size = 8


@pytest.mark.parametrize('overrides, message', [
    ({'hidden_size': 10, 'num_heads': 4}, 'multiple of num_heads'),
    ({'quantiles': (0.9, 0.5)}, 'strictly increasing'),
    ({'quantiles': (0.0, 0.5)}, r'within \(0, 1\)'),
    ({'dropout': 1.0}, 'dropout'),
    ({'learning_rate': 0.0}, 'learning_rate'),
    ({'target_location': 'median'}, 'target_location'),
    ({'point_loss': 'huber'}, 'point_loss'),
    ({'point_loss': 'squared', 'quantiles': (0.1, 0.9)}, 'add 0.5'),
    ({'ensemble_size': 0}, 'ensemble_size'),
    ({'ensemble_size': 2.0}, 'ensemble_size'),
    ({'seasonal_lag': -1}, 'seasonal_lag must be an integer >= 0'),
    ({'seasonal_lag': True}, 'seasonal_lag must be an integer >= 0'),
])
def test_invalid_config_is_rejected(overrides, message):
  with pytest.raises(ValueError, match=message):
    hparams.TFTConfig(**overrides)


def test_layout_counts_variables_per_group():
  layout = InputLayout(encoder_steps=12, horizon=4, static_cardinalities=[5, 3],
                       static_real_count=1, known_cardinalities=[24, 7],
                       known_real_count=2, observed_real_count=3)
  assert layout.static_cardinalities == (5, 3)
  assert layout.total_steps == 16
  assert layout.static_variable_count == 3
  assert layout.future_variable_count == 4
  assert layout.history_variable_count == 1 + 3 + 4


@pytest.mark.parametrize('overrides, message', [
    ({'static_cardinalities': ()}, 'series id'),
    ({'known_cardinalities': (0,)}, 'cardinality'),
    ({'horizon': 0}, 'at least 1'),
    ({'observed_real_count': -1}, 'observed_real_count'),
])
def test_invalid_layout_is_rejected(overrides, message):
  fields = dict(encoder_steps=12, horizon=4, static_cardinalities=(1,),
                static_real_count=0, known_cardinalities=(),
                known_real_count=0, observed_real_count=0)
  with pytest.raises(ValueError, match=message):
    InputLayout(**{**fields, **overrides})
