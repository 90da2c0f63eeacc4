"""The TFX Evaluator, whose blessings name the pipeline that made them.

The last-blessed-model resolver must find this pipeline's blessings only, or another
pipeline in the same metadata store (another data set, a staging copy) becomes this
one's warm start and Evaluator baseline. Locally the resolver's channels are scoped to
the pipeline's context; the query that KubeflowV2DagRunner compiles for Vertex AI is not
(`schema_title="tfx.ModelBlessing" AND state=LIVE AND metadata.blessed...`). This
Evaluator writes the pipeline's name on each blessing as the custom property
`pipeline_name`, and `kubeflow.runner` adds it to the compiled query
(`pipeline_query_scope`).

It also leaves out a baseline that cannot read this run's evaluation windows (another
window shape, a column it reads gone or declared otherwise: `components.baseline_check`),
as for a first run: the blessing then rests on the data set's other rules, and records
why as the custom property `baseline_left_out`. TFX's Evaluator would stop.

Beyond TFMA's thresholds, a blessing rule may bound the model's MAE by that of the
LightGBM the run fits beside it (`beat_lightgbm_by`, read from `GbmBaseline`'s record on
the same windows); a model TFMA blessed that misses it is not blessed, and the blessing
says why (`behind_lightgbm`). Every blessing records which windows and which rules
decided it (`decided_by`).
"""

import dataclasses
import json
import logging
import os
from typing import Any, Dict, List, Optional

import tensorflow as tf
import tensorflow_model_analysis as tfma
from tfx import types
from tfx.components.evaluator import constants as evaluator_constants
from tfx.components.evaluator import executor as evaluator_executor
from tfx.dsl.components.base import base_beam_component, executor_spec
from tfx.types import artifact_utils, standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter, ExecutionParameter
from tfx.utils import io_utils, json_utils, path_utils

from components import baseline_check
from components.gbm_baseline import BaselineEvaluation, figures_on, read_result
from evaluation import results
from schema.dataset_file import Blessing
from schema.time_split import TEST_SPLIT

PIPELINE_NAME_KEY = 'pipeline_name'
RULES_KEY = 'blessing_rules'  # the data set's Blessing and the judged split, JSON
GBM_BASELINE_KEY = 'gbm_baseline'  # GbmBaseline's record, for `beat_lightgbm_by`
BASELINE_LEFT_OUT_KEY = 'baseline_left_out'  # on a blessing: why the baseline was not scored
BEHIND_LIGHTGBM_KEY = 'behind_lightgbm'  # on a blessing: how the model missed LightGBM's bar
DECIDED_BY_KEY = 'decided_by'  # on a blessing: the windows and the rules that decided it


def pipeline_query_scope(pipeline_name: str) -> str:
  """The filter term that keeps a Vertex metadata query to `pipeline_name`'s artifacts
  (its blessings, its forecasts: each names the pipeline as `PIPELINE_NAME_KEY`)."""
  return f'metadata.{PIPELINE_NAME_KEY}.string_value="{pipeline_name}"'


class ScopedEvaluatorSpec(standard_component_specs.EvaluatorSpec):
  PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                PIPELINE_NAME_KEY: ExecutionParameter(type=str),
                RULES_KEY: ExecutionParameter(type=str)}
  INPUTS = {**standard_component_specs.EvaluatorSpec.INPUTS,
            GBM_BASELINE_KEY: ChannelParameter(type=BaselineEvaluation, optional=True)}


def rules_json(blessing: Blessing, judged: str) -> str:
  """The `blessing_rules` parameter: the data set's rule and the split it is judged on."""
  return json.dumps({'judged_split': judged, 'blessing': dataclasses.asdict(blessing)})


