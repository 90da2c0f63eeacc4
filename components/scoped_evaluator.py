"""The TFX Evaluator, whose blessings name the pipeline that made them.

The last-blessed-model resolver must find this pipeline's blessings only, or another
pipeline in the same metadata store (another data set, a staging copy) becomes this
one's warm start and Evaluator baseline. Locally the resolver's channels are scoped to
the pipeline's context; the query that KubeflowV2DagRunner compiles for Vertex AI is not
(`schema_title="tfx.ModelBlessing" AND state=LIVE AND metadata.blessed...`). This
Evaluator writes the pipeline's name on each blessing as the custom property
`pipeline_name`, and `kubeflow.runner` adds it to the compiled query
(`blessing_query_scope`).

It also leaves out a baseline that cannot read this run's evaluation windows (another
window shape, a column it reads gone or declared otherwise: `components.baseline_check`),
as for a first run: the blessing then rests on the data set's other rules, and records
why as the custom property `baseline_left_out`. TFX's Evaluator would stop.
"""

import logging

from typing import Any, Dict, List, Optional

import tensorflow_model_analysis as tfma
from tfx import types
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ExecutionParameter
from tfx.utils import json_utils, path_utils

from components import baseline_check

PIPELINE_NAME_KEY = 'pipeline_name'
BASELINE_LEFT_OUT_KEY = 'baseline_left_out'  # on a blessing: why the baseline was not scored


def blessing_query_scope(pipeline_name: str) -> str:
  """The filter term that keeps a Vertex metadata query to `pipeline_name`'s blessings."""
  return f'metadata.{PIPELINE_NAME_KEY}.string_value="{pipeline_name}"'


class ScopedEvaluatorSpec(standard_component_specs.EvaluatorSpec):
  PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                PIPELINE_NAME_KEY: ExecutionParameter(type=str)}


def baseline_left_out(input_dict: Dict[str, List[types.Artifact]]) -> Optional[str]:
  """Why the baseline model in `input_dict` cannot score the candidate's windows; None
  if it can, or if there is none."""
  baselines = input_dict.get(standard_component_specs.BASELINE_MODEL_KEY)
  candidates = input_dict.get(standard_component_specs.MODEL_KEY)
  if not baselines or len(baselines) != 1 or not candidates or len(candidates) != 1:
    return None  # none to leave out, or TFX's Evaluator refuses the inputs
  [candidate], [baseline] = candidates, baselines
  return baseline_check.incompatibility(path_utils.serving_model_path(candidate.uri),
                                        path_utils.serving_model_path(baseline.uri))


class Executor(evaluator_executor.Executor):
  """Evaluates as TFX does, without a baseline that cannot read the windows, then names
  the pipeline (and any baseline left out) on the blessing."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    properties = dict(exec_properties)
    pipeline_name = properties.pop(PIPELINE_NAME_KEY)
    left_out = baseline_left_out(input_dict)
    if left_out:
      logging.warning('Evaluator: the last blessed model is not compared with the candidate, '
                      'since %s; the blessing rests on the other rules.', left_out)
      input_dict = {key: artifacts for key, artifacts in input_dict.items()
                    if key != standard_component_specs.BASELINE_MODEL_KEY}
    super().Do(input_dict, output_dict, properties)
    blessing = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.BLESSING_KEY])
    blessing.set_string_custom_property(PIPELINE_NAME_KEY, pipeline_name)
    if left_out:
      blessing.set_string_custom_property(BASELINE_LEFT_OUT_KEY, left_out)


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
