"""Where and on what the pipeline runs in the cloud: the typed deployment config.

Read from a YAML or JSON file by `load`, with command-line overrides on top; the
pipeline itself still comes from `pipeline.pipeline.create_pipeline`. Example file:

  project: my-project
  region: europe-west4
  pipeline_root: gs://my-bucket/tft/pipeline_root
  data_root: gs://my-bucket/tft/data/synthetic
  image: europe-west4-docker.pkg.dev/my-project/tft/tft-pipeline:tpu
  spec: my_load.yaml     # your data set's spec file (tft-pipeline init); or dataset: NAME
  schema_file: gs://my-bucket/tft/my_load.schema.pbtxt  # its schema, where components read it
  service_account: pipelines@my-project.iam.gserviceaccount.com
  training:              # the Trainer as a Vertex AI CustomJob; omit to train in-step
    hardware: tpu
    machine_type: cloud-tpu
    accelerator_type: TPU_V3
    accelerator_count: 8
  training_options:      # the Trainer's loop settings (trainer_module.training_config)
    steps_per_execution: 64
    seed: 7
  dataflow:              # Beam components on Dataflow; omit for the in-container DirectRunner
    machine_type: n1-standard-4
    max_num_workers: 4
  endpoint:              # push blessed models to a Vertex AI endpoint; omit for serving_model_dir
    name: tft-synthetic

For self-hosted Kubeflow Pipelines add `platform: kubeflow` and `kfp_host:` (the API
server, e.g. http://localhost:8080 after `kubectl port-forward`); the Trainer's CustomJob
and the endpoint are Vertex AI services either way.

Training hardware (`TrainingHardware.hardware`) is also the distribution strategy the
Trainer builds (`trainer_module.distribution`):
  tpu  machine_type 'cloud-tpu' with accelerator_type TPU_V2 / TPU_V3 and a count, or a
       TPU VM machine type (e.g. 'ct5lp-hightpu-4t', TPU v5e) with `tpu_topology` ('2x2').
  gpu  a machine type with an NVIDIA accelerator_type and count ('n1-standard-8', T4 x 1).
  cpu  a machine type without accelerator.
"""

import dataclasses
import functools
import os
import re
from typing import Any, Dict, List, Mapping, Optional

import yaml

from schema import dataset_file
from schema.datasets import DATASETS, get_dataset
from trainer_module.hparams import DEFAULT_PRESET
from trainer_module.training_config import CONFIG_KEY, DEFAULT_TRAIN_STEPS, TrainingConfig

HARDWARE = ('tpu', 'gpu', 'cpu')
PLATFORMS = ('vertex', 'kubeflow')
DEFAULT_DATASET = 'synthetic'
# The Vertex machine type whose TPU (v2, v3) is given by accelerator_type and count.
TPU_NODE_MACHINE = 'cloud-tpu'
# Where the Dockerfile copies the project; paths inside the image start here.
IMAGE_PROJECT_DIR = '/pipeline'
# The newest TensorFlow serving image google-cloud-aiplatform 1.165 lists
# (constants/prediction.py); the model is saved by TF 2.16.
DEFAULT_SERVING_IMAGE = 'us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest'
_TOPOLOGY = re.compile(r'^\d+(x\d+){1,2}$')


class DeploymentConfigError(ValueError):
  """The deployment config is incomplete or inconsistent."""


