"""Submit and schedule with the real google-cloud-aiplatform SDK against a loopback stand-in.

The SDK runs unchanged over its REST transport; `api_endpoint='http://127.0.0.1:PORT'`
keeps the http scheme (the REST transport only adds https:// to endpoints without
one). The stand-in answers the Vertex AI v1 REST calls and the Cloud Storage bucket
check that PipelineJob.submit makes (through STORAGE_EMULATOR_HOST). One SDK call
leaves both: the bucket-ownership check asks Cloud Resource Manager for the project
number over gRPC, so the test answers that one function instead.
"""

import os
import re

import google.auth.exceptions
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform

from kubeflow import cli, vertex
from kubeflow.cron import Cron
from kubeflow.pipeline_job import parse_parameter_values

PROJECT, REGION, PROJECT_NUMBER = 'test-project', 'europe-west4', '123456'
PARENT = f'projects/{PROJECT}/locations/{REGION}'
SERVICE_ACCOUNT = 'runner@test-project.iam.gserviceaccount.com'


class VertexApi:
  """The state and answers of the stand-in: pipeline jobs and schedules."""

  def __init__(self):
    self.schedules = {}

  def route(self, request):
    path = request.path
    bucket = re.fullmatch(r'/storage/v1/b/([^/]+)', path)
    if bucket and request.method == 'GET':
      return 200, {'name': bucket.group(1), 'projectNumber': PROJECT_NUMBER}
    if request.method == 'POST' and path == f'/v1/{PARENT}/pipelineJobs':
      name = f'{PARENT}/pipelineJobs/{request.query["pipelineJobId"]}'
      return 200, {**request.body, 'name': name, 'state': 'PIPELINE_STATE_PENDING'}
    if path == f'/v1/{PARENT}/schedules':
      if request.method == 'POST':
        name = f'{PARENT}/schedules/{len(self.schedules) + 1}'
        self.schedules[name] = {**request.body, 'name': name, 'state': 'ACTIVE'}
        return 200, self.schedules[name]
      return 200, {'schedules': list(self.schedules.values())}
    action = re.fullmatch(r'/v1/(.+/schedules/[^/:]+)(?::(pause|resume))?', path)
    if action and action.group(1) in self.schedules:
      name, verb = action.groups()
      if request.method == 'GET':
        return 200, self.schedules[name]
      if request.method == 'POST' and verb:
        self.schedules[name]['state'] = 'PAUSED' if verb == 'pause' else 'ACTIVE'
        return 200, {}
      if request.method == 'DELETE':
        del self.schedules[name]
        return 200, {'name': f'{PARENT}/operations/1', 'done': True,
                     'response': {'@type': 'type.googleapis.com/google.protobuf.Empty'}}
    return None


@pytest.fixture
def api(stand_in, monkeypatch):
  """The stand-in, with the SDK pointed at it and Cloud Storage redirected to it."""
  state = VertexApi()
  server = stand_in(state.route)
  server.state = state
  monkeypatch.setenv('STORAGE_EMULATOR_HOST', server.url)
  monkeypatch.setattr('google.cloud.aiplatform.utils.resource_manager_utils.get_project_number',
                      lambda project, credentials=None: PROJECT_NUMBER)
  # The CLI uses Application Default Credentials; anonymous ones suffice for the stand-in.
  monkeypatch.setattr('google.auth.default',
                      lambda *args, **kwargs: (AnonymousCredentials(), PROJECT))
  yield server
  aiplatform.initializer.global_config.__init__()  # forget the stand-in's endpoint


@pytest.fixture
def deploy_file(tmp_path):
  path = tmp_path / 'deploy.yaml'
  path.write_text(f"""
project: {PROJECT}
region: {REGION}
pipeline_root: gs://test-bucket/tft/root
data_root: gs://test-bucket/tft/data
image: europe-west4-docker.pkg.dev/test-project/tft/tft-components:test
trainer_image: europe-west4-docker.pkg.dev/test-project/tft/tft-trainer-tpu:test
service_account: {SERVICE_ACCOUNT}
training: {{hardware: tpu, machine_type: cloud-tpu, accelerator_type: TPU_V3, accelerator_count: 8}}
""")
  return str(path)


