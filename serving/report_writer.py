"""Writes an interpretation report: PNG figures, `index.html` and `report.json`.

The figures: variable importance per selection group, the attention of each horizon step
over the window's steps, and the forecasts (P10-P90 band, P50) against the actuals for a
few series, over their last windows. `report.json` holds the numbers (see
`trainer_module.interpretation`); `index.html` shows the figures and the importance table.
Files go through tf.io.gfile, so the directory may be on GCS.
"""

import datetime
import json
import os
from typing import Dict, List, Mapping, Sequence

import jinja2
import numpy as np
import tensorflow as tf
from matplotlib.figure import Figure

from schema.frequency import Frequency
from schema.selection_variables import GROUPS
from trainer_module.export import key_quantile
from trainer_module.interpretation import Interpretation

REPORT_JSON = 'report.json'
INDEX_HTML = 'index.html'
IMPORTANCE_PNG = 'variable_importance.png'
ATTENTION_PNG = 'attention.png'


def _step_times(start: int, offsets: Sequence[int],
                frequency: Frequency) -> List[datetime.datetime]:
  """UTC times of the grid steps at `offsets` from epoch seconds `start`."""
  first = frequency.step_of(int(start))
  return [datetime.datetime.fromtimestamp(frequency.seconds_of(first + offset),
                                          datetime.timezone.utc) for offset in offsets]


def _save(figure: Figure, path: str) -> None:
  with tf.io.gfile.GFile(path, 'wb') as f:
    figure.savefig(f, format='png', dpi=100, bbox_inches='tight')


def _importance_figure(importance: Mapping[str, Mapping[str, float]]) -> Figure:
  groups = [group for group in GROUPS if importance[group]]
  figure = Figure(figsize=(6, 1 + 0.35 * sum(len(importance[g]) for g in groups) + len(groups)))
  axes = figure.subplots(len(groups), 1, squeeze=False,
                         gridspec_kw={'height_ratios': [len(importance[g]) for g in groups]})
  for ax, group in zip(axes[:, 0], groups):
    names, weights = zip(*sorted(importance[group].items(), key=lambda item: item[1]))
    ax.barh(names, weights, color='tab:blue')
    ax.set_title(f'{group} variables')
    ax.set_xlim(0, 1)
  axes[-1, 0].set_xlabel('mean selection weight (each group sums to 1)')
  figure.tight_layout()
  return figure


def _attention_figure(interpretation: Interpretation) -> Figure:
  offsets = interpretation.step_offsets
  horizon = interpretation.spec.horizon
  figure = Figure(figsize=(10, 6))
  heatmap_ax, profile_ax = figure.subplots(2, 1, sharex=True)
  image = heatmap_ax.imshow(interpretation.attention, aspect='auto', cmap='viridis',
                            extent=(offsets[0] - 0.5, offsets[-1] + 0.5, horizon + 0.5, 0.5))
  figure.colorbar(image, ax=heatmap_ax, label='mean attention')
  heatmap_ax.set_ylabel('horizon step')
  heatmap_ax.set_title('attention of each horizon step over the window (mean over windows)')
  profile_ax.plot(offsets, interpretation.attention.mean(axis=0), color='tab:blue')
  profile_ax.axvline(-0.5, color='grey', linestyle='--', linewidth=1)
  profile_ax.set_xlabel('step relative to the forecast start (negative: history)')
  profile_ax.set_ylabel('mean over horizon steps')
  return figure


def _forecast_figure(interpretation: Interpretation, key: str,
                     windows_per_series: int) -> Figure:
  spec = interpretation.spec
  indices = np.flatnonzero(interpretation.series_keys == key)
  indices = indices[np.argsort(interpretation.forecast_starts[indices])][-windows_per_series:]
  names = list(interpretation.forecasts)
  low, high = names[0], names[-1]
  median = min(names, key=lambda name: abs(key_quantile(name) - 0.5))
  history_offsets = list(range(-spec.encoder_steps, 0))
  horizon_offsets = list(range(spec.horizon))
  actuals: Dict[datetime.datetime, float] = {}
  figure = Figure(figsize=(10, 3.5))
  ax = figure.subplots()
  for position, index in enumerate(indices):
    start = interpretation.forecast_starts[index]
    actuals.update(zip(_step_times(start, history_offsets, spec.frequency),
                       interpretation.target_history[index]))
    horizon = _step_times(start, horizon_offsets, spec.frequency)
    actuals.update(zip(horizon, interpretation.target_future[index]))
    first = position == 0  # one legend entry per kind of line
    ax.fill_between(horizon, interpretation.forecasts[low][index],
                    interpretation.forecasts[high][index], color='tab:blue', alpha=0.25,
                    label=f'{low.upper()}-{high.upper()}' if first else None)
    ax.plot(horizon, interpretation.forecasts[median][index], color='tab:blue',
            label=median.upper() if first else None)
  times = sorted(actuals)
  ax.plot(times, [actuals[t] for t in times], color='black', linewidth=1, label='actual')
  ax.set_title(f'{key}: last {len(indices)} forecast windows')
  ax.set_ylabel(spec.target_column)
  ax.legend(loc='upper left')
  figure.autofmt_xdate()
  return figure


