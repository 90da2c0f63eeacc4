"""The pipeline's typed configuration: the data, the model and the deployment paths.

Three levels, as in the TFX templates: the data contract (`dataset`, `time_split`,
`strides`), model hyperparameters (`model_preset`, `model_overrides`, `train_steps`) and
deployment settings (`pipeline_root`, `serving_model_dir`). Runners fill in the paths.
"""

import dataclasses
import posixpath
from typing import Any, Dict, Mapping, Optional, Tuple

from components import span_files
from components.anomaly_gate import MODES as ANOMALY_MODES
from components.vertex_pusher import ModelVersions
from schema.dataset_file import Blessing, Dataset  # Blessing: part of PipelineConfig's API
from common.run_layout import FORECAST_LEDGER_DIR
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import TRAINING_SPLIT, TimeSplit
from schema import hparams
from schema.monitoring_policy import Monitoring
from trainer_module.training_config import (CONFIG_KEY, DEFAULT_REFIT, DEFAULT_TRAIN_STEPS,
                                            TrainingConfig)


@dataclasses.dataclass(frozen=True)
class VertexTraining:
  """Runs the Trainer as a Vertex AI CustomJob on one machine of the given kind.

  Attributes:
    project: the GCP project of the job.
    region: the Vertex AI region of the job.
    image: the job's container; it must hold tfx and this project.
    machine_spec: a Vertex MachineSpec: 'machine_type' and, for accelerators,
      'accelerator_type', 'accelerator_count' or (TPU v5e and later) 'tpu_topology'.
    distribution: the strategy `trainer_module.distribution` builds on that machine
      ('tpu', 'gpu', 'cpu').
    service_account: the job runs as this account; None: Vertex's default.
    replicas: machines that train as one: Vertex runs a chief pool of one and, beyond
      it, a worker pool of `replicas - 1`, and sets TF_CONFIG on each, from which the
      Trainer builds MultiWorkerMirroredStrategy.
  """
  project: str
  region: str
  image: str
  machine_spec: Mapping[str, Any]
  distribution: str
  service_account: Optional[str] = None
  replicas: int = 1

  def training_args(self) -> Dict[str, Any]:
    """The CustomJob for the Vertex Trainer extension (its TRAINING_ARGS_KEY)."""
    pools = [1] if self.replicas == 1 else [1, self.replicas - 1]
    job_spec: Dict[str, Any] = {'worker_pool_specs': [{
        'machine_spec': dict(self.machine_spec),
        'replica_count': count,
        'container_spec': {'image_uri': self.image},
    } for count in pools]}
    if self.service_account:
      job_spec['service_account'] = self.service_account
    return {'project': self.project, 'job_spec': job_spec}


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
  """Everything `create_pipeline` needs.

  Attributes:
    pipeline_name: the name of the pipeline in the metadata store.
    pipeline_root: where artifacts are written.
    data_root: the directory holding the input CSV files.
    serving_model_dir: where Pusher publishes blessed models.
    dataset: the dataset spec (columns, roles, window shape).
    time_split: where eval (and test) begin.
    blessing: the Evaluator's thresholds.
    strides: forecast-start stride per split, in time steps of the data.
    sample_rates: share of windows kept per split (default: all), for large data.
    model_preset: a name from `schema.hparams.PRESETS`.
    model_overrides: TFTConfig fields to change from the preset.
    training_options: the Trainer's loop settings (`TrainingConfig` fields), e.g.
      {'steps_per_execution': 64} on TPU, {'seed': 7}.
    train_steps: optimizer steps budget for the Trainer.
    input_pattern: the input file pattern under `data_root` (may contain `{SPAN}`); files
      are CSV or TFRecords of tf.Examples, by extension.
    train_spans: with a `{SPAN}` pattern, each run reads the newest `train_spans` spans
      in the input files (ExampleGen lists them). The newest span's eval and test rows
      are the evaluation data; older spans are all training data. 1: the newest span.
    schema_file: a curated TFDV schema to import; None infers one with SchemaGen (to
      bootstrap a new data set).
    on_anomalies: 'stop' ends the run before Transform when the data breaks the schema;
      'warn' logs the anomalies and goes on.
    future_file: a CSV of the known columns over the H steps after the data, for the
      run's forecasts (`components.delivered_forecasts`); None: the spec declares no known
      columns, or series are listed as not forecast.
    vertex_training: run the Trainer as a Vertex AI CustomJob; None: in the pipeline's
      own process or container.
    vertex_serving: publish blessed models as versions of a Vertex AI model, served on
      an endpoint, instead of into `serving_model_dir`.
    gbm_baseline: fit the gradient-boosted baseline (`components.gbm_baseline`) beside
      the Trainer, for the run summary.
    refit_splits: once the Evaluator has blessed the Trainer's model, train it again on
      the rows of these periods for the budget it chose, and publish that model
      (`trainer_module.refit`); empty: publish the judged model.
    refit_unblessed: refit whatever the blessing (a backtest's origins, whose blessing
      their scored future decides).
    monitoring: the policy on the earlier runs' forecasts each run scores
      (`components.forecast_scoring`), kept in `ledger_dir`.
  """
  pipeline_name: str
  pipeline_root: str
  data_root: str
  serving_model_dir: str
  dataset: DatasetSpec
  time_split: TimeSplit
  blessing: Blessing
  strides: Mapping[str, int] = dataclasses.field(default_factory=lambda: {TRAINING_SPLIT: 1})
  sample_rates: Mapping[str, float] = dataclasses.field(default_factory=dict)
  model_preset: str = hparams.DEFAULT_PRESET
  model_overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  training_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  train_steps: int = DEFAULT_TRAIN_STEPS
  input_pattern: str = '*'
  train_spans: int = 1
  schema_file: Optional[str] = None
  on_anomalies: str = 'stop'
  future_file: Optional[str] = None
  vertex_training: Optional[VertexTraining] = None
  vertex_serving: Optional[ModelVersions] = None
  gbm_baseline: bool = True
  refit_splits: Tuple[str, ...] = ()
  refit_unblessed: bool = False
  monitoring: Monitoring = Monitoring()

  def __post_init__(self):
    quantiles = self.model_config.quantiles
    if 0.5 not in quantiles:
      raise ValueError(f'the quantiles {quantiles} must include 0.5: the Evaluator scores '
                       'the median forecast')
    if self.on_anomalies not in ANOMALY_MODES:
      raise ValueError(f"on_anomalies must be one of {ANOMALY_MODES}, got '{self.on_anomalies}'")
    # Unknown keys and bad values fail here, not in the Trainer at the end of the data work.
    _ = self.training_config
    hparams.check_seasonal_lag(self.model_config.seasonal_lag, self.dataset.encoder_steps,
                               self.dataset.horizon)
    if self.train_steps < 1:
      raise ValueError(f'train_steps must be at least 1, got {self.train_steps}')
    if self.blessing.beat_lightgbm_by is not None and not self.gbm_baseline:
      raise ValueError("the blessing rule's beat_lightgbm_by compares the model with the "
                       'LightGBM baseline, which this run does not fit: drop '
                       '--no-gbm-baseline, or the rule')
    outside = sorted(set(self.refit_splits) - set(self.time_split.split_names))
    if outside:
      raise ValueError(f'refit splits {outside} are not periods of the split '
                       f'{list(self.time_split.split_names)}')
    if self.train_spans < 1:
      raise ValueError(f'train_spans must be at least 1, got {self.train_spans}')
    if self.train_spans > 1:
      span_files.check_pattern(self.input_pattern)

  @property
  def ledger_dir(self) -> str:
    """The forecast ledger's directory: beside the published models, on the same file
    system (a run's own directory locally, Cloud Storage on Vertex AI)."""
    return posixpath.join(posixpath.dirname(self.serving_model_dir.rstrip('/')),
                          FORECAST_LEDGER_DIR)

  @property
  def model_config(self) -> hparams.TFTConfig:
    return dataclasses.replace(hparams.from_name(self.model_preset), **self.model_overrides)

  @property
  def training_config(self) -> TrainingConfig:
    return TrainingConfig.from_custom_config({CONFIG_KEY: self.training_options})

  def trainer_custom_config(self) -> Dict[str, Any]:
    return {'dataset_spec': self.dataset.to_json(),
            'model_config': {'preset': self.model_preset,
                             'overrides': dict(self.model_overrides)},
            'training': dict(self.training_options)}

  def replace(self, **changes) -> 'PipelineConfig':
    return dataclasses.replace(self, **changes)


