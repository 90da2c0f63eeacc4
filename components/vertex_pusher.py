"""Pusher for Vertex AI: each blessed model is a new version of one registry model.

TFX 1.16's Vertex Pusher uploads a new Model per push and deploys it at 100% traffic
without undeploying the old ones, so every scheduled retraining adds a model to the
registry and a deployed model to the endpoint (and its machines to the bill). This one
uploads each blessed model as a new version of one parent model (`model_name`), gives
it all the endpoint's traffic, and undeploys the older versions beyond `keep_deployed`
(older ones kept stay deployed at 0% traffic, for a quick rollback).
"""

import dataclasses
from typing import Any, Dict, List, Optional

from google.cloud import aiplatform
from tfx import types
from tfx import v1 as tfx
from tfx.components.pusher import executor as pusher_executor
from tfx.dsl.components.base import executor_spec
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, json_utils

CONFIG_KEY = 'vertex_model_versions'


@dataclasses.dataclass(frozen=True)
class ModelVersions:
  """Where and how blessed models are published on Vertex AI.

  Attributes:
    project: the GCP project.
    region: the Vertex AI region of the registry model and the endpoint.
    model_name: the display name of the parent model whose versions the pushes are.
    endpoint_name: the endpoint's display name; created on the first push.
    serving_image: the TensorFlow serving container of each version.
    machine_type: the serving machine of each deployed version.
    keep_deployed: how many of the newest versions stay deployed (the new one with all
      the traffic, the others at 0%); older ones are undeployed.
  """
  project: str
  region: str
  model_name: str
  endpoint_name: str
  serving_image: str
  machine_type: str = 'n1-standard-4'
  keep_deployed: int = 1


@dataclasses.dataclass(frozen=True)
class PublishedVersion:
  model: str  # the parent model's resource name
  version_id: str
  endpoint: str  # the endpoint's resource name
  undeployed: List[str]  # ids of the deployed models this push took down


def publish_version(target: ModelVersions, artifact_uri: str) -> PublishedVersion:
  """Uploads `artifact_uri` as the newest version and moves the endpoint's traffic to it."""
  aiplatform.init(project=target.project, location=target.region)
  parents = aiplatform.Model.list(filter=f'display_name="{target.model_name}"',
                                  order_by='create_time')
  model = aiplatform.Model.upload(
      display_name=target.model_name, artifact_uri=artifact_uri,
      serving_container_image_uri=target.serving_image,
      parent_model=parents[0].resource_name if parents else None,
      is_default_version=True)
  endpoint = (_find_endpoint(target.endpoint_name)
              or aiplatform.Endpoint.create(display_name=target.endpoint_name))
  previous = sorted(endpoint.list_models(), key=_created, reverse=True)
  model.deploy(endpoint=endpoint, machine_type=target.machine_type, traffic_percentage=100)
  stale = previous[target.keep_deployed - 1:]
  for deployed in stale:  # no traffic left on them: the new version has it all
    endpoint.undeploy(deployed_model_id=deployed.id)
  return PublishedVersion(model=model.resource_name, version_id=model.version_id,
                          endpoint=endpoint.resource_name,
                          undeployed=[deployed.id for deployed in stale])


def _find_endpoint(display_name: str) -> Optional[aiplatform.Endpoint]:
  """The oldest endpoint of that name, listed through the endpoint client.

  Not `aiplatform.Endpoint.list`: over the REST transport (google-cloud-aiplatform
  1.165) its public-endpoint filter sees raw protobuf messages, which are always true,
  and drops every endpoint.
  """
  config = aiplatform.initializer.global_config
  client = config.create_client(client_class=aiplatform.utils.EndpointClientWithOverride)
  found = sorted(client.list_endpoints(request={
      'parent': config.common_location_path(), 'filter': f'display_name="{display_name}"'}),
                 key=lambda endpoint: (_created(endpoint), endpoint.name))
  return aiplatform.Endpoint(found[0].name) if found else None


def _created(resource) -> float:
  """Creation time in seconds: a datetime over gRPC, a protobuf Timestamp over REST."""
  created = resource.create_time
  if hasattr(created, 'timestamp'):
    return created.timestamp()
  return created.seconds + created.nanos / 1e9


class Executor(pusher_executor.Executor):
  """Publishes a blessed model with `publish_version`; does nothing for the others."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    self._log_startup(input_dict, output_dict, exec_properties)
    custom_config = json_utils.loads(
        exec_properties.get(standard_component_specs.CUSTOM_CONFIG_KEY) or 'null') or {}
    target = ModelVersions(**custom_config[CONFIG_KEY])
    pushed_model = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.PUSHED_MODEL_KEY])
    if not self.CheckBlessing(input_dict):
      self._MarkNotPushed(pushed_model)
      return
    if not pushed_model.uri.startswith('gs://'):
      raise ValueError(f'Vertex AI serves models from Cloud Storage, and this push would '
                       f'upload {pushed_model.uri}: use a gs:// pipeline root')
    io_utils.copy_dir(self.GetModelPath(input_dict), pushed_model.uri)
    published = publish_version(target, artifact_uri=pushed_model.uri)
    self._MarkPushed(pushed_model, pushed_destination=published.endpoint,
                     pushed_version=published.version_id)
    pushed_model.set_string_custom_property('vertex_model', published.model)


class VertexPusher(tfx.components.Pusher):
  """`tfx.components.Pusher` publishing model versions on Vertex AI.

  Give it `custom_config={CONFIG_KEY: dataclasses.asdict(ModelVersions(...))}`.
  """

  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)
