"""The forecast ledger: published forecasts kept, scored once as their actuals arrive,
beside their naive forecasts; nothing in it rewritten, a file it cannot read left alone."""

import json
import os

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

from components import delivered_forecasts, forecast_ledger, forecast_scoring, input_rows
from components import ledger_page
from schema import datasets
from schema.monitoring_policy import Monitoring

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)
LOADS = {'s1': [10.0, 11.0, 12.0, 13.0, 15.0, 14.0], 's2': [5.0, 5.0, 6.0, 6.0, 9.0, 2.0]}


def _time(hour):
  return f'2024-01-01 {hour:02d}:00:00'


def _examples(path, hours):
  """ExampleGen's records of both series at `hours`."""
  with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions('GZIP')) as writer:
    for station, loads in LOADS.items():
      for hour in hours:
        row = {'station': station, 'timestamp': _time(hour), 'load': str(loads[hour]),
               'region': 'north', 'capacity': '50', 'price': '1.1', 'temperature': '20.0'}
        writer.write(input_rows.parse_row(row, SPEC, 'x').SerializeToString())
  return [str(path)]


def _published(directory, medians, expected_mae=1.0):
  """A ForecastGen output forecasting hours 4 and 5 from hours 1-3 (medians by series)."""
  rows, histories = [], []
  for station, values in medians.items():
    for step, median in enumerate(values, start=1):
      rows.append({'station': station, 'timestamp': _time(3 + step), 'horizon_step': step,
                   'p10': median - 1.0, 'p50': median, 'p90': median + 1.0})
    histories.append(LOADS[station][1:4])
  result = delivered_forecasts.Forecasts(
      rows=rows, not_forecast=[], columns=list(rows[0]),
      naive=delivered_forecasts.naive_rows(rows, histories, SPEC))
  delivered_forecasts.write_forecasts(result, SPEC, str(directory), report={
      'model': '/models/Trainer/model/7/Format-Serving', 'model_blessed': True,
      'expected': {'split': 'test', 'mean_absolute_error': expected_mae,
                   'coverage_p10_p90': 0.8}})
  return str(directory)


def test_forecasts_are_scored_once_and_the_figures_equal_numpy(tmp_path):
  ledger = str(tmp_path / 'ledger')
  published = _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]})
  files = _examples(tmp_path / 'rows.gz', range(6))
  report = forecast_scoring.score_ledger(ledger, SPEC, files, published, Monitoring())
  [entry] = report['forecasts']
  assert report['rows_scored_now'] == 4 and entry['rows_scored'] == 4
  median = np.array([14.0, 14.5, 6.0, 6.5])
  actual = np.array([15.0, 14.0, 9.0, 2.0])
  assert entry['mean_absolute_error'] == pytest.approx(np.mean(np.abs(median - actual)))
  assert entry['coverage_p10_p90'] == pytest.approx(
      np.mean((median - 1 <= actual) & (actual <= median + 1)))
  repeat_last = np.array([13.0, 13.0, 6.0, 6.0])
  assert entry['naive_mae']['repeat_last'] == pytest.approx(
      np.mean(np.abs(repeat_last - actual)))
  assert entry['mae_vs_expected'] == pytest.approx(entry['mean_absolute_error'] / 1.0)
  # The ledger holds the rows, with their actuals and naive forecasts.
  scored = pd.read_parquet(report['scored_file'])
  assert sorted(scored['actual']) == sorted(actual)
  assert {'p10', 'p50', 'p90', 'naive_repeat_last', 'naive_history_mean'} <= set(scored.columns)
  # Scoring again on the same data scores nothing twice, and keeps the forecast once.
  again = forecast_scoring.score_ledger(ledger, SPEC, files, published, Monitoring())
  assert again['rows_scored_now'] == 0 and again['scored_file'] is None
  assert len(os.listdir(os.path.join(ledger, forecast_ledger.KEPT_DIR))) == 1
  assert again['forecasts'][0]['mean_absolute_error'] == entry['mean_absolute_error']