@dataclasses.dataclass(frozen=True)
class TrainingHardware:
  """The machine of the Trainer's Vertex AI CustomJob (one replica).

  Attributes:
    hardware: 'tpu', 'gpu' or 'cpu'; also the Trainer's distribution strategy.
    machine_type: a Vertex machine type ('cloud-tpu', 'ct5lp-hightpu-4t', 'n1-standard-8').
    accelerator_type: a Vertex AcceleratorType name ('TPU_V3', 'NVIDIA_TESLA_T4').
    accelerator_count: accelerators on the machine (TPU cores for 'cloud-tpu').
    tpu_topology: the TPU slice shape of TPU VM machine types ('2x2').
  """
  hardware: str
  machine_type: str
  accelerator_type: Optional[str] = None
  accelerator_count: int = 0
  tpu_topology: Optional[str] = None

  def __post_init__(self):
    if self.hardware not in HARDWARE:
      raise DeploymentConfigError(
          f"training hardware '{self.hardware}' is unknown; use one of {HARDWARE}")
    _require(self.machine_type, 'training.machine_type')
    if isinstance(self.accelerator_count, bool) or not isinstance(self.accelerator_count, int):
      raise DeploymentConfigError(
          f'training.accelerator_count must be an integer, got {self.accelerator_count!r}')
    has_accelerator = bool(self.accelerator_type) or self.accelerator_count > 0
    if self.hardware == 'cpu':
      if has_accelerator or self.tpu_topology:
        raise DeploymentConfigError(
            "training hardware 'cpu' takes no accelerator_type, accelerator_count or "
            "tpu_topology; use hardware 'gpu' or 'tpu' for an accelerator")
      return
    if self.accelerator_type:
      _check_accelerator_type(self.accelerator_type, self.hardware)
    if self.hardware == 'gpu':
      if not self.accelerator_type or self.accelerator_count < 1:
        raise DeploymentConfigError(
            "training hardware 'gpu' needs accelerator_type (e.g. NVIDIA_TESLA_T4) and "
            'accelerator_count >= 1')
      if self.tpu_topology:
        raise DeploymentConfigError("training hardware 'gpu' takes no tpu_topology")
      return
    if self.tpu_topology and not _TOPOLOGY.match(self.tpu_topology):
      raise DeploymentConfigError(
          f"training.tpu_topology '{self.tpu_topology}' is not of the form '2x2' or '2x2x1'")
    if self.machine_type == TPU_NODE_MACHINE:
      if not self.accelerator_type or self.accelerator_count < 1:
        raise DeploymentConfigError(
            f"machine_type '{TPU_NODE_MACHINE}' needs accelerator_type (e.g. TPU_V3) and "
            'accelerator_count (e.g. 8)')
    elif not self.tpu_topology:
      raise DeploymentConfigError(
          f"TPU machine_type '{self.machine_type}' needs tpu_topology (e.g. '2x2' for "
          f"ct5lp-hightpu-4t), or use machine_type '{TPU_NODE_MACHINE}' with "
          'accelerator_type and accelerator_count')

  def machine_spec(self) -> Dict[str, Any]:
    """The Vertex MachineSpec, with only the fields that are set."""
    spec: Dict[str, Any] = {'machine_type': self.machine_type}
    if self.accelerator_type:
      spec['accelerator_type'] = self.accelerator_type
    if self.accelerator_count:
      spec['accelerator_count'] = self.accelerator_count
    if self.tpu_topology:
      spec['tpu_topology'] = self.tpu_topology
    return spec


@dataclasses.dataclass(frozen=True)
class Dataflow:
  """Runs the Beam-based components (ExampleGen to Evaluator) on Dataflow.

  Attributes:
    machine_type: the Dataflow workers' machine type.
    max_num_workers: autoscaling bound.
    temp_location: gs:// staging and temp directory; default `<pipeline_root>/beam`.
  """
  machine_type: str = 'n1-standard-4'
  max_num_workers: int = 4
  temp_location: Optional[str] = None

  def __post_init__(self):
    if isinstance(self.max_num_workers, bool) or not isinstance(self.max_num_workers, int) \
        or self.max_num_workers < 1:
      raise DeploymentConfigError(
          f'dataflow.max_num_workers must be an integer >= 1, got {self.max_num_workers!r}')


@dataclasses.dataclass(frozen=True)
class Endpoint:
  """The Vertex AI endpoint that Pusher deploys blessed models to.

  Attributes:
    name: the endpoint's display name; created on the first push.
    machine_type: the serving machine type.
    serving_image: a TensorFlow serving container (Vertex prebuilt or your own).
  """
  name: str
  machine_type: str = 'n1-standard-4'
  serving_image: str = DEFAULT_SERVING_IMAGE


