"""The one pipeline definition, shared by the local runner and the Kubeflow V2 runner.

TimeSeriesExampleGen -> StatisticsGen -> ImportSchemaGen (curated) or SchemaGen ->
ExampleValidator -> AnomalyGate, DriftCheck (the newest rows against the training rows,
`components.drift_check`) -> Transform -> Windowing -> Trainer ->
Evaluator (vs. the last blessed model) -> Pusher, InterpretationReportGen (variable
importance, attention, forecast plots) next to the model, and ForecastGen after the
Pusher: the next H steps of every series from the model the run publishes, then
ForecastScoring: the forecasts earlier runs published, scored on this run's data as their
actuals arrive (the forecast ledger, `components.forecast_scoring`). GbmBaseline, beside
the Trainer, fits a global gradient-boosted model on the same windows, which the run
summary reports beside the TFT.
With `refit_splits`, a second Trainer (the Refit) trains on the rows of those periods for
the judged model's budget once the Evaluator has judged it, and the Pusher and
ForecastGen publish and forecast with the refit model on the judged model's blessing
(`trainer_module.refit`); the last blessed model, which later runs compare with and
warm-start from, stays the judged one.

Retraining: each run ingests the newest span; with `train_spans` > 1 ExampleGen also
reads the spans before it (listed from the input files, so Vertex AI runs do the same)
and Transform and Windowing see them all, the older ones as training rows. The Trainer
warm-starts from, and the Evaluator compares with, the last model this pipeline blessed
(never another pipeline's: `components.scoped_evaluator`).
"""

import dataclasses
import json
from typing import Any, Dict, List, Optional, Sequence

from ml_metadata.proto import metadata_store_pb2
from tfx import v1 as tfx
from tfx.v1.extensions import google_cloud_ai_platform as vertex_ai

from components.anomaly_gate import AnomalyGate
from components.backtest_scoring import (GBM, MODEL, REFIT, WINDOWS, backtest_scoring,
                                         input_name)
from components.drift_check import DriftCheck
from components.forecast_gen import ForecastGen, Forecasts
from components.forecast_scoring import ForecastScoring
from components.gbm_baseline import GbmBaseline
from components.interpretation_report import InterpretationReportGen
from components.scoped_evaluator import ScopedEvaluator, rules_json
from components.step_budget_trainer import StepBudgetTrainer
from components.time_series_example_gen import TimeSeriesExampleGen
from components.versioned_pusher import VersionedPusher
from components.vertex_pusher import CONFIG_KEY as VERTEX_VERSIONS_KEY
from components.vertex_pusher import VertexPusher
from components.windowing import REFIT_SPLIT, Windowing
from evaluation.eval_config import make_eval_config, naive_forecast_names, scored_splits
from pipeline.config import PipelineConfig
from schema.time_split import EVAL_SPLIT, TRAINING_SPLIT, format_time, judged_split
from trainer_module.distribution import CONFIG_KEY as DISTRIBUTION_KEY

PREPROCESSING_FN = 'trainer_module.preprocessing.preprocessing_fn'
RUN_FN = 'trainer_module.train.run_fn'


# What a scheduled run may change without recompiling: name -> type; the default is the
# `PipelineConfig` field of the same name (`create_pipeline(..., runtime_parameters=True)`).
RUNTIME_PARAMETERS = {'data_root': str, 'train_steps': int}


def runtime_values(config: PipelineConfig, runtime_parameters: bool) -> Dict[str, Any]:
  """RUNTIME_PARAMETERS' values: pipeline parameters whose defaults are `config`'s, or
  `config`'s values as constants."""
  return {name: (tfx.dsl.experimental.RuntimeParameter(
      name=name, ptype=ptype, default=getattr(config, name)) if runtime_parameters
                 else getattr(config, name))
          for name, ptype in RUNTIME_PARAMETERS.items()}


class NewestOrNoneStrategy(tfx.dsl.experimental.LatestArtifactStrategy):
  """The newest artifact of each channel, or none when there is none yet.

  LatestArtifactStrategy returns None when a channel holds no artifact, and LocalDagRunner
  fails the resolver on that (a pipeline's first run, before any forecasts were
  published). The Kubeflow V2 compiler accepts only LatestArtifactStrategy itself, which
  it compiles into a query that may come back empty.
  """

  def resolve_artifacts(self, store, input_dict):
    return self._resolve(input_dict)


