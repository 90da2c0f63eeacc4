"""The cloud command: compile, submit and schedule the pipeline on Vertex AI or Kubeflow.

  python -m kubeflow.cli compile   --config deploy.yaml        # writes build/<name>.json
  python -m kubeflow.cli backtest  --config deploy.yaml --origins 3   # build/<name>-backtest.json
  python -m kubeflow.cli submit    --config deploy.yaml [--param name=value]
  python -m kubeflow.cli schedule  --config deploy.yaml --cron '0 3 * * *' --time-zone Europe/Paris
  python -m kubeflow.cli schedules list|pause|resume|delete --config deploy.yaml [ID]

Every command reads the same deployment config (`kubeflow.deployment`); flags override
its fields. `platform: vertex` talks to Vertex AI Pipelines, `platform: kubeflow` to the
Kubeflow Pipelines API server at `kfp_host`. Thin: the work is in `kubeflow.runner`,
`kubeflow.vertex` and `kubeflow.kfp_schedules`.
"""

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional

from google.auth import exceptions as auth_exceptions

from kubeflow import deployment as deployment_lib
from kubeflow.cron import Cron
from common import cli_logs

DEFAULT_BUILD_DIR = 'build'

# Flags that override deployment fields: flag dest -> field (dotted for sections).
_OVERRIDES = {
    'project': 'project', 'region': 'region', 'pipeline_root': 'pipeline_root',
    'data_root': 'data_root', 'image': 'image', 'trainer_image': 'trainer_image',
    'dataset': 'dataset', 'spec': 'spec',
    'platform': 'platform', 'kfp_host': 'kfp_host', 'service_account': 'service_account',
    'train_steps': 'train_steps', 'hardware': 'training.hardware',
    'machine_type': 'training.machine_type', 'accelerator_type': 'training.accelerator_type',
    'accelerator_count': 'training.accelerator_count', 'tpu_topology': 'training.tpu_topology',
    'endpoint': 'endpoint.name',
}


def _deployment_flags() -> argparse.ArgumentParser:
  flags = argparse.ArgumentParser(add_help=False)
  group = flags.add_argument_group('deployment (override the --config file)')
  group.add_argument('--config', help='deployment YAML/JSON file (see kubeflow/deployment.py)')
  group.add_argument('--project', help='GCP project')
  group.add_argument('--region', help='Vertex AI region, e.g. europe-west4')
  group.add_argument('--pipeline-root', help='gs:// root of the pipeline artifacts')
  group.add_argument('--data-root', help='gs:// directory of the input files')
  group.add_argument('--image', help='components image (built from the Dockerfile)')
  group.add_argument('--trainer-image', help="the training CustomJob's image "
                     '(kubeflow/Dockerfile.trainer-tpu or -gpu)')
  group.add_argument('--dataset', help='a built-in data set: synthetic, etth1, stallion, ...')
  group.add_argument('--spec', help="your data set's spec file (tft-pipeline init drafts one)")
  group.add_argument('--platform', choices=deployment_lib.PLATFORMS,
                     help='Vertex AI Pipelines or self-hosted Kubeflow Pipelines')
  group.add_argument('--kfp-host', help='Kubeflow Pipelines API server (platform kubeflow)')
  group.add_argument('--service-account', help='runs and training jobs run as this account')
  group.add_argument('--train-steps', type=int, help="the Trainer's optimizer steps")
  group.add_argument('--hardware', choices=deployment_lib.HARDWARE,
                     help='train as a Vertex AI CustomJob on this kind of machine')
  group.add_argument('--machine-type', help="training machine, e.g. cloud-tpu, "
                     'ct5lp-hightpu-4t, n1-standard-8')
  group.add_argument('--accelerator-type', help='e.g. TPU_V3, NVIDIA_TESLA_T4')
  group.add_argument('--accelerator-count', type=int, help='accelerators on the machine')
  group.add_argument('--tpu-topology', help="TPU slice shape of TPU VM machines, e.g. 2x2")
  group.add_argument('--endpoint', help='push blessed models to this Vertex AI endpoint')
  group.add_argument('--dataflow', action='store_true',
                     help='run the Beam components on Dataflow (settings from the file)')
  return flags


