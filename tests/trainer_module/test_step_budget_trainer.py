"""The Trainer's step budget as its own parameter: what reaches TFX's executors."""

import json

import pytest
from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_trainer
from tfx.proto import trainer_pb2
from tfx.types import standard_artifacts
from tfx.utils import proto_utils

from components import step_budget_trainer

TRAIN_ARGS = proto_utils.proto_to_json(trainer_pb2.TrainArgs(splits=['train']))


def test_the_budget_moves_into_train_args():
  properties = step_budget_trainer.with_train_steps(
      {'train_steps': 250, 'train_args': TRAIN_ARGS, 'custom_config': '{}'}, {})
  assert 'train_steps' not in properties
  assert json.loads(properties['train_args']) == {'splits': ['train'], 'num_steps': 250}
  assert properties['custom_config'] == '{}'


def test_a_budget_below_one_step_is_refused():
  with pytest.raises(ValueError, match='train_steps must be at least 1, got 0'):
    step_budget_trainer.with_train_steps({'train_steps': 0, 'train_args': TRAIN_ARGS}, {})


def test_the_vertex_job_is_sent_the_budget(monkeypatch):
  """The CustomJob runs TFX's GenericExecutor on the properties sent: num_steps is there."""
  sent = {}

  def start_cloud_training(input_dict, output_dict, exec_properties, executor_class_path,
                           job_args, *rest):
    sent.update(exec_properties=exec_properties, executor=executor_class_path, args=job_args)

  monkeypatch.setattr(vertex_trainer.runner, 'start_cloud_training', start_cloud_training)
  custom_config = {'ai_platform_training_args': {'project': 'p'},
                   'ai_platform_enable_vertex': True}
  step_budget_trainer.VertexExecutor().Do({}, {}, {
      'train_steps': 400, 'train_args': TRAIN_ARGS,
      'custom_config': json.dumps(custom_config)})
  assert json.loads(sent['exec_properties']['train_args'])['num_steps'] == 400
  assert 'train_steps' not in sent['exec_properties']
  assert sent['executor'] == 'tfx.components.trainer.executor.GenericExecutor'
  assert sent['args'] == {'project': 'p'}


def _artifact(kind, uri, blessed=None):
  artifact = kind()
  artifact.uri = str(uri)
  if blessed is not None:
    artifact.set_int_custom_property('blessed', int(blessed))
  return artifact


def test_a_refit_is_told_the_judged_models_directory():
  judged = _artifact(standard_artifacts.Model, '/runs/Trainer/model/7')
  properties = step_budget_trainer.with_train_steps(
      {'train_steps': 5, 'train_args': TRAIN_ARGS, 'custom_config': '{"a": 1}'},
      {'judged_model': [judged]})
  assert json.loads(properties['custom_config']) == {
      'a': 1, 'refit_of': '/runs/Trainer/model/7/Format-Serving'}


def test_a_refit_of_an_unblessed_model_copies_it_and_trains_nothing(tmp_path):
  judged_dir = tmp_path / 'judged' / 'Format-Serving'
  (judged_dir / 'assets.extra').mkdir(parents=True)
  (judged_dir / 'assets.extra' / 'training_record.json').write_text('[]')
  inputs = {'judged_model': [_artifact(standard_artifacts.Model, tmp_path / 'judged')]}
  outputs = {'model': [_artifact(standard_artifacts.Model, tmp_path / 'out')]}
  blessed = {**inputs, 'judged_blessing': [
      _artifact(standard_artifacts.ModelBlessing, tmp_path / 'b', blessed=True)]}
  assert not step_budget_trainer.copied_unblessed(blessed, outputs)
  assert not (tmp_path / 'out').exists()
  unblessed = {**inputs, 'judged_blessing': [
      _artifact(standard_artifacts.ModelBlessing, tmp_path / 'b', blessed=False)]}
  assert step_budget_trainer.copied_unblessed(unblessed, outputs)
  assert (tmp_path / 'out' / 'Format-Serving' / 'assets.extra' /
          'training_record.json').read_text() == '[]'
  assert not step_budget_trainer.copied_unblessed({}, outputs)  # no refit: train