@dataclasses.dataclass
class Fit:
  """One fit's components: the data work, the Trainer and GbmBaseline (if fitted)."""
  components: List[Any]
  example_gen: Any
  statistics_gen: Any
  transform: Any
  windowing: Any
  trainer: StepBudgetTrainer
  gbm_baseline: Optional[GbmBaseline]


def make_fit(config: PipelineConfig, values: Dict[str, Any],
             base_model: Optional[tfx.dsl.Channel], suffix: str = '') -> Fit:
  """ExampleGen to Windowing, the Trainer (warm-started from `base_model`, if any) and
  GbmBaseline for `config`; every component's id ends with `suffix` (a backtest's
  origins, compiled into one pipeline)."""
  spec = config.dataset
  example_gen = TimeSeriesExampleGen(
      input_base=values['data_root'], dataset_spec=spec, time_split=config.time_split,
      input_pattern=config.input_pattern, train_spans=config.train_spans)
  statistics_gen = tfx.components.StatisticsGen(examples=example_gen.outputs['examples'])
  if config.schema_file:
    schema_gen = tfx.components.ImportSchemaGen(schema_file=config.schema_file)
  else:
    schema_gen = tfx.components.SchemaGen(statistics=statistics_gen.outputs['statistics'],
                                          infer_feature_shape=True)
  example_validator = tfx.components.ExampleValidator(
      statistics=statistics_gen.outputs['statistics'], schema=schema_gen.outputs['schema'])
  anomaly_gate = AnomalyGate(anomalies=example_validator.outputs['anomalies'],
                             mode=config.on_anomalies)
  transform = tfx.components.Transform(
      examples=example_gen.outputs['examples'], schema=schema_gen.outputs['schema'],
      preprocessing_fn=PREPROCESSING_FN, materialize=False, disable_statistics=True,
      custom_config={'dataset_spec': spec.to_json()},
      splits_config=tfx.proto.SplitsConfig(analyze=['train'],
                                            transform=list(config.time_split.split_names)))
  transform.add_upstream_node(anomaly_gate)
  windowing = Windowing(examples=example_gen.outputs['examples'],
                        transform_graph=transform.outputs['transform_graph'],
                        dataset_spec=spec, strides=dict(config.strides),
                        sample_rates=dict(config.sample_rates),
                        refit_splits=config.refit_splits)
  trainer = _make_trainer(config, windows=windowing.outputs['windows'],
                          transform_graph=transform.outputs['transform_graph'],
                          base_model=base_model, train_steps=values['train_steps'])
  gbm_baseline = GbmBaseline(
      windows=windowing.outputs['windows'], dataset_spec=spec.to_json(),
      quantiles=json.dumps(list(config.model_config.quantiles)),
      calibrate_intervals=config.training_config.calibrate_intervals,
      calibrate_on_the_period_before=(
          config.training_config.calibrate_on_the_period_before)
  ) if config.gbm_baseline else None
  components = [example_gen, statistics_gen, schema_gen, example_validator, anomaly_gate,
                transform, windowing, trainer] + ([gbm_baseline] if gbm_baseline else [])
  for component in components:
    component.with_id(f'{component.id}{suffix}')
  return Fit(components, example_gen, statistics_gen, transform, windowing, trainer,
             gbm_baseline)


def make_refit(config: PipelineConfig, values: Dict[str, Any], fit: Fit,
               base_model: Optional[tfx.dsl.Channel],
               judged_blessing: Optional[tfx.dsl.Channel]) -> StepBudgetTrainer:
  """The Refit of `fit`'s Trainer on its refit windows (`trainer_module.refit`), trained
  if `judged_blessing` blessed the judged model (always without one)."""
  return _make_trainer(config, windows=fit.windowing.outputs['windows'],
                       transform_graph=fit.transform.outputs['transform_graph'],
                       base_model=base_model, train_steps=values['train_steps'],
                       judged_model=fit.trainer.outputs['model'],
                       judged_blessing=judged_blessing)


