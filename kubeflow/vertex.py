"""Submits the compiled pipeline to Vertex AI Pipelines and manages its schedules.

Thin wrappers over `google.cloud.aiplatform.PipelineJob` and `PipelineJobSchedule`
that take the compiled PipelineJob JSON and the deployment config. `connect` points the
SDK at a project and region; `api_endpoint` can name another endpoint (a regional or
private one; with an http:// scheme, a local stand-in over the REST transport).
"""

from typing import Any, List, Mapping, Optional

from google.cloud import aiplatform

from kubeflow.cron import Cron
from kubeflow.pipeline_job import read_pipeline_job


def connect(project: str, region: str, api_endpoint: Optional[str] = None,
            credentials=None) -> None:
  """Points the Vertex AI SDK at `project` and `region`.

  Args:
    project: the GCP project.
    region: the Vertex AI region.
    api_endpoint: another API endpoint; one with an http(s):// scheme is used over the
      REST transport, which keeps the scheme.
    credentials: google.auth credentials; None: Application Default Credentials.
  """
  transport = 'rest' if api_endpoint and '://' in api_endpoint else None
  aiplatform.init(project=project, location=region, credentials=credentials,
                  api_endpoint=api_endpoint, api_transport=transport)


def make_job(template_path: str, parameter_values: Optional[Mapping[str, Any]] = None,
             enable_caching: Optional[bool] = None, pipeline_root: Optional[str] = None,
             display_name: Optional[str] = None,
             labels: Optional[Mapping[str, str]] = None) -> aiplatform.PipelineJob:
  """A PipelineJob from the compiled JSON (not yet sent).

  Args:
    template_path: the JSON written by the compile command.
    parameter_values: runtime parameter values, by name.
    enable_caching: True/False overrides every task's caching; None keeps the compiled
      setting.
    pipeline_root: overrides the compiled pipeline root.
    display_name: default the compiled pipeline's name.
    labels: labels of the run.
  """
  pipeline_job = read_pipeline_job(template_path)
  return aiplatform.PipelineJob(
      display_name=display_name or pipeline_job.get('displayName')
      or pipeline_job['pipelineSpec']['pipelineInfo']['name'],
      template_path=template_path,
      parameter_values=dict(parameter_values or {}),
      enable_caching=enable_caching,
      pipeline_root=pipeline_root,
      labels=dict(labels) if labels else None)


def submit(job: aiplatform.PipelineJob, service_account: Optional[str] = None,
           network: Optional[str] = None) -> aiplatform.PipelineJob:
  """Creates the pipeline run without waiting for it; returns the job (its resource name set)."""
  job.submit(service_account=service_account, network=network)
  return job


def create_schedule(job: aiplatform.PipelineJob, cron: Cron, display_name: str,
                    start_time: Optional[str] = None, end_time: Optional[str] = None,
                    max_concurrent_run_count: int = 1, max_run_count: Optional[int] = None,
                    service_account: Optional[str] = None) -> aiplatform.PipelineJobSchedule:
  """Creates a Vertex AI schedule that starts `job` at every `cron` time.

  Args:
    job: the PipelineJob to repeat (`make_job`).
    cron: when; its time zone goes into the 'TZ=<zone> ...' form Vertex reads.
    display_name: the schedule's name.
    start_time: RFC 3339 time of the first possible run; None: now.
    end_time: RFC 3339 time after which no run starts; None: never.
    max_concurrent_run_count: runs of this schedule at the same time.
    max_run_count: the schedule completes after this many runs; None: unbounded.
    service_account: runs execute as this account.
  """
  return job.create_schedule(
      cron=cron.vertex(), display_name=display_name, start_time=start_time,
      end_time=end_time, max_concurrent_run_count=max_concurrent_run_count,
      max_run_count=max_run_count, service_account=service_account)


def list_schedules(display_name: Optional[str] = None) -> List[aiplatform.PipelineJobSchedule]:
  """The region's pipeline schedules, optionally only those with `display_name`."""
  query = f'display_name="{display_name}"' if display_name else None
  return aiplatform.PipelineJobSchedule.list(filter=query)


def get_schedule(schedule: str) -> aiplatform.PipelineJobSchedule:
  """A schedule by its ID or full resource name."""
  return aiplatform.PipelineJobSchedule.get(schedule)


def describe_schedule(schedule: aiplatform.PipelineJobSchedule) -> str:
  """One line: resource name, display name, state, cron, concurrency."""
  resource = schedule.gca_resource
  return (f'{resource.name}  {resource.display_name!r}  {resource.state.name}  '
          f'cron={resource.cron!r}  max_concurrent_runs={resource.max_concurrent_run_count}'
          + (f'  max_runs={resource.max_run_count}' if resource.max_run_count else ''))

