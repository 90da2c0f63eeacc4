"""A TFX component that scores the forecasts earlier runs published, as their actuals arrive.

Each run's ForecastGen output names its pipeline; the resolver before this component
finds the newest such output of this pipeline (locally in the pipeline's context; on
Vertex AI by a query scoped to the pipeline's name: `kubeflow.runner`), which is kept in
the forecast ledger (`components.forecast_ledger`). Every kept forecast row whose actual
this run's data now holds, and that no run scored before, is scored and appended to the
ledger. The output holds `scoring_report.json` (per forecast: its MAE against what its
model's held-out test expected, P10-P90 coverage, the naive forecasts' MAEs, the series
worse than the best naive forecast, what is not yet due) and `index.html`
(`components.ledger_page`). The monitoring policy (`schema.monitoring_policy`) judges the
newest forecast scored; with `on_breach: fail` this component fails the run, after
everything else has run (the pipeline places it last).
"""

import json
import logging
import os
import posixpath
from typing import Dict, List, Optional

import numpy as np
import pandas as pd
import tensorflow as tf
from tfx import types
from tfx import v1 as tfx
from tfx.types import artifact_utils, standard_artifacts

from common import artifact_json
from components import forecast_ledger, ledger_page
from components.forecast_gen import Forecasts
from schema.dataset_spec import DatasetSpec
from schema.monitoring_policy import Monitoring
from trainer_module.export import key_quantile
from trainer_module.naive_forecasts import OUTPUT_PREFIX as NAIVE_PREFIX

REPORT_JSON = 'scoring_report.json'
_WORST_SHOWN = 5  # series worse than their naive forecast, worst first


class ForecastScores(types.Artifact):
  """A directory with `scoring_report.json`, `index.html` and its figure."""
  TYPE_NAME = 'tft.ForecastScores'


class ForecastBreachError(RuntimeError):
  """The newest scored forecast missed the monitoring policy, whose `on_breach` is fail."""


def quantile_columns(rows: pd.DataFrame) -> List[str]:
  return sorted((c for c in rows.columns if forecast_ledger.is_quantile(c)), key=key_quantile)


def figures(rows: pd.DataFrame) -> Dict[str, object]:
  """A forecast's figures over its scored `rows`: the median's MAE, the P10-P90 (lowest to
  highest quantile) coverage, each naive forecast's MAE, the best of them, and per series
  the median's MAE beside the best naive forecast's on that series."""
  quantiles = quantile_columns(rows)
  actual = rows['actual'].to_numpy(float)
  median = rows[min(quantiles, key=lambda c: abs(key_quantile(c) - 0.5))].to_numpy(float)
  naive = {c[len(NAIVE_PREFIX):]: float(np.mean(np.abs(rows[c].to_numpy(float) - actual)))
           for c in rows.columns if c.startswith(NAIVE_PREFIX)
           and np.isfinite(rows[c].to_numpy(float)).all()}
  best = min(naive, key=naive.get) if naive else None
  errors = pd.DataFrame({'series': rows['series'], 'model': np.abs(median - actual)})
  if best:
    errors['naive'] = np.abs(rows[NAIVE_PREFIX + best].to_numpy(float) - actual)
  by_series = errors.groupby('series').mean()
  worse = (by_series[by_series['model'] > by_series['naive']] if best
           else by_series.iloc[:0])
  worse = worse.assign(excess=worse['model'] - worse['naive']).sort_values(
      'excess', ascending=False)
  return {
      'rows_scored': int(len(rows)),
      'mean_absolute_error': float(np.mean(np.abs(median - actual))),
      'coverage_p10_p90': float(np.mean((rows[quantiles[0]].to_numpy(float) <= actual) &
                                        (actual <= rows[quantiles[-1]].to_numpy(float))))
                          if len(quantiles) > 1 else None,
      'naive_mae': naive, 'best_naive': best,
      'series_worse_than_naive': [
          {'series': key, 'mae': float(row['model']), 'naive_mae': float(row['naive'])}
          for key, row in worse.iterrows()]}