def _service_flags() -> argparse.ArgumentParser:
  flags = argparse.ArgumentParser(add_help=False)
  flags.add_argument('--api-endpoint', help='another Vertex AI API endpoint (e.g. a private '
                     'one); with http://, used over REST')
  return flags


def _run_flags() -> argparse.ArgumentParser:
  flags = argparse.ArgumentParser(add_help=False)
  flags.add_argument('--pipeline', help='compiled pipeline JSON (default: '
                     f'{DEFAULT_BUILD_DIR}/<pipeline name>.json, as compile writes it)')
  flags.add_argument('--param', action='append', default=[], metavar='NAME=VALUE',
                     help='runtime parameter value; repeatable')
  flags.add_argument('--enable-caching', action=argparse.BooleanOptionalAction, default=None,
                     help="turn every task's caching on or off (default: as compiled)")
  return flags


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
  deployment_flags, service_flags, run_flags = (
      _deployment_flags(), _service_flags(), _run_flags())
  parser = argparse.ArgumentParser(
      prog='tft-cloud',
      description='Compile the TFX pipeline for Vertex AI Pipelines / Kubeflow, submit '
      'runs and schedule retraining.')
  commands = parser.add_subparsers(dest='command', required=True)

  compile_cmd = commands.add_parser(
      'compile', parents=[deployment_flags],
      help='write the pipeline JSON (offline, nothing uploaded)')
  compile_cmd.add_argument('--output', help='default: '
                           f'{DEFAULT_BUILD_DIR}/<pipeline name>.json')

  backtest = commands.add_parser(
      'backtest', parents=[deployment_flags],
      help='write the pipeline JSON of a rolling-origin backtest, each origin a branch of '
      'its own (offline; reads the data to place the origins); submit it with --pipeline')
  backtest.add_argument('--origins', type=int, default=3,
                        help='forecast origins at the end of the data (default: %(default)s)')
  backtest.add_argument('--every', type=int,
                        help='steps between origins, a multiple of the horizon (default: '
                        'one horizon)')
  backtest.add_argument('--output', help='default: '
                        f'{DEFAULT_BUILD_DIR}/<pipeline name>-backtest.json')
  backtest.add_argument('--local-data', help="a copy of data_root's files on this machine, "
                        'read to place the origins (default: data_root, read through Cloud '
                        'Storage)')

  commands.add_parser('submit', parents=[deployment_flags, service_flags, run_flags],
                      help='start one run of the compiled pipeline')

  schedule = commands.add_parser(
      'schedule', parents=[deployment_flags, service_flags, run_flags],
      help='run the compiled pipeline on a cron schedule')
  schedule.add_argument('--cron', required=True,
                        help="five-field cron, e.g. '0 3 * * *'; may start with TZ=<zone>")
  schedule.add_argument('--time-zone', help='IANA time zone of the cron, e.g. Europe/Paris '
                        '(Vertex AI only; default UTC)')
  schedule.add_argument('--name', help='schedule name (default: <pipeline name>-schedule)')
  schedule.add_argument('--start-time', help='RFC 3339 time of the first run, e.g. '
                        '2026-12-01T00:00:00Z (default: now)')
  schedule.add_argument('--end-time', help='RFC 3339 time after which no run starts')
  schedule.add_argument('--max-concurrent-runs', type=int, default=1,
                        help='runs of this schedule at the same time (default: %(default)s)')
  schedule.add_argument('--max-runs', type=int,
                        help='stop after this many runs (Vertex AI only; default: no limit)')
  schedule.add_argument('--experiment', help='KFP experiment (platform kubeflow; default: '
                        'the pipeline name)')

  schedules = commands.add_parser('schedules', help='list, pause, resume or delete schedules')
  actions = schedules.add_subparsers(dest='action', required=True)
  actions.add_parser('list', parents=[deployment_flags, service_flags],
                     help="the project's pipeline schedules (recurring runs on Kubeflow)")
  for action, text in (('pause', 'pause a schedule'), ('resume', 'resume a paused schedule'),
                       ('delete', 'delete a schedule')):
    command = actions.add_parser(action, parents=[deployment_flags, service_flags], help=text)
    command.add_argument('schedule', help='schedule ID or resource name (recurring run ID '
                         'on Kubeflow)')
  return parser.parse_args(argv)


