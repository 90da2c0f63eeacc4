"""The naive forecasts of each window, their scores beside the model's, and the rule that
blesses a model only when it beats the best of them."""

import numpy as np
import pytest
from tensorflow_model_analysis.metrics import metric_types

from evaluation import metrics as forecast_metrics
from evaluation.eval_config import make_eval_config, naive_forecast_names
from schema import datasets
from schema.dataset_file import Blessing
from trainer_module.naive_forecasts import naive_forecasts, periods_for

HISTORY = np.array([[1., 2., 3., 4., 5., 6.], [10., 0., 10., 0., 10., 0.]], np.float32)


def test_repeat_last_and_seasonal_naive_by_hand():
  forecasts = {name: values.numpy().tolist()
               for name, values in naive_forecasts(HISTORY, 5, [2, 4]).items()}
  assert forecasts == {
      'repeat_last': [[6.] * 5, [0.] * 5],
      'history_mean': [[3.5] * 5, [5.] * 5],
      'seasonal_2': [[5., 6., 5., 6., 5.], [10., 0., 10., 0., 10.]],
      'seasonal_4': [[3., 4., 5., 6., 3.], [10., 0., 10., 0., 10.]],
  }


def test_seasons_that_fit_in_the_history_give_the_naive_forecasts_of_a_spec():
  assert periods_for((24, 168), 168) == [24, 168]
  assert periods_for((24, 168), 100) == [24]
  assert naive_forecast_names(datasets.SYNTHETIC) == ['repeat_last', 'history_mean',
                                                      'seasonal_24', 'seasonal_168']
  assert naive_forecast_names(datasets.STALLION) == ['repeat_last', 'history_mean',
                                                     'seasonal_12']


def _window(label, p50, naive):
  return metric_types.StandardMetricInputs(
      labels=np.array(label), predictions={'p10': np.array(p50), 'p50': np.array(p50),
                                           'p90': np.array(p50),
                                           **{f'naive_{k}': np.array(v)
                                              for k, v in naive.items()}})


def test_naive_comparison_scores_every_forecast_on_the_same_windows():
  [computation] = forecast_metrics.NaiveComparison(['repeat_last', 'seasonal_2']).computations()
  combiner = computation.combiner
  windows = [_window([1., 2.], [1., 3.], {'repeat_last': [0., 0.], 'seasonal_2': [2., 2.]}),
             _window([4., 4.], [4., 4.], {'repeat_last': [2., 2.], 'seasonal_2': [4., 5.]})]
  halves = [combiner.add_input(combiner.create_accumulator(), window) for window in windows]
  output = {key.name: value for key, value in
            combiner.extract_output(combiner.merge_accumulators(halves)).items()}
  # Absolute errors over 4 steps: model 0+1+0+0, repeat-last 1+2+2+2, seasonal 1+0+0+1.
  assert output == pytest.approx({'naive_mae_repeat_last': 7 / 4, 'naive_mae_seasonal_2': 2 / 4,
                                  'mae_vs_best_naive': (1 / 4) / (2 / 4)})


def test_a_model_without_the_naive_outputs_is_an_error_naming_them():
  [computation] = forecast_metrics.NaiveComparison(['repeat_last']).computations()
  combiner = computation.combiner
  served = metric_types.StandardMetricInputs(labels=np.array([1.]),
                                             predictions={'p50': np.array([1.])})
  with pytest.raises(ValueError, match=r"no outputs \['naive_repeat_last'\] \(it returns "
                     r"\['p50'\]\)"):
    combiner.add_input(combiner.create_accumulator(), served)


def _per_slice_thresholds(eval_config):
  by_class = {m.class_name: m for spec in eval_config.metrics_specs for m in spec.metrics}
  return (by_class['MeanAbsoluteError'].per_slice_thresholds,
          by_class['NaiveComparison'].per_slice_thresholds)


def _thresholds(eval_config):
  [mae], naive = _per_slice_thresholds(eval_config)
  return mae.threshold, (naive[0].threshold if naive else None)


@pytest.mark.parametrize('judged', ['eval', 'test'])
def test_the_rule_is_judged_on_the_judged_split_windows_only(judged):
  mae, naive = _per_slice_thresholds(make_eval_config(Blessing(), [0.1, 0.5, 0.9],
                                                      ['repeat_last'], judged))
  for threshold in list(mae) + list(naive):
    [slicing] = threshold.slicing_specs
    assert dict(slicing.feature_values) == {'window_split': judged}
    assert not slicing.feature_keys


def test_the_default_rule_bounds_the_ratio_to_the_best_naive_mae():
  mae, naive = _thresholds(make_eval_config(Blessing(), [0.1, 0.5, 0.9], ['repeat_last'],
                                            'eval'))
  assert naive.value_threshold.upper_bound.value == 1.0
  assert not mae.HasField('value_threshold')
  assert mae.change_threshold.relative.value == 0.0  # never worse than the last blessed

  mae, naive = _thresholds(make_eval_config(
      Blessing(beat_naive_by=0.1, max_mae=3.0), [0.1, 0.5, 0.9], ['repeat_last'], 'eval'))
  assert naive.value_threshold.upper_bound.value == pytest.approx(0.9)
  assert mae.value_threshold.upper_bound.value == 3.0

  _, naive = _thresholds(make_eval_config(Blessing(beat_naive_by=None, max_mae=3.0),
                                          [0.1, 0.5, 0.9], ['repeat_last'], 'eval'))
  assert naive is None