def test_submit_sends_the_compiled_pipeline_to_vertex(api, compiled):
  path, job = compiled['tpu']
  vertex.connect(PROJECT, REGION, api_endpoint=api.url, credentials=AnonymousCredentials())
  submitted = vertex.submit(vertex.make_job(path), service_account=SERVICE_ACCOUNT)

  create, = api.find('POST', '/pipelineJobs')
  assert create.path == f'/v1/{PARENT}/pipelineJobs'
  assert create.query['pipelineJobId'].startswith('tft-synthetic-')
  assert create.body['pipelineSpec'] == job['pipelineSpec']
  assert create.body['runtimeConfig']['gcsOutputDirectory'] == 'gs://test-bucket/tft/root'
  assert create.body['displayName'] == 'tft-synthetic'
  assert create.body['serviceAccount'] == SERVICE_ACCOUNT
  assert submitted.resource_name == f'{PARENT}/pipelineJobs/{create.query["pipelineJobId"]}'
  # The SDK checked the artifacts bucket, at the stand-in.
  assert api.find('GET', '/storage/v1/b/test-bucket')


def test_enable_caching_turns_on_every_task(api, compiled):
  path, job = compiled['gpu']
  vertex.connect(PROJECT, REGION, api_endpoint=api.url, credentials=AnonymousCredentials())
  vertex.submit(vertex.make_job(path, enable_caching=True))
  create, = api.find('POST', '/pipelineJobs')
  tasks = create.body['pipelineSpec']['root']['dag']['tasks']
  assert set(tasks) == set(job['pipelineSpec']['root']['dag']['tasks'])
  assert all(task['cachingOptions'] == {'enableCache': True} for task in tasks.values())
  assert not any('cachingOptions' in task
                 for task in job['pipelineSpec']['root']['dag']['tasks'].values())


def test_runtime_parameters_reach_the_components_that_use_them(api, compiled):
  path, job = compiled['tpu']
  values = parse_parameter_values(job, ['data_root=gs://other-bucket/new-data',
                                        'train_steps=250'])
  assert values == {'data_root': 'gs://other-bucket/new-data', 'train_steps': 250}
  vertex.connect(PROJECT, REGION, api_endpoint=api.url, credentials=AnonymousCredentials())
  vertex.submit(vertex.make_job(path, values))
  vertex.submit(vertex.make_job(path))
  with_values, with_defaults = api.find('POST', '/pipelineJobs')
  # Schema 2.0.0 (KubeflowV2DagRunner's default) carries typed values under 'parameters'.
  assert with_values.body['runtimeConfig']['parameters'] == {
      'data_root': {'stringValue': 'gs://other-bucket/new-data'},
      'train_steps': {'intValue': '250'}}
  assert with_defaults.body['runtimeConfig']['parameters'] == {
      'data_root': {'stringValue': 'gs://test-bucket/tft/data'},
      'train_steps': {'intValue': '1000'}}
  # The job Vertex receives wires them into ExampleGen's input and the Trainer's budget.
  spec = with_values.body['pipelineSpec']
  assert spec['root']['inputDefinitions']['parameters'] == {
      'data_root': {'type': 'STRING'}, 'train_steps': {'type': 'INT'}}
  tasks = spec['root']['dag']['tasks']
  assert tasks['TimeSeriesExampleGen']['inputs']['parameters']['input_base'] == {
      'componentInputParameter': 'data_root'}
  assert tasks['Trainer']['inputs']['parameters']['train_steps'] == {
      'componentInputParameter': 'train_steps'}


def test_cli_submit_prints_the_job_and_refuses_undeclared_parameters(api, compiled,
                                                                     deploy_file, capsys):
  path, _ = compiled['tpu']
  base = ['submit', '--config', deploy_file, '--pipeline', path, '--api-endpoint', api.url]
  assert cli.main(base + ['--param', 'span=7']) == 2
  assert ("declares no runtime parameter 'span' (it declares: data_root, train_steps)"
          in capsys.readouterr().err)
  assert cli.main(base + ['--param', 'train_steps=many']) == 2
  assert "parameter 'train_steps' must be INT, got 'many'" in capsys.readouterr().err
  assert api.requests == []  # refused before anything was sent

  compiled_at = os.path.getmtime(path)
  os.utime(deploy_file, (compiled_at + 60, compiled_at + 60))  # edited after the compile
  assert cli.main(base + ['--enable-caching']) == 0
  create, = api.find('POST', '/pipelineJobs')
  out, err = capsys.readouterr()
  assert (f'warning: {deploy_file} changed after {path} was compiled; this uses the compiled '
          "pipeline: run 'tft-cloud compile' again for the changes") in err
  os.utime(deploy_file, (compiled_at - 60, compiled_at - 60))  # unchanged since
  assert cli.main(base) == 0
  assert 'changed after' not in capsys.readouterr().err
  assert f'{PARENT}/pipelineJobs/{create.query["pipelineJobId"]}' in out
  assert 'caching:    on' in out
  assert create.body['serviceAccount'] == SERVICE_ACCOUNT


