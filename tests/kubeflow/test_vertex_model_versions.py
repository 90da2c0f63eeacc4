"""Blessed models as versions of one Vertex AI model: the real SDK against a stand-in.

Three pushes in a row: the first creates the parent model and the endpoint, each next
one is a new version of that model that takes all the traffic, and versions beyond
`keep_deployed` are undeployed, so the endpoint never piles up deployed models.
"""

import itertools
import re

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform

from components import vertex_pusher
from kubeflow import vertex
from tests.kubeflow.conftest import PROJECT, REGION

PARENT = f'projects/{PROJECT}/locations/{REGION}'
SERVING_IMAGE = 'us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest'
_TYPES = 'type.googleapis.com/google.cloud.aiplatform.v1.'


def _done(response_type, response):
  return {'name': f'{PARENT}/operations/1', 'done': True,
          'response': {'@type': _TYPES + response_type, **response}}


class RegistryAndEndpoints:
  """The state of the stand-in: models with their versions, endpoints with deployments."""

  def __init__(self):
    self.models = {}  # model resource name -> list of versions (dicts), oldest first
    self.endpoints = {}  # endpoint resource name -> endpoint dict
    self._ids = itertools.count(1)
    self._clock = itertools.count(1)

  def _now(self):
    return f'2026-01-01T00:00:{next(self._clock):02d}Z'

  def _model(self, name, version):
    # What Vertex says of a model with a serving container: it deploys on dedicated machines.
    return {'name': name, 'versionId': version['versionId'], **version['fields'],
            'supportedDeploymentResourcesTypes': ['DEDICATED_RESOURCES']}

  def route(self, request):
    path, body = request.path.removeprefix('/v1/'), request.body
    if path == f'{PARENT}/models' and request.method == 'GET':
      wanted = re.fullmatch(r'display_name="(.*)"', request.query.get('filter', ''))
      return 200, {'models': [self._model(name, versions[-1])
                              for name, versions in self.models.items()
                              if versions[-1]['fields']['displayName'] == wanted.group(1)]}
    if path == f'{PARENT}/models:upload':
      parent = body.get('parentModel')
      name = parent or f'{PARENT}/models/{next(self._ids)}'
      versions = self.models.setdefault(name, [])
      versions.append({'versionId': str(len(versions) + 1), 'fields': body['model']})
      return 200, _done('UploadModelResponse', {'model': name,
                                                'modelVersionId': versions[-1]['versionId']})
    model = re.fullmatch(r'(.+/models/[^/@]+)(?:@(\d+))?', path)
    if model and request.method == 'GET' and model.group(1) in self.models:
      versions = self.models[model.group(1)]
      version = versions[int(model.group(2)) - 1] if model.group(2) else versions[-1]
      return 200, self._model(model.group(1), version)
    if path == f'{PARENT}/endpoints':
      if request.method == 'POST':
        name = f'{PARENT}/endpoints/{next(self._ids)}'
        self.endpoints[name] = {'name': name, 'displayName': body['displayName'],
                                'deployedModels': [], 'trafficSplit': {}}
        return 200, _done('Endpoint', self.endpoints[name])
      wanted = re.fullmatch(r'display_name="(.*)"', request.query.get('filter', ''))
      return 200, {'endpoints': [endpoint for endpoint in self.endpoints.values()
                                 if endpoint['displayName'] == wanted.group(1)]}
    endpoint = re.fullmatch(r'(.+/endpoints/[^/:]+)(?::(deployModel|undeployModel))?', path)
    if endpoint and endpoint.group(1) in self.endpoints:
      state = self.endpoints[endpoint.group(1)]
      if request.method == 'GET':
        return 200, state
      if endpoint.group(2) == 'deployModel':
        deployed = {**body['deployedModel'], 'id': str(next(self._ids)),
                    'createTime': self._now()}
        state['deployedModels'].append(deployed)
        state['trafficSplit'] = {deployed['id'] if key == '0' else key: value
                                 for key, value in body['trafficSplit'].items() if value}
        return 200, _done('DeployModelResponse', {'deployedModel': deployed})
      if endpoint.group(2) == 'undeployModel':
        gone = body['deployedModelId']
        assert not state['trafficSplit'].get(gone), 'undeployed a model that has traffic'
        state['deployedModels'] = [d for d in state['deployedModels'] if d['id'] != gone]
        return 200, _done('UndeployModelResponse', {})
    return None


