"""Writes what a backtest found: every forecast with its actual, the summary and a report.

`forecasts.csv` and `forecasts.parquet` (a row per origin, series and step: the actual,
the TFT's and LightGBM's quantiles, each naive forecast), `summary.json`, and
`index.html` with the figures a person would rather look at: the MAE and the outer
band's coverage by horizon step per model, a table per origin, and a few series'
forecasts against what happened at each origin.
"""

import io
import json
import os
from typing import Dict, List, Mapping, Sequence

import jinja2
import pandas as pd
import tensorflow as tf
from matplotlib.figure import Figure

from evaluation.backtest_scores import (LIGHTGBM, NAIVE_PREFIX, TFT, TFT_REFIT, summarize,
                                       verdict)
from schema.dataset_spec import DatasetSpec

FORECASTS_CSV = 'forecasts.csv'
FORECASTS_PARQUET = 'forecasts.parquet'
SUMMARY_JSON = 'summary.json'
INDEX_HTML = 'index.html'
_SERIES_SHOWN = 3
_COLOURS = {f'{TFT}_p50': 'tab:blue', f'{TFT_REFIT}_p50': 'tab:green',
            f'{LIGHTGBM}_p50': 'tab:orange'}
_NAMES = {TFT: 'TFT', TFT_REFIT: 'refit TFT', LIGHTGBM: 'LightGBM'}

_PAGE = jinja2.Template('''<!doctype html>
<html><head><meta charset="utf-8"><title>Backtest: {{ name }}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}</style></head><body>
<h1>Backtest of {{ name }}: {{ origins }} origins, {{ windows }} windows</h1>
<p>Each origin is a full fit of the pipeline on the rows before it, forecasting the
{{ horizon }} steps after it; nothing at or after an origin was seen by its fit.</p>
<ul>{% for line in verdict %}<li>{{ line }}</li>{% endfor %}</ul>
<h2>MAE per origin</h2>
<table><tr><th>origin</th><th>first forecast step</th>
{% for model in models %}<th>{{ model }}</th>{% endfor %}</tr>
{% for row in table %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>
<h2>Error and coverage by horizon step</h2>
<img src="mae_by_step.png" alt="MAE by horizon step per model">
<img src="coverage_by_step.png" alt="band coverage by horizon step">
<h2>Forecasts against what happened</h2>
<img src="series.png" alt="a few series' forecasts and actuals per origin">
<p>Every forecast with its actual: {{ csv }}, {{ parquet }}; the figures: {{ summary }}.</p>
</body></html>
''')


def write_all(frames: Sequence[pd.DataFrame], origin_starts: Mapping[int, str],
              quantiles: Sequence[float], output_dir: str,
              spec: DatasetSpec) -> Dict[str, object]:
  """The backtest's summary of every origin's scored rows (`backtest_scores.scored_rows`),
  the origins' first forecast steps in it, with its files written into `output_dir`."""
  frame = pd.concat(frames, ignore_index=True)
  summary = summarize(frame, quantiles)
  summary['origin_starts'] = dict(origin_starts)
  write(frame, summary, output_dir, spec)
  return summary


def write(frame: pd.DataFrame, summary: Dict[str, object], output_dir: str,
          spec: DatasetSpec) -> None:
  """Writes the backtest's files into `output_dir` (through tf.io.gfile)."""
  tf.io.gfile.makedirs(output_dir)
  with tf.io.gfile.GFile(os.path.join(output_dir, FORECASTS_CSV), 'w') as f:
    frame.to_csv(f, index=False)
  parquet = io.BytesIO()  # pyarrow's writer asks more of a file than GFile offers
  frame.to_parquet(parquet, index=False)
  with tf.io.gfile.GFile(os.path.join(output_dir, FORECASTS_PARQUET), 'wb') as f:
    f.write(parquet.getvalue())
  with tf.io.gfile.GFile(os.path.join(output_dir, SUMMARY_JSON), 'w') as f:
    json.dump(summary, f, indent=2)
  models = [f'{model}_p50' for model in summary['coverage']] + [summary['best_naive']]
  _save(_by_step_figure(summary['mae_by_step'], models, 'MAE (original units)'),
        os.path.join(output_dir, 'mae_by_step.png'))
  _save(_coverage_figure(summary), os.path.join(output_dir, 'coverage_by_step.png'))
  _save(_series_figure(frame, summary['band']), os.path.join(output_dir, 'series.png'))
  table = [[number, summary['origin_starts'][number]]
           + [f"{summary['mae_by_origin'][model][index]:.4g}" for model in models]
           for index, number in enumerate(summary['origins'])]
  page = _PAGE.render(name=spec.name, origins=len(summary['origins']),
                      windows=summary['windows'], horizon=spec.horizon,
                      verdict=verdict(summary), models=[_label(m) for m in models],
                      table=table, csv=FORECASTS_CSV, parquet=FORECASTS_PARQUET,
                      summary=SUMMARY_JSON)
  with tf.io.gfile.GFile(os.path.join(output_dir, INDEX_HTML), 'w') as f:
    f.write(page)


