"""The run summary says which blessing rule a model broke, in the rule's own words."""

import pytest
from google.protobuf import text_format
from tensorflow_model_analysis.proto import validation_result_pb2

from components import delivered_forecasts
from pipeline import run_summary
from schema.datasets import get_dataset
from serving import input_errors


def _result(*failures: str) -> validation_result_pb2.ValidationResult:
  """A TFMA validation result of the overall slice with `failures` (text protos)."""
  result = validation_result_pb2.ValidationResult(validation_ok=not failures)
  per_slice = result.metric_validations_per_slice.add()
  for failure in failures:
    text_format.Parse(failure, per_slice.failures.add())
  return result


_WORSE_THAN_BLESSED = '''
  metric_key { name: "mean_absolute_error" model_name: "candidate" is_diff: true }
  metric_threshold { change_threshold { relative { value: 0.02 }
                                        direction: LOWER_IS_BETTER } }
  metric_value { double_value { value: 0.0125 } }'''
_ABOVE_MAX_MAE = '''
  metric_key { name: "mean_absolute_error" model_name: "candidate" }
  metric_threshold { value_threshold { upper_bound { value: 2.5 } } }
  metric_value { double_value { value: 2.75 } }'''
_NOT_BELOW_NAIVE = '''
  metric_key { name: "mae_vs_best_naive" model_name: "candidate" }
  metric_threshold { value_threshold { upper_bound { value: 0.95 } } }
  metric_value { double_value { value: 1.04 } }'''


@pytest.mark.parametrize('failure, reason', [
    (_WORSE_THAN_BLESSED, "the eval MAE is 0.0125 above the last blessed model's, and the rule "
                          "is the MAE at most 1.02 times the last blessed model's "
                          '(max_relative_regression 0.02)'),
    (_ABOVE_MAX_MAE, 'the eval MAE is 2.75, and the rule is the MAE at most 2.5 (max_mae 2.5)'),
    (_NOT_BELOW_NAIVE, "the eval MAE is 1.04 times the best naive forecast's, and the rule is "
                       "the MAE at most 0.95 times the best naive forecast's (beat_naive_by "
                       '0.05)'),
])
def test_each_blessing_rule_is_named_when_it_fails(failure, reason):
  assert run_summary.describe_failures(_result(failure)) == [reason]


def test_every_broken_rule_is_listed_and_a_blessed_model_has_none():
  assert len(run_summary.describe_failures(_result(_ABOVE_MAX_MAE, _NOT_BELOW_NAIVE))) == 2
  assert run_summary.describe_failures(_result()) == []


def test_a_failed_validation_without_a_threshold_failure_still_gives_a_reason():
  result = validation_result_pb2.ValidationResult(validation_ok=False)
  result.missing_slices.add()
  [reason] = run_summary.describe_failures(result)
  assert reason.startswith('the Evaluator could not check the rules: ')
  assert 'missing_slices' in reason


def test_the_formatted_summary_gives_the_reasons_under_blessed():
  summary = run_summary.RunSummary(
      components=[], metrics={}, metrics_by_step={}, blessed=False, pushed_to=None,
      model_uri=None, not_blessed_because=[
          'the eval MAE is 2.75, and the rule is the MAE at most 2.5 (max_mae 2.5)'])
  lines = summary.format('/root').splitlines()
  at = lines.index('  blessed:     no')
  assert lines[at + 1] == ('    because the eval MAE is 2.75, and the rule is the MAE at most 2.5 '
                           '(max_mae 2.5)')
  assert 'last blessed model' not in summary.format('/root')  # none was compared

  summary.baseline_mae = 2.6
  lines = summary.format('/root').splitlines()
  assert lines[at + 2] == "    the last blessed model's eval MAE on the same windows: 2.6000"


