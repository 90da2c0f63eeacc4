"""Recurring runs on self-hosted Kubeflow Pipelines with the real kfp 2.5 client against a
loopback stand-in of the API server (REST, /apis/v2beta1)."""

import re

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from kubeflow import cli, kfp_schedules
from kubeflow.cron import Cron


class KfpApi:
  """The state and answers of the stand-in: experiments, runs and recurring runs."""

  def __init__(self):
    self.experiments = {}
    self.recurring_runs = {}

  def route(self, request):
    path, method = request.path, request.method
    if path == '/apis/v2beta1/healthz':
      return 200, {'multi_user': False}
    if path == '/apis/v2beta1/experiments':
      if method == 'POST':
        experiment_id = f'experiment-{len(self.experiments) + 1}'
        self.experiments[experiment_id] = {**request.body, 'experiment_id': experiment_id}
        return 200, self.experiments[experiment_id]
      wanted = re.search(r'"stringValue": "([^"]*)"', request.query.get('filter', ''))
      found = [e for e in self.experiments.values()
               if not wanted or e['display_name'] == wanted.group(1)]
      return 200, {'experiments': found} if found else {}
    if path == '/apis/v2beta1/runs' and method == 'POST':
      return 200, {**request.body, 'run_id': 'run-1', 'state': 'PENDING'}
    if path == '/apis/v2beta1/recurringruns':
      if method == 'POST':
        run_id = f'recurring-{len(self.recurring_runs) + 1}'
        self.recurring_runs[run_id] = {**request.body, 'recurring_run_id': run_id}
        return 200, self.recurring_runs[run_id]
      # The server's key is camelCase here (backend/api/v2beta1 swagger), unlike the rest.
      return 200, {'recurringRuns': list(self.recurring_runs.values()), 'total_size':
                   len(self.recurring_runs)}
    match = re.fullmatch(r'/apis/v2beta1/recurringruns/([^/:]+)(?::(enable|disable))?', path)
    if match and match.group(1) in self.recurring_runs:
      run_id, verb = match.groups()
      if method == 'POST' and verb:
        self.recurring_runs[run_id]['mode'] = 'ENABLE' if verb == 'enable' else 'DISABLE'
        return 200, {}
      if method == 'DELETE':
        del self.recurring_runs[run_id]
        return 200, {}
    return None


@pytest.fixture
def api(stand_in):
  state = KfpApi()
  server = stand_in(state.route)
  server.state = state
  return server


@pytest.fixture
def deploy_file(tmp_path, api):
  path = tmp_path / 'deploy.yaml'
  path.write_text(f"""
project: test-project
region: europe-west4
platform: kubeflow
kfp_host: {api.url}
pipeline_root: gs://test-bucket/tft/root
data_root: gs://test-bucket/tft/data
image: europe-west4-docker.pkg.dev/test-project/tft/tft-components:test
trainer_image: europe-west4-docker.pkg.dev/test-project/tft/tft-trainer-gpu:test
training: {{hardware: gpu, machine_type: n1-standard-8, accelerator_type: NVIDIA_TESLA_T4,
           accelerator_count: 1}}
""")
  return str(path)


def test_package_is_the_bare_pipeline_spec_kfp_reads(compiled, tmp_path):
  _, job = compiled['tpu']
  path = kfp_schedules.write_package(job, str(tmp_path / 'pipeline.yaml'))
  with open(path) as f:
    spec = yaml.safe_load(f)
  assert spec == job['pipelineSpec']
  json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec(), ignore_unknown_fields=False)
  with pytest.raises(ValueError, match='must end in .yaml'):
    kfp_schedules.write_package(job, str(tmp_path / 'pipeline.json'))