def forecast_entry(kept: forecast_ledger.KeptForecast, scored: pd.DataFrame,
                   scoring: forecast_ledger.Scoring) -> Dict[str, object]:
  """One kept forecast in the report: its model, what it was expected to score, and its
  figures on every row scored so far (`scored`: the ledger's rows of it and this run's)."""
  expected = kept.report.get('expected') or {}
  first = kept.rows['seconds'].idxmin()
  entry = {'forecast_id': kept.forecast_id, 'first_time': kept.rows['time'][first],
           'first_seconds': int(kept.rows['seconds'][first]),
           'model': kept.report.get('model'), 'model_blessed': kept.report.get('model_blessed'),
           'expected': expected, 'rows': int(len(kept.rows)),
           'scored_now': int((scoring.rows['forecast_id'] == kept.forecast_id).sum()),
           'not_yet_due': scoring.not_yet_due.get(kept.forecast_id, 0),
           'no_actual': scoring.no_actual.get(kept.forecast_id, 0)}
  if len(scored):
    entry.update(figures(scored))
    if expected.get('mean_absolute_error'):
      entry['mae_vs_expected'] = entry['mean_absolute_error'] / expected['mean_absolute_error']
  return entry


def breach(entry: Dict[str, object], policy: Monitoring) -> Optional[str]:
  """How a scored forecast misses `policy`, in words; None when it holds (or cannot be
  judged: its model's expected MAE is not known)."""
  expected = (entry.get('expected') or {}).get('mean_absolute_error')
  if not expected or 'mean_absolute_error' not in entry:
    return None
  if not policy.breach(entry['mean_absolute_error'], expected):
    return None
  return (f"the forecasts from {entry['first_time']} scored MAE {entry['mean_absolute_error']:.4g} "
          f"on {entry['rows_scored']} of {entry['rows']} rows, {entry['mae_vs_expected']:.2f} "
          f"times the {expected:.4g} their model's {entry['expected'].get('split')} windows "
          f'expected, and the monitoring policy allows at most {policy.max_mae_vs_expected:g} '
          f"times (monitoring: max_mae_vs_expected {policy.max_mae_vs_expected:g})")


def score_ledger(ledger_dir: str, spec: DatasetSpec, example_files: List[str],
                 earlier_forecasts_uri: Optional[str], policy: Monitoring
                 ) -> Dict[str, object]:
  """Keeps the earlier forecast, scores what has come due, appends it to the ledger and
  returns the report (see the module docstring)."""
  kept_now, not_kept = None, None
  if earlier_forecasts_uri:
    try:
      kept_now = forecast_ledger.keep(earlier_forecasts_uri, ledger_dir, spec)
    except forecast_ledger.NotKeptError as error:
      not_kept = str(error)
      logging.warning('Forecast scoring: %s.', not_kept)
  ledger = forecast_ledger.read(ledger_dir, spec)
  for path, why in ledger.unreadable:
    logging.warning('Forecast scoring: %s cannot be read (%s); it is left as it is, and the '
                    'rest of the ledger is read without it.', path, why)
  actuals, last_times = forecast_ledger.actuals_from_examples(example_files, spec)
  scoring = forecast_ledger.score(ledger, actuals, last_times)
  scored_file = forecast_ledger.append(ledger_dir, scoring.rows)
  every = pd.concat([ledger.scored, scoring.rows], ignore_index=True)
  entries = [forecast_entry(kept, every[every['forecast_id'] == kept.forecast_id], scoring)
             for kept in ledger.forecasts]
  fresh = [entry for entry in entries if entry['scored_now']]
  newest = fresh[-1] if fresh else None
  found = breach(newest, policy) if newest else None
  return {'ledger': ledger_dir, 'earlier_forecast': earlier_forecasts_uri,
          'kept_now': kept_now, 'not_kept': not_kept, 'scored_file': scored_file,
          'rows_scored_now': int(len(scoring.rows)),
          'newest_scored': newest['forecast_id'] if newest else None,
          'forecasts': entries, 'policy': policy.to_dict(), 'breach': found,
          'unreadable': [{'path': path, 'why': why} for path, why in ledger.unreadable]}


