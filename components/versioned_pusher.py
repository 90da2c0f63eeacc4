"""TFX's Pusher, publishing blessed models atomically into a versioned directory.

Same inputs, outputs and blessing check as `tfx.components.Pusher`; only the filesystem
push differs (`serving.model_publishing`): a staged copy renamed into place, and a
version that always grows, where TFX's executor copies in place and skips the push when
two land in the same second.
"""

import os
from typing import Any, Dict, List

from tfx import types
from tfx import v1 as tfx
from tfx.components.pusher import executor as pusher_executor
from tfx.dsl.components.base import executor_spec
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import io_utils, proto_utils

from serving import model_publishing


class VersionedPushExecutor(pusher_executor.Executor):
  """Pushes a blessed model with `model_publishing.publish`."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    self._log_startup(input_dict, output_dict, exec_properties)
    pushed_model = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.PUSHED_MODEL_KEY])
    if not self.CheckBlessing(input_dict):
      self._MarkNotPushed(pushed_model)
      return
    destination = proto_utils.json_to_proto(
        exec_properties[standard_component_specs.PUSH_DESTINATION_KEY],
        pusher_pb2.PushDestination())
    if destination.WhichOneof('destination') != 'filesystem':
      raise ValueError('VersionedPusher pushes to a filesystem destination only; use the '
                       'Vertex AI Pusher for endpoints')
    model_path = self.GetModelPath(input_dict)
    version_dir = model_publishing.publish(model_path,
                                           destination.filesystem.base_directory)
    io_utils.copy_dir(model_path, pushed_model.uri)
    self._MarkPushed(pushed_model, pushed_destination=version_dir,
                     pushed_version=os.path.basename(version_dir))


class VersionedPusher(tfx.components.Pusher):
  """`tfx.components.Pusher` with `VersionedPushExecutor`."""

  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(VersionedPushExecutor)