def test_the_summary_gives_each_kind_of_reason_a_series_was_not_forecast(tmp_path):
  spec = get_dataset('synthetic').spec
  no_future = "the known columns ['price'] have no values for 24 of the 24 steps"
  header = ['station', 'timestamp', 'horizon_step', 'p10', 'p50', 'p90']
  forecasts = delivered_forecasts.Forecasts(rows=[], columns=header, not_forecast=[
      (('station_00',), input_errors.MissingFutureRowsError(no_future)),
      (('station_08',), input_errors.UnknownSeriesError("series 'station_08' is new")),
      (('station_09',), input_errors.UnknownSeriesError("series 'station_09' is new"))])
  delivered_forecasts.write_forecasts(forecasts, spec, str(tmp_path), {'model_blessed': True})
  summary = run_summary.RunSummary(
      components=[], metrics={}, metrics_by_step={}, blessed=True, pushed_to='/models/1',
      model_uri=None, forecasts_uri=str(tmp_path))
  lines = summary.format('/root').splitlines()
  at = lines.index(f'  not forecast: 3 series, reasons in {tmp_path}/not_forecast.csv')
  # Messages name their series; the kinds are counted, the commonest first.
  assert lines[at + 1] == ("    2 the model was not trained on, e.g. series 'station_08' is "
                           'new')
  assert lines[at + 2] == (f'    1 without known values over the horizon, e.g. {no_future}')
  assert lines[at - 1] == (f'  forecasts:   {tmp_path}/forecasts.csv (no series forecast: '
                           'the header only)')
  with open(tmp_path / delivered_forecasts.FORECASTS_CSV) as f:
    assert f.read() == ','.join(header) + '\n'
  with open(tmp_path / delivered_forecasts.NOT_FORECAST_CSV) as f:
    assert f.read().splitlines()[1] == f'station_00,{no_future}'

  # Beyond three kinds, the others are counted together.
  forecasts.not_forecast += [
      (('station_10',), input_errors.TimeGridError('a gap')),
      (('station_11',), input_errors.TooLittleHistoryError('too little history')),
      (('station_12',), input_errors.TooLittleHistoryError('too little history'))]
  delivered_forecasts.write_forecasts(forecasts, spec, str(tmp_path), {'model_blessed': True})
  lines = summary.format('/root').splitlines()
  at = lines.index(f'  not forecast: 6 series, reasons in {tmp_path}/not_forecast.csv')
  assert lines[at + 1:at + 5] == [
      "    2 the model was not trained on, e.g. series 'station_08' is new",
      '    2 with too little history, e.g. too little history',
      f'    1 without known values over the horizon, e.g. {no_future}',
      '    1 more for 1 other reason']


def test_the_summary_gives_the_rows_of_each_split_and_what_older_spans_became():
  summary = run_summary.RunSummary(
      components=[], metrics={}, metrics_by_step={}, blessed=True, pushed_to=None,
      model_uri=None, split_report={'train': 1729, 'eval': 432, 'after_end': 0, 'spans': [4],
                                    'files': ['a.csv'], 'boundaries': {}})
  assert '  rows:        train 1729 | eval 432' in summary.format('/root').splitlines()
  summary.split_report.update(spans=[3, 4], after_end=5)
  assert summary.rows_read() == (
      'train 1729 | eval 432 | after_end 5 (spans 3, 4: every row of the older spans is '
      "training data, their eval periods included; the newest span's own split gives the "
      'eval windows)')
  # Where the boundaries fell in the data, as ExampleGen placed them.
  summary.split_report.update(spans=[4], boundaries={'eval_start': '2024-03-14 00:00:00',
                                                     'end': '2024-06-30 00:00:00'})
  assert summary.rows_read() == ('train 1729 | eval 432 | after_end 5 (eval from 2024-03-14 '
                                 '00:00:00 UTC; end at 2024-06-30 00:00:00 UTC)')
  # Columns of the data the spec does not declare are named under the rows.
  assert 'not in the spec' not in summary.format('/root')
  summary.split_report.update(undeclared_columns=['promo', 'note'])
  lines = summary.format('/root').splitlines()
  at = lines.index(f'  rows:        {summary.rows_read()}')
  assert lines[at + 1] == ("    columns ['promo', 'note'] of the data are not in the spec, so "
                           'the run left them out: declare them (docs/data.md) to train on them')
  # So are the calendar features whose eval and test rows take values no training row does.
  assert 'calendar features' not in summary.format('/root')
  summary.split_report.update(untrained_calendar_values={'month_of_year': [2, 3]})
  lines = summary.format('/root').splitlines()
  assert lines[at + 2] == ("    calendar features ['month_of_year'] take values after the "
                           'training period that no training row does (month_of_year takes 3 '
                           'values after the training period, 2 never in it): forecasts at '
                           'those times rest on embeddings no training row trained; leave them '
                           'out of calendar_features, as init does, until the training period '
                           'holds them')