def test_recurring_run_carries_the_cron_spec_and_limits(api, compiled):
  path, job = compiled['tpu']
  client = kfp_schedules.connect(api.url)
  created = kfp_schedules.create_recurring_run(
      client, path, Cron.parse('0 3 * * *'), name='tft-nightly', experiment='tft',
      start_time='2026-12-01T00:00:00Z', end_time='2027-06-01T00:00:00Z', max_concurrency=2,
      enable_caching=False)
  assert created.recurring_run_id == 'recurring-1'

  experiment, = api.find('POST', '/apis/v2beta1/experiments')
  assert experiment.body['display_name'] == 'tft'
  request, = api.find('POST', '/apis/v2beta1/recurringruns')
  body = request.body
  assert body['display_name'] == 'tft-nightly'
  assert body['experiment_id'] == 'experiment-1'
  assert body['mode'] == 'ENABLE'
  assert body['max_concurrency'] == 2
  assert body['no_catchup'] is True
  assert body['trigger'] == {'cron_schedule': {
      'cron': '0 0 3 * * *', 'start_time': '2026-12-01T00:00:00Z',
      'end_time': '2027-06-01T00:00:00Z'}}
  assert body['runtime_config'] == {'pipeline_root': 'gs://test-bucket/tft/root',
                                    'parameters': {}}
  expected_spec = {**job['pipelineSpec']}
  sent_spec = body['pipeline_spec']
  # enable_caching=False is written into every task; the rest is the compiled spec.
  tasks = sent_spec['root']['dag']['tasks']
  assert all(task.pop('cachingOptions') == {} for task in tasks.values())
  assert sent_spec == expected_spec


def test_cli_schedule_and_manage_recurring_runs(api, compiled, deploy_file, capsys):
  path, _ = compiled['gpu']
  common = ['--config', deploy_file]
  assert cli.main(['schedule', '--pipeline', path, '--cron', '30 1 * * 1-5',
                   '--max-concurrent-runs', '1', '--experiment', 'retraining'] + common) == 0
  request, = api.find('POST', '/apis/v2beta1/recurringruns')
  assert request.body['trigger']['cron_schedule']['cron'] == '0 30 1 * * 1-5'
  assert request.body['display_name'] == 'tft-synthetic-schedule'
  assert api.state.experiments['experiment-1']['display_name'] == 'retraining'
  assert 'Kubeflow recurring run recurring-1' in capsys.readouterr().out

  assert cli.main(['schedules', 'list'] + common) == 0
  assert "recurring-1  'tft-synthetic-schedule'" in capsys.readouterr().out
  assert cli.main(['schedules', 'pause', 'recurring-1'] + common) == 0
  assert api.state.recurring_runs['recurring-1']['mode'] == 'DISABLE'
  assert cli.main(['schedules', 'resume', 'recurring-1'] + common) == 0
  assert api.state.recurring_runs['recurring-1']['mode'] == 'ENABLE'
  assert cli.main(['schedules', 'delete', 'recurring-1'] + common) == 0
  assert api.state.recurring_runs == {}


def test_cli_refuses_a_time_zone_or_run_limit_on_kubeflow(api, compiled, deploy_file, capsys):
  path, _ = compiled['gpu']
  common = ['schedule', '--config', deploy_file, '--pipeline', path]
  assert cli.main(common + ['--cron', 'TZ=Europe/Paris 0 3 * * *']) == 2
  assert 'CRON_SCHEDULE_TIMEZONE' in capsys.readouterr().err
  assert cli.main(common + ['--cron', '0 3 * * *', '--max-runs', '3']) == 2
  assert '--max-runs is a Vertex AI setting' in capsys.readouterr().err
  assert not api.find('POST', '/apis/v2beta1/recurringruns')


def test_cli_submit_starts_one_kfp_run(api, compiled, deploy_file, capsys):
  path, job = compiled['gpu']
  assert cli.main(['submit', '--config', deploy_file, '--pipeline', path]) == 0
  run, = api.find('POST', '/apis/v2beta1/runs')
  assert run.body['pipeline_spec'] == job['pipelineSpec']
  assert run.body['runtime_config']['pipeline_root'] == 'gs://test-bucket/tft/root'
  assert 'Kubeflow run run-1' in capsys.readouterr().out
