"""What a pipeline run did, read back from its ML Metadata store.

Used by the local runner's closing summary and by the end-to-end test.
"""

import dataclasses
import os
from typing import Dict, List, Optional, Sequence

import tensorflow_model_analysis as tfma
from google.protobuf import text_format
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2
from tensorflow_model_analysis.proto import validation_result_pb2
from tfx.utils import path_utils

from components import delivered_forecasts
from components import drift_check, forecast_scoring
from components.forecast_gen import Forecasts
from components.gbm_baseline import BaselineEvaluation, figures_on, read_result
from components.interpretation_report import InterpretationReport
from components.scoped_evaluator import (BASELINE_LEFT_OUT_KEY, BEHIND_LIGHTGBM_KEY,
                                         DECIDED_BY_KEY)
from components.split_report import (AFTER_END, BOUNDARIES, SERIES_BOUNDARIES, SPANS_READ,
                                     UNDECLARED_COLUMNS, UNTRAINED_CALENDAR,
                                     describe_untrained_calendar, read_split_report)
from evaluation import results
from evaluation.metrics import MAE_VS_BEST_NAIVE, NAIVE_MAE_PREFIX, coverage_name, q_risk_name
from schema.dataset_file import Blessing
from schema.time_split import EVAL_SPLIT, TEST_SPLIT, judged_split
from trainer_module import interval_calibration, training_record, warm_start
from trainer_module.export import quantile_key

_STATE_NAMES = {v: k for k, v in metadata_store_pb2.Execution.State.items()}
_STEPS_SHOWN = 12  # a horizon this short has each step's value shown
_REASONS_SHOWN = 3  # kinds of reason a series was not forecast, commonest first


@dataclasses.dataclass
class ComponentRun:
  node_id: str
  state: str
  seconds: float