def test_cli_without_credentials_says_how_to_get_them(compiled, deploy_file, capsys,
                                                     monkeypatch):
  def no_credentials(*args, **kwargs):
    raise google.auth.exceptions.DefaultCredentialsError(
        'Your default credentials were not found.\nTo set up ...')
  monkeypatch.setattr('google.auth.default', no_credentials)
  path, _ = compiled['tpu']
  assert cli.main(['submit', '--config', deploy_file, '--pipeline', path]) == 2
  assert capsys.readouterr().err.endswith(
      'error: no Google Cloud credentials found: run `gcloud auth application-default login`, '
      'or set GOOGLE_APPLICATION_CREDENTIALS to a service account key file (Your default '
      'credentials were not found.)\n')
  aiplatform.initializer.global_config.__init__()


def test_cli_schedule_creates_a_vertex_schedule_in_the_time_zone(api, compiled, deploy_file,
                                                                  capsys):
  path, job = compiled['tpu']
  assert cli.main([
      'schedule', '--config', deploy_file, '--pipeline', path, '--api-endpoint', api.url,
      '--cron', '0 3 * * *', '--time-zone', 'Europe/Paris', '--name', 'tft-nightly',
      '--start-time', '2026-12-01T00:00:00Z', '--end-time', '2027-06-01T00:00:00Z',
      '--max-concurrent-runs', '2', '--max-runs', '30', '--param', 'train_steps=400']) == 0

  create, = api.find('POST', '/schedules')
  assert create.path == f'/v1/{PARENT}/schedules'
  body = create.body
  assert body['cron'] == 'TZ=Europe/Paris 0 3 * * *'
  assert body['displayName'] == 'tft-nightly'
  assert body['startTime'] == '2026-12-01T00:00:00Z'
  assert body['endTime'] == '2027-06-01T00:00:00Z'
  assert body['maxConcurrentRunCount'] == '2'  # int64 travels as a JSON string
  assert body['maxRunCount'] == '30'
  request = body['createPipelineJobRequest']
  assert request['parent'] == PARENT
  assert request['pipelineJob']['pipelineSpec'] == job['pipelineSpec']
  assert request['pipelineJob']['runtimeConfig']['gcsOutputDirectory'] == (
      'gs://test-bucket/tft/root')
  assert request['pipelineJob']['serviceAccount'] == SERVICE_ACCOUNT
  assert request['pipelineJob']['runtimeConfig']['parameters']['train_steps'] == {
      'intValue': '400'}
  assert not api.find('POST', '/pipelineJobs')  # scheduling starts no run by itself
  out = capsys.readouterr().out
  assert f'{PARENT}/schedules/1' in out and "'TZ=Europe/Paris 0 3 * * *'" in out


def test_cli_lists_pauses_resumes_and_deletes_schedules(api, compiled, deploy_file, capsys):
  path, _ = compiled['tpu']
  vertex.connect(PROJECT, REGION, api_endpoint=api.url, credentials=AnonymousCredentials())
  vertex.create_schedule(vertex.make_job(path), Cron.parse('30 2 * * 1'), 'weekly',
                         max_concurrent_run_count=1)
  name = f'{PARENT}/schedules/1'
  common = ['--config', deploy_file, '--api-endpoint', api.url]

  assert cli.main(['schedules', 'list'] + common) == 0
  listing = capsys.readouterr().out
  assert name in listing and "'weekly'" in listing and "cron='30 2 * * 1'" in listing
  assert 'ACTIVE' in listing

  assert cli.main(['schedules', 'pause', '1'] + common) == 0
  assert api.find('POST', f'{name}:pause') and api.state.schedules[name]['state'] == 'PAUSED'
  assert cli.main(['schedules', 'resume', name] + common) == 0
  assert api.find('POST', f'{name}:resume') and api.state.schedules[name]['state'] == 'ACTIVE'
  assert cli.main(['schedules', 'delete', '1'] + common) == 0
  assert api.find('DELETE', name) and api.state.schedules == {}
  assert f'delete: Vertex AI schedule {name}' in capsys.readouterr().out