@pytest.fixture
def registry(stand_in):
  state = RegistryAndEndpoints()
  server = stand_in(state.route)
  server.state = state
  vertex.connect(PROJECT, REGION, api_endpoint=server.url, credentials=AnonymousCredentials())
  yield server
  aiplatform.initializer.global_config.__init__()


def _target(keep_deployed):
  return vertex_pusher.ModelVersions(
      project=PROJECT, region=REGION, model_name='tft-shops', endpoint_name='tft-shops-live',
      serving_image=SERVING_IMAGE, keep_deployed=keep_deployed)


@pytest.mark.parametrize('keep_deployed', [1, 2])
def test_each_push_is_a_new_version_that_takes_the_traffic(registry, keep_deployed):
  published = [vertex_pusher.publish_version(_target(keep_deployed), f'gs://b/push/{n}')
               for n in (1, 2, 3)]
  state = registry.state
  # One parent model with three versions, each the model a push uploaded.
  (model, versions), = state.models.items()
  assert [v['fields']['artifactUri'] for v in versions] == [
      'gs://b/push/1', 'gs://b/push/2', 'gs://b/push/3']
  assert [(p.model, p.version_id) for p in published] == [(model, '1'), (model, '2'),
                                                         (model, '3')]
  # One endpoint; the newest version has all the traffic; at most keep_deployed there.
  (endpoint_name, endpoint), = state.endpoints.items()
  assert {p.endpoint for p in published} == {endpoint_name}
  deployed = endpoint['deployedModels']
  assert len(deployed) == keep_deployed
  newest = deployed[-1]
  assert newest['model'] == f'{model}@3'  # the version this push uploaded
  assert [d['model'] for d in deployed] == [f'{model}@{v}' for v in range(4 - keep_deployed, 4)]
  assert endpoint['trafficSplit'] == {newest['id']: 100}
  assert newest['dedicatedResources']['machineSpec']['machineType'] == 'n1-standard-4'
  assert [len(p.undeployed) for p in published] == (
      [0, 1, 1] if keep_deployed == 1 else [0, 0, 1])
  # Uploads after the first name the parent, so the registry holds versions, not copies.
  uploads = registry.find('POST', 'models:upload')
  assert 'parentModel' not in uploads[0].body
  assert [u.body['parentModel'] for u in uploads[1:]] == [model, model]


def _artifacts(tmp_path, blessed):
  from tfx.types import standard_artifacts

  model = standard_artifacts.Model()
  model.uri = str(tmp_path / 'model')
  (tmp_path / 'model' / 'Format-Serving').mkdir(parents=True)
  (tmp_path / 'model' / 'Format-Serving' / 'saved_model.pb').write_bytes(b'model')
  blessing = standard_artifacts.ModelBlessing()
  blessing.uri = str(tmp_path / 'blessing')
  blessing.set_int_custom_property('blessed', int(blessed))
  pushed = standard_artifacts.PushedModel()
  pushed.uri = str(tmp_path / 'pushed')
  return {'model': [model], 'model_blessing': [blessing]}, {'pushed_model': [pushed]}


def test_the_pusher_publishes_blessed_models_only_and_from_cloud_storage(registry, tmp_path):
  """Unblessed: nothing sent. Blessed: refused before anything is sent unless the model
  is copied to gs:// (a local path would make the SDK stage it to a bucket of its own);
  what a gs:// push sends is `publish_version`'s, tested above."""
  import dataclasses
  import json

  properties = {'custom_config': json.dumps(
      {vertex_pusher.CONFIG_KEY: dataclasses.asdict(_target(1))})}
  inputs, outputs = _artifacts(tmp_path / 'unblessed', blessed=False)
  vertex_pusher.Executor().Do(inputs, outputs, properties)
  assert outputs['pushed_model'][0].get_int_custom_property('pushed') == 0
  inputs, outputs = _artifacts(tmp_path / 'blessed', blessed=True)
  with pytest.raises(ValueError, match='Vertex AI serves models from Cloud Storage'):
    vertex_pusher.Executor().Do(inputs, outputs, properties)
  assert registry.requests == []