def lightgbm_shortfall(model_mae: Optional[float], gbm_record: Optional[Dict[str, Any]],
                       judged: str, beat_by: float) -> Optional[str]:
  """How the model misses the bar of `beat_lightgbm_by` on the `judged` windows, or None
  when it meets it. A LightGBM that could not be fitted or scored misses it too: the bar
  cannot be checked."""
  gbm = figures_on(gbm_record, judged)
  if not gbm or model_mae is None:
    why = (gbm_record or {}).get('error') or f'it has no figures on the {judged} windows'
    return (f'beat_lightgbm_by is set, but LightGBM could not be scored ({why}), so the '
            'model cannot be compared with it')
  bound = (1.0 - beat_by) * gbm['mae']
  if model_mae <= bound:
    return None
  return Blessing.missed('beat_lightgbm_by', beat_by, judged,
                         f"{model_mae:.4g}, LightGBM's {gbm['mae']:.4g} on the same windows")


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
    rules = json.loads(properties.pop(RULES_KEY))
    gbm_artifacts = input_dict.get(GBM_BASELINE_KEY) or []
    input_dict = {key: artifacts for key, artifacts in input_dict.items()
                  if key != GBM_BASELINE_KEY}
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
    rule, judged = Blessing(**rules['blessing']), rules['judged_split']
    compared = bool(input_dict.get(standard_component_specs.BASELINE_MODEL_KEY))
    held_out = ' (held out: nothing chose on them)' if judged == TEST_SPLIT else ''
    blessing.set_string_custom_property(
        DECIDED_BY_KEY, f"the {judged} windows{held_out}: {'; '.join(rule.rules(compared))}")
    if rule.beat_lightgbm_by is not None:
      evaluation = artifact_utils.get_single_instance(
          output_dict[standard_component_specs.EVALUATION_KEY])
      model_mae = results.split_metrics(evaluation.uri).get(judged, {}).get(
          'mean_absolute_error')
      shortfall = lightgbm_shortfall(
          model_mae, read_result(gbm_artifacts[0].uri) if gbm_artifacts else None, judged,
          rule.beat_lightgbm_by)
      if shortfall:
        logging.warning('Evaluator: not blessed, since %s.', shortfall)
        blessing.set_string_custom_property(BEHIND_LIGHTGBM_KEY, shortfall)
        withdraw_blessing(blessing)


def withdraw_blessing(blessing: types.Artifact) -> None:
  """Marks `blessing` not blessed, as TFX's Evaluator marks one: its file and property."""
  blessed_file = os.path.join(blessing.uri, evaluator_constants.BLESSED_FILE_NAME)
  if tf.io.gfile.exists(blessed_file):
    tf.io.gfile.remove(blessed_file)
  io_utils.write_string_file(
      os.path.join(blessing.uri, evaluator_constants.NOT_BLESSED_FILE_NAME), '')
  blessing.set_int_custom_property(evaluator_constants.ARTIFACT_PROPERTY_BLESSED_KEY,
                                   evaluator_constants.NOT_BLESSED_VALUE)


class ScopedEvaluator(base_beam_component.BaseBeamComponent):
  """`tfx.components.Evaluator` (TFMA on `examples`), with `pipeline_name` on its blessing.

  Outputs `evaluation` (ModelEvaluation) and `blessing` (ModelBlessing), as TFX's.
  """

  SPEC_CLASS = ScopedEvaluatorSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, pipeline_name: str, examples: types.BaseChannel,
               model: types.BaseChannel, baseline_model: types.BaseChannel,
               example_splits: List[str], eval_config: tfma.EvalConfig,
               blessing_rules: str, gbm_baseline: Optional[types.BaseChannel] = None):
    """Args beyond TFX's Evaluator's: `pipeline_name` (written on the blessing),
    `blessing_rules` (`rules_json`) and `gbm_baseline`, GbmBaseline's output, which a
    rule with `beat_lightgbm_by` needs."""
    super().__init__(spec=ScopedEvaluatorSpec(
        examples=examples, model=model, baseline_model=baseline_model,
        example_splits=json_utils.dumps(example_splits), eval_config=eval_config,
        evaluation=types.Channel(type=standard_artifacts.ModelEvaluation),
        blessing=types.Channel(type=standard_artifacts.ModelBlessing),
        **{PIPELINE_NAME_KEY: pipeline_name, RULES_KEY: blessing_rules,
           GBM_BASELINE_KEY: gbm_baseline}))