def test_steps_past_the_data_wait_for_a_later_run(tmp_path):
  ledger = str(tmp_path / 'ledger')
  published = _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]})
  early = forecast_scoring.score_ledger(
      ledger, SPEC, _examples(tmp_path / 'early.gz', range(5)), published, Monitoring())
  [entry] = early['forecasts']
  assert (entry['rows_scored'], entry['not_yet_due']) == (2, 2)
  # A later run, without the earlier forecast among its inputs, scores the rest.
  later = forecast_scoring.score_ledger(
      ledger, SPEC, _examples(tmp_path / 'later.gz', range(6)), None, Monitoring())
  [entry] = later['forecasts']
  assert (later['rows_scored_now'], entry['rows_scored'], entry['not_yet_due']) == (2, 4, 0)


def test_none_are_due_before_the_data_reaches_them(tmp_path):
  report = forecast_scoring.score_ledger(
      str(tmp_path / 'ledger'), SPEC, _examples(tmp_path / 'rows.gz', range(4)),
      _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]}), Monitoring())
  [entry] = report['forecasts']
  assert report['newest_scored'] is None and report['rows_scored_now'] == 0
  assert entry['not_yet_due'] == 4 and 'mean_absolute_error' not in entry


def test_a_file_that_cannot_be_read_is_reported_and_left_in_place(tmp_path):
  ledger = tmp_path / 'ledger'
  (ledger / forecast_ledger.SCORED_DIR).mkdir(parents=True)
  partial = ledger / forecast_ledger.SCORED_DIR / '20240101T000000_partial.parquet'
  partial.write_bytes(b'PAR1\x00\x00 cut off')
  report = forecast_scoring.score_ledger(
      str(ledger), SPEC, _examples(tmp_path / 'rows.gz', range(6)),
      _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]}), Monitoring())
  [unreadable] = report['unreadable']
  assert unreadable['path'] == str(partial)
  assert partial.read_bytes() == b'PAR1\x00\x00 cut off'
  assert report['rows_scored_now'] == 4
  assert 'Not read' in ledger_page.index_html(report, 'x')


def test_the_series_worse_than_the_best_naive_forecast_are_named(tmp_path):
  report = forecast_scoring.score_ledger(
      str(tmp_path / 'ledger'), SPEC, _examples(tmp_path / 'rows.gz', range(6)),
      _published(tmp_path / 'run1', {'s1': [15.0, 14.0], 's2': [0.0, 0.0]}), Monitoring())
  [entry] = report['forecasts']
  assert [s['series'] for s in entry['series_worse_than_naive']] == ['s2']


def test_the_policy_warns_or_fails_on_a_forecast_far_worse_than_expected(tmp_path, caplog):
  files = _examples(tmp_path / 'rows.gz', range(6))
  published = _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]},
                         expected_mae=0.5)
  report = forecast_scoring.score_ledger(str(tmp_path / 'a'), SPEC, files, published,
                                         Monitoring(max_mae_vs_expected=1.3))
  assert 'monitoring: max_mae_vs_expected 1.3' in report['breach']
  assert '2024-01-01 04:00:00' in report['breach']
  forecast_scoring.enforce(report, Monitoring(), 'page.html')
  assert 'max_mae_vs_expected' in caplog.text
  with pytest.raises(forecast_scoring.ForecastBreachError, match='on_breach fail'):
    forecast_scoring.enforce(report, Monitoring(on_breach='fail'), 'page.html')
  # Within the bound: no breach.
  lenient = forecast_scoring.score_ledger(str(tmp_path / 'b'), SPEC, files, published,
                                          Monitoring(max_mae_vs_expected=10))
  assert lenient['breach'] is None


def test_the_page_is_written_while_no_forecast_is_due(tmp_path):
  """A second run on the same data (`make run` twice) keeps the first run's forecast, of
  which nothing is due yet: its figures are blank on the page, not an error."""
  report = forecast_scoring.score_ledger(
      str(tmp_path / 'ledger'), SPEC, _examples(tmp_path / 'rows.gz', range(4)),
      _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]}), Monitoring())
  out = tmp_path / 'page'
  out.mkdir()
  ledger_page.write_page(report, str(out), 'synthetic')
  html = (out / ledger_page.INDEX_HTML).read_text()
  assert '0 of 4</td>\n<td></td><td>1</td>' in html  # no MAE yet; expected 1