def load_deployment(args: argparse.Namespace) -> deployment_lib.DeploymentConfig:
  overrides: Dict[str, Any] = {field: getattr(args, dest) for dest, field in _OVERRIDES.items()}
  if args.dataflow:
    overrides['dataflow'] = {}
  return deployment_lib.load(args.config, overrides)


def _pipeline_path(args: argparse.Namespace, deployment: deployment_lib.DeploymentConfig) -> str:
  return args.pipeline or _default_pipeline_path(deployment)


def _default_pipeline_path(deployment: deployment_lib.DeploymentConfig) -> str:
  """Where compile writes the pipeline JSON, and submit and schedule read it, by default."""
  return os.path.join(DEFAULT_BUILD_DIR, f'{deployment.name}.json')


def _compile(args, deployment) -> int:
  from kubeflow import runner

  output = args.output or _default_pipeline_path(deployment)
  config = runner.make_pipeline_config(deployment)
  job = runner.compile_pipeline(deployment, output, config)
  spec = job['pipelineSpec']
  tasks = sorted(spec['root']['dag']['tasks'])
  print(f'[compile] {deployment.name} -> {output}')
  print(f'  image:      {deployment.image}')
  print(f'  root:       {job["runtimeConfig"]["gcsOutputDirectory"]}')
  spans = (f', the newest {deployment.train_spans} spans' if deployment.train_spans > 1
           else '')
  print(f'  data:       {deployment.data_root}, files {deployment.input_pattern!r}{spans}')
  print(f'  future:     {deployment.future_file or "none"}')
  print(f'  components: {", ".join(tasks)}')
  training = deployment.training
  print('  trainer:    ' + (
      f'Vertex AI CustomJob {json.dumps(training.machine_spec())}, distribution '
      f'{training.hardware}' if training else 'in the pipeline step'))
  model = config.model_config
  on_tpu = bool(training) and training.hardware == 'tpu'
  print(f"  precision:  {model.dtype_policy(on_tpu)} (the model's precision "
        f"{model.precision!r}{' on a TPU' if on_tpu else ''})")
  options = deployment.training_options
  print(f'  training:   {json.dumps(dict(options)) if options else "default loop settings"}')
  print(f'  beam:       {" ".join(deployment.beam_pipeline_args())}')
  print('  pusher:     ' + (f'Vertex AI endpoint {deployment.endpoint.name!r}'
                            if deployment.endpoint else deployment.model_dir))
  for warning in future_file_warnings(deployment):
    print(f'warning: {warning}', file=sys.stderr)
  elsewhere = (f' --pipeline {output}'
               if os.path.abspath(output) != os.path.abspath(_default_pipeline_path(deployment))
               else '')
  flags = (f' --config {args.config}' if args.config else '') + elsewhere
  same_flags = '' if args.config else ' (with the same deployment flags)'
  print(f'Next: tft-cloud submit{flags} for one run, or tft-cloud schedule{flags} --cron '
        f"'0 3 * * *' for retraining{same_flags}")
  return 0