@dataclasses.dataclass
class RunSummary:
  """What a run did. `metrics` and `metrics_by_step` are the judged split's: the windows
  the blessing was decided on, the test windows when the spec holds a test period out
  (nothing chose on them), else the eval windows."""
  components: List[ComponentRun]
  metrics: Dict[str, float]  # the judged split's, e.g. {'mean_absolute_error': 3.2}
  metrics_by_step: Dict[str, List[float]]  # the judged split's, one value per horizon step
  blessed: Optional[bool]
  pushed_to: Optional[str]
  model_uri: Optional[str]
  evaluation_uri: Optional[str] = None
  report_uri: Optional[str] = None
  forecasts_uri: Optional[str] = None
  calibration: Optional[Dict[str, object]] = None  # the model's calibration.json
  warm_start: Optional[str] = None  # how the model's training began (warm_start.Outcome)
  training: Optional[str] = None  # how it went (training_record.describe)
  not_blessed_because: List[str] = dataclasses.field(default_factory=list)
  baseline_left_out: Optional[str] = None  # why the last blessed model was not compared
  baseline_mae: Optional[float] = None  # the last blessed model's, on the judged windows
  split_report: Optional[Dict[str, object]] = None  # ExampleGen's split_report.json
  gbm_baseline: Optional[Dict[str, object]] = None  # GbmBaseline's gbm_baseline.json
  judged_split: str = EVAL_SPLIT  # whose windows `metrics` are
  decided_by: Optional[str] = None  # the windows and rules the blessing was decided on
  eval_metrics: Dict[str, float] = dataclasses.field(default_factory=dict)  # when test is
  # judged: the eval windows', which chose the epoch (and the bands)
  refit: Optional[str] = None  # what the Refit did (`trainer_module.refit`); None: no Refit
  scores_uri: Optional[str] = None  # ForecastScoring's output: the earlier forecasts scored
  drift_uri: Optional[str] = None  # DriftCheck's output: the newest rows against training

  def rows_read(self) -> str:
    """'train 1729 | eval 432 (eval from 2024-03-14 00:00:00 UTC; spans 3, 4: ...)' from
    the split report, or ''. ExampleGen places the boundaries in UTC."""
    if not self.split_report:
      return ''
    counts = ' | '.join(f'{name} {count}' for name, count in self.split_report.items()
                        if isinstance(count, int) and (count or name != AFTER_END))
    # Where the boundaries fell; placed per series, from the earliest place to the latest.
    per_series = self.split_report.get(SERIES_BOUNDARIES, {})
    notes = [f'{name.replace("_start", "")} from {time} UTC' if name != 'end'
             else f'end at {time} UTC'
             for name, time in self.split_report[BOUNDARIES].items()
             if name not in per_series]
    notes += [f'{name.replace("_start", "")} from {earliest} to {latest} UTC, each series '
              'its own last steps' for name, (earliest, latest) in per_series.items()]
    spans = self.split_report[SPANS_READ]
    if len(spans) > 1:
      notes.append(f"spans {', '.join(map(str, spans))}: every row of the older spans is "
                   "training data, their eval periods included; the newest span's own split "
                   'gives the eval windows')
    return f"{counts} ({'; '.join(notes)})" if notes else counts

  def format(self, pipeline_root: str) -> str:
    lines = ['', 'Pipeline run summary', f'  artifacts:   {pipeline_root}']
    lines += [f'  {c.node_id:<32} {c.state.lower():<9} {c.seconds:7.1f} s'
              for c in self.components]
    rows = self.rows_read()
    if rows:
      lines.append(f'  rows:        {rows}')
    undeclared = (self.split_report or {}).get(UNDECLARED_COLUMNS)
    if undeclared:
      lines.append(f'    columns {undeclared} of the data are not in the spec, so the run left '
                   'them out: declare them (docs/data.md) to train on them')
    untrained = (self.split_report or {}).get(UNTRAINED_CALENDAR)
    if untrained:
      lines.append(f'    calendar features {list(untrained)} take values after the training '
                   f'period that no training row does ({describe_untrained_calendar(untrained)})'
                   ': forecasts at those times rest on embeddings no training row trained; '
                   'leave them out of calendar_features, as init does, until the training '
                   'period holds them')
    drift = self.drift_uri and drift_check.read_report(self.drift_uri)
    if drift:
      lines += [f'  {"drift:" if index == 0 else "":<13}{line}'
                for index, line in enumerate(drift_check.describe(drift))]
    if self.model_uri:
      lines.append(f'  model:       {self.model_uri}')
    if self.refit:
      lines.append(f'  refit:       {self.refit}')
    chose = 'the epoch and the bands' if self.calibration else 'the epoch'
    if self.judged_split == TEST_SPLIT:
      lines.append('  test metrics, held out (original units; nothing chose on the test '
                   'windows, and the blessing was decided on them):')
    else:
      lines.append(f'  eval metrics (original units; the eval windows also chose {chose}):')
    lines += [f'    {name:<28} {value:.4f}' for name, value in sorted(self.metrics.items())]
    lines += [f'    {name:<28} {_by_step(values)}'
              for name, values in sorted(self.metrics_by_step.items())]
    lines += [f'  {line}' for line in self._beside_baselines(self.metrics, self.judged_split)]
    if self.eval_metrics:
      lines.append(f'  eval windows (they chose {chose}, so their figures flatter the '
                   'model):')
      lines += [f'    {line}' for line in self._beside_baselines(self.eval_metrics,
                                                                 EVAL_SPLIT)]
    elif self.metrics:
      lines.append('    no test period is held out, so no figure here is one that nothing '
                   "chose on: give the spec's split a test_start (docs/data.md)")
    if self.gbm_baseline and 'error' in self.gbm_baseline:
      lines.append(f'    the LightGBM baseline could not be fitted: {self.gbm_baseline["error"]}')
    for index, text in enumerate(filter(None, (self.training, self.warm_start))):
      lines.append(f'  {"training:" if index == 0 else "":<13}{text}')
    if self.calibration:
      lines.append(f'  intervals:   {interval_calibration.describe(self.calibration)}')
    if self.report_uri:
      lines.append(f'  report:      {os.path.join(self.report_uri, "index.html")}')
    lines.append(f'  blessed:     {"yes" if self.blessed else "no"}'
                 + (f', on {self.decided_by}' if self.decided_by else ''))
    lines += [f'    because {reason}' for reason in self.not_blessed_because]
    if self.baseline_mae is not None:
      lines.append(f"    the last blessed model's {self.judged_split} MAE on the same "
                   f'windows: {self.baseline_mae:.4f}')
    if self.baseline_left_out:
      lines.append('    without comparing the last blessed model, since '
                   f'{self.baseline_left_out}')
    lines.append(f'  pushed to:   {self.pushed_to or "not pushed (model not blessed)"}')
    report = self.forecasts_uri and delivered_forecasts.read_report(self.forecasts_uri)
    if report:
      shape = (f'{report["series_forecast"]} series x {report["horizon"]} steps'
               if report['series_forecast'] else 'no series forecast: the header only')
      written = os.path.join(self.forecasts_uri, delivered_forecasts.FORECASTS_CSV)
      lines.append(f'  forecasts:   {written}'
                   f' ({shape}{"" if report["model_blessed"] else ", by a model not blessed"})')
      if report['series_not_forecast']:
        lines.append(f'  not forecast: {report["series_not_forecast"]} series, reasons in '
                     f'{os.path.join(self.forecasts_uri, delivered_forecasts.NOT_FORECAST_CSV)}')
        lines += [f'    {kind["series"]} {kind["summary"]}, e.g. {kind["example"]}'
                  for kind in report['reasons_not_forecast'][:_REASONS_SHOWN]]
        more = report['reasons_not_forecast'][_REASONS_SHOWN:]
        if more:
          lines.append(f'    {sum(kind["series"] for kind in more)} more for {len(more)} '
                       f'other reason{"s" if len(more) > 1 else ""}')
    scoring = self.scores_uri and forecast_scoring.read_report(self.scores_uri)
    if scoring:
      for index, line in enumerate(forecast_scoring.describe(scoring, self.scores_uri)):
        lines.append(f'  {"scored:" if index == 0 else "":<13}{line}')
    return '\n'.join(lines)


  def _beside_baselines(self, metrics: Dict[str, float], split: str) -> List[str]:
    """The lines that put one split's figures beside LightGBM's and the naive forecasts'."""
    comparison = naive_comparison(metrics, self._gbm(split))
    lines = []
    if comparison:
      beside = ('a global LightGBM and the naive forecasts' if self._gbm(split)
                else 'the naive forecasts')
      lines.append(f'MAE beside {beside}: {comparison}')
    behind = behind_gbm(metrics, self._gbm(split), split)
    if behind:
      lines.append(f'  {behind}')
    bands = bands_beside_gbm(metrics, self._gbm(split), (self.gbm_baseline or {}).get(
        'quantiles', []))
    if bands:
      lines.append(bands)
    return lines

  def _gbm(self, split: str) -> Dict[str, object]:
    """GbmBaseline's figures on `split`'s windows ({} if it has none)."""
    return figures_on(self.gbm_baseline, split)