def test_the_page_shows_the_forecasts_and_the_figure(tmp_path):
  report = forecast_scoring.score_ledger(
      str(tmp_path / 'ledger'), SPEC, _examples(tmp_path / 'rows.gz', range(6)),
      _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]}), Monitoring())
  out = tmp_path / 'page'
  out.mkdir()
  ledger_page.write_page(report, str(out), 'synthetic')
  html = (out / ledger_page.INDEX_HTML).read_text()
  assert '2024-01-01 04:00:00' in html and 'Trainer/model/7' in html
  assert (out / ledger_page.ACCURACY_PNG).read_bytes()[:4] == b'\x89PNG'
  json.dumps(report)  # the report is JSON as written
  # Below the MAE, each model's coverage beside the aim.
  _, coverage_ax = ledger_page.accuracy_figure(report['forecasts']).axes
  model_line, aim = coverage_ax.get_lines()
  [entry] = report['forecasts']
  assert list(model_line.get_ydata()) == [entry['coverage_p10_p90']]
  assert list(aim.get_ydata()) == [0.8, 0.8]


@pytest.mark.parametrize('block, message', [
    ({'on_breach': 'stop'}, "'on_breach' must be one of"),
    ({'max_mae_vs_expected': 0.5}, "'max_mae_vs_expected' must be a number of at least 1"),
    ({'max_mae': 2}, "'monitoring'"),
])
def test_a_bad_monitoring_block_is_refused_naming_the_key(block, message):
  from schema import dataset_file
  values = dataset_file.to_dict(datasets.get_dataset('synthetic'), '/')
  with pytest.raises(ValueError, match=message):
    dataset_file.from_dict({**values, 'monitoring': block}, '/')
  kept = dataset_file.from_dict({**values, 'monitoring': {'on_breach': 'fail'}}, '/')
  assert kept.monitoring == Monitoring(on_breach='fail')
  assert dataset_file.to_dict(kept, '/')['monitoring']['on_breach'] == 'fail'


def test_the_summary_says_what_was_scored_what_waits_and_what_breached(tmp_path):
  files = _examples(tmp_path / 'rows.gz', range(5))
  published = _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]},
                         expected_mae=0.5)
  first = forecast_scoring.score_ledger(str(tmp_path / 'empty'), SPEC, files, None,
                                        Monitoring())
  assert forecast_scoring.describe(first, 'out')[0] == (
      'nothing to score yet: this pipeline published no forecasts before this run')
  report = forecast_scoring.score_ledger(str(tmp_path / 'ledger'), SPEC, files, published,
                                         Monitoring())
  lines = forecast_scoring.describe(report, 'out')
  entry = report['forecasts'][0]
  assert lines[0].startswith(
      f"the forecasts from 2024-01-01 04:00:00 (Trainer/model/7): 2 of 4 rows, MAE "
      f"{entry['mean_absolute_error']:.4g} against 0.5 expected on its model's test windows "
      f"({entry['mae_vs_expected']:.2f}x; the policy allows 1.3x)")
  assert lines[1] == ('not yet due: 2 rows of 1 forecast (from 2024-01-01 04:00:00) lie past '
                      "the end of their series' data")
  assert lines[2].startswith('breach (warn): the forecasts from 2024-01-01 04:00:00 scored')
  assert lines[-1] == f"ledger:  {tmp_path / 'ledger'}; page out/index.html"


def test_forecasts_without_the_files_the_ledger_keeps_are_reported_not_kept(tmp_path):
  published = _published(tmp_path / 'run1', {'s1': [14.0, 14.5], 's2': [6.0, 6.5]})
  os.remove(os.path.join(published, delivered_forecasts.NAIVE_PARQUET))
  report = forecast_scoring.score_ledger(
      str(tmp_path / 'ledger'), SPEC, _examples(tmp_path / 'rows.gz', range(6)), published,
      Monitoring())
  assert report['kept_now'] is None and report['forecasts'] == []
  assert 'have no naive_forecasts.parquet, so they are not scored' in report['not_kept']
  assert any(line.startswith('not kept: ') for line in forecast_scoring.describe(report, 'x'))