def _backtest(args, deployment) -> int:
  from kubeflow import runner
  from pipeline import backtest

  config = runner.make_pipeline_config(deployment)
  data = args.local_data or deployment.data_root
  print(f'[backtest] reading the times of {data} to place the origins')
  try:
    times = backtest.data_times(config.replace(data_root=data))
    planned = backtest.plan(times, config.dataset, config.time_split, args.origins,
                            args.every)
  except backtest.BacktestError as error:
    raise ValueError(str(error)) from None
  output = args.output or os.path.join(DEFAULT_BUILD_DIR, f'{deployment.name}-backtest.json')
  job = runner.compile_backtest(deployment, output, config, planned)
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  print(f'[backtest] {deployment.name}-backtest -> {output}')
  for origin in planned:
    print(f'  origin {origin.number}:   forecasts from {origin.split.test_start}, trained '
          f'before {origin.split.eval_start}; '
          f'{sum(task.endswith(f"_origin_{origin.number}") for task in tasks)} steps')
  print(f"  refit:      {'each origin also refits its TFT' if config.refit_splits else 'no'}")
  root = job['runtimeConfig']['gcsOutputDirectory']
  print(f'  report:     BacktestScoring, after every origin, under {root}')
  flags = f' --config {args.config}' if args.config else ''
  print(f'Next: tft-cloud submit{flags} --pipeline {output}')
  return 0


def future_file_warnings(deployment: deployment_lib.DeploymentConfig) -> List[str]:
  """What the runs' forecasts will lack, as `tft-pipeline` warns before a local run."""
  from schema.dataset_spec import Role
  from serving import series_windows

  spec = deployment.data_set.spec
  known = [column.name for column in spec.columns_with(Role.KNOWN)]
  if known and not deployment.future_file:
    return [f'the spec declares known columns {known} and no future_file gives their values '
            'over the horizon: each run trains, judges and publishes a model, but forecasts '
            'no series']
  unused = deployment.future_file and series_windows.future_file_unused(spec, 'future_file')
  return [f'future_file: {unused}'] if unused else []


def _warn_if_compiled_before_changes(path: str, args: argparse.Namespace,
                                     deployment: deployment_lib.DeploymentConfig) -> None:
  """Warns when the deployment or spec file changed after `path` was compiled: the run
  uses what was compiled, not the files as they are now."""
  compiled = os.path.getmtime(path)
  changed = [source for source in (args.config, deployment.spec)
             if source and os.path.exists(source) and os.path.getmtime(source) > compiled]
  if changed:
    print(f"warning: {', '.join(changed)} changed after {path} was compiled; this uses the "
          "compiled pipeline: run 'tft-cloud compile' again for the changes", file=sys.stderr)


def _submit(args, deployment) -> int:
  from kubeflow import pipeline_job

  path = _pipeline_path(args, deployment)
  values = pipeline_job.parse_parameter_values(pipeline_job.read_pipeline_job(path),
                                               args.param)
  _warn_if_compiled_before_changes(path, args, deployment)
  if deployment.platform == 'kubeflow':
    from kubeflow import kfp_schedules

    client = kfp_schedules.connect(deployment.kfp_host)
    run = kfp_schedules.submit_run(client, path, name=deployment.name,
                                   experiment=deployment.name, enable_caching=args.enable_caching,
                                   parameter_values=values,
                                   service_account=deployment.service_account)
    print(f'[submit] Kubeflow run {run.run_id} of {path} at {deployment.kfp_host}')
  else:
    from kubeflow import vertex

    vertex.connect(deployment.project, deployment.region, api_endpoint=args.api_endpoint)
    job = vertex.submit(vertex.make_job(path, values, enable_caching=args.enable_caching),
                        service_account=deployment.service_account)
    print(f'[submit] Vertex AI pipeline job {job.resource_name}')
  print(f'  pipeline:   {path}')
  print(f'  parameters: {json.dumps(values, sort_keys=True)}')
  print(f'  caching:    {_caching(args.enable_caching)}')
  return 0