def naive_comparison(metrics: Dict[str, float], gbm: Dict[str, object]) -> str:
  """'model 2.17 | LightGBM 2.25 | repeat_last 3.10 | seasonal_168 2.84 (best naive)'
  (LightGBM when `gbm` has its figures on the same windows), or ''."""
  naive = {name[len(NAIVE_MAE_PREFIX):]: value for name, value in metrics.items()
           if name.startswith(NAIVE_MAE_PREFIX)}
  if not naive or 'mean_absolute_error' not in metrics:
    return ''
  best = min(naive, key=naive.get)
  parts = [f'model {metrics["mean_absolute_error"]:.4g}']
  if gbm:
    parts.append(f'LightGBM {gbm["mae"]:.4g}')
  parts += [f'{name} {value:.4g}{" (best naive)" if name == best else ""}'
            for name, value in naive.items()]
  return ' | '.join(parts)


def bands_beside_gbm(metrics: Dict[str, float], gbm: Dict[str, object],
                     quantiles: Sequence[float]) -> str:
  """'q-risk P10 / P50 / P90 beside LightGBM's: model 0.021 / 0.041 / 0.019 | LightGBM
  0.023 / 0.043 / 0.02; P10-P90 coverage 0.802 | 0.799' when both have them, or ''."""
  names = [q_risk_name(q) for q in quantiles]
  if not quantiles or not gbm or any(name not in metrics for name in names):
    return ''
  keys = [quantile_key(q) for q in quantiles]
  risks = lambda values: ' / '.join(f'{value:.4g}' for value in values)
  text = (f"q-risk {' / '.join(key.upper() for key in keys)} beside LightGBM's: model "
          f"{risks(metrics[name] for name in names)} | LightGBM "
          f"{risks(gbm['q_risk'][key] for key in keys)}")
  coverage = coverage_name(quantiles)
  band = interval_calibration.band_key(quantiles, 0, -1)
  if coverage in metrics and band in gbm.get('coverage', {}):
    text += (f'; {keys[0].upper()}-{keys[-1].upper()} coverage '
             f'{metrics[coverage]:.3f} | {gbm["coverage"][band]:.3f}')
  return text


def behind_gbm(metrics: Dict[str, float], gbm: Dict[str, object], split: str) -> str:
  """A sentence when the model's MAE on `split` is above the gradient-boosted baseline's,
  or ''."""
  model = metrics.get('mean_absolute_error')
  gbm_mae = gbm.get('mae')
  if gbm_mae is None or model is None or not model > gbm_mae:
    return ''
  above = f'{100 * (model / gbm_mae - 1):.1f}%' if gbm_mae > 0 else f'{model - gbm_mae:.4g}'
  return (f"the model's {split} MAE is {above} above LightGBM's on the same windows "
          '(docs/pipeline.md: the gradient-boosted baseline)')


