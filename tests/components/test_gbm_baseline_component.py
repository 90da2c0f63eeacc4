"""GbmBaseline on a real Windowing layout: its record, and a failure recorded, not raised."""

import json
import os

import lightgbm
import pytest
from tfx.types import artifact_utils, standard_artifacts

from components import gbm_baseline as component
from schema import window_report
from evaluation import gbm_baseline


def _call(tiny, tmp_path, **parameters):
  windows = standard_artifacts.Examples()
  windows.uri = os.path.dirname(os.path.dirname(tiny.train_files[0]))
  with open(os.path.join(windows.uri, window_report.WINDOW_REPORT_FILE), 'w') as f:
    json.dump({'windows': {'train': tiny.train_window_count,
                           'eval': len(tiny.eval_windows)}}, f)  # as Windowing writes it
  windows.split_names = artifact_utils.encode_split_names(['train', 'eval'])
  evaluation = component.BaselineEvaluation()
  evaluation.uri = str(tmp_path / 'evaluation')
  component.GbmBaseline.test_call(windows=windows, evaluation=evaluation,
                                  dataset_spec=tiny.spec.to_json(), **parameters)
  with open(os.path.join(evaluation.uri, component.RESULT_FILE)) as f:
    return json.load(f)


def test_it_records_the_eval_mae_beside_the_naive_forecasts(tiny, tmp_path):
  result = _call(tiny, tmp_path)
  assert result['eval_windows'] == result['scored_windows'] == len(tiny.eval_windows)
  assert result['training_windows'] == result['training_windows_available'] == (
      tiny.train_window_count)
  assert result['mae'] > 0 and set(result['naive_mae']) == {'repeat_last', 'history_mean'}
  assert component.read_result(str(tmp_path / 'evaluation')) == result
  assert component.read_result(str(tmp_path)) is None


def test_it_fits_the_quantiles_it_is_given_and_calibrates_only_if_asked(tiny, tmp_path):
  result = _call(tiny, tmp_path, quantiles='[0.25, 0.5, 0.75]', calibrate_intervals=False)
  assert result['quantiles'] == [0.25, 0.5, 0.75]
  assert set(result['q_risk']) == {'p25', 'p50', 'p75'}
  assert set(result['coverage']) == {'0.25:0.75'}
  assert result['interval_factors'] is None


def test_it_calibrates_on_the_period_before_the_eval_period_if_asked(tiny, tmp_path):
  from trainer_module import earlier_period
  alone = _call(tiny, tmp_path / 'alone')
  pooled = _call(tiny, tmp_path / 'pooled', calibrate_on_the_period_before=True)
  period = earlier_period.of_eval_windows(tiny.eval_files, tiny.spec)
  assert alone['calibration_windows'] == alone['eval_windows']
  assert pooled['calibration_windows'] == pooled['eval_windows'] + earlier_period.count(
      tiny.train_files, tiny.spec, period.windows())[0]
  assert pooled['mae'] == alone['mae']


def test_a_row_bound_keeps_about_one_window_in_k(tiny, tmp_path):
  horizon = tiny.spec.horizon
  result = _call(tiny, tmp_path, max_training_rows=tiny.train_window_count * horizon // 4)
  assert tiny.train_window_count / 7 < result['training_windows'] < tiny.train_window_count / 2


def test_a_failure_to_fit_is_recorded_and_the_run_goes_on(tiny, tmp_path, monkeypatch):
  def fail(*args, **kwargs):
    raise lightgbm.basic.LightGBMError('out of memory')

  monkeypatch.setattr(gbm_baseline, 'fit', fail)
  assert _call(tiny, tmp_path) == {'error': 'LightGBMError: out of memory'}


def test_a_windows_artifact_without_the_eval_split_is_refused(tiny, tmp_path):
  windows = standard_artifacts.Examples()
  windows.uri = str(tmp_path)
  windows.split_names = artifact_utils.encode_split_names(['train'])
  evaluation = component.BaselineEvaluation()
  evaluation.uri = str(tmp_path / 'evaluation')
  with pytest.raises(ValueError, match=r"has no split \['eval'\]"):
    component.GbmBaseline.test_call(windows=windows, evaluation=evaluation,
                                    dataset_spec=tiny.spec.to_json())
