"""The forecast ledger's page: accuracy over time and the series worse than naive.

`index.html` and `accuracy.png` beside `scoring_report.json`
(`components.forecast_scoring`): the MAE of each scored forecast by its first forecast
time, a line per model and the best naive forecast of the same origins beside them, each
against what its model's held-out test expected, and below it the P10-P90 coverage of
each; then, for the newest forecast scored,
its figures and the series whose MAE exceeded the best naive forecast's on them.
"""

import datetime
import posixpath
from typing import Dict, List, Mapping

import jinja2
import tensorflow as tf
from matplotlib.figure import Figure

INDEX_HTML = 'index.html'
ACCURACY_PNG = 'accuracy.png'
COVERAGE_AIM = 0.8  # the P10-P90 band's nominal share: 0.9 - 0.1


def _when(entry: Mapping[str, object]) -> datetime.datetime:
  return datetime.datetime.fromtimestamp(int(entry['first_seconds']), datetime.timezone.utc)


def accuracy_figure(entries: List[Mapping[str, object]]) -> Figure:
  """By forecast time, above: the MAE, a line per model, its expected MAE dotted (a bar
  where a model made one forecast), the best naive forecast's dashed; below: each model's
  P10-P90 coverage beside the 0.8 it aims at."""
  scored = [entry for entry in entries if 'mean_absolute_error' in entry]
  figure = Figure(figsize=(9, 6))
  ax, coverage_ax = figure.subplots(2, 1, sharex=True, gridspec_kw={'height_ratios': [2, 1]})
  by_model: Dict[str, List[Mapping[str, object]]] = {}
  for entry in scored:
    by_model.setdefault(str(entry['model']), []).append(entry)
  for number, (model, points) in enumerate(by_model.items(), start=1):
    line, = ax.plot([_when(p) for p in points], [p['mean_absolute_error'] for p in points],
                    marker='o', label=f'model {number}: {short_model(model)}')
    expected = [(p, (p.get('expected') or {}).get('mean_absolute_error')) for p in points]
    if any(value for _, value in expected):
      ax.plot([_when(p) for p, value in expected if value],
              [value for _, value in expected if value], linestyle=':', marker='_',
              markersize=14, color=line.get_color(),
              label=f'model {number}: expected (held-out test)')
  naive = [entry for entry in scored if entry.get('best_naive')]
  if naive:
    ax.plot([_when(e) for e in naive], [e['naive_mae'][e['best_naive']] for e in naive],
            linestyle='--', color='grey', marker='x', label='best naive forecast')
  ax.set_ylabel('MAE of the scored rows')
  ax.set_title('published forecasts, scored as their actuals arrived')
  if scored:
    ax.legend(loc='best', fontsize='small')
  for number, points in enumerate(by_model.values(), start=1):
    covered = [p for p in points if p.get('coverage_p10_p90') is not None]
    coverage_ax.plot([_when(p) for p in covered], [p['coverage_p10_p90'] for p in covered],
                     marker='o', label=f'model {number}')
  coverage_ax.axhline(COVERAGE_AIM, linestyle='--', color='grey', label='the aim')
  coverage_ax.set_ylim(0, 1.02)
  coverage_ax.set_ylabel('P10-P90 coverage')
  figure.autofmt_xdate()
  return figure


def short_model(model: str) -> str:
  """A model directory by its last parts (`Trainer/model/10`)."""
  parts = [part for part in str(model).split('/') if part and part != 'Format-Serving']
  return '/'.join(parts[-3:])


_TEMPLATE = jinja2.Environment(autoescape=True).from_string("""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{ title }}: forecast scores</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px}
img{max-width:100%}</style></head><body>
<h1>{{ title }}: published forecasts, scored</h1>
<p>Ledger <code>{{ report.ledger }}</code>; this run scored {{ report.rows_scored_now }}
rows. Policy: the MAE at most {{ report.policy.max_mae_vs_expected }} times the expected,
on breach {{ report.policy.on_breach }}.</p>
{% if report.breach %}<p><strong>Breach:</strong> {{ report.breach }}.</p>{% endif %}
{% for item in report.unreadable %}<p><strong>Not read:</strong> <code>{{ item.path }}</code>
({{ item.why }}): left as it is.</p>{% endfor %}
<img src="{{ accuracy_png }}" alt="accuracy over time">
<h2>Forecasts</h2>
<table><tr><th>first time</th><th>model</th><th>rows scored</th><th>MAE</th>
<th>expected</th><th>coverage</th><th>best naive MAE</th><th>not yet due</th></tr>
{%- for e in report.forecasts %}
<tr><td>{{ e.first_time }}</td><td>{{ short(e.model) }}</td>
<td>{{ e.rows_scored or 0 }} of {{ e.rows }}</td>
<td>{{ fmt(e.mean_absolute_error) }}</td><td>{{ fmt(e.expected.mean_absolute_error) }}</td>
<td>{{ fmt(e.coverage_p10_p90) }}</td>
<td>{% if e.best_naive %}{{ fmt(e.naive_mae[e.best_naive]) }} ({{ e.best_naive }}){% endif %}</td>
<td>{{ e.not_yet_due }}</td></tr>
{%- endfor %}</table>
{% if newest %}<h2>Series worse than the best naive forecast, {{ newest.first_time }}</h2>
{% if newest.series_worse_than_naive %}<table><tr><th>series</th><th>MAE</th>
<th>{{ newest.best_naive }} MAE</th></tr>
{%- for s in newest.series_worse_than_naive %}
<tr><td>{{ s.series }}</td><td>{{ fmt(s.mae) }}</td><td>{{ fmt(s.naive_mae) }}</td></tr>
{%- endfor %}</table>{% else %}<p>None.</p>{% endif %}{% endif %}
</body></html>
""")


def _format(value) -> str:
  """A figure to 4 significant digits; blank where there is none yet (None, or a key a
  forecast none of whose rows is due lacks)."""
  return '' if value is None or isinstance(value, jinja2.Undefined) else f'{value:.4g}'


def index_html(report: Mapping[str, object], title: str) -> str:
  newest = next((e for e in report['forecasts']
                 if e['forecast_id'] == report['newest_scored']), None)
  return _TEMPLATE.render(title=title, report=report, newest=newest,
                          accuracy_png=ACCURACY_PNG, short=short_model, fmt=_format)


def write_page(report: Mapping[str, object], directory: str, title: str) -> None:
  """Writes `index.html` and its figure into `directory`."""
  with tf.io.gfile.GFile(posixpath.join(directory, ACCURACY_PNG), 'wb') as f:
    accuracy_figure(report['forecasts']).savefig(f, format='png', dpi=100,
                                                 bbox_inches='tight')
  with tf.io.gfile.GFile(posixpath.join(directory, INDEX_HTML), 'w') as f:
    f.write(index_html(report, title))
