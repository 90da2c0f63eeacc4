"""Schedules the compiled pipeline on a self-hosted Kubeflow Pipelines as a recurring run.

The KFP client (kfp 2.x, API v2beta1) takes a pipeline package: a YAML file holding the
bare PipelineSpec, whereas the compile command writes a Vertex PipelineJob (the spec
plus a runtime config). `write_package` extracts the spec; the pipeline root travels in
the recurring run's runtime config.
"""

import os
import tempfile
from typing import Any, List, Mapping, Optional

import kfp
from kfp.client.client import RunPipelineResult
from kfp_server_api import V2beta1RecurringRun
import yaml

from kubeflow.cron import Cron
from kubeflow.pipeline_job import read_pipeline_job


def connect(host: str, namespace: Optional[str] = None,
            existing_token: Optional[str] = None) -> kfp.Client:
  """A KFP client of the API server at `host` ('http://localhost:8080' when port-forwarded)."""
  # 'kubeflow' is the client's own default: the single-user namespace.
  return kfp.Client(host=host, namespace=namespace or 'kubeflow',
                    existing_token=existing_token)


def write_package(pipeline_job: Mapping[str, Any], path: str) -> str:
  """Writes the PipelineSpec of a compiled PipelineJob as a KFP package (.yaml)."""
  if not path.endswith(('.yaml', '.yml')):
    raise ValueError(f'a KFP pipeline package must end in .yaml, got {path}')
  with open(path, 'w') as f:
    yaml.safe_dump(pipeline_job['pipelineSpec'], f, sort_keys=True)
  return path


def submit_run(client: kfp.Client, template_path: str, name: str, experiment: str,
               enable_caching: Optional[bool] = None,
               parameter_values: Optional[Mapping[str, Any]] = None,
               service_account: Optional[str] = None) -> RunPipelineResult:
  """Starts one KFP run of the compiled pipeline (see `create_recurring_run` for the args)."""
  pipeline_job = read_pipeline_job(template_path)
  with tempfile.TemporaryDirectory() as directory:
    package = write_package(pipeline_job, os.path.join(directory, 'pipeline.yaml'))
    return client.create_run_from_pipeline_package(
        package, arguments=dict(parameter_values or {}), run_name=name,
        experiment_name=experiment, pipeline_root=_pipeline_root(pipeline_job),
        enable_caching=enable_caching, service_account=service_account)


def create_recurring_run(client: kfp.Client, template_path: str, cron: Cron, name: str,
                         experiment: str, start_time: Optional[str] = None,
                         end_time: Optional[str] = None, max_concurrency: int = 1,
                         enable_caching: Optional[bool] = None,
                         parameter_values: Optional[Mapping[str, Any]] = None,
                         service_account: Optional[str] = None,
                         no_catchup: bool = True) -> V2beta1RecurringRun:
  """Creates a KFP recurring run of the compiled pipeline at every `cron` time.

  Args:
    client: from `connect`.
    template_path: the PipelineJob JSON written by the compile command.
    cron: when; it must have no time zone (see `kubeflow.cron`).
    name: the recurring run's display name.
    experiment: the KFP experiment to file runs under; created when missing.
    start_time, end_time: RFC 3339 bounds of the schedule; None: unbounded.
    max_concurrency: runs of this schedule at the same time.
    enable_caching: True/False overrides every task's caching; None keeps the compiled one.
    parameter_values: runtime parameter values, by name.
    service_account: the Kubernetes service account of the runs.
    no_catchup: after a pause, start only the latest missed run rather than all of them.
  """
  pipeline_job = read_pipeline_job(template_path)
  experiment_id = client.create_experiment(name=experiment).experiment_id
  with tempfile.TemporaryDirectory() as directory:
    package = write_package(pipeline_job, os.path.join(directory, 'pipeline.yaml'))
    return client.create_recurring_run(
        experiment_id=experiment_id,
        job_name=name,
        start_time=start_time,
        end_time=end_time,
        cron_expression=cron.kubeflow(),
        max_concurrency=max_concurrency,
        no_catchup=no_catchup,
        params=dict(parameter_values or {}),
        pipeline_package_path=package,
        pipeline_root=_pipeline_root(pipeline_job),
        enable_caching=enable_caching,
        service_account=service_account)


def list_recurring_runs(client: kfp.Client,
                        experiment: Optional[str] = None) -> List[V2beta1RecurringRun]:
  """The recurring runs, optionally those of one experiment (by name)."""
  experiment_id = None
  if experiment:
    experiment_id = client.get_experiment(experiment_name=experiment).experiment_id
  runs, token = [], ''
  while True:
    page = client.list_recurring_runs(page_token=token, page_size=100,
                                      experiment_id=experiment_id)
    runs.extend(page.recurring_runs or [])
    token = page.next_page_token
    if not token:
      return runs


def describe_recurring_run(run: V2beta1RecurringRun) -> str:
  """One line: ID, name, mode, cron, concurrency."""
  cron = run.trigger.cron_schedule.cron if run.trigger and run.trigger.cron_schedule else None
  return (f'{run.recurring_run_id}  {run.display_name!r}  {run.mode}  cron={cron!r}  '
          f'max_concurrency={run.max_concurrency}')


def _pipeline_root(pipeline_job: Mapping[str, Any]) -> Optional[str]:
  return pipeline_job.get('runtimeConfig', {}).get('gcsOutputDirectory')
