"""Each data set's own model settings: valid TFTConfig fields, applied by both runners."""

import dataclasses

import pytest

from kubeflow import runner as kubeflow_runner
from pipeline import local_runner
from schema import datasets
from tests.kubeflow.conftest import make_deployment
from trainer_module import hparams


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_dataset_model_settings_are_tft_config_fields(name):
  overrides = datasets.get_dataset(name).model_overrides
  # An unknown field raises TypeError, an invalid value ValueError.
  config = dataclasses.replace(hparams.TFTConfig(), **overrides)
  assert {field: getattr(config, field) for field in overrides} == dict(overrides)


def _local_model_config(argv):
  args = local_runner.parse_args(argv)
  dataset = datasets.get_dataset(args.dataset)
  config = local_runner._pipeline_config(  # pylint: disable=protected-access
      args, 'tft-test', '/tmp/out', '/tmp/out/data', dataset.spec, dataset)
  return config.model_config


def test_the_local_runner_centres_etth1_on_the_last_value():
  assert _local_model_config(['--dataset', 'etth1']).target_location == 'last'
  assert _local_model_config(['--dataset', 'etth1_univariate']).target_location == 'last'
  # The settings apply over any preset; other data sets keep the preset's.
  electricity = _local_model_config(['--dataset', 'etth1', '--preset', 'electricity'])
  assert (electricity.target_location, electricity.hidden_size) == ('last', 160)
  assert _local_model_config(['--dataset', 'synthetic']).target_location == 'mean'


def test_the_compiled_pipeline_passes_the_dataset_settings_to_the_trainer():
  config = kubeflow_runner.make_pipeline_config(make_deployment(dataset='etth1'))
  overrides = config.trainer_custom_config()['model_config']['overrides']
  assert overrides['target_location'] == 'last'
  assert overrides['point_loss'] == 'squared'
