"""Where and on what the pipeline runs in the cloud: the typed deployment config.

Read from a YAML or JSON file by `load`, with command-line overrides on top; the
pipeline itself still comes from `pipeline.pipeline.create_pipeline`. Example file:

  project: my-project
  region: europe-west4
  pipeline_root: gs://my-bucket/tft/pipeline_root
  data_root: gs://my-bucket/tft/data/synthetic
  image: europe-west4-docker.pkg.dev/my-project/tft/tft-components:1
  trainer_image: europe-west4-docker.pkg.dev/my-project/tft/tft-trainer-tpu:1
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
  endpoint:              # blessed models: versions of one Vertex AI model, served here;
    name: tft-synthetic  # omit to publish into serving_model_dir
    keep_deployed: 2     # the newest version takes the traffic; one previous kept at 0%

For self-hosted Kubeflow Pipelines add `platform: kubeflow` and `kfp_host:` (the API
server, e.g. http://localhost:8080 after `kubectl port-forward`); the Trainer's CustomJob
and the endpoint are Vertex AI services either way.

Training hardware (`TrainingHardware.hardware`) is also the distribution strategy the
Trainer builds (`trainer_module.distribution`); `kubeflow.machines` checks the machine:
  tpu  machine_type 'cloud-tpu' with accelerator_type TPU_V2 / TPU_V3 and 8 cores, or a
       TPU v5e VM type with its one-VM `tpu_topology` ('ct5lp-hightpu-4t', '2x2').
  gpu  a machine type with an NVIDIA accelerator_type and count ('n1-standard-8', T4 x 1).
  cpu  a machine type without accelerator.
`replicas` (gpu, cpu) runs that many such machines as one MultiWorkerMirroredStrategy.
"""

import dataclasses
import functools
import os
import re
from typing import Annotated, Any, Dict, Iterator, List, Literal, Mapping, Optional, get_args

import pydantic
import yaml
from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr

from components import span_files
from kubeflow import machines
from common.run_layout import SERVING_MODEL_DIR
from common.suggestions import did_you_mean
from schema import dataset_file
from schema.datasets import DATASETS, get_dataset
from schema.hparams import DEFAULT_PRESET
from trainer_module.training_config import (CONFIG_KEY, DEFAULT_REFIT, DEFAULT_TRAIN_STEPS,
                                            TrainingConfig)

Hardware = Literal['tpu', 'gpu', 'cpu']
Platform = Literal['vertex', 'kubeflow']
HARDWARE = get_args(Hardware)
PLATFORMS = get_args(Platform)
DEFAULT_DATASET = 'synthetic'
# What the KFP and Vertex AI compilers accept as a pipeline name.
_PIPELINE_NAME = re.compile(r'[a-z0-9][a-z0-9-]{0,127}')
# Where the Dockerfile copies the project; paths inside the image start here.
IMAGE_PROJECT_DIR = '/pipeline'
# The newest TensorFlow serving image google-cloud-aiplatform 1.165 lists
# (constants/prediction.py); the model is saved by TF 2.16.
DEFAULT_SERVING_IMAGE = 'us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest'


class DeploymentConfigError(ValueError):
  """The deployment config is incomplete or inconsistent."""


# Field types: pydantic checks them, and the rules across fields live in __post_init__.
Text = Annotated[StrictStr, Field(min_length=1)]
Count = Annotated[StrictInt, Field(ge=1)]
# Unknown fields are errors; no value is coerced (8 is not '8', true is not 1).
_FIELDS_AS_WRITTEN = ConfigDict(extra='forbid')
_config_class = pydantic.dataclasses.dataclass(frozen=True, config=_FIELDS_AS_WRITTEN)


@_config_class
class TrainingHardware:
  """The machine of the Trainer's Vertex AI CustomJob (one replica).

  Attributes:
    hardware: 'tpu', 'gpu' or 'cpu'; also the Trainer's distribution strategy.
    machine_type: a Vertex machine type ('cloud-tpu', 'ct5lp-hightpu-4t', 'n1-standard-8').
    accelerator_type: a Vertex AcceleratorType name ('TPU_V3', 'NVIDIA_TESLA_T4').
    accelerator_count: accelerators on the machine (TPU cores for 'cloud-tpu').
    tpu_topology: the TPU slice shape of TPU VM machine types ('2x2').
    replicas: machines of this kind that train as one (MultiWorkerMirroredStrategy over
      a chief and `replicas - 1` workers); 'gpu' and 'cpu' only.
  """
  hardware: Hardware
  machine_type: Text
  accelerator_type: Optional[Text] = None
  accelerator_count: Annotated[StrictInt, Field(ge=0)] = 0
  tpu_topology: Optional[Text] = None
  replicas: Count = 1

  def __post_init__(self):
    machines.check_training_machine(self.hardware, self.machine_type, self.accelerator_type,
                                    self.accelerator_count, self.tpu_topology)
    if self.replicas > 1 and self.hardware == 'tpu':
      raise ValueError(f'training.replicas is {self.replicas}, but TPU training runs on one '
                       "host; use a larger TPU (tpu_topology), or hardware 'gpu' or 'cpu' "
                       'for several machines')

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


