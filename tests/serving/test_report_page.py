"""The interpretation report's page: every value escaped, inputs by weight."""

from serving import report_writer
from schema.selection_variables import GROUPS


def test_the_page_escapes_names_and_lists_inputs_by_weight():
  report = {'windows': 3, 'series': 2, 'dataset': 'shops', 'encoder_steps': 4, 'horizon': 2,
            'sources': {'model': '/runs/<model>'},
            'variable_importance': {group: {'price': 0.25, 'load<raw>': 0.75}
                                    for group in GROUPS},
            'forecast_plots': [{'series': 'N&1', 'figure': 'forecast_0.png'}]}
  page = report_writer.index_html(report, 'Report <draft>')
  assert '<title>Report &lt;draft&gt;</title>' in page
  assert '<code>/runs/&lt;model&gt;</code>' in page
  assert '<h3>N&amp;1</h3><img src="forecast_0.png"' in page
  rows = [line for line in page.splitlines() if line.startswith('<tr><td>')]
  assert rows[:2] == ['<tr><td>static</td><td>load&lt;raw&gt;</td><td>0.750</td></tr>',
                      '<tr><td>static</td><td>price</td><td>0.250</td></tr>']
  assert len(rows) == 2 * len(GROUPS)