def _with_gbm(model_mae: float, gbm_mae: float) -> run_summary.RunSummary:
  return run_summary.RunSummary(
      components=[], metrics={'mean_absolute_error': model_mae, 'naive_mae_repeat_last': 9.0,
                              'naive_mae_seasonal_24': 4.0},
      metrics_by_step={}, blessed=True, pushed_to=None, model_uri=None,
      gbm_baseline={'quantiles': [0.1, 0.5, 0.9], 'by_split': {'eval': {'mae': gbm_mae}}})


def test_the_summary_gives_the_gradient_boosted_baseline_beside_the_naive_forecasts():
  text = _with_gbm(2.5, 2.75).format('root')
  assert ('MAE beside a global LightGBM and the naive forecasts: model 2.5 | LightGBM 2.75 | '
          'repeat_last 9 | seasonal_24 4 (best naive)') in text
  assert 'above LightGBM' not in text


def test_the_summary_says_by_how_much_the_model_is_behind_the_gradient_boosted_baseline():
  text = _with_gbm(2.75, 2.5).format('root')
  assert "the model's eval MAE is 10.0% above LightGBM's on the same windows" in text


def test_the_summary_gives_the_bands_q_risks_and_coverage_beside_the_gradient_boosted_ones():
  summary = _with_gbm(2.5, 2.75)
  summary.metrics.update(q_risk_p10=0.021, q_risk_p50=0.041, q_risk_p90=0.019,
                         coverage_p10_p90=0.8017)
  summary.gbm_baseline['by_split']['eval'].update(
      coverage={'0.1:0.9': 0.7994}, q_risk={'p10': 0.023, 'p50': 0.043, 'p90': 0.02})
  assert ("  q-risk P10 / P50 / P90 beside LightGBM's: model 0.021 / 0.041 / 0.019 | "
          'LightGBM 0.023 / 0.043 / 0.02; P10-P90 coverage 0.802 | 0.799'
          in summary.format('root').splitlines())
  # A record without the baseline's bands: no such line.
  del summary.gbm_baseline['quantiles']
  assert "beside LightGBM's" not in summary.format('root')


def test_a_perfect_gradient_boosted_baseline_or_one_that_failed_is_reported_without_error():
  assert "the model's eval MAE is 0.5 above LightGBM's" in _with_gbm(0.5, 0.0).format('root')
  failed = _with_gbm(2.5, 0.0)
  failed.gbm_baseline = {'error': 'LightGBMError: out of memory'}
  text = failed.format('root')
  assert 'MAE beside the naive forecasts: model 2.5 | repeat_last 9' in text
  assert 'the LightGBM baseline could not be fitted: LightGBMError: out of memory' in text


def test_the_eval_metrics_heading_says_what_else_the_eval_windows_did():
  summary = run_summary.RunSummary(
      components=[], metrics={}, metrics_by_step={}, blessed=True, pushed_to=None,
      model_uri=None)
  heading = '  eval metrics (original units; the eval windows also chose the epoch'
  assert f'{heading}):' in summary.format('/root').splitlines()
  summary.calibration = {'factors': {}, 'eval_coverage_before': {}, 'eval_coverage_after': {}}
  assert f'{heading} and the bands):' in summary.format('/root').splitlines()