def create_pipeline(
    config: PipelineConfig,
    metadata_connection_config: Optional[metadata_store_pb2.ConnectionConfig] = None,
    beam_pipeline_args: Optional[List[str]] = None,
    runtime_parameters: bool = False,
    for_kubeflow_v2: bool = False,
) -> tfx.dsl.Pipeline:
  """The forecasting pipeline for `config`.

  With `runtime_parameters`, the fields of RUNTIME_PARAMETERS become pipeline parameters
  whose defaults are `config`'s values (for the Kubeflow V2 runner, whose runs and
  schedules set them); without, they are constants. `for_kubeflow_v2` builds the
  resolvers that compiler accepts (see NewestOrNoneStrategy).
  """
  spec = config.dataset
  values = runtime_values(config, runtime_parameters)
  model_resolver = tfx.dsl.Resolver(
      strategy_class=tfx.dsl.experimental.LatestBlessedModelStrategy,
      model=tfx.dsl.Channel(type=tfx.types.standard_artifacts.Model),
      model_blessing=tfx.dsl.Channel(type=tfx.types.standard_artifacts.ModelBlessing),
  ).with_id('latest_blessed_model_resolver')
  # The newest forecasts this pipeline published before this run (none on its first).
  forecasts_resolver = tfx.dsl.Resolver(
      strategy_class=(tfx.dsl.experimental.LatestArtifactStrategy if for_kubeflow_v2
                      else NewestOrNoneStrategy),
      forecasts=tfx.dsl.Channel(type=Forecasts)).with_id('latest_forecasts_resolver')
  fit = make_fit(config, values, base_model=model_resolver.outputs['model'])
  trainer, windowing = fit.trainer, fit.windowing
  judged = judged_split(config.time_split.split_names)
  monitoring = json.dumps(config.monitoring.to_dict())
  drift_check = DriftCheck(
      statistics=fit.statistics_gen.outputs['statistics'],
      examples=fit.example_gen.outputs['examples'], dataset_spec=spec.to_json(),
      newest_split=judged, monitoring=monitoring)
  # Before Transform: with `drift: fail`, nothing is trained on data that moved.
  fit.transform.add_upstream_node(drift_check)
  evaluator = ScopedEvaluator(
      pipeline_name=config.pipeline_name,
      examples=windowing.outputs['windows'],
      model=trainer.outputs['model'],
      baseline_model=model_resolver.outputs['model'],
      example_splits=scored_splits(config.time_split),
      eval_config=make_eval_config(config.blessing, config.model_config.quantiles,
                                   naive_forecast_names(spec), judged),
      blessing_rules=rules_json(config.blessing, judged),
      # Only a rule that reads LightGBM's figures makes the Evaluator wait for them.
      gbm_baseline=(fit.gbm_baseline.outputs['evaluation']
                    if config.blessing.beat_lightgbm_by is not None else None)
  ).with_id('Evaluator')
  interpretation_report = InterpretationReportGen(
      model=trainer.outputs['model'], examples=windowing.outputs['windows'], split='eval')
  # After the Evaluator: a refit of a model it did not bless is a copy of it.
  published = (make_refit(config, values, fit, model_resolver.outputs['model'],
                          None if config.refit_unblessed else evaluator.outputs['blessing'])
               if config.refit_splits else trainer)
  pusher = _make_pusher(config, model=published.outputs['model'],
                        blessing=evaluator.outputs['blessing'])
  forecast_gen = ForecastGen(
      model=published.outputs['model'], model_blessing=evaluator.outputs['blessing'],
      baseline_model=model_resolver.outputs['model'],
      evaluation=evaluator.outputs['evaluation'],
      examples=fit.example_gen.outputs['examples'], future_file=config.future_file or '',
      ends_apart=config.time_split.of_each_series, judged_split=judged,
      pipeline_name=config.pipeline_name)
  # Publishing a blessed model must not wait on, nor fail with, the run's forecasts (a
  # future file that cannot be read stops ForecastGen).
  forecast_gen.add_upstream_node(pusher)
  # The resolver finds the forecasts of the run before, never this run's own.
  forecast_gen.add_upstream_node(forecasts_resolver)
  forecast_scoring = ForecastScoring(
      examples=fit.example_gen.outputs['examples'],
      earlier_forecasts=forecasts_resolver.outputs['forecasts'],
      ledger_dir=config.ledger_dir, dataset_spec=spec.to_json(), monitoring=monitoring)
  # Last: a policy that fails the run on a breach does so once the run has published.
  forecast_scoring.add_upstream_node(forecast_gen)
  components = fit.components + [drift_check, model_resolver, evaluator,
                                 interpretation_report, pusher, forecast_gen,
                                 forecasts_resolver, forecast_scoring]
  if published is not trainer:
    components.append(published)
  return tfx.dsl.Pipeline(
      pipeline_name=config.pipeline_name,
      pipeline_root=config.pipeline_root,
      components=components,
      enable_cache=False,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=beam_pipeline_args or [])