@_config_class
class Dataflow:
  """Runs the Beam-based components (ExampleGen to Evaluator) on Dataflow.

  Attributes:
    machine_type: the Dataflow workers' machine type.
    max_num_workers: autoscaling bound.
    temp_location: gs:// staging and temp directory; default `<pipeline_root>/beam`.
  """
  machine_type: Text = 'n1-standard-4'
  max_num_workers: Count = 4
  temp_location: Optional[Text] = None


@_config_class
class Endpoint:
  """The Vertex AI endpoint that Pusher deploys blessed models to.

  Attributes:
    name: the endpoint's display name; created on the first push.
    machine_type: the serving machine type.
    serving_image: a TensorFlow serving container (Vertex prebuilt or your own).
    keep_deployed: how many of the newest model versions stay deployed; the newest takes
      all the traffic, the others stay at 0% for a rollback, older ones are undeployed.
  """
  name: Text
  machine_type: Text = 'n1-standard-4'
  serving_image: Text = DEFAULT_SERVING_IMAGE
  keep_deployed: Count = 1


@_config_class
class DeploymentConfig:
  """Everything the compile, submit and schedule commands need beyond the pipeline.

  Attributes:
    project: the GCP project.
    region: the Vertex AI (and Dataflow) region.
    pipeline_root: where artifacts go (gs:// on Vertex).
    data_root: the directory of input files that ExampleGen reads (gs:// on Vertex).
    image: the components image (the Dockerfile's: CPU TensorFlow, the tested lock): every
      step of the pipeline and the Dataflow workers run in it.
    trainer_image: the image of the Trainer's Vertex AI CustomJob: TensorFlow for the
      training hardware (kubeflow/Dockerfile.trainer-tpu or -gpu); required with TPU or
      GPU training, default `image` for CPU training.
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
    pipeline_name: lowercase letters, digits and hyphens, as the pipeline compilers
      require; default 'tft-<data set name>' with '-' for any other character.
    train_steps: the Trainer's optimizer steps.
    model_preset: a name from `schema.hparams.PRESETS`.
    input_pattern: file pattern under `data_root`; may contain {SPAN}.
    train_spans: with {SPAN} in `input_pattern`, each run trains on the newest N spans
      under `data_root` (ExampleGen lists them); older ones are training rows only.
    schema_file: the curated TFDV schema to import, as the components see it (gs://
      or a path in the image); default a built-in data set's schema in the image, or a
      gs:// schema that the spec file names.
    infer_schema: infer the schema with SchemaGen instead of importing one.
    refit: once blessed, train the model again on every row for the epochs it chose and
      publish that one (`trainer_module.refit`).
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
  project: Text
  region: Text
  pipeline_root: Text
  data_root: Text
  image: Text
  trainer_image: Optional[Text] = None
  dataset: Optional[Text] = None
  spec: Optional[Text] = None
  platform: Platform = 'vertex'
  kfp_host: Optional[Text] = None
  service_account: Optional[Text] = None
  pipeline_name: Optional[Text] = None
  train_steps: Count = DEFAULT_TRAIN_STEPS
  model_preset: Text = DEFAULT_PRESET
  input_pattern: Text = '*'
  train_spans: Count = 1
  schema_file: Optional[Text] = None
  infer_schema: StrictBool = False
  refit: StrictBool = DEFAULT_REFIT
  future_file: Optional[Text] = None
  serving_model_dir: Optional[Text] = None
  training: Optional[TrainingHardware] = None
  training_options: Dict[str, Any] = Field(default_factory=dict)
  dataflow: Optional[Dataflow] = None
  endpoint: Optional[Endpoint] = None

  def __post_init__(self):
    problems = list(self._problems())
    if problems:
      raise DeploymentConfigError('; '.join(problems))

  def _problems(self) -> Iterator[str]:
    """Every rule across fields the config breaks, each a sentence with the fix."""
    if self.train_spans > 1:
      try:
        span_files.check_pattern(self.input_pattern)
      except ValueError as error:
        yield str(error)
    if self.pipeline_name is not None and not _PIPELINE_NAME.fullmatch(self.pipeline_name):
      yield (f"pipeline_name '{self.pipeline_name}' is not a name the pipeline compilers "
             'accept: lowercase letters, digits and hyphens, starting with a letter or digit, '
             f"at most 128; e.g. '{_compiler_name(self.pipeline_name) or 'tft-pipeline'}'")
    if self.training and self.training.hardware != 'cpu' and not self.trainer_image:
      yield (f"training on {self.training.hardware} needs trainer_image: the image built from "
             f'kubeflow/Dockerfile.trainer-{self.training.hardware} (TensorFlow for that '
             'hardware); image runs the other steps on CPU')
    if self.trainer_image and not self.training:
      yield ('trainer_image is the image of the training CustomJob: set training (the '
             'machine) too, or leave trainer_image out to train in the pipeline step')
    if self.platform == 'kubeflow' and not self.kfp_host:
      yield ("platform 'kubeflow' needs kfp_host, the Kubeflow Pipelines API server "
             "(e.g. 'http://localhost:8080' after kubectl port-forward)")
    if self.dataset is not None and self.spec is not None:
      yield (f"set either dataset ('{self.dataset}', a built-in data set) or spec "
             f"('{self.spec}', your spec file), not both")
    elif self.spec is None and self.data_set_name not in DATASETS:
      yield (f"dataset '{self.dataset}' is unknown; use one of {sorted(DATASETS)}, or give "
             'your own spec file as spec: FILE.yaml')
    try:
      TrainingConfig.from_custom_config({CONFIG_KEY: self.training_options})
    except ValueError as error:
      yield f'training_options in the deployment config: {error}'
    if self.infer_schema and self.schema_file:
      yield 'set either schema_file or infer_schema: true, not both'
    roots = {'pipeline_root': self.pipeline_root, 'data_root': self.data_root,
             'serving_model_dir': self.serving_model_dir, 'future_file': self.future_file}
    if self.platform == 'vertex':
      for name, value in roots.items():
        if value is not None and not value.startswith('gs://'):
          yield (f"{name} '{value}' must be a gs:// URI on Vertex AI: components run in "
                 "containers that cannot see this machine's files")
      if self.schema_file and not self.schema_file.startswith(('gs://',
                                                               f'{IMAGE_PROJECT_DIR}/')):
        yield (f"schema_file '{self.schema_file}' must be a gs:// URI, or a path in the image "
               f"(under {IMAGE_PROJECT_DIR}/), on Vertex AI: components run in containers "
               "that cannot see this machine's files; copy it to Cloud Storage (gsutil cp "
               f"{self.schema_file} gs://BUCKET/...) and name that")
    if self.spec is not None and self.dataset is None:
      try:
        _ = self.schema_path  # a bad spec file or an unreachable schema fails here
      except DeploymentConfigError as error:
        yield str(error)
    if self.dataflow is not None and not self.beam_temp_location.startswith('gs://'):
      yield (f"Dataflow needs a gs:// temp_location, got '{self.beam_temp_location}'; set "
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
    """The pipeline's name, which also names the Vertex AI model and the compiled file."""
    return self.pipeline_name or default_pipeline_name(self.data_set_name)

  @property
  def training_image(self) -> str:
    """The image of the Trainer's CustomJob."""
    return self.trainer_image or self.image

  @property
  def model_dir(self) -> str:
    return self.serving_model_dir or f'{self.pipeline_root.rstrip("/")}/{SERVING_MODEL_DIR}'

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
        # same Beam as the launcher: the components image has both.
        f'--sdk_container_image={self.image}',
    ]
    if self.service_account:
      args.append(f'--service_account_email={self.service_account}')
    return args


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
  try:
    return DeploymentConfig(**values)
  except pydantic.ValidationError as error:
    problems = [_describe(problem) for problem in error.errors(include_url=False)]
    raise DeploymentConfigError(f'{source}: ' + '; '.join(problems)) from None