def _schedule(args, deployment) -> int:
  from kubeflow import pipeline_job

  path = _pipeline_path(args, deployment)
  values = pipeline_job.parse_parameter_values(pipeline_job.read_pipeline_job(path),
                                               args.param)
  _warn_if_compiled_before_changes(path, args, deployment)
  cron = Cron.parse(args.cron, args.time_zone)
  name = args.name or f'{deployment.name}-schedule'
  if deployment.platform == 'kubeflow':
    from kubeflow import kfp_schedules

    if args.max_runs is not None:
      raise ValueError('--max-runs is a Vertex AI setting; Kubeflow recurring runs end at '
                       '--end-time')
    client = kfp_schedules.connect(deployment.kfp_host)
    run = kfp_schedules.create_recurring_run(
        client, path, cron, name=name, experiment=args.experiment or deployment.name,
        start_time=args.start_time, end_time=args.end_time,
        max_concurrency=args.max_concurrent_runs, enable_caching=args.enable_caching,
        parameter_values=values, service_account=deployment.service_account)
    print(f'[schedule] Kubeflow recurring run {run.recurring_run_id} {name!r}')
    print(f'  cron:       {cron.kubeflow()!r} (cluster time zone)')
  else:
    from kubeflow import vertex

    vertex.connect(deployment.project, deployment.region, api_endpoint=args.api_endpoint)
    schedule = vertex.create_schedule(
        vertex.make_job(path, values, enable_caching=args.enable_caching), cron,
        display_name=name, start_time=args.start_time, end_time=args.end_time,
        max_concurrent_run_count=args.max_concurrent_runs, max_run_count=args.max_runs,
        service_account=deployment.service_account)
    print(f'[schedule] Vertex AI schedule {schedule.resource_name} {name!r}')
    print(f'  cron:       {cron.vertex()!r}')
  print(f'  pipeline:   {path}')
  print(f'  window:     {args.start_time or "now"} .. {args.end_time or "no end"}, at most '
        f'{args.max_concurrent_runs} at a time'
        + (f', {args.max_runs} runs' if args.max_runs else ''))
  print(f'  parameters: {json.dumps(values, sort_keys=True)}')
  print(f'  caching:    {_caching(args.enable_caching)}')
  return 0


def _schedules(args, deployment) -> int:
  if deployment.platform == 'kubeflow':
    from kubeflow import kfp_schedules

    client = kfp_schedules.connect(deployment.kfp_host)
    if args.action == 'list':
      for run in kfp_schedules.list_recurring_runs(client):
        print(kfp_schedules.describe_recurring_run(run))
      return 0
    operation = {'pause': client.disable_recurring_run, 'resume': client.enable_recurring_run,
                 'delete': client.delete_recurring_run}[args.action]
    operation(args.schedule)
    print(f'[schedules] {args.action}: Kubeflow recurring run {args.schedule}')
    return 0

  from kubeflow import vertex

  vertex.connect(deployment.project, deployment.region, api_endpoint=args.api_endpoint)
  if args.action == 'list':
    for schedule in vertex.list_schedules():
      print(vertex.describe_schedule(schedule))
    return 0
  schedule = vertex.get_schedule(args.schedule)
  {'pause': schedule.pause, 'resume': schedule.resume, 'delete': schedule.delete}[args.action]()
  print(f'[schedules] {args.action}: Vertex AI schedule {schedule.resource_name}')
  return 0


def _caching(enable_caching: Optional[bool]) -> str:
  return 'as compiled' if enable_caching is None else ('on' if enable_caching else 'off')


_COMMANDS = {'compile': _compile, 'backtest': _backtest, 'submit': _submit, 'schedule': _schedule,
             'schedules': _schedules}


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  cli_logs.configure()
  try:
    deployment = load_deployment(args)
    return _COMMANDS[args.command](args, deployment)
  except ValueError as error:  # DeploymentConfigError, bad cron, parameters, files
    print(f'error: {error}', file=sys.stderr)
    return 2
  except auth_exceptions.DefaultCredentialsError as error:
    print('error: no Google Cloud credentials found: run `gcloud auth application-default '
          'login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account key file '
          f"({str(error).splitlines()[0] if str(error) else 'no details'})", file=sys.stderr)
    return 2


if __name__ == '__main__':
  sys.exit(main())