def describe(report: Dict[str, object], directory: str) -> List[str]:
  """The run summary's lines for a scoring report: the newest forecast scored against
  what was expected, what is not yet due, the files not read, the page."""
  lines = []
  newest = next((e for e in report['forecasts']
                 if e['forecast_id'] == report['newest_scored']), None)
  if newest:
    expected = newest['expected'] or {}
    against = (f" against {expected['mean_absolute_error']:.4g} expected on its model's "
               f"{expected.get('split')} windows ({newest['mae_vs_expected']:.2f}x; the policy "
               f"allows {report['policy']['max_mae_vs_expected']:g}x)"
               if newest.get('mae_vs_expected') is not None else
               ' (its model had no expected MAE)')
    worse = newest['series_worse_than_naive']
    names = ', '.join(s['series'] for s in worse[:_WORST_SHOWN]) + (
        f' and {len(worse) - _WORST_SHOWN} more' if len(worse) > _WORST_SHOWN else '')
    lines.append(
        f"the forecasts from {newest['first_time']} ({ledger_page.short_model(newest['model'])})"
        f": {newest['rows_scored']} of {newest['rows']} rows, MAE "
        f"{newest['mean_absolute_error']:.4g}{against}" +
        (f", P10-P90 coverage {newest['coverage_p10_p90']:.3f}"
         if newest['coverage_p10_p90'] is not None else '') + '; ' +
        (f"{len(worse)} series worse than the best naive forecast "
         f"({newest['best_naive']}): {names}" if worse else
         'no series worse than the best naive forecast' if newest['best_naive'] else
         'no naive forecast to compare with'))
  elif not report['forecasts']:
    lines.append('nothing to score yet: ' + (
        'this pipeline published no forecasts before this run'
        if report['earlier_forecast'] is None else 'no earlier forecast is in the ledger'))
  else:
    lines.append('nothing new to score: no earlier forecast has an actual in this data yet')
  waiting = [e for e in report['forecasts'] if e['not_yet_due']]
  if waiting:
    lines.append(f"not yet due: {sum(e['not_yet_due'] for e in waiting)} rows of "
                 f'{len(waiting)} forecast{"s" if len(waiting) > 1 else ""} (from '
                 f"{waiting[0]['first_time']}) lie past the end of their series' data")
  if report['breach']:
    lines.append(f"breach ({report['policy']['on_breach']}): {report['breach']}")
  if report['not_kept']:
    lines.append(f"not kept: {report['not_kept']}")
  lines += [f"not read: {item['path']} ({item['why']}), left as it is"
            for item in report['unreadable']]
  lines.append(f"ledger:  {report['ledger']}; page "
               f'{posixpath.join(directory, ledger_page.INDEX_HTML)}')
  return lines


def read_report(directory: str) -> Optional[Dict[str, object]]:
  return artifact_json.read_json(directory, REPORT_JSON)


@tfx.dsl.components.component
def ForecastScoring(  # pylint: disable=invalid-name
    examples: tfx.dsl.components.InputArtifact[standard_artifacts.Examples],
    scores: tfx.dsl.components.OutputArtifact[ForecastScores],
    earlier_forecasts: tfx.dsl.components.InputArtifact[Forecasts] = None,
    ledger_dir: tfx.dsl.components.Parameter[str] = '',
    dataset_spec: tfx.dsl.components.Parameter[str] = '',
    monitoring: tfx.dsl.components.Parameter[str] = '{}',
) -> None:
  """Scores the ledger's forecasts against `examples` (every split: the newest rows).

  Args:
    earlier_forecasts: the newest ForecastGen output of this pipeline before this run;
      none on a pipeline's first run.
    ledger_dir: the forecast ledger (`PipelineConfig.ledger_dir`).
    dataset_spec: the spec, JSON.
    monitoring: the policy (`Monitoring.to_dict`), JSON.
  """
  spec = DatasetSpec.from_json(dataset_spec)
  policy = Monitoring.from_dict(json.loads(monitoring))
  files = []
  for split in artifact_utils.decode_split_names(examples.split_names):
    files += tf.io.gfile.glob(os.path.join(examples.uri, f'Split-{split}', '*'))
  report = score_ledger(ledger_dir, spec, files,
                        earlier_forecasts.uri if earlier_forecasts is not None else None,
                        policy)
  tf.io.gfile.makedirs(scores.uri)
  with tf.io.gfile.GFile(posixpath.join(scores.uri, REPORT_JSON), 'w') as f:
    json.dump(report, f, indent=2)
  ledger_page.write_page(report, scores.uri, title=spec.name)
  enforce(report, policy, posixpath.join(scores.uri, ledger_page.INDEX_HTML))


def enforce(report: Dict[str, object], policy: Monitoring, page: str) -> None:
  """Logs a breach at WARNING; raises ForecastBreachError for it when `policy` says fail."""
  if not report['breach']:
    return
  logging.warning('Forecast scoring: %s.', report['breach'])
  if policy.on_breach == 'fail':
    raise ForecastBreachError(
        f"{report['breach']}; the run trained, judged and published as usual, and fails so "
        f'that the breach is noticed (monitoring: on_breach fail). The scores: {page}')
