"""The Evaluator's config: what it scores and when it blesses a model.

MAE and MSE of the median forecast, the quantile metrics and the naive forecasts' MAEs of
`evaluation.metrics`, per split (eval, and test when the spec holds one out) and per
split and series, in original units; blessing by the data set's rule
(`schema.dataset_file.Blessing`) on the judged split (`schema.time_split.judged_split`):
the test windows, which nothing chose on, when there are any, else the eval windows.

The candidate reads the windows through its Evaluator signature, already transformed by
this run's Transform. The last blessed model (the baseline), whose Transform may have
other vocabularies and statistics, reads their raw columns through its serving signature
and its own Transform (`schema.window_layout`); it is scored by MAE and MSE only, which
are all the regression rule needs, whatever quantiles it forecasts. Without a baseline,
TFX's Evaluator drops its model spec.
"""

import json
from typing import List, Sequence, Tuple

import tensorflow_model_analysis as tfma

from evaluation import metrics
from schema.dataset_file import Blessing
from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_KEY
from schema.time_split import EVAL_SPLIT, TEST_SPLIT, TimeSplit
from schema.window_layout import TARGET_FUTURE, WINDOW_SPLIT
from trainer_module import naive_forecasts
from trainer_module.export import EVAL_SIGNATURE, SERVING_SIGNATURE, quantile_key

MEDIAN_FORECAST = quantile_key(0.5)
CANDIDATE = tfma.CANDIDATE_KEY  # the model specs' names
BASELINE = tfma.BASELINE_KEY


def scored_splits(split: TimeSplit) -> List[str]:
  """The splits the Evaluator scores: every one but train."""
  return [name for name in split.split_names if name in (EVAL_SPLIT, TEST_SPLIT)]


def split_slice(split_name: str) -> Tuple[Tuple[str, str]]:
  """The slice key of one split's windows, as `tfma.load_metrics` names it."""
  return ((WINDOW_SPLIT, split_name),)


def make_eval_config(blessing: Blessing, quantiles: Sequence[float],
                     naive_names: Sequence[str], judged: str) -> tfma.EvalConfig:
  """Scores the forecasts over the windows of each split, and of each split and series.

  MAE and MSE of the median forecast, the quantile metrics of
  `evaluation.metrics` (pinball loss, q-risk, coverage, MAE per horizon step) and
  the naive forecasts' MAEs (`naive_names`, from the model's Evaluator signature), all
  in original units. Blessing looks at the `judged` split's slice only: the median's MAE
  relative to the best naive forecast's, its absolute MAE and its change from the last
  blessed model, as `blessing` sets them. The other split's and the per-series metrics
  are for diagnosis.
  """
  judged_windows = tfma.SlicingSpec(feature_values={WINDOW_SPLIT: judged})

  def on_judged(threshold: tfma.MetricThreshold) -> tfma.PerSliceMetricThreshold:
    return tfma.PerSliceMetricThreshold(slicing_specs=[judged_windows], threshold=threshold)

  def at_most(value: float) -> tfma.GenericValueThreshold:
    return tfma.GenericValueThreshold(upper_bound={'value': value})

  mae_threshold = tfma.MetricThreshold(change_threshold=tfma.GenericChangeThreshold(
      direction=tfma.MetricDirection.LOWER_IS_BETTER,
      relative={'value': blessing.max_relative_regression}))
  if blessing.max_mae is not None:
    mae_threshold.value_threshold.CopyFrom(at_most(blessing.max_mae))
  naive_thresholds = []
  if blessing.beat_naive_by is not None:
    naive_thresholds.append(on_judged(tfma.MetricThreshold(
        value_threshold=at_most(1.0 - blessing.beat_naive_by))))
  return tfma.EvalConfig(
      model_specs=[_model_spec(CANDIDATE, EVAL_SIGNATURE),
                   _model_spec(BASELINE, SERVING_SIGNATURE, is_baseline=True)],
      slicing_specs=[tfma.SlicingSpec(feature_keys=[WINDOW_SPLIT]),
                     tfma.SlicingSpec(feature_keys=[WINDOW_SPLIT, SERIES_KEY])],
      metrics_specs=[
          tfma.MetricsSpec(metrics=[
              tfma.MetricConfig(class_name='ExampleCount'),
              tfma.MetricConfig(class_name='MeanAbsoluteError',
                                per_slice_thresholds=[on_judged(mae_threshold)]),
              tfma.MetricConfig(class_name='MeanSquaredError'),
          ]),
          tfma.MetricsSpec(model_names=[CANDIDATE], metrics=[
              tfma.MetricConfig(class_name=metrics.QuantileForecastMetrics.__name__,
                                module=metrics.__name__,
                                config=json.dumps({'quantiles': list(quantiles)})),
              tfma.MetricConfig(class_name=metrics.NaiveComparison.__name__,
                                module=metrics.__name__,
                                config=json.dumps({'naive_names': list(naive_names)}),
                                per_slice_thresholds=naive_thresholds),
          ])])


def _model_spec(name: str, signature: str, is_baseline: bool = False) -> tfma.ModelSpec:
  """A model read through `signature`, its median forecast scored against the windows'
  future."""
  return tfma.ModelSpec(name=name, signature_name=signature, model_type=tfma.TF_GENERIC,
                        label_key=TARGET_FUTURE, prediction_key=MEDIAN_FORECAST,
                        is_baseline=is_baseline)


def naive_forecast_names(spec: DatasetSpec) -> List[str]:
  """The naive forecasts the exported model returns for `spec`'s windows."""
  return naive_forecasts.forecast_names(
      naive_forecasts.periods_for(spec.frequency.seasons, spec.encoder_steps))
