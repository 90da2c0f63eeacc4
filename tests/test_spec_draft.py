"""`tft-pipeline init`'s drafting of a spec from a table (`pipeline.spec_draft`)."""

import pandas as pd
import yaml

from pipeline import init_spec, spec_draft
from schema.dataset_spec import SPEC_KEYS, DatasetSpec, Role

SHOPS = [f'shop_{letter}' for letter in 'ABCDEFGHIJKL']  # 12


def _monthly_sales(shops, **statics):
  """30 months of sales of each shop, with static columns given as one value per shop;
  every value as text, as `init` reads a file."""
  rows = []
  for index, shop in enumerate(shops):
    for month in range(30):
      rows.append({'month': f'{2020 + month // 12}-{month % 12 + 1:02d}-01', 'shop': shop,
                   'sales': 100 + 10 * index + month % 12,
                   **{name: values[index] for name, values in statics.items()}})
  return pd.DataFrame(rows).astype(str)


def _drafted_columns(table):
  return {column.name: column for column in spec_draft.draft(table, 'sales', 'sales').columns}


def test_a_static_column_that_numbers_the_series_is_marked_as_a_likely_id():
  columns = _drafted_columns(_monthly_sales(
      SHOPS, shop_number=[-1 + i for i in range(12)],
      area=[120.0 + 7.5 * i for i in range(12)], floors=[1 + i for i in range(11)] + [13]))
  assert {name: columns[name].role for name in ('shop_number', 'area', 'floors')} == {
      'shop_number': Role.STATIC, 'area': Role.STATIC, 'floors': Role.STATIC}
  assert columns['shop_number'].check
  assert columns['shop_number'].note.startswith(
      'CHECK: numbers the series -1 to 10, a different value in each, like an id')
  # Real statics that differ by series but do not count them off are left unmarked.
  assert not columns['area'].check and not columns['floors'].check
  assert columns['area'].note == columns['floors'].note == 'one value in every series'


def test_a_few_series_numbered_one_by_one_are_not_taken_for_ids():
  few = SHOPS[:9]
  columns = _drafted_columns(_monthly_sales(few, floors=list(range(1, len(few) + 1))))
  assert not columns['floors'].check


def test_a_target_never_below_zero_gets_a_forecast_floor_of_zero_in_the_spec_file():
  table = _monthly_sales(SHOPS)
  drafted = spec_draft.draft(table, 'sales', 'sales')
  assert drafted.forecast_floor == 0.0
  text = init_spec.render(drafted, '/data/sales.csv', '/data/sales.yaml',
                          '/data/sales.schema.pbtxt')
  values = yaml.safe_load(text)
  spec = DatasetSpec.from_dict({key: values[key] for key in SPEC_KEYS if key in values})
  assert spec.forecast_floor == 0.0
  assert '  forecast floor: 0 (no target value is below it)' in init_spec.summary(
      drafted, '/data/sales.yaml', '/data/sales.schema.pbtxt', '/data/sales.csv').splitlines()

  table.loc[3, 'sales'] = '-2.5'  # a return, say
  unfloored = spec_draft.draft(table, 'sales', 'sales')
  assert unfloored.forecast_floor is None
  assert 'forecast_floor' not in init_spec.render(unfloored, '/data/sales.csv',
                                                  '/data/sales.yaml', '/data/s.pbtxt')