def default_strides(dataset: DatasetSpec, time_split: TimeSplit) -> Dict[str, int]:
  """Training windows at every step; evaluation (and test) windows one horizon apart."""
  return {split: forecast_starts.default_stride(split, dataset.horizon)
          for split in time_split.split_names}


def from_dataset(dataset: Dataset, *, pipeline_name: str, pipeline_root: str,
                 data_root: str, serving_model_dir: str, schema_file: Optional[str],
                 spec: Optional[DatasetSpec] = None, max_mae: Optional[float] = None,
                 refit: bool = DEFAULT_REFIT, **options) -> PipelineConfig:
  """The PipelineConfig of both runners: the data set's split, blessing rule, strides and
  model overrides, with the runner's paths and `options` (other PipelineConfig fields).

  Args:
    spec: the data set's spec with another window shape; default `dataset.spec`.
    max_mae: an absolute blessing bound on the judged windows' MAE, over the data set's own.
    refit: publish the blessed model refit on every period of the split.
  """
  spec = spec or dataset.spec
  if refit:
    options['refit_splits'] = tuple(dataset.split.split_names)
  return PipelineConfig(
      pipeline_name=pipeline_name, pipeline_root=pipeline_root, data_root=data_root,
      serving_model_dir=serving_model_dir, dataset=spec, time_split=dataset.split,
      blessing=(dataclasses.replace(dataset.blessing, max_mae=max_mae) if max_mae
                else dataset.blessing),
      strides=default_strides(spec, dataset.split),
      model_overrides=dict(dataset.model_overrides), schema_file=schema_file,
      monitoring=dataset.monitoring, **options)
