"""The Trainer's step budget as its own parameter: what reaches TFX's executors."""

import json

import pytest
from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_trainer
from tfx.proto import trainer_pb2
from tfx.utils import proto_utils

from components import step_budget_trainer

TRAIN_ARGS = proto_utils.proto_to_json(trainer_pb2.TrainArgs(splits=['train']))


def test_the_budget_moves_into_train_args():
  properties = step_budget_trainer.with_train_steps(
      {'train_steps': 250, 'train_args': TRAIN_ARGS, 'custom_config': '{}'})
  assert 'train_steps' not in properties
  assert json.loads(properties['train_args']) == {'splits': ['train'], 'num_steps': 250}
  assert properties['custom_config'] == '{}'


def test_a_budget_below_one_step_is_refused():
  with pytest.raises(ValueError, match='train_steps must be at least 1, got 0'):
    step_budget_trainer.with_train_steps({'train_steps': 0, 'train_args': TRAIN_ARGS})


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