@dataclasses.dataclass(frozen=True)
class DeploymentConfig:
  """Everything the compile, submit and schedule commands need beyond the pipeline.

  Attributes:
    project: the GCP project.
    region: the Vertex AI (and Dataflow) region.
    pipeline_root: where artifacts go (gs:// on Vertex).
    data_root: the directory of input files that ExampleGen reads (gs:// on Vertex).
    image: the pipeline's container image (the Dockerfile's), for every component.
    dataset: a built-in data set's name (`schema.datasets.DATASETS`); default
      'synthetic' when no `spec` is given.
    spec: a dataset spec file on this machine (`schema.dataset_file`), read when the
      pipeline is compiled; its columns, split and blessing rule go into the compiled
      pipeline. Relative paths are to the deployment file.
    platform: 'vertex' (Vertex AI Pipelines) or 'kubeflow' (self-hosted Kubeflow
      Pipelines, whose storage may be other than gs://).
    kfp_host: the Kubeflow Pipelines API server ('http://localhost:8080' when
      port-forwarded); required with platform 'kubeflow'.
    service_account: pipeline runs and training jobs run as this account.
    pipeline_name: default 'tft-<data set name>'.
    train_steps: the Trainer's optimizer steps.
    model_preset: a name from `trainer_module.hparams.PRESETS`.
    input_pattern: file pattern under `data_root`; may contain {SPAN}.
    schema_file: the curated TFDV schema to import, as the components see it (gs://
      or a path in the image); default a built-in data set's schema in the image, or a
      gs:// schema that the spec file names.
    infer_schema: infer the schema with SchemaGen instead of importing one.
    future_file: a CSV of the known columns over the H steps after the data (gs:// on
      Vertex), for the run's forecasts; needed only when the spec declares known columns.
    serving_model_dir: where Pusher writes without an endpoint; default
      `<pipeline_root>/serving_model`.
    training: the Trainer's Vertex AI machine; None trains inside the pipeline step.
    training_options: the Trainer's loop settings, on either machine: the fields of
      `trainer_module.training_config.TrainingConfig`, e.g. steps_per_execution (32 to
      128 keep a TPU busy between host round trips), seed.
    dataflow: run Beam on Dataflow; None runs it inside each component's container.
    endpoint: push to this Vertex AI endpoint; None pushes to `serving_model_dir`.
  """
  project: str
  region: str
  pipeline_root: str
  data_root: str
  image: str
  dataset: Optional[str] = None
  spec: Optional[str] = None
  platform: str = 'vertex'
  kfp_host: Optional[str] = None
  service_account: Optional[str] = None
  pipeline_name: Optional[str] = None
  train_steps: int = DEFAULT_TRAIN_STEPS
  model_preset: str = DEFAULT_PRESET
  input_pattern: str = '*'
  schema_file: Optional[str] = None
  infer_schema: bool = False
  future_file: Optional[str] = None
  serving_model_dir: Optional[str] = None
  training: Optional[TrainingHardware] = None
  training_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  dataflow: Optional[Dataflow] = None
  endpoint: Optional[Endpoint] = None

  def __post_init__(self):
    _require(self.project, 'project')
    _require(self.region, 'region')
    _require(self.image, 'image')
    if self.platform not in PLATFORMS:
      raise DeploymentConfigError(
          f"platform '{self.platform}' is unknown; use one of {PLATFORMS}")
    if self.platform == 'kubeflow' and not self.kfp_host:
      raise DeploymentConfigError(
          "platform 'kubeflow' needs kfp_host, the Kubeflow Pipelines API server "
          "(e.g. 'http://localhost:8080' after kubectl port-forward)")
    if self.dataset is not None and self.spec is not None:
      raise DeploymentConfigError(
          f"set either dataset ('{self.dataset}', a built-in data set) or spec "
          f"('{self.spec}', your spec file), not both")
    if self.spec is None and self.data_set_name not in DATASETS:
      raise DeploymentConfigError(
          f"dataset '{self.dataset}' is unknown; use one of {sorted(DATASETS)}, or give "
          'your own spec file as spec: FILE.yaml')
    if isinstance(self.train_steps, bool) or not isinstance(self.train_steps, int) \
        or self.train_steps < 1:
      raise DeploymentConfigError(f'train_steps must be an integer >= 1, got {self.train_steps!r}')
    if not isinstance(self.training_options, Mapping):
      raise DeploymentConfigError(
          f'training_options must be a mapping of Trainer loop settings (e.g. '
          f'steps_per_execution: 64), got {self.training_options!r}')
    try:
      TrainingConfig.from_custom_config({CONFIG_KEY: self.training_options})
    except ValueError as error:
      raise DeploymentConfigError(f'training_options in the deployment config: {error}') from None
    if self.infer_schema and self.schema_file:
      raise DeploymentConfigError('set either schema_file or infer_schema: true, not both')
    roots = {'pipeline_root': self.pipeline_root, 'data_root': self.data_root,
             'serving_model_dir': self.serving_model_dir, 'future_file': self.future_file}
    _require(self.pipeline_root, 'pipeline_root')
    _require(self.data_root, 'data_root')
    if self.platform == 'vertex':
      for name, value in roots.items():
        if value is not None and not value.startswith('gs://'):
          raise DeploymentConfigError(
              f"{name} '{value}' must be a gs:// URI on Vertex AI: components run in "
              'containers that cannot see this machine\'s files')
    if self.spec is not None:
      _ = self.schema_path  # a bad spec file or an unreachable schema fails here
    if self.dataflow is not None and not self.beam_temp_location.startswith('gs://'):
      raise DeploymentConfigError(
          f"Dataflow needs a gs:// temp_location, got '{self.beam_temp_location}'; set "
          'dataflow.temp_location or use a gs:// pipeline_root')

  @property
  def data_set_name(self) -> str:
    """The built-in data set's name, or the name inside the spec file."""
    if self.spec is not None:
      return self.data_set.spec.name
    return self.dataset or DEFAULT_DATASET

  @functools.cached_property
  def data_set(self) -> dataset_file.Dataset:
    """The data set of `spec` (read once), or the built-in one of `dataset`."""
    if self.spec is None:
      return get_dataset(self.data_set_name)
    try:
      return dataset_file.load(self.spec)
    except dataset_file.DatasetFileError as error:
      raise DeploymentConfigError(f'the deployment\'s spec file: {error}') from None

  @property
  def name(self) -> str:
    return self.pipeline_name or f'tft-{self.data_set_name}'

  @property
  def model_dir(self) -> str:
    return self.serving_model_dir or f'{self.pipeline_root.rstrip("/")}/serving_model'

  @property
  def beam_temp_location(self) -> str:
    temp = self.dataflow.temp_location if self.dataflow else None
    return temp or f'{self.pipeline_root.rstrip("/")}/beam'

  @property
  def schema_path(self) -> Optional[str]:
    """The schema file ImportSchemaGen reads, as seen from inside the image."""
    if self.infer_schema:
      return None
    if self.schema_file:
      return self.schema_file
    if self.spec is None:
      return f'{IMAGE_PROJECT_DIR}/schema/schemas/{self.data_set_name}.pbtxt'
    named = self.data_set.schema_path
    if named is not None and named.startswith('gs://'):
      return named
    raise DeploymentConfigError(
        f"the spec file {self.spec} names the schema {named or '(none)'} on this machine, "
        'which the pipeline\'s containers cannot read: copy it to Cloud Storage and set '
        'schema_file: gs://.../FILE.pbtxt in the deployment file, or set infer_schema: true')

  def beam_pipeline_args(self) -> List[str]:
    """Beam arguments of every Beam-based component."""
    if self.dataflow is None:
      # In the component's own container: one process per core. Naming the image's
      # setup.py stops TFX from building an sdist of itself for every Beam component
      # (`tfx.utils.dependency_utils`); the DirectRunner's workers stage nothing.
      return ['--direct_running_mode=multi_processing', '--direct_num_workers=0',
              f'--setup_file={IMAGE_PROJECT_DIR}/setup.py']
    args = [
        '--runner=DataflowRunner',
        f'--project={self.project}',
        f'--region={self.region}',
        f'--temp_location={self.beam_temp_location}',
        f'--machine_type={self.dataflow.machine_type}',
        f'--max_num_workers={self.dataflow.max_num_workers}',
        # Workers need the project's components (Windowing, the ExampleGen) and the
        # same Beam as the launcher: the pipeline image has both.
        f'--sdk_container_image={self.image}',
    ]
    if self.service_account:
      args.append(f'--service_account_email={self.service_account}')
    return args