def create_backtest_pipeline(
    config: PipelineConfig, origins: Sequence['backtest.Origin'],
    metadata_connection_config: Optional[metadata_store_pb2.ConnectionConfig] = None,
    beam_pipeline_args: Optional[List[str]] = None,
    runtime_parameters: bool = False) -> tfx.dsl.Pipeline:
  """A backtest compiled into one pipeline (`<pipeline name>-backtest`): each origin a
  branch of its own (`make_fit` on `backtest.origin_settings`, ids ending `_origin_<n>`,
  no warm start, no last blessed model; its Refit with `--refit`), which a Kubeflow V2
  runner runs side by side, and after them the scoring step that writes the report
  (`components.backtest_scoring`)."""
  from pipeline import backtest

  values = runtime_values(config, runtime_parameters)
  components, channels = [], {}
  for origin in origins:
    settings = backtest.origin_settings(config, origin)
    fit = make_fit(settings, values, base_model=None, suffix=f'_origin_{origin.number}')
    if not fit.gbm_baseline:
      raise ValueError('a backtest scores the TFT beside LightGBM: leave the LightGBM '
                       'baseline on')
    components += fit.components
    channels.update({
        input_name(WINDOWS, origin.number): fit.windowing.outputs['windows'],
        input_name(MODEL, origin.number): fit.trainer.outputs['model'],
        input_name(GBM, origin.number): fit.gbm_baseline.outputs['evaluation']})
    if settings.refit_splits:
      refit = make_refit(settings, values, fit, base_model=None, judged_blessing=None)
      refit.with_id(f'{refit.id}_origin_{origin.number}')
      components.append(refit)
      channels[input_name(REFIT, origin.number)] = refit.outputs['model']
  components.append(backtest_scoring(
      channels, config.dataset, list(config.model_config.quantiles),
      {origin.number: format_time(origin.start) for origin in origins}))
  return tfx.dsl.Pipeline(
      pipeline_name=f'{config.pipeline_name}-backtest', pipeline_root=config.pipeline_root,
      components=components, enable_cache=False,
      metadata_connection_config=metadata_connection_config,
      beam_pipeline_args=beam_pipeline_args or [])


def _make_trainer(config: PipelineConfig, windows: tfx.dsl.Channel,
                  transform_graph: tfx.dsl.Channel, base_model: Optional[tfx.dsl.Channel],
                  train_steps, *, judged_model: Optional[tfx.dsl.Channel] = None,
                  judged_blessing: Optional[tfx.dsl.Channel] = None) -> StepBudgetTrainer:
  """The Trainer: in the pipeline's own process, or a Vertex AI CustomJob when configured;
  with `judged_model`, the Refit of that model on the windows of every refit period, if
  `judged_blessing` blessed it.

  It warm-starts from `base_model` (the last blessed model) when the architecture matches.
  """
  custom_config = config.trainer_custom_config()
  vertex = config.vertex_training
  if vertex is not None:
    custom_config.update({
        DISTRIBUTION_KEY: vertex.distribution,
        vertex_ai.ENABLE_VERTEX_KEY: True,
        vertex_ai.VERTEX_REGION_KEY: vertex.region,
        vertex_ai.TRAINING_ARGS_KEY: vertex.training_args(),
    })
  return StepBudgetTrainer(
      run_fn=RUN_FN, examples=windows, transform_graph=transform_graph,
      base_model=base_model, train_steps=train_steps,
      train_splits=[REFIT_SPLIT if judged_model else TRAINING_SPLIT],
      eval_splits=[EVAL_SPLIT], custom_config=custom_config, on_vertex=vertex is not None,
      judged_model=judged_model, judged_blessing=judged_blessing).with_id('Refit' if judged_model else 'Trainer')


def _make_pusher(config: PipelineConfig, model: tfx.dsl.Channel,
                 blessing: tfx.dsl.Channel) -> tfx.components.Pusher:
  """The Pusher: a new version in `serving_model_dir` (published atomically), or a new
  version of the Vertex AI model, served on its endpoint, when configured."""
  if config.vertex_serving is None:
    return VersionedPusher(
        model=model, model_blessing=blessing,
        push_destination=tfx.proto.PushDestination(
            filesystem=tfx.proto.PushDestination.Filesystem(
                base_directory=config.serving_model_dir))).with_id('Pusher')
  return VertexPusher(model=model, model_blessing=blessing, custom_config={
      VERTEX_VERSIONS_KEY: dataclasses.asdict(config.vertex_serving)}).with_id('Pusher')