_INDEX_TEMPLATE = jinja2.Environment(autoescape=True).from_string("""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{ title }}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px}
td:last-child{text-align:right}img{max-width:100%}</style></head><body>
<h1>{{ title }}</h1>
<p>{{ report.windows }} windows of {{ report.series }} series; dataset spec
<code>{{ report.dataset }}</code>, history E={{ report.encoder_steps }},
horizon H={{ report.horizon }}.</p>
<ul>{% for name, value in report.sources.items() %}
<li>{{ name }}: <code>{{ value }}</code></li>{% endfor %}</ul>
<h2>Variable importance</h2>
<p>Mean variable-selection weight of each input, per selection group (static; history and
future also averaged over their steps). Each group sums to 1.</p>
<table><tr><th>group</th><th>variable</th><th>mean weight</th></tr>
{%- for group, name, weight in importance %}
<tr><td>{{ group }}</td><td>{{ name }}</td><td>{{ '%.3f' % weight }}</td></tr>
{%- endfor %}</table>
<img src="{{ importance_png }}" alt="variable importance">
<h2>Attention</h2>
<p>Mean attention of each horizon step over the window's steps, relative to the forecast
start. The mask is causal: a horizon step attends to the history and to the horizon
steps up to itself; each row sums to 1.</p>
<img src="{{ attention_png }}" alt="attention">
<h2>Forecasts</h2>
{%- for plot in report.forecast_plots %}
<h3>{{ plot.series }}</h3><img src="{{ plot.figure }}" alt="forecasts">
{%- endfor %}
</body></html>
""")


def index_html(report: Mapping[str, object], title: str) -> str:
  """The report's page: the figures and the importance table, values escaped."""
  importance = [(group, name, weight) for group in GROUPS
                for name, weight in sorted(report['variable_importance'][group].items(),
                                           key=lambda item: -item[1])]
  return _INDEX_TEMPLATE.render(title=title, report=report, importance=importance,
                                importance_png=IMPORTANCE_PNG, attention_png=ATTENTION_PNG)


def write_report(interpretation: Interpretation, output_dir: str, title: str,
                 sources: Mapping[str, str], series_count: int = 4,
                 windows_per_series: int = 4) -> Dict[str, object]:
  """Writes the figures, `report.json` and `index.html` into `output_dir`.

  Args:
    interpretation: what to report.
    output_dir: created if missing.
    title: the page title.
    sources: where the model and the windows came from, shown as given.
    series_count: series with a forecast figure (the first by key).
    windows_per_series: the last windows of each of those series to plot.

  Returns:
    The contents of `report.json`.
  """
  tf.io.gfile.makedirs(output_dir)
  spec = interpretation.spec
  plotted = sorted(set(interpretation.series_keys))[:series_count]
  report = {
      'dataset': spec.name,
      'encoder_steps': spec.encoder_steps,
      'horizon': spec.horizon,
      'windows': int(len(interpretation.series_keys)),
      'series': len(set(interpretation.series_keys)),
      'sources': dict(sources),
      'variable_importance': interpretation.importance,
      'attention': {'step_offsets': interpretation.step_offsets,
                    'by_horizon_step': interpretation.attention.tolist()},
      'forecast_plots': [{'series': key, 'figure': f'forecast_{i + 1}.png'}
                         for i, key in enumerate(plotted)],
  }
  _save(_importance_figure(interpretation.importance), os.path.join(output_dir, IMPORTANCE_PNG))
  _save(_attention_figure(interpretation), os.path.join(output_dir, ATTENTION_PNG))
  for plot in report['forecast_plots']:
    _save(_forecast_figure(interpretation, plot['series'], windows_per_series),
          os.path.join(output_dir, plot['figure']))
  with tf.io.gfile.GFile(os.path.join(output_dir, REPORT_JSON), 'w') as f:
    json.dump(report, f, indent=2)
  with tf.io.gfile.GFile(os.path.join(output_dir, INDEX_HTML), 'w') as f:
    f.write(index_html(report, title))
  return report