_SECTIONS = {'training': TrainingHardware, 'dataflow': Dataflow, 'endpoint': Endpoint}


def load(path: Optional[str] = None,
         overrides: Optional[Mapping[str, Any]] = None) -> DeploymentConfig:
  """The deployment config from a YAML/JSON file, with `overrides` on top.

  Args:
    path: a YAML or JSON file of the fields of `DeploymentConfig`; None: only overrides.
    overrides: field values that win over the file; None values are ignored. Keys of
      the sections use a dot: 'training.hardware', 'endpoint.name'; a mapping for a
      section is merged into the file's.

  Raises:
    DeploymentConfigError: unknown or missing fields, or invalid values.
  """
  values: Dict[str, Any] = {}
  if path is not None:
    try:
      with open(path) as f:
        loaded = yaml.safe_load(f)
    except OSError as error:
      raise DeploymentConfigError(f'cannot read the deployment file {path}: {error}') from None
    except yaml.YAMLError as error:
      raise DeploymentConfigError(f'{path} is not YAML or JSON: {error}') from None
    if loaded is not None and not isinstance(loaded, dict):
      raise DeploymentConfigError(f'{path} must hold a mapping of deployment fields, got '
                                  f'{type(loaded).__name__}')
    values = {key: dict(value) if isinstance(value, dict) else value
              for key, value in (loaded or {}).items()}
    if isinstance(values.get('spec'), str):  # relative to the deployment file
      values['spec'] = os.path.join(os.path.dirname(os.path.abspath(path)), values['spec'])
  for key, value in (overrides or {}).items():
    if value is None:
      continue
    section, _, field = key.partition('.')
    current = values.get(section)
    if field:
      values[section] = {**(current or {}), field: value}
    elif isinstance(value, dict) and isinstance(current, dict):
      values[key] = {**current, **value}
    else:
      values[key] = value
  return from_dict(values, source=path or 'the command line')


