"""Compiles the pipeline for Vertex AI Pipelines / Kubeflow with KubeflowV2DagRunner.

The Kubeflow counterpart of `pipeline.local_runner`: it supplies paths, the image and
Beam arguments, and no metadata connection (the orchestrator owns the metadata store);
the pipeline itself is `pipeline.pipeline.create_pipeline`. Compiling is offline: the
pipeline names its functions by dotted path, which the image resolves from the
installed project, so nothing is uploaded.
"""

import json
import os
from typing import Any, Dict

from kubeflow.deployment import DeploymentConfig


def make_pipeline_config(deployment: DeploymentConfig):
  """The `PipelineConfig` for `deployment`, built as the local runner builds its own."""
  from components.vertex_pusher import ModelVersions  # imports TensorFlow
  from pipeline import config as pipeline_config

  training = deployment.training
  endpoint = deployment.endpoint
  return pipeline_config.from_dataset(
      deployment.data_set,
      pipeline_name=deployment.name,
      pipeline_root=deployment.pipeline_root,
      data_root=deployment.data_root,
      serving_model_dir=deployment.model_dir,
      schema_file=deployment.schema_path,
      model_preset=deployment.model_preset,
      train_steps=deployment.train_steps,
      training_options=dict(deployment.training_options),
      input_pattern=deployment.input_pattern,
      train_spans=deployment.train_spans,
      future_file=deployment.future_file,
      refit=deployment.refit,
      vertex_training=None if training is None else pipeline_config.VertexTraining(
          project=deployment.project, region=deployment.region,
          image=deployment.training_image,
          machine_spec=training.machine_spec(), distribution=training.hardware,
          service_account=deployment.service_account, replicas=training.replicas),
      vertex_serving=None if endpoint is None else ModelVersions(
          project=deployment.project, region=deployment.region, model_name=deployment.name,
          endpoint_name=endpoint.name, serving_image=endpoint.serving_image,
          machine_type=endpoint.machine_type, keep_deployed=endpoint.keep_deployed))


def compile_pipeline(deployment: DeploymentConfig, output_path: str,
                     config=None) -> Dict[str, Any]:
  """Writes the PipelineJob JSON for `deployment` (its `make_pipeline_config`, unless
  `config` gives it) to `output_path` and returns it."""
  from pipeline.pipeline import create_pipeline  # slow imports after argument parsing

  config = config or make_pipeline_config(deployment)
  pipeline_job = _compiled(deployment, config, create_pipeline(
      config, metadata_connection_config=None,
      beam_pipeline_args=deployment.beam_pipeline_args(), runtime_parameters=True,
      for_kubeflow_v2=True))
  scope_resolver_queries(pipeline_job, deployment.name)
  _write(pipeline_job, output_path)
  return pipeline_job


def compile_backtest(deployment: DeploymentConfig, output_path: str, config,
                     origins) -> Dict[str, Any]:
  """Writes the PipelineJob JSON of a backtest of `config` at `origins`
  (`pipeline.backtest.plan`'s), each origin a branch of its own
  (`pipeline.pipeline.create_backtest_pipeline`), to `output_path` and returns it."""
  from pipeline.pipeline import create_backtest_pipeline

  pipeline_job = _compiled(deployment, config, create_backtest_pipeline(
      config, origins, beam_pipeline_args=deployment.beam_pipeline_args(),
      runtime_parameters=True))
  _write(pipeline_job, output_path)
  return pipeline_job


def _compiled(deployment: DeploymentConfig, config, pipeline) -> Dict[str, Any]:
  """`pipeline` compiled by the Kubeflow V2 runner into a PipelineJob."""
  from tfx import v1 as tfx
  from pipeline.pipeline import RUNTIME_PARAMETERS

  runner = tfx.orchestration.experimental.KubeflowV2DagRunner(
      config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(
          default_image=deployment.image))
  # The parameters' values unless a run or schedule sets them (the compiled spec has no
  # defaults of its own).
  return runner.run(pipeline, parameter_values={name: getattr(config, name)
                                                for name in RUNTIME_PARAMETERS},
                    write_out=False)


def _write(pipeline_job: Dict[str, Any], output_path: str) -> None:
  os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
  with open(output_path, 'w') as f:
    json.dump(pipeline_job, f, sort_keys=True)


def scope_resolver_queries(pipeline_job: Dict[str, Any], pipeline_name: str) -> None:
  """Keeps the compiled queries for the last blessed model and the last forecasts to this
  pipeline's artifacts.

  KubeflowV2DagRunner compiles each over every live artifact of its schema in the project
  and region (`schema_title="tfx.ModelBlessing" AND state=LIVE ...`; a custom type such as
  the forecasts is compiled as any `tfx.Artifact`). `ScopedEvaluator` names the pipeline on
  each blessing, ForecastGen on its forecasts under a key of their own, and this adds that
  name to each query's filter, in place.
  """
  from components.forecast_gen import forecasts_query_scope
  from components.scoped_evaluator import pipeline_query_scope

  executors = pipeline_job['pipelineSpec']['deploymentSpec']['executors'].values()
  queries = [(output, query) for executor in executors
             for output, query in executor.get('resolver', {}).get(
                 'outputArtifactQueries', {}).items()]
  scopes = {('model_blessing', 'tfx.ModelBlessing'): pipeline_query_scope(pipeline_name),
            ('forecasts', 'tfx.Artifact'): forecasts_query_scope(pipeline_name)}
  for (output, title), scope in scopes.items():
    found = [query for name, query in queries
             if name == output and f'schema_title="{title}"' in query['filter']]
    if len(found) != 1:
      raise RuntimeError(f"expected one compiled query for '{output}' ({title}) to scope to "
                         f'the pipeline, found {len(found)}: has the TFX compiler changed?')
    found[0]['filter'] += f' AND {scope}'
