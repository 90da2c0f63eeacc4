"""TFX's Trainer, with the step budget as its own parameter so a schedule can set it.

TFX's Trainer takes the budget inside `train_args` (a proto), which a compiled Vertex AI
pipeline can only hold as a constant. This Trainer takes `train_steps` as a plain
parameter (an int, or a `RuntimeParameter` the Kubeflow V2 runner declares as a pipeline
input) and writes it into `train_args` before TFX's executor runs, in the pipeline's
step or, for training on Vertex AI, before the CustomJob is sent.
"""

from typing import Any, Dict, List, Union

from tfx import types
from tfx.components.trainer import executor as trainer_executor
from tfx.dsl.components.base import base_component, executor_spec
from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex_executor
from tfx.orchestration import data_types
from tfx.proto import trainer_pb2
from tfx.types import standard_artifacts, standard_component_specs
from tfx.types.component_spec import ExecutionParameter
from tfx.utils import json_utils, proto_utils

TRAIN_STEPS_KEY = 'train_steps'


class StepBudgetTrainerSpec(standard_component_specs.TrainerSpec):
  PARAMETERS = {**standard_component_specs.TrainerSpec.PARAMETERS,
                TRAIN_STEPS_KEY: ExecutionParameter(type=int)}


def with_train_steps(exec_properties: Dict[str, Any]) -> Dict[str, Any]:
  """TFX's Trainer properties: `train_steps` moved into `train_args.num_steps`."""
  properties = dict(exec_properties)
  steps = int(properties.pop(TRAIN_STEPS_KEY))
  if steps < 1:
    raise ValueError(f'train_steps must be at least 1, got {steps}')
  train_args = proto_utils.json_to_proto(
      properties[standard_component_specs.TRAIN_ARGS_KEY], trainer_pb2.TrainArgs())
  train_args.num_steps = steps
  properties[standard_component_specs.TRAIN_ARGS_KEY] = proto_utils.proto_to_json(train_args)
  return properties


class Executor(trainer_executor.GenericExecutor):
  """Trains in the pipeline's step (TFX's GenericExecutor: `run_fn`)."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    super().Do(input_dict, output_dict, with_train_steps(exec_properties))


class VertexExecutor(vertex_executor.GenericExecutor):
  """Sends the training to a Vertex AI CustomJob, which runs TFX's GenericExecutor."""

  def Do(self, input_dict, output_dict, exec_properties) -> None:
    super().Do(input_dict, output_dict, with_train_steps(exec_properties))


class StepBudgetTrainer(base_component.BaseComponent):
  """`tfx.components.Trainer` (or its Vertex AI extension) with `train_steps` apart."""

  SPEC_CLASS = StepBudgetTrainerSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)

  def __init__(self, run_fn: str, examples: types.BaseChannel,
               transform_graph: types.BaseChannel, base_model: types.BaseChannel,
               train_steps: Union[int, data_types.RuntimeParameter],
               train_splits: List[str], eval_splits: List[str],
               custom_config: Dict[str, Any], on_vertex: bool = False):
    """See `tfx.components.Trainer`; `on_vertex` trains in a Vertex AI CustomJob
    configured by `custom_config` (the keys of `tfx.v1.extensions.google_cloud_ai_platform`).
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
            **{TRAIN_STEPS_KEY: train_steps}),
        custom_executor_spec=(executor_spec.ExecutorClassSpec(VertexExecutor)
                              if on_vertex else None))
