"""TFX's Trainer, with the step budget as its own parameter so a schedule can set it.

TFX's Trainer takes the budget inside `train_args` (a proto), which a compiled Vertex AI
pipeline can only hold as a constant. This Trainer takes `train_steps` as a plain
parameter (an int, or a `RuntimeParameter` the Kubeflow V2 runner declares as a pipeline
input) and writes it into `train_args` before TFX's executor runs, in the pipeline's
step or, for training on Vertex AI, before the CustomJob is sent.

As the refit (`trainer_module.refit`) it also takes the judged model, whose directory it
passes to `run_fn` in the custom_config, and the judged model's blessing: a model the
Evaluator did not bless is not worth refitting, so its output is then the judged model,
copied, and nothing trains.
"""

import logging
from typing import Any, Dict, List, Optional, Union

from tfx import types
from tfx.components.trainer import executor as trainer_executor
from tfx.dsl.components.base import base_component, executor_spec
from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_executor
from tfx.orchestration import data_types
from tfx.proto import trainer_pb2
from tfx.types import standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter, ExecutionParameter
from tfx.utils import io_utils, json_utils, path_utils, proto_utils

from trainer_module import refit

TRAIN_STEPS_KEY = 'train_steps'
JUDGED_MODEL_KEY = 'judged_model'
JUDGED_BLESSING_KEY = 'judged_blessing'


class StepBudgetTrainerSpec(standard_component_specs.TrainerSpec):
  PARAMETERS = {**standard_component_specs.TrainerSpec.PARAMETERS,
                TRAIN_STEPS_KEY: ExecutionParameter(type=int)}
  INPUTS = {**standard_component_specs.TrainerSpec.INPUTS,
            JUDGED_MODEL_KEY: ChannelParameter(type=standard_artifacts.Model, optional=True),
            JUDGED_BLESSING_KEY: ChannelParameter(type=standard_artifacts.ModelBlessing,
                                                  optional=True)}


def with_train_steps(exec_properties: Dict[str, Any],
                     input_dict: Dict[str, List[types.Artifact]]) -> Dict[str, Any]:
  """TFX's Trainer properties: `train_steps` moved into `train_args.num_steps`, and a
  refit's judged model named in the custom_config."""
  properties = dict(exec_properties)
  judged = input_dict.get(JUDGED_MODEL_KEY)
  if judged:
    custom_config = json_utils.loads(
        properties.get(standard_component_specs.CUSTOM_CONFIG_KEY) or 'null') or {}
    custom_config[refit.CONFIG_KEY] = path_utils.serving_model_path(judged[0].uri)
    properties[standard_component_specs.CUSTOM_CONFIG_KEY] = json_utils.dumps(custom_config)
  steps = int(properties.pop(TRAIN_STEPS_KEY))
  if steps < 1:
    raise ValueError(f'train_steps must be at least 1, got {steps}')
  train_args = proto_utils.json_to_proto(
      properties[standard_component_specs.TRAIN_ARGS_KEY], trainer_pb2.TrainArgs())
  train_args.num_steps = steps
  properties[standard_component_specs.TRAIN_ARGS_KEY] = proto_utils.proto_to_json(train_args)
  return properties


def copied_unblessed(input_dict: Dict[str, List[types.Artifact]],
                     output_dict: Dict[str, List[types.Artifact]]) -> bool:
  """For a refit of a model the Evaluator did not bless: copies the judged model to the
  output and returns True; else False (train)."""
  blessing = input_dict.get(JUDGED_BLESSING_KEY)
  if not blessing or blessing[0].get_int_custom_property('blessed'):
    return False
  judged = path_utils.serving_model_path(input_dict[JUDGED_MODEL_KEY][0].uri)
  output = path_utils.serving_model_path(output_dict[standard_component_specs.MODEL_KEY][0].uri)
  logging.info('Refit: the judged model was not blessed, so it is not refit; its copy %s '
               'is the output.', output)
  io_utils.copy_dir(judged, output)
  return True


class Executor(trainer_executor.GenericExecutor):
  """Trains in the pipeline's step (TFX's GenericExecutor: `run_fn`)."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    if not copied_unblessed(input_dict, output_dict):
      super().Do(input_dict, output_dict, with_train_steps(exec_properties, input_dict))


class VertexExecutor(vertex_executor.GenericExecutor):
  """Sends the training to a Vertex AI CustomJob, which runs TFX's GenericExecutor."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    if not copied_unblessed(input_dict, output_dict):
      super().Do(input_dict, output_dict, with_train_steps(exec_properties, input_dict))


class StepBudgetTrainer(base_component.BaseComponent):
  """`tfx.components.Trainer` (or its Vertex AI extension) with `train_steps` apart."""

  SPEC_CLASS = StepBudgetTrainerSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

  def __init__(self, run_fn: str, examples: types.BaseChannel,
               transform_graph: types.BaseChannel, base_model: types.BaseChannel,
               train_steps: Union[int, data_types.RuntimeParameter],
               train_splits: List[str], eval_splits: List[str],
               custom_config: Dict[str, Any], on_vertex: bool = False,
               judged_model: Optional[types.BaseChannel] = None,
               judged_blessing: Optional[types.BaseChannel] = None):
    """See `tfx.components.Trainer`; `on_vertex` trains in a Vertex AI CustomJob
    configured by `custom_config` (the keys of `tfx.v1.extensions.google_cloud_ai_platform`);
    `judged_model` makes it the refit of that model, trained if `judged_blessing` (the
    Evaluator's) blessed it.
    """
    super().__init__(
        spec=StepBudgetTrainerSpec(
            run_fn=run_fn, examples=examples, transform_graph=transform_graph,
            base_model=base_model,
            train_args=trainer_pb2.TrainArgs(splits=train_splits),
            eval_args=trainer_pb2.EvalArgs(splits=eval_splits),
            custom_config=json_utils.dumps(custom_config),
            model=types.Channel(type=standard_artifacts.Model),
            model_run=types.Channel(type=standard_artifacts.ModelRun),
            judged_model=judged_model, judged_blessing=judged_blessing,
            **{TRAIN_STEPS_KEY: train_steps}),
        custom_executor_spec=(executor_spec.ExecutorClassSpec(VertexExecutor)
                              if on_vertex else None))
