"""`tft-pipeline init`'s drafting of a spec from a table (`pipeline.spec_draft`)."""

import pandas as pd

from pipeline import spec_draft
from schema.dataset_spec import Role

SHOPS = ['A', 'B', 'C', 'D', 'E']


def _monthly_sales(**statics):
  """30 months of sales of each shop, with static columns given as one value per shop;
  every value as text, as `init` reads a file."""
  rows = []
  for index, shop in enumerate(SHOPS):
    for month in range(30):
      rows.append({'month': f'{2020 + month // 12}-{month % 12 + 1:02d}-01', 'shop': shop,
                   'sales': 100 + 10 * index + month % 12,
                   **{name: values[index] for name, values in statics.items()}})
  return pd.DataFrame(rows).astype(str)


def test_a_static_column_that_numbers_the_series_is_marked_as_a_likely_id():
  table = _monthly_sales(shop_number=[1, 2, 3, 4, 5], area=[120.0, 80.0, 95.5, 60.0, 75.0],
                         floors=[1, 2, 3, 4, 6])
  drafted = spec_draft.draft(table, target='sales', name='sales')
  columns = {column.name: column for column in drafted.columns}
  assert drafted.series == len(SHOPS)
  assert {name: columns[name].role for name in ('shop_number', 'area', 'floors')} == {
      'shop_number': Role.STATIC, 'area': Role.STATIC, 'floors': Role.STATIC}
  assert columns['shop_number'].check
  assert columns['shop_number'].note.startswith(
      'CHECK: numbers the series 1 to 5, a different value in each, like an id')
  # Real statics that differ by series but do not count them off are left unmarked.
  assert not columns['area'].check and not columns['floors'].check
  assert columns['area'].note == columns['floors'].note == 'one value in every series'