def _by_step(values: Sequence[float]) -> str:
  """Every step's value of a short horizon; of a longer one the first, the last and the
  highest, which the ends alone can hide."""
  if len(values) <= _STEPS_SHOWN:
    return ' '.join(f'{value:.4f}' for value in values)
  worst = max(range(len(values)), key=lambda step: values[step])
  return (f'{values[0]:.4f} (step 1) ... {values[-1]:.4f} (step {len(values)}); highest '
          f'{values[worst]:.4f} (step {worst + 1})')


def latest_run_summary(connection_config: metadata_store_pb2.ConnectionConfig,
                       pipeline_name: str) -> RunSummary:
  """The summary of the most recent run of `pipeline_name`."""
  store = metadata_store.MetadataStore(connection_config)
  pipeline = store.get_context_by_type_and_name('pipeline', pipeline_name)
  if pipeline is None:
    raise ValueError(f'no runs of pipeline {pipeline_name} in the metadata store')
  pipeline_executions = {e.id for e in store.get_executions_by_context(pipeline.id)}
  runs = [run for run in store.get_contexts_by_type('pipeline_run')
          if any(e.id in pipeline_executions for e in store.get_executions_by_context(run.id))]
  run = max(runs, key=lambda context: context.create_time_since_epoch)
  executions = sorted(store.get_executions_by_context(run.id),
                      key=lambda e: e.create_time_since_epoch)
  components = [ComponentRun(
      node_id=node_id(store, execution),
      state=_STATE_NAMES.get(execution.last_known_state, 'UNKNOWN'),
      seconds=(execution.last_update_time_since_epoch - execution.create_time_since_epoch)
      / 1000.0) for execution in executions]
  artifacts = store.get_artifacts_by_context(run.id)
  types = {t.id: t.name for t in store.get_artifact_types()}

  def latest(type_name):
    found = [a for a in artifacts if types.get(a.type_id) == type_name]
    return max(found, key=lambda a: a.id) if found else None

  evaluation, blessing, pushed, report, gbm = (latest(name) for name in (
      'ModelEvaluation', 'ModelBlessing', 'PushedModel', InterpretationReport.TYPE_NAME,
      BaselineEvaluation.TYPE_NAME))
  # Outputs of their node: a run's inputs include the earlier run's forecasts and model.
  model, refit, forecasts, scores, drift = (
      _output(store, executions, node, type_name) for node, type_name in (
          ('Trainer', 'Model'), ('Refit', 'Model'), ('ForecastGen', Forecasts.TYPE_NAME),
          ('ForecastScoring', forecast_scoring.ForecastScores.TYPE_NAME),
          ('DriftCheck', drift_check.DriftReport.TYPE_NAME)))
  pushed_to = None
  if pushed is not None and pushed.custom_properties['pushed'].int_value:
    pushed_to = pushed.custom_properties['pushed_destination'].string_value
  by_split = results.split_metrics(evaluation.uri) if evaluation else {}
  judged = judged_split(by_split)
  metrics = by_split.get(judged, {})
  # Windowing's windows are Examples too, without a split report: the newest with one.
  reports = (read_split_report(a.uri) for a in sorted(artifacts, key=lambda a: a.id,
                                                        reverse=True)
             if types.get(a.type_id) == 'Examples')
  split_report = next((report for report in reports if report), None)
  return RunSummary(
      components=components,
      metrics={k: v for k, v in metrics.items() if isinstance(v, float)},
      metrics_by_step={k: v for k, v in metrics.items() if isinstance(v, list)},
      blessed=(bool(blessing.custom_properties['blessed'].int_value) if blessing else None),
      pushed_to=pushed_to,
      model_uri=model.uri if model else None,
      evaluation_uri=evaluation.uri if evaluation else None,
      report_uri=report.uri if report else None,
      forecasts_uri=forecasts.uri if forecasts else None,
      calibration=(interval_calibration.read(path_utils.serving_model_path(model.uri))
                   if model else None),
      warm_start=_warm_start(model.uri) if model else None,
      training=_training(model.uri) if model else None,
      not_blessed_because=((blessing_failures(evaluation.uri, judged) if evaluation else [])
                           + list(filter(None, [_custom_text(blessing, BEHIND_LIGHTGBM_KEY)]))),
      decided_by=_custom_text(blessing, DECIDED_BY_KEY),
      baseline_left_out=_custom_text(blessing, BASELINE_LEFT_OUT_KEY),
      baseline_mae=results.baseline_mae(evaluation.uri, judged) if evaluation else None,
      split_report=split_report,
      gbm_baseline=read_result(gbm.uri) if gbm else None,
      judged_split=judged,
      eval_metrics=({k: v for k, v in by_split.get(EVAL_SPLIT, {}).items()
                     if isinstance(v, float)} if judged == TEST_SPLIT else {}),
      refit=_refit(refit.uri) if refit else None,
      scores_uri=scores.uri if scores else None,
      drift_uri=drift.uri if drift else None)