def _label(model: str) -> str:
  """'TFT P50', 'refit TFT P50', 'LightGBM P50', 'naive seasonal_24'."""
  if model.startswith(NAIVE_PREFIX):
    return f'naive {model[len(NAIVE_PREFIX):]}'
  name, quantile = model.rsplit('_', 1)
  return f'{_NAMES[name]} {quantile.upper()}'


def _by_step_figure(by_step: Dict[str, List[float]], models: List[str],
                    ylabel: str) -> Figure:
  figure = Figure(figsize=(6, 3.5))
  ax = figure.subplots()
  for model in models:
    values = by_step[model]
    ax.plot(range(1, len(values) + 1), values, marker='.', label=_label(model),
            color=_COLOURS.get(model, 'tab:gray'))
  ax.set_xlabel('horizon step')
  ax.set_ylabel(ylabel)
  ax.legend()
  figure.tight_layout()
  return figure


def _coverage_figure(summary: Dict[str, object]) -> Figure:
  figure = _by_step_figure({f'{model}_p50': values for model, values in
                            summary['coverage_by_step'].items()},
                           [f'{model}_p50' for model in summary['coverage']],
                           f"share of actuals inside {summary['band']}")
  ax = figure.axes[0]
  ax.axhline(0.8, color='black', linestyle=':', linewidth=1)
  ax.set_ylim(0, 1)
  for line, model in zip(ax.get_lines(), summary['coverage']):
    line.set_label(_NAMES[model])
  ax.legend()
  return figure


def _series_figure(frame: pd.DataFrame, band: str) -> Figure:
  """A panel per shown series (rows) and origin (columns): the actuals, the TFT's `band`
  ('P10-P90') and median, LightGBM's median."""
  shown = sorted(frame['series'].unique())[:_SERIES_SHOWN]
  origins = sorted(frame['origin'].unique())
  figure = Figure(figsize=(3.2 * len(origins), 2.4 * len(shown)))
  axes = figure.subplots(len(shown), len(origins), squeeze=False, sharey='row')
  low, high = band.lower().split('-')
  for row, series in enumerate(shown):
    for column, origin in enumerate(origins):
      ax = axes[row, column]
      part = frame[(frame['series'] == series) & (frame['origin'] == origin)]
      ax.fill_between(part['step'], part[f'{TFT}_{low}'], part[f'{TFT}_{high}'],
                      color='tab:blue', alpha=0.2, label=f'TFT {band}')
      ax.plot(part['step'], part['actual'], color='black', label='actual')
      ax.plot(part['step'], part[f'{TFT}_p50'], color='tab:blue', label='TFT P50')
      ax.plot(part['step'], part[f'{LIGHTGBM}_p50'], color='tab:orange', label='LightGBM P50')
      ax.set_title(f'{series}, origin {origin}', fontsize=9)
      if row == len(shown) - 1:
        ax.set_xlabel('horizon step')
  axes[0, 0].legend(fontsize=7)
  figure.tight_layout()
  return figure


def _save(figure: Figure, path: str) -> None:
  with tf.io.gfile.GFile(path, 'wb') as f:
    figure.savefig(f, format='png', dpi=100, bbox_inches='tight')