def test_the_mae_by_step_shows_every_step_of_a_short_horizon_and_the_highest_of_a_long_one():
  summary = run_summary.RunSummary(
      components=[], metrics={}, metrics_by_step={
          'mean_absolute_error_by_step': [10.96, 13.54, 17.21, 14.89, 10.88, 10.40, 10.75]},
      blessed=True, pushed_to=None, model_uri=None)
  assert ('    mean_absolute_error_by_step  10.9600 13.5400 17.2100 14.8900 10.8800 10.4000 '
          '10.7500') in summary.format('/root').splitlines()
  summary.metrics_by_step['mean_absolute_error_by_step'] = [1.0] * 10 + [3.0] + [2.0] * 13
  assert ('    mean_absolute_error_by_step  1.0000 (step 1) ... 2.0000 (step 24); highest '
          '3.0000 (step 11)') in summary.format('/root').splitlines()


def _held_out(model_mae: float, eval_mae: float) -> run_summary.RunSummary:
  """A run judged on its test windows, its eval windows' figures beside them."""
  naive = {'naive_mae_repeat_last': 9.0, 'naive_mae_seasonal_24': 4.0}
  return run_summary.RunSummary(
      components=[], metrics={'mean_absolute_error': model_mae, **naive},
      metrics_by_step={}, blessed=True, pushed_to=None, model_uri=None,
      judged_split='test', eval_metrics={'mean_absolute_error': eval_mae, **naive},
      gbm_baseline={'mae': 2.6, 'scored_split': 'test', 'by_split': {
          'eval': {'mae': 2.4}, 'test': {'mae': 2.6}}},
      decided_by='the test windows (held out: nothing chose on them): the MAE at most 1 '
                 "times the best naive forecast's (beat_naive_by 0)")


def test_a_held_out_run_gives_the_test_figures_first_and_the_eval_ones_as_what_they_are():
  lines = _held_out(2.5, 2.3).format('root').splitlines()
  heading = lines.index('  test metrics, held out (original units; nothing chose on the test '
                        'windows, and the blessing was decided on them):')
  test_line = lines.index('  MAE beside a global LightGBM and the naive forecasts: model 2.5 | '
                          'LightGBM 2.6 | repeat_last 9 | seasonal_24 4 (best naive)')
  eval_heading = lines.index('  eval windows (they chose the epoch, so their figures flatter '
                             'the model):')
  eval_line = lines.index('    MAE beside a global LightGBM and the naive forecasts: model 2.3 '
                          '| LightGBM 2.4 | repeat_last 9 | seasonal_24 4 (best naive)')
  assert heading < test_line < eval_heading < eval_line
  assert ("  blessed:     yes, on the test windows (held out: nothing chose on them): the MAE "
          "at most 1 times the best naive forecast's (beat_naive_by 0)") in lines
  assert 'no test period is held out' not in '\n'.join(lines)
  # Behind LightGBM on the test windows: said of the test MAE.
  assert ("    the model's test MAE is 3.8% above LightGBM's on the same windows "
          '(docs/pipeline.md: the gradient-boosted baseline)') in _held_out(2.7, 2.3).format(
              'root').splitlines()


def test_a_run_without_a_test_period_says_its_figures_are_the_eval_windows():
  text = _with_gbm(2.5, 2.75).format('root')
  assert ('    no test period is held out, so no figure here is one that nothing chose on: '
          "give the spec's split a test_start (docs/data.md)") in text.splitlines()


def test_a_record_without_the_judged_splits_figures_gives_no_lightgbm_figure():
  summary = _with_gbm(2.5, 2.75)
  summary.gbm_baseline['by_split'] = {'test': {'mae': 2.75}}  # not the judged eval windows
  assert 'LightGBM' not in summary.format('root')