def from_dict(values: Mapping[str, Any], source: str = 'the deployment config') -> DeploymentConfig:
  """Builds the config from plain values (as in the file), sections included."""
  fields = dict(values)
  for section, cls in _SECTIONS.items():
    if fields.get(section) is not None:
      if not isinstance(fields[section], dict):
        raise DeploymentConfigError(f"'{section}' in {source} must be a mapping of "
                                    f'{_field_names(cls)}')
      fields[section] = _construct(cls, fields[section], f"'{section}' in {source}")
  return _construct(DeploymentConfig, fields, source)


def _construct(cls, values: Mapping[str, Any], where: str):
  known = _field_names(cls)
  unknown = sorted(set(values) - set(known))
  if unknown:
    raise DeploymentConfigError(f'unknown fields {unknown} in {where}; known: {known}')
  missing = [f.name for f in dataclasses.fields(cls)
             if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
             and f.name not in values]
  if missing:
    raise DeploymentConfigError(
        f'{where} is missing {missing}: set them in the deployment file or with their '
        'command-line flags (see --help)')
  return cls(**values)


def _field_names(cls) -> List[str]:
  return [f.name for f in dataclasses.fields(cls)]


def _require(value: Optional[str], name: str) -> None:
  if not value or not isinstance(value, str):
    raise DeploymentConfigError(
        f'{name} is missing or empty (got {value!r}): set it in the deployment file or with '
        'its command-line flag (see --help)')


def _check_accelerator_type(accelerator_type: str, hardware: str) -> None:
  """The name must be one of the installed Vertex SDK's AcceleratorType values."""
  from google.cloud.aiplatform_v1.types.accelerator_type import AcceleratorType

  known = [name for name in AcceleratorType.__members__ if name != 'ACCELERATOR_TYPE_UNSPECIFIED']
  family = 'TPU_' if hardware == 'tpu' else 'NVIDIA_'
  choices = [name for name in known if name.startswith(family)]
  if accelerator_type not in choices:
    raise DeploymentConfigError(
        f"accelerator_type '{accelerator_type}' is not a {hardware.upper()} type Vertex AI "
        f'knows; use one of {choices}')
