"""The TFX Evaluator, whose blessings name the pipeline that made them.

The last-blessed-model resolver must find this pipeline's blessings only, or another
pipeline in the same metadata store (another data set, a staging copy) becomes this
one's warm start and Evaluator baseline. Locally the resolver's channels are scoped to
the pipeline's context; the query that KubeflowV2DagRunner compiles for Vertex AI is not
(`schema_title="tfx.ModelBlessing" AND state=LIVE AND metadata.blessed...`). This
Evaluator writes the pipeline's name on each blessing as the custom property
`pipeline_name`, and `kubeflow.runner` adds it to the compiled query
(`blessing_query_scope`).
"""

from typing import Any, Dict, List

import tensorflow_model_analysis as tfma
from tfx import types
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ExecutionParameter
from tfx.utils import json_utils

PIPELINE_NAME_KEY = 'pipeline_name'


def blessing_query_scope(pipeline_name: str) -> str:
  """The filter term that keeps a Vertex metadata query to `pipeline_name`'s blessings."""
  return f'metadata.{PIPELINE_NAME_KEY}.string_value="{pipeline_name}"'


class ScopedEvaluatorSpec(standard_component_specs.EvaluatorSpec):
  PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                PIPELINE_NAME_KEY: ExecutionParameter(type=str)}


class Executor(evaluator_executor.Executor):
  """Evaluates as TFX does, then names the pipeline on the blessing."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    properties = dict(exec_properties)
    pipeline_name = properties.pop(PIPELINE_NAME_KEY)
    super().Do(input_dict, output_dict, properties)
    blessing = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.BLESSING_KEY])
    blessing.set_string_custom_property(PIPELINE_NAME_KEY, pipeline_name)


class ScopedEvaluator(base_beam_component.BaseBeamComponent):
  """`tfx.components.Evaluator` (TFMA on `examples`), with `pipeline_name` on its blessing.

  Outputs `evaluation` (ModelEvaluation) and `blessing` (ModelBlessing), as TFX's.
  """

  SPEC_CLASS = ScopedEvaluatorSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, pipeline_name: str, examples: types.BaseChannel,
               model: types.BaseChannel, baseline_model: types.BaseChannel,
               example_splits: List[str], eval_config: tfma.EvalConfig):
    super().__init__(spec=ScopedEvaluatorSpec(
        examples=examples, model=model, baseline_model=baseline_model,
        example_splits=json_utils.dumps(example_splits), eval_config=eval_config,
        evaluation=types.Channel(type=standard_artifacts.ModelEvaluation),
        blessing=types.Channel(type=standard_artifacts.ModelBlessing),
        **{PIPELINE_NAME_KEY: pipeline_name}))