def _output(store: metadata_store.MetadataStore, executions, node: str,
            type_name: str) -> Optional[metadata_store_pb2.Artifact]:
  """The artifact of type `type_name` the run's node `node` wrote, or None (no such node
  ran, or it wrote none)."""
  ran = [execution.id for execution in executions if node_id(store, execution) == node]
  written = {event.artifact_id for event in store.get_events_by_execution_ids(ran)
             if event.type == metadata_store_pb2.Event.OUTPUT}
  types = {t.id: t.name for t in store.get_artifact_types()}
  found = [artifact for artifact in store.get_artifacts_by_id(sorted(written))
           if types.get(artifact.type_id) == type_name]
  return found[-1] if found else None


def _refit(model_uri: str) -> str:
  """What the Refit wrote at `model_uri`: its training, or that it copied the judged
  model, which was not blessed."""
  records = training_record.read(path_utils.serving_model_path(model_uri))
  if not any(record.get('refit') for record in records):
    return 'none: the judged model was not blessed, so it was not refit'
  return (f'{training_record.describe(records)}, with its calibration; this is the model '
          f'published and forecast with ({model_uri})')


def _custom_text(artifact, key: str) -> Optional[str]:
  """An artifact's text custom property `key`, or None (no artifact, or no such property)."""
  if artifact is None or key not in artifact.custom_properties:
    return None
  return artifact.custom_properties[key].string_value


def _warm_start(model_uri: str) -> str:
  """'warm start: initialised every weight from ...' as the Trainer recorded it."""
  return f'warm start: {warm_start.read_outcome(path_utils.serving_model_path(model_uri)).message}'


def _training(model_uri: str) -> str:
  """'stopped early after 4 of 20 epochs of 50 steps; ...' as the Trainer recorded it."""
  return training_record.describe(training_record.read(path_utils.serving_model_path(model_uri)))


def blessing_failures(evaluation_uri: str, judged: str) -> List[str]:
  """Why the Evaluator at `evaluation_uri` did not bless the model on the `judged` split's
  windows ([] if it did)."""
  return describe_failures(tfma.load_validation_result(evaluation_uri), judged)


def describe_failures(result: validation_result_pb2.ValidationResult,
                      judged: str = EVAL_SPLIT) -> List[str]:
  """One sentence per blessing rule a TFMA validation result broke on the `judged`
  split's windows, naming the rule's key in the data set's `blessing`."""
  if result.validation_ok:
    return []
  reasons = [_describe_failure(failure, judged)
             for per_slice in result.metric_validations_per_slice
             for failure in per_slice.failures]
  # Otherwise TFMA found no slice or threshold to check; its own record says which.
  return reasons or [f'the Evaluator could not check the rules: '
                     f'{text_format.MessageToString(result, as_one_line=True)}']


def _describe_failure(failure: validation_result_pb2.ValidationFailure, judged: str) -> str:
  name, value = failure.metric_key.name, failure.metric_value.double_value.value
  threshold = failure.metric_threshold
  if failure.metric_key.is_diff:
    return Blessing.missed('max_relative_regression', threshold.change_threshold.relative.value,
                           judged, f"{value:.4g} above the last blessed model's")
  bound = threshold.value_threshold.upper_bound.value
  if name == MAE_VS_BEST_NAIVE:
    return Blessing.missed('beat_naive_by', 1 - bound, judged,
                           f"{value:.4g} times the best naive forecast's")
  if name == 'mean_absolute_error':
    return Blessing.missed('max_mae', bound, judged, f'{value:.4g}')
  return failure.message or f'{name} {value:.4g} broke its threshold: {threshold}'


def node_id(store: metadata_store.MetadataStore, execution) -> str:
  """The id of the pipeline node that ran `execution`, from its node context."""
  node_type = store.get_context_type('node').id
  for context in store.get_contexts_by_execution(execution.id):
    if context.type_id == node_type:
      return context.name.split('.', 1)[-1]
  return f'execution {execution.id}'