def default_pipeline_name(data_set_name: str) -> str:
  """'tft-<data set name>' as the pipeline compilers accept it: 'shop_sales' gives
  'tft-shop-sales'."""
  return _compiler_name(f'tft-{data_set_name}')


def _compiler_name(text: str) -> str:
  """`text` lowercased, each run of other characters than letters and digits one '-'."""
  return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')[:128].rstrip('-')


_SECTIONS = {'training': TrainingHardware, 'dataflow': Dataflow, 'endpoint': Endpoint}


def _describe(problem: Mapping[str, Any]) -> str:
  """One pydantic error as a sentence that names the field, the value and the fix."""
  where = '.'.join(str(part) for part in problem['loc'])
  kind = problem['type']
  if kind == 'value_error':  # a rule across fields (__post_init__) says it in full
    return str(problem['ctx']['error'])
  if kind == 'missing' or (kind == 'string_too_short' and problem['input'] == ''):
    return (f'{where} is missing or empty: set it in the deployment file or with its '
            'command-line flag (see --help)')
  if kind == 'unexpected_keyword_argument':
    section, _, name = where.rpartition('.')
    known = [f.name for f in dataclasses.fields(_SECTIONS.get(section, DeploymentConfig))]
    return f"unknown field '{where}'{did_you_mean(name, known)}; known: {known}"
  return f"{where}: {problem['msg']}, got {problem['input']!r}"
