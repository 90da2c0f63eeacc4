"""`tft-pipeline init`'s drafting of a spec from a table (`pipeline.spec_draft`)."""

import numpy as np
import pandas as pd
import pytest
import yaml

from common import exit_codes
from pipeline import init_spec, spec_draft
from pipeline.draft.table import DraftError, read_table
from pipeline.draft.window import drafted_history, small_data_batch_size, training_windows
from schema import dataset_file
from schema.dataset_spec import SPEC_KEYS, DatasetSpec, DType, Role
from schema.frequency import Frequency
from schema.time_split import parse_timestamp, utc_offset

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
  assert columns['area'].note == columns['floors'].note == 'constant within each series'


def test_a_static_column_named_like_an_id_with_a_number_per_series_is_marked_too():
  # The ids of a subset of the series: each its own, none consecutive.
  ids = [3 + 17 * i for i in range(12)]
  columns = _drafted_columns(_monthly_sales(SHOPS, timeseries=ids, floors=ids))
  assert columns['timeseries'].check
  assert columns['timeseries'].note.startswith(
      'CHECK: a different whole number in each series (3 to 190), named like an id')
  assert not columns['floors'].check  # the same numbers under another name
  # Id words inside other words do not make a name an id's.
  for name in ('diameter', 'workshop_count', 'storeys', 'num_items'):
    column = _drafted_columns(_monthly_sales(SHOPS, **{name: ids}))[name]
    assert not column.check, name


def test_a_few_series_numbered_one_by_one_are_not_taken_for_ids():
  few = SHOPS[:9]
  columns = _drafted_columns(_monthly_sales(few, floors=list(range(1, len(few) + 1))))
  assert not columns['floors'].check


def test_a_count_never_below_zero_gets_a_forecast_floor_of_zero_in_the_spec_file():
  table = _monthly_sales(SHOPS)
  drafted = spec_draft.draft(table, 'sales', 'sales')
  assert drafted.forecast_floor == 0.0
  text = init_spec.render(drafted, '/data/sales.csv', '/data/sales.yaml',
                          '/data/sales.schema.pbtxt')
  values = yaml.safe_load(text)
  spec = DatasetSpec.from_dict({key: values[key] for key in SPEC_KEYS if key in values})
  assert spec.forecast_floor == 0.0
  assert ('  forecast floor: 0 (the target is never below it, and counts or rests on it)'
          in init_spec.summary(
      drafted, '/data/sales.yaml', '/data/sales.schema.pbtxt', '/data/sales.csv').splitlines())

  table.loc[3, 'sales'] = '-2.5'  # a return, say
  unfloored = spec_draft.draft(table, 'sales', 'sales')
  assert unfloored.forecast_floor is None
  assert 'forecast_floor' not in init_spec.render(unfloored, '/data/sales.csv',
                                                  '/data/sales.yaml', '/data/s.pbtxt')


@pytest.mark.parametrize('values, floored', [
    ([12.5, 0.0, 3.25, 7.0], True),  # rests on 0: a quarter of the values
    ([3.0, 4.0, 0.0, 9.0], True),  # counts
    ([12.5, 0.5, 3.25, 7.0], False),  # a measurement that stayed above 0
    ([12.5, 0.0, -0.5, 7.0], False),  # below 0 once
])
def test_the_forecast_floor_is_drafted_for_counts_and_targets_resting_on_zero(values, floored):
  table = _monthly_sales(SHOPS)
  table['sales'] = [str(values[i % len(values)]) for i in range(len(table))]
  assert spec_draft.draft(table, 'sales', 'sales').forecast_floor == (0.0 if floored else None)


def test_a_target_at_zero_once_in_a_thousand_values_is_not_floored():
  assert not spec_draft.zero_floor(pd.Series([0.0] + [20.5] * 999))
  assert spec_draft.zero_floor(pd.Series([0.0] * 10 + [20.5] * 990))
  assert spec_draft.zero_floor(pd.Series([np.nan, 0.0, 1.0]))  # missing values are not counted


def _read(tmp_path, text, encoding='utf-8'):
  path = tmp_path / 'sales.csv'
  path.write_bytes(text.encode(encoding))
  return read_table(str(path))


def _daily(days=60, duplicate_day=None, **columns):
  """Daily sales of one series as CSV text; `columns` maps a name to a function of the day
  giving its text; `duplicate_day` writes that day's row twice, the second time with
  other values."""
  names = ['day', 'sales', *columns]
  lines = [','.join(names)]
  for day in range(days):
    date = (pd.Timestamp('2024-01-01') + pd.Timedelta(days=day)).date().isoformat()
    values = [date, str(100 + day % 7), *(make(day) for make in columns.values())]
    lines.append(','.join(values))
    if day == duplicate_day:
      lines.append(','.join([date, '250', *(make(day + 1) for make in columns.values())]))
  return '\n'.join(lines) + '\n'


def test_a_name_that_reads_as_planned_is_drafted_known_unless_it_reads_as_measured(tmp_path):
  price = lambda day: f'{10 + day % 3}.5'
  columns = {column.name: column for column in spec_draft.draft(_read(tmp_path, _daily(
      unit_price=price, competitor_price=price, price_actual=price, footfall=price,
      contractual_price=price)),
                                                               'sales', 'sales').columns}
  assert columns['unit_price'].role == columns['contractual_price'].role == Role.KNOWN
  assert 'its name suggests a value known ahead' in columns['unit_price'].note
  assert {name: columns[name].role for name in ('competitor_price', 'price_actual',
                                                'footfall')} == dict.fromkeys(
      ('competitor_price', 'price_actual', 'footfall'), Role.OBSERVED)


def test_rows_are_indexed_by_their_line_in_the_file_as_the_pipeline_counts_them(tmp_path):
  table = _read(tmp_path, '\ufeffday,sales\n2024-01-01,1\n\n2024-01-02,2\n')
  assert list(table.columns) == ['day', 'sales']  # no byte-order mark in the name
  assert table.index.tolist() == [2, 4]  # line 3 is blank
  assert table.loc[4, 'sales'] == '2'


@pytest.mark.parametrize('text, message', [
    ('', 'the file is empty'),
    ('day,sales\n2024-01-01,1\n2024-01-02,2,3\n',
     'line 3: 3 fields, but the header has 2; fix the row'),
    ('day,sales,sales\n2024-01-01,1,2\n',
     r"the header names 'sales' twice \(columns 2 and 3\)"),
    ('day;sales\n2024-01-01;1\n', r"the file looks separated by ';'.*save it with commas"),
])
def test_a_file_the_pipeline_cannot_read_is_refused_with_the_fix(tmp_path, text, message):
  with pytest.raises(DraftError, match=message):
    _read(tmp_path, text)


def test_text_that_is_not_utf8_is_refused_at_its_file_and_line(tmp_path):
  with pytest.raises(DraftError) as refused:
    _read(tmp_path, 'shop,day,sales\nA,2024-01-01,1\nCafé,2024-01-01,2\n', encoding='latin-1')
  assert str(refused.value).endswith(', line 3: byte 0xe9 is not UTF-8 text; save the file as '
                                     'UTF-8 (in a spreadsheet: CSV UTF-8)')
  assert str(refused.value).startswith(str(tmp_path))


def test_a_repeated_row_of_a_series_is_named_rather_than_taken_for_another_key(tmp_path):
  # Without the repeat, 'promo' (integers) is no key: the one series is keyed by nothing.
  promo = {'promo': lambda day: str(int(day % 5 == 0))}
  assert not [c for c in spec_draft.draft(_read(tmp_path, _daily(**promo)), 'sales',
                                          'sales').columns if c.role == Role.SERIES_KEY]
  # With day 30 written twice with another promo, 'promo' would tell the rows apart.
  table = _read(tmp_path, _daily(duplicate_day=30, **promo))
  with pytest.raises(DraftError, match=r"lines 32 and 33 are two rows at the same "
                     r"time \(day '2024-01-31'; 1 row in all repeat.*remove or aggregate"):
    spec_draft.draft(table, 'sales', 'sales')


def test_a_second_key_column_that_splits_a_few_series_is_no_duplicate(tmp_path):
  # 40 products sold in store 1, p0 in store 2 as well: under the product alone, p0's
  # every time repeats (31 rows, 2% of all rows, half of p0's).
  lines = ['product,store,day,sales'] + [
      f'p{product},{store},2024-01-{day:02d},{product + day}' for product in range(40)
      for store in ((1, 2) if product == 0 else (1,)) for day in range(1, 32)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert [c.name for c in drafted.columns if c.role == Role.SERIES_KEY] == ['product', 'store']
  assert drafted.series == 41


def test_a_key_column_with_an_empty_value_is_named_with_its_line(tmp_path):
  lines = ['shop,day,sales'] + [f'{shop},2024-01-{day:02d},{day}' for shop in 'AB'
                                for day in range(1, 29)]
  lines[40] = lines[40].replace('B,', ',', 1)  # line 41
  with pytest.raises(DraftError, match=r"column 'shop' tells the series apart but "
                     r'is empty in 1 row \(first on line 41\): fill them in'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_a_small_data_set_gets_a_batch_within_its_training_windows(tmp_path):
  # One series of 8 years of months: 24 + 6 steps per window; the last 15% (14 months, to
  # 18 from a multiple of 6) for test, the 15% before them for eval.
  lines = ['month,revenue'] + [f'{2015 + m // 12}-{m % 12 + 1:02d}-01,'
                               f'{100 + 3 * (m % 12) + (7 * m) % 5}' for m in range(96)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'revenue', 'revenue')
  assert (drafted.encoder_steps, drafted.horizon, drafted.eval_start, drafted.test_start) == (
      24, 6, '2020-01-01', '2021-07-01')
  assert (drafted.eval_steps, drafted.test_steps) == (36, 18)
  # Months 0 to 59 are before the eval period: 60 - 30 + 1 windows.
  assert drafted.training_windows == 31 and drafted.batch_size == 16
  assert ('31 training windows, fewer than the default batch of 64: the spec sets a batch of '
          '16') in ' '.join(drafted.findings)
  text = init_spec.render(drafted, '/d/revenue.csv', '/d/revenue.yaml', '/d/revenue.schema')
  assert ('model: {ensemble_size: 3, batch_size: 16}  # 3 TFTs of different seeds, serving the '
          'mean of those chosen on the eval windows (1: one TFT, about 2.5 times faster to '
          'train); 31 training windows, fewer than the default batch of 64') in text.splitlines()
  dataset = dataset_file.from_dict(yaml.safe_load(text), '/d')
  assert dataset.model_overrides == {'ensemble_size': 3, 'batch_size': 16}
  # The eval and test periods are the data's last steps; ExampleGen places them where init
  # did.
  assert (dataset.split.eval_start, dataset.split.test_start) == ('last 36 steps',
                                                                  'last 18 steps')
  from schema import split_placement
  time_range = (parse_timestamp('2015-01-01'), parse_timestamp('2022-12-01'))
  assert split_placement.resolve_boundary(dataset.split.eval_start, time_range,
                                      dataset.spec) == parse_timestamp(drafted.eval_start)
  assert split_placement.resolve_boundary(dataset.split.test_start, time_range,
                                      dataset.spec) == parse_timestamp(drafted.test_start)
  # Enough windows: the preset's batch, and no model line.
  many = spec_draft.draft(_monthly_sales(SHOPS), 'sales', 'sales')
  assert many.training_windows >= 64 and many.batch_size is None
  [model] = [line for line in init_spec.render(many, '/d/s.csv', '/d/s.yaml', '/d/s.schema')
             .splitlines() if line.startswith('model:')]
  assert model.startswith('model: {ensemble_size: 3') and 'batch' not in model


def test_series_that_end_a_horizon_before_the_newest_rows_are_named(tmp_path):
  ends = {'A': 60, 'B': 57, 'C': 53}  # days; the horizon is 7
  lines = ['shop,day,sales'] + [
      f'{shop},{(pd.Timestamp("2024-01-01") + pd.Timedelta(days=day)).date()},{day % 7 + 1}'
      for shop, days in ends.items() for day in range(days)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert drafted.horizon == 7
  [finding] = [f for f in drafted.findings if 'before the newest rows' in f]
  assert finding.startswith("1 series ends 7 or more steps before the newest rows (2024-02-29), "
                            "e.g. shop 'C' (from line 119) at 2024-02-22: the pipeline's "
                            'forecasts start after the newest rows')


def test_series_that_start_in_the_eval_period_are_named(tmp_path):
  starts = {'A': 0, 'B': 0, 'C': 85}  # from day 0 or 85 to day 99
  lines = ['shop,day,sales'] + [
      f'{shop},{(pd.Timestamp("2024-01-01") + pd.Timedelta(days=day)).date()},{day % 7 + 1}'
      for shop, first in starts.items() for day in range(first, 100)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert drafted.eval_start <= '2024-03-26'  # day 85
  [finding] = [f for f in drafted.findings if 'in the eval period' in f]
  assert finding == (f"1 series starts in the eval period (from {drafted.eval_start}), e.g. "
                     "shop 'C' (from line 202): no model trains on them, so the run does not "
                     'forecast them, until the eval period of a later run starts after their '
                     'first rows (docs/pipeline.md: new series)')
  # Starting before it, as every series of the other tests, is not named.
  starts['C'] = 10
  lines = ['shop,day,sales'] + [
      f'{shop},{(pd.Timestamp("2024-01-01") + pd.Timedelta(days=day)).date()},{day % 7 + 1}'
      for shop, first in starts.items() for day in range(first, 100)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert not [f for f in drafted.findings if 'in the eval period' in f]


def test_a_yearly_season_beyond_the_history_is_suggested_when_the_series_allow_it(tmp_path):
  def weekly(weeks):
    lines = ['shop,week,sales'] + [
        f'{shop},{(pd.Timestamp("2022-01-03") + pd.Timedelta(weeks=week)).date()},'
        f'{100 + week % 52}' for shop in 'AB' for week in range(weeks)]
    return _read(tmp_path, '\n'.join(lines) + '\n')

  drafted = spec_draft.draft(weekly(156), 'sales', 'sales')  # three years of Mondays
  assert drafted.frequency.value == 'W-MON' and drafted.encoder_steps < 52
  [finding] = [f for f in drafted.findings if 'season' in f]
  assert finding == (
      f"the grid's season of 52 steps is longer than the {drafted.encoder_steps}-step "
      'history, so neither the model nor the naive forecasts see the value a season before; '
      'the series are long enough to try --encoder-steps 52 with model: {seasonal_lag: 52} '
      '(the target 52 steps before each forecast step as an input, and seasonal_52 among the '
      'naive forecasts)')
  # A year and a half of weeks is too short for such windows; a history of 52 needs no hint.
  assert not [f for f in spec_draft.draft(weekly(78), 'sales', 'sales').findings
              if 'season of' in f]
  assert not [f for f in spec_draft.draft(weekly(156), 'sales', 'sales',
                                          encoder_steps=52).findings if 'season of' in f]


def test_numbers_with_thousands_separators_are_drafted_as_text_with_the_fix(tmp_path):
  lines = ['shop,day,visitors,sales'] + [
      f'{shop},2024-01-{day:02d},"{900 + 50 * day:,}",{day + len(shop)}'
      for shop in ('A', 'BB') for day in range(1, 29)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  visitors = {column.name: column for column in drafted.columns}['visitors']
  assert visitors.dtype == DType.CATEGORICAL and visitors.check
  assert visitors.note == (
      "CHECK: column 'visitors' holds numbers written with thousands separators, such as "
      "'1,000' on line 3, so it is drafted as text (a category per value); write them "
      'without separators (1000; if the comma is a decimal point, with a point) and run init '
      'again')


def test_a_series_whose_target_never_changes_is_named():
  table = _monthly_sales(SHOPS)
  table.loc[table['shop'] == 'shop_C', 'sales'] = '0'
  findings = ' '.join(spec_draft.draft(table, 'sales', 'sales').findings)
  assert ("1 series has one 'sales' value in every row, e.g. shop 'shop_C' (from line 60), "
          "'0'") in findings


def test_a_column_filled_in_a_few_series_only_says_so():
  table = _monthly_sales(SHOPS)
  table['humidity'] = [str(40 + i % 7) if shop in SHOPS[:2] else ''
                       for i, shop in enumerate(table['shop'])]
  humidity = _drafted_columns(table)['humidity']
  assert humidity.role == Role.OBSERVED and humidity.allow_missing
  assert humidity.note.endswith('; filled in 2 of 12 series only, the others read it as '
                                'missing throughout')


def test_yearly_rows_are_refused_in_days_not_seconds(tmp_path):
  lines = ['year,sales'] + [f'{year}-01-01,{year % 7}' for year in range(1990, 2030)]
  with pytest.raises(DraftError, match=r'most often 365 days apart, which is no '
                     r'regular grid the pipeline knows \(.*quarters; not years\)'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


@pytest.mark.parametrize('write, separated', [
    (lambda day: f'{1000 if day == 28 else 900 + day:,}', True),  # 1 in 28 past 1,000
    (lambda day: f'{day / 8:.3f}'.replace('.', ','), False),  # '0,125': decimal commas
])
def test_a_few_separated_numbers_are_named_and_decimal_commas_are_not_taken_for_them(
    tmp_path, write, separated):
  lines = ['shop,day,visitors,sales'] + [
      f'{shop},2024-01-{day:02d},"{write(day)}",{day + len(shop)}'
      for shop in ('A', 'BB') for day in range(1, 29)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  note = {column.name: column for column in drafted.columns}['visitors'].note
  assert ('thousands separators' in note) == separated, note


def test_training_windows_are_counted_as_windowing_cuts_them():
  series = pd.Series([0] * 11 + [1] * 5)
  # Series 0: steps 0-4 and 6-11 (a gap at 5); series 1: steps 0-4.
  steps = np.array(list(range(5)) + list(range(6, 12)) + list(range(5)))
  # Windows of 3 steps before step 10: 0-4 holds 3, 6-9 holds 2; series 1 holds 3.
  assert training_windows(steps, series, 3, eval_starts=10) == 8
  assert small_data_batch_size(8) == 8
  assert small_data_batch_size(63) == 32
  assert small_data_batch_size(1) == 1
  assert small_data_batch_size(64) is None


def test_no_training_window_is_an_error_that_says_why(tmp_path):
  # A day missing every 10 days up to day 30: no 35 consecutive days before the eval period
  # (from day 59); its windows' histories, from day 31 on, have no gap.
  days = [day for day in range(100) if day > 30 or day % 10]
  lines = ['day,sales'] + [f'{(pd.Timestamp("2024-01-01") + pd.Timedelta(days=day)).date()},'
                           f'{day % 7 + 1}' for day in days]
  with pytest.raises(DraftError, match=r'no series has a training window \(28 '
                     r'history and 7 forecast steps without gaps, before 2024-02-29\)'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_text_is_kept_as_written_so_na_or_none_is_a_category_not_an_empty_value(tmp_path):
  # 'NA' is North America here, 'none' a promotion type, as ExampleGen keeps them.
  lines = ['region,day,promo_type,sales'] + [
      f'{region},2024-01-{day:02d},{("none", "bogo")[day % 2]},{day + len(region)}'
      for region in ('NA', 'EU', 'APAC') for day in range(1, 29)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  columns = {column.name: column for column in drafted.columns}
  assert columns['region'].role == Role.SERIES_KEY and drafted.series == 3
  assert (columns['promo_type'].role, columns['promo_type'].dtype) == (Role.KNOWN,
                                                                        DType.CATEGORICAL)
  # An empty text value is still missing: the column is left out, with the fix.
  lines[5] = lines[5].replace(',bogo,', ',,')
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert "column 'promo_type' is text with 1 empty value (first on line 6); fill them" in (
      ' '.join(drafted.findings))


@pytest.mark.parametrize('value, message', [
    ('1,234.0', r"holds '1,234.0' on line 12, which is not a number.*without thousands"),
    ('inf', r"holds 'inf' on line 12, which is not a finite number.*fix the value or remove"),
    ('NaN', r"has no value in 1 row \(first on line 12: 'NaN'\)"),
])
def test_a_bad_target_value_is_named_with_its_line(tmp_path, value, message):
  lines = _daily().splitlines()
  lines[11] = lines[11].split(',')[0] + f',"{value}"'
  with pytest.raises(DraftError, match=message):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_a_column_of_numbers_with_stray_text_says_what_to_fix(tmp_path):
  text = _daily(temp=lambda day: 'n/a' if day == 40 else f'{20 + day % 3}.5')
  drafted = spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')
  [temp] = [column for column in drafted.columns if column.name == 'temp']
  assert temp.dtype == DType.CATEGORICAL and temp.check
  expected = ("column 'temp' holds numbers but for 1 value such as 'n/a' on line 42, so it "
              'is drafted as text; if it is a column of numbers, write a missing value as '
              'empty or one of')
  assert temp.note.startswith(f'CHECK: {expected}')
  assert any(finding.startswith(expected) for finding in drafted.findings)
  # A text column with a few numbers among its values is text, unmarked by this.
  codes = spec_draft.draft(_read(tmp_path, _daily(code=lambda day: f'c{day % 4}')), 'sales',
                           'sales')
  assert not any('holds numbers' in finding for finding in codes.findings)


@pytest.mark.parametrize('first_day, message', [
    ('2024-01-31', r"line 2: '2024-01-31' is not on the monthly grid .* write each time as "
     r"the first day of its period \(2024-01-01 for '2024-01-31'\)"),
])
def test_a_time_off_the_grid_says_how_to_put_it_on(tmp_path, first_day, message):
  lines = ['day,sales', f'{first_day},1'] + [f'{2024 + m // 12}-{m % 12 + 1:02d}-01,{m}'
                                             for m in range(1, 40)]
  with pytest.raises(DraftError, match=message):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_dates_with_a_utc_offset_off_the_daily_grid_are_told_to_drop_it(tmp_path):
  text = _daily().replace('2024-01-05,', '2024-01-05T00:00:00+01:00,')
  with pytest.raises(DraftError, match=r"line 6: '2024-01-05T00:00:00\+01:00' is "
                     r'not on the daily grid .*write the dates without the offset'):
    spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')
  utc = _daily().replace(',', 'T00:00:00Z,', ).replace('dayT00:00:00Z,', 'day,')
  assert spec_draft.draft(_read(tmp_path, utc), 'sales', 'sales').frequency.value == 'daily'


def test_a_column_named_as_a_calendar_feature_replaces_it_in_a_valid_spec(tmp_path):
  text = _daily(days=800, day_of_week=lambda day: str(day % 7))  # months: trained, kept
  drafted = spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')
  assert 'day_of_week' not in drafted.calendar_features
  assert 'month_of_year' in drafted.calendar_features
  assert any("column 'day_of_week' has the name of a calendar feature" in finding
             for finding in drafted.findings)
  values = yaml.safe_load(init_spec.render(drafted, '/d/sales.csv', '/d/sales.yaml',
                                           '/d/sales.schema.pbtxt'))
  spec = DatasetSpec.from_dict({key: values[key] for key in SPEC_KEYS if key in values})
  assert 'day_of_week' in [column.name for column in spec.columns]


def test_a_calendar_feature_whose_values_the_training_period_lacks_is_left_out(tmp_path):
  # 60 days from January: the training period (before February) holds January only, the
  # eval and test periods February, the forecasts after them March; every weekday in all.
  drafted = spec_draft.draft(_read(tmp_path, _daily(days=60)), 'sales', 'sales')
  assert drafted.calendar_features == ('day_of_week',)
  assert drafted.untrained_calendar_features == ('month_of_year',)
  [note] = [f for f in drafted.findings if f.startswith('calendar features')]
  assert note.startswith("calendar features ['month_of_year'] left out (month_of_year takes 2 "
                         'values after the training period, 2 never in it): forecasts at those '
                         'times would rest on embeddings no training row trained')
  written = init_spec.render(drafted, '/d/sales.csv', '/d/sales.yaml', '/d/sales.schema.pbtxt')
  assert ('calendar_features: [day_of_week]  # left out: month_of_year, which takes values '
          'after the training period that no training row takes' in written)
  values = yaml.safe_load(written)
  spec = DatasetSpec.from_dict({key: values[key] for key in SPEC_KEYS if key in values})
  assert spec.calendar_features == ('day_of_week',)
  # Over two years the training period holds every month: both are drafted, nothing noted.
  long = spec_draft.draft(_read(tmp_path, _daily(days=800)), 'sales', 'sales')
  assert long.calendar_features == ('day_of_week', 'month_of_year')
  assert long.untrained_calendar_features == ()
  assert not [f for f in long.findings if f.startswith('calendar features')]
  # 2024-01-20 to 03-31: the eval and test periods fall in March, whose first days training
  # holds; the forecasts after the data, in April, are what leaves it out.
  spring = 'day,sales\n' + ''.join(
      f'{pd.Timestamp("2024-01-20") + pd.Timedelta(days=day):%Y-%m-%d},{100 + day % 7}\n'
      for day in range(72))
  drafted = spec_draft.draft(_read(tmp_path, spring), 'sales', 'sales')
  assert drafted.eval_start.startswith('2024-03-')
  assert drafted.untrained_calendar_features == ('month_of_year',)
  assert '(month_of_year takes 2 values after the training period, 1 never in it)' in (
      ' '.join(drafted.findings))
  # A 6-hourly grid takes 4 of the 24 hours, in every period: hour_of_day is drafted.
  six_hourly = 'time,sales\n' + ''.join(
      f'{pd.Timestamp("2024-01-01") + pd.Timedelta(hours=6 * step):%Y-%m-%d %H:%M:%S},'
      f'{100 + step % 4}\n' for step in range(240))
  assert spec_draft.draft(_read(tmp_path, six_hourly), 'sales', 'sales').calendar_features == (
      'hour_of_day', 'day_of_week')


@pytest.mark.parametrize('table, message', [
    ('day,series_id,sales\n2024-01-01,a,1\n', r"columns \['series_id'\] are reserved: .* "
     'name what the pipeline derives from the columns; rename them'),
    ('day,price_xf,target_future,sales\n2024-01-01,2,3,1\n',
     r"columns \['price_xf', 'target_future'\] are reserved: .*names ending in '_xf'"),
    ('day,Sales\n2024-01-01,1\n', r"target column 'sales' is not in the file \(did you mean "
     r"'Sales'\?\)"),
])
def test_names_the_pipeline_cannot_take_are_refused_with_the_fix(tmp_path, table, message):
  with pytest.raises(DraftError, match=message):
    spec_draft.draft(_read(tmp_path, table), 'sales', 'sales')


def _monthly(start, months, shops='AB'):
  lines = ['shop,month,sales'] + [
      f'{shop},{month.date().isoformat()},{100 + 7 * index + (number * 13) % 11}'
      for index, shop in enumerate(shops)
      for number, month in enumerate(pd.date_range(start, periods=months, freq='MS'))]
  return '\n'.join(lines) + '\n'


@pytest.mark.parametrize('start', [f'2021-{month:02d}-01' for month in range(1, 13)])
def test_the_eval_period_starts_where_a_forecast_can_so_that_it_holds_a_window(tmp_path,
                                                                               start):
  # 30 months: the eval period is 6 steps, a horizon, wherever the data starts.
  drafted = spec_draft.draft(_read(tmp_path, _monthly(start, 30)), 'sales', 'sales')
  eval_step = drafted.frequency.step_of(parse_timestamp(drafted.eval_start))
  assert eval_step % drafted.horizon == 0  # where the windowing component starts forecasts
  last = pd.Timestamp(start) + pd.DateOffset(months=29)
  assert pd.Timestamp(drafted.eval_start) <= last - pd.DateOffset(months=drafted.horizon - 1)
  assert drafted.naive_maes


def test_dates_not_in_iso_8601_in_a_column_named_for_time_are_named_with_line(tmp_path):
  text = _daily().replace('2024-01-', 'Jan 2024 ')
  with pytest.raises(DraftError, match=r"line 2: column 'day': cannot parse "
                     r"'Jan 2024 01' as a timestamp; use ISO 8601.*; or, if the times are in "
                     'another column, pass --time COLUMN'):
    spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')


def test_a_time_of_day_that_is_not_part_of_the_key_is_an_input_like_any_other(tmp_path):
  text = _daily(opens=lambda day: '09:00' if day % 7 else '10:30')
  columns = _drafted_columns_of(spec_draft.draft(_read(tmp_path, text), 'sales', 'sales'))
  assert (columns['opens'].role, columns['opens'].dtype) == (Role.KNOWN, DType.CATEGORICAL)


def _drafted_columns_of(drafted):
  return {column.name: column for column in drafted.columns}


def test_a_filled_key_is_preferred_to_an_equal_one_with_empty_values(tmp_path):
  # Each location's contact is as good a key as the location, but one is empty.
  lines = ['contact,location,day,sales'] + [
      f'{contact},{location},2024-01-{day:02d},{day}'
      for contact, location in (('ann', 'north'), ('', 'south'), ('bo', 'east'))
      for day in range(1, 31)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert [c.name for c in drafted.columns if c.role == Role.SERIES_KEY] == ['location']


def test_series_too_short_for_an_eval_period_and_training_are_refused(tmp_path):
  # 8 days: the eval period, a horizon (7) moved back to a step divisible by it, would
  # begin before the data.
  with pytest.raises(DraftError, match=r'the longest series has 8 steps, too few '
                     r'for an eval period of 12 steps \(at least a horizon'):
    spec_draft.draft(_read(tmp_path, _daily(days=8)), 'sales', 'sales')


def test_dates_and_times_of_day_in_two_columns_are_told_to_be_joined(tmp_path):
  lines = ['day,hour,sales'] + [f'2024-01-{day:02d},{hour:02d}:00,{day + hour}'
                                for day in range(1, 29) for hour in range(24)]
  with pytest.raises(DraftError, match=r"column 'hour' holds times of day \('00:00' "
                     r"on line 2\) beside the dates of column 'day': write each row's date "
                     r"and time in one column \('2024-01-01 00:00'\)"):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  # Hours as numbers, 1 to 24 ('hour ending'), under a name that says so.
  lines = ['day,hour_ending,sales'] + [f'2024-01-{day:02d},{hour},{day + hour}'
                                       for day in range(1, 29) for hour in range(1, 25)]
  with pytest.raises(DraftError, match=r"column 'hour_ending' holds hours of the "
                     r"day \('1' on line 2\) beside the dates of column 'day': write each "
                     r"row's date and hour in one column \('2024-01-01 01:00:00', an hour 24 "
                     r'as 00:00 of the next day\)'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_a_key_of_a_few_opening_hours_is_no_time_of_day(tmp_path):
  lines = ['shop,store_hours,day,sales'] + [
      f'{shop},{hours},2024-01-{day:02d},{day + hours}'
      for shop, hours in (('A', 8), ('A', 12), ('B', 10)) for day in range(1, 29)]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert drafted.series == 3


def test_many_repeated_rows_are_named_under_the_closest_key(tmp_path):
  # A re-export of each shop's last 10 days, appended: 20 of 80 rows repeat.
  lines = ['shop,day,sales'] + [
      f'{shop},2024-01-{day:02d},{day}' for shop in 'AB' for day in range(1, 31)]
  lines += [line for line in lines[1:] if int(line[-2:].strip(',')) > 20]
  with pytest.raises(DraftError, match=r'20 rows repeat the time of an earlier row '
                     r"with the same shop \(e\.g\. lines 22 and 62, day '2024-01-21'\)\. "
                     r'Remove or aggregate repeated rows'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')


def test_a_series_too_short_for_a_window_is_named(tmp_path):
  text = _monthly('2020-01-01', 40) + ''.join(
      f'C,2023-{month:02d}-01,{month}\n' for month in range(1, 6))
  drafted = spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')
  assert any(finding.startswith(
      f'1 series cannot fill one window of history and horizon '
      f'({drafted.encoder_steps + drafted.horizon} steps), so no window of theirs is trained '
      "on or scored: e.g. shop 'C' (from line 82), 5 steps") for finding in drafted.findings)
  assert not any('cannot fill' in finding for finding in spec_draft.draft(
      _read(tmp_path, _monthly('2020-01-01', 40)), 'sales', 'sales').findings)


def test_a_target_that_never_changes_within_a_series_is_refused(tmp_path):
  text = '\n'.join(['shop,day,sales'] + [f'{shop},2024-01-{day:02d},{ord(shop)}'
                                         for shop in 'AB' for day in range(1, 31)]) + '\n'
  with pytest.raises(DraftError, match=r"target column 'sales' never changes "
                     r"within a series \(e\.g\. '65' in every row of the series shop 'A'\)"):
    spec_draft.draft(_read(tmp_path, text), 'sales', 'sales')


def test_a_target_the_naive_forecast_matches_on_the_eval_windows_is_flagged(tmp_path):
  # Sales vary over the first half of the year, then stay at 5.
  lines = ['day,sales'] + [f'{day.date().isoformat()},{day.day % 7 if day.month < 7 else 5}'
                           for day in pd.date_range('2024-01-01', '2024-12-31')]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  assert drafted.naive_maes[drafted.best_naive] == 0
  assert any(finding.startswith(f'the naive forecast {drafted.best_naive} is exact on every '
                                'test window (MAE 0), so no model can beat it')
             for finding in drafted.findings)


def test_a_key_named_like_an_id_is_preferred_to_an_equal_static_number():
  columns = _drafted_columns(_monthly_sales(
      SHOPS, floor_m2=[100 + 50 * i for i in range(12)], store_id=list(range(12)))
      .drop(columns='shop'))
  assert columns['store_id'].role == Role.SERIES_KEY
  assert columns['floor_m2'].role == Role.STATIC


def test_series_key_names_the_key_instead_of_the_guess(tmp_path):
  table = _monthly_sales(SHOPS, floor_m2=[100 + 50 * i for i in range(12)],
                         number=list(range(12)))
  drafted = spec_draft.draft(table, 'sales', 'sales', series_key=['number'])
  [key] = [column for column in drafted.columns if column.role == Role.SERIES_KEY]
  assert (key.name, key.check) == ('number', False)  # the user's word: nothing to check
  # Named so, the shop is no key but a static text column.
  assert {c.name: c.role for c in drafted.columns}['shop'] == Role.STATIC


@pytest.mark.parametrize('key, message', [
    (['region'], r"series key column 'region' is not in the file"),
    (['month'], r"--series-key names column 'month' that is the time column"),
    (['shop', 'shop'], r"--series-key names column 'shop' twice"),
    (['tier'], r"lines 0 and 30 are two rows of the series tier 'gold' at the same time"),
])
def test_a_series_key_that_cannot_be_is_refused_with_the_fix(key, message):
  table = _monthly_sales(SHOPS, tier=['gold'] * 6 + ['silver'] * 6)
  with pytest.raises(DraftError, match=message):
    spec_draft.draft(table, 'sales', 'sales', series_key=key)


def test_a_0_1_flag_shared_by_every_series_at_each_time_is_drafted_as_known():
  table = _monthly_sales(SHOPS)
  months = table['month'].str[5:7]
  table['christmas'] = (months == '12').astype(int).astype(str)
  table['market_volume'] = (table['month'].str[:4].astype(int) * 10 + months.astype(int)
                            ).astype(str)  # shared too, but not a flag
  # A flag of each shop's own: (shop + month) % 3 == 0, 30 months a shop.
  table['rained'] = ((table.index // 30 + table.index) % 3 == 0).astype(int).astype(str)
  columns = _drafted_columns(table)
  assert columns['christmas'].role == Role.KNOWN
  assert columns['christmas'].note == ('CHECK known or observed (a 0/1 flag the same in every '
                                       'series at each time, like a holiday)')
  assert columns['market_volume'].role == columns['rained'].role == Role.OBSERVED
  # One series cannot tell a shared flag from its own.
  one = _monthly_sales(SHOPS[:1])
  one['christmas'] = (one['month'].str[5:7] == '12').astype(int).astype(str)
  assert _drafted_columns(one)['christmas'].role == Role.OBSERVED


def test_series_with_no_whole_eval_or_test_window_are_refused_with_the_period_start(tmp_path):
  lines = _daily(days=100).splitlines()
  del lines[71:97]  # days 70 to 95: every test window crosses the gap
  with pytest.raises(DraftError, match=r'no series has a test window \(28 history '
                     r'and 7 forecast steps without gaps, forecasting from 2024-03-21 on\); '
                     r'give longer series'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales')
  lines = _daily(days=100).splitlines()
  del lines[63:68]  # days 62 to 66: the eval windows (days 59 to 79) all cross the gap
  with pytest.raises(DraftError, match=r'no series has an eval window \(7 history '
                     r'and 7 forecast steps without gaps, forecasting from 2024-02-29 on, '
                     r'before the test period from 2024-03-21\); give longer series'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'sales', 'sales',
                     encoder_steps=7)


def test_column_names_are_written_as_they_are_spelt_and_read_back_so(tmp_path):
  text = _daily(**{'Preis (€)': lambda day: f'{2 + day % 3}.5'}).replace('sales', 'Absatz')
  drafted = spec_draft.draft(_read(tmp_path, text), 'Absatz', 'verkauf')
  spec_path = tmp_path / 'verkauf.yaml'
  rendered = init_spec.render(drafted, str(tmp_path / 'sales.csv'), str(spec_path),
                              str(tmp_path / 'verkauf.schema.pbtxt'))
  assert '{name: "Preis (€)", role: observed' in rendered  # not "Preis (\u20ac)"
  values = yaml.safe_load(rendered)
  assert [column['name'] for column in values['columns']] == ['day', 'Absatz', 'Preis (€)']


def test_an_hour_repeated_by_a_clock_change_is_told_to_be_written_with_its_offset(tmp_path):
  hours = pd.date_range('2023-10-20', '2023-11-05', freq='h')
  lines = ['time,load'] + [f'{hour},{hour.hour + hour.day}' for hour in hours]
  lines.insert(lines.index('2023-10-29 03:00:00,32'), '2023-10-29 02:00:00,33')
  with pytest.raises(DraftError, match=r"lines 220 and 221 are two rows at the same "
                     r"time .*if the clocks went back an hour then, write the times in UTC "
                     r'or with their UTC offset'):
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'load', 'load')
  # A repeat at another time is a duplicate and nothing else.
  lines = ['time,load'] + [f'{hour},{hour.hour + hour.day}' for hour in hours]
  lines.insert(lines.index('2023-10-29 15:00:00,44'), '2023-10-29 14:00:00,45')
  with pytest.raises(DraftError) as error:
    spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'load', 'load')
  assert 'two rows at the same time' in str(error.value)
  assert 'clocks' not in str(error.value)


def test_a_time_of_day_in_the_eval_start_is_said_to_be_utc(tmp_path):
  hours = pd.date_range('2023-10-01', '2023-11-05', freq='h', tz='Europe/Berlin')
  lines = ['time,load'] + [f'{hour.isoformat()},{hour.hour + hour.day}' for hour in hours]
  drafted = spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'load', 'load')
  summary = init_spec.summary(drafted, '/d/load.yaml', '/d/load.schema.pbtxt', '/d/load.csv')
  assert (f'eval from {drafted.eval_start}, test (held out) from {drafted.test_start} UTC'
          in summary)
  assert (f'split: {{eval_start: "last {drafted.eval_steps} steps", test_start: "last '
          f'{drafted.test_steps} steps"}}  # the data\'s last {drafted.test_steps} steps (from '
          f'{drafted.test_start} UTC in this data) are held out as the test period, which '
          'nothing chooses on and the blessing is decided on; the '
          f'{drafted.eval_steps - drafted.test_steps} steps before them (from '
          f'{drafted.eval_start} UTC) are the eval period') in (
      init_spec.render(drafted, '/d/load.csv', '/d/load.yaml', '/d/load.schema.pbtxt'))
  daily = spec_draft.draft(_read(tmp_path, _daily()), 'sales', 'sales')
  assert 'UTC' not in init_spec.summary(daily, '/d/s.yaml', '/d/s.schema.pbtxt', '/d/s.csv')
  # A file outside the working directory is named by its absolute path, not ../../d/s.csv.
  assert 'tft-pipeline --spec /d/s.yaml --data /d/s.csv' in init_spec.summary(
      daily, '/d/s.yaml', '/d/s.schema.pbtxt', '/d/s.csv')


def _zoned_hours(tmp_path, *zones):
  """A draft of hourly load over the autumn clock changes of 2023, one series per zone,
  times with their offsets."""
  hours = pd.date_range('2023-10-01', '2023-11-10', freq='h', tz='UTC')
  lines = ['area,time,load'] + [f'{zone},{hour.tz_convert(zone).isoformat()},{hour.hour + i}'
                                for i, zone in enumerate(zones) for hour in hours]
  return spec_draft.draft(_read(tmp_path, '\n'.join(lines) + '\n'), 'load', 'load')


def test_times_whose_offset_changes_get_a_time_zone_suggested(tmp_path):
  drafted = _zoned_hours(tmp_path, 'Europe/Berlin')
  summary = init_spec.summary(drafted, '/d/load.yaml', '/d/load.schema.pbtxt', '/d/load.csv')
  assert ('note: the times name the UTC offsets +01:00 and +02:00: a clock that changes. To '
          'read the calendar features on it, name its zone in the spec (time_zone: '
          '"Europe/Amsterdam" or one of ') in summary
  assert 'Europe/Berlin' in summary
  text = init_spec.render(drafted, '/d/load.csv', '/d/load.yaml', '/d/load.schema.pbtxt')
  assert '# time_zone: "Europe/Amsterdam"  # a clock the times follow' in text
  # Uncommented, the suggestion is a valid spec.
  values = yaml.safe_load(text.replace('# time_zone:', 'time_zone:'))
  assert DatasetSpec.from_dict({k: v for k, v in values.items() if k in SPEC_KEYS}).time_zone == (
      'Europe/Amsterdam')
  assert _zoned_hours(tmp_path, 'America/New_York').time_zone.startswith('America/')


def test_offsets_that_do_not_change_within_a_series_suggest_no_time_zone(tmp_path):
  """UTC; series in zones without clock changes; series on two changing clocks."""
  for zones, note in ((('UTC',), None), (('Asia/Kolkata', 'Asia/Tokyo'), None),
                      (('Europe/Berlin', 'America/New_York'), "no one zone's clock keeps them")):
    drafted = _zoned_hours(tmp_path, *zones)
    assert drafted.time_zone is None
    assert 'time_zone' not in init_spec.render(drafted, '/d/l.csv', '/d/l.yaml', '/d/l.pbtxt')
    notes = [finding for finding in drafted.findings if 'UTC offsets' in finding]
    assert (note in notes[0]) if note else not notes, (zones, notes)


@pytest.mark.parametrize('text, offset', [
    ('2024-01-01 00:00:00+05:30', '+05:30'), ('2024-01-01T00:00:00Z', '+00:00'),
    ('2024-01-01T00:00:00-04:00', '-04:00'), ('1890-01-01T00:00:00-00:25:21', '-00:25:21'),
    ('2024-01-01 00:00:00', None)])
def test_utc_offsets_are_named_as_iso_8601_writes_them(text, offset):
  assert utc_offset(text) == offset


def test_the_schema_leaves_the_values_of_columns_that_describe_series_open(tmp_path):
  """New series come with new keys and new static values: no value list pins them; a
  known categorical keeps its list, so a misspelt value is caught."""
  from google.protobuf import text_format  # pylint: disable=import-outside-toplevel
  from tensorflow_metadata.proto.v0 import schema_pb2  # pylint: disable=import-outside-toplevel

  lines = ['shop,region,day,promo_type,sales'] + [
      f'{shop},{region},2024-01-{day:02d},{("none", "bogo")[day % 2]},{day + len(shop)}'
      for shop, region in (('A', 'north'), ('B', 'south'), ('C', 'north'))
      for day in range(1, 29)]
  csv_path = tmp_path / 'sales.csv'
  csv_path.write_text('\n'.join(lines) + '\n')
  drafted = spec_draft.draft(read_table(str(csv_path)), 'sales', 'sales')
  text = init_spec.render(drafted, str(csv_path), str(tmp_path / 'sales.yaml'),
                          str(tmp_path / 'sales.schema.pbtxt'))
  (tmp_path / 'sales.yaml').write_text(text)
  init_spec.write_schema(dataset_file.load(str(tmp_path / 'sales.yaml')), str(csv_path),
                         str(tmp_path / 'schema.pbtxt'))
  schema = text_format.Parse((tmp_path / 'schema.pbtxt').read_text(), schema_pb2.Schema())
  with_values = {feature.name for feature in schema.feature if feature.HasField('domain')}
  assert with_values == {'promo_type'}


def test_series_too_short_for_a_test_period_get_an_eval_period_alone_and_a_note(tmp_path):
  drafted = spec_draft.draft(_read(tmp_path, _daily(days=28)), 'sales', 'sales')
  assert drafted.test_start is None and drafted.test_steps == 0
  assert any(finding.startswith('the series are too short to train before a held-out test '
                                'period as well as an eval period: none is drafted')
             for finding in drafted.findings)
  text = init_spec.render(drafted, '/d/s.csv', '/d/s.yaml', '/d/s.schema')
  dataset = dataset_file.from_dict(yaml.safe_load(text), '/d')
  assert dataset.split.test_start is None
  assert 'blessing: {beat_naive_by: 0.0}  # a pushed model\'s eval MAE' in text
  # Long enough: both periods, and the blessing line names the test windows' naive MAEs.
  longer = spec_draft.draft(_read(tmp_path, _daily(days=100)), 'sales', 'sales')
  assert longer.test_start is not None
  assert not any('too short to train before' in finding for finding in longer.findings)
  assert ('blessing: a model must beat the best naive forecast, '
          f'{longer.best_naive} (test MAE') in init_spec.summary(longer, '/d/s.yaml',
                                                                '/d/s.schema', '/d/s.csv')


def _markets(starts, days=100):
  """Daily prices of one market per start date, each `days` long."""
  lines = ['market,day,price']
  for number, start in enumerate(starts):
    lines += [f'm{number},{(pd.Timestamp(start) + pd.Timedelta(days=day)).date()},'
              f'{10 * number + day % 7 + 1}' for day in range(days)]
  return '\n'.join(lines) + '\n'


def test_series_of_different_periods_get_eval_and_test_periods_of_their_own(tmp_path):
  # Markets of different years never share a time: the key is named, as a user names it.
  drafted = spec_draft.draft(_read(tmp_path, _markets(['2021-01-01', '2022-01-01',
                                                       '2023-01-01'])), 'price', 'prices',
                             series_key=['market'])
  assert drafted.each_series
  assert any("the series cover different periods, so the eval and test periods are each "
             "series' own last steps" in finding for finding in drafted.findings)
  assert not any('list them as not forecast' in finding for finding in drafted.findings)
  text = init_spec.render(drafted, '/d/p.csv', '/d/p.yaml', '/d/p.schema')
  split = dataset_file.from_dict(yaml.safe_load(text), '/d').split
  assert split.of_each_series
  assert (split.eval_start, split.test_start) == (
      f'last {drafted.eval_steps} steps of each series',
      f'last {drafted.test_steps} steps of each series')
  # Every market has test windows, so the naive MAEs are over all three: the seasonal
  # naive forecast is exact on each (a weekly cycle).
  assert drafted.naive_maes['seasonal_7'] == 0
  # Each market's training windows count, not the newest market's alone: 100 days less
  # its eval and test periods (38 days, moved back up to 6 to a forecast start) hold 22 to
  # 28 windows of 35 days.
  assert drafted.eval_steps == 38
  assert 3 * 22 <= drafted.training_windows <= 3 * 28


def test_a_few_series_that_stopped_keep_the_periods_of_the_data(tmp_path):
  drafted = spec_draft.draft(_read(tmp_path, _markets(
      ['2023-01-01', '2023-01-01', '2022-06-01'])), 'price', 'prices')
  assert not drafted.each_series
  assert any('list them as not forecast' in finding for finding in drafted.findings)
  assert 'of each series' not in init_spec.render(drafted, '/d/p.csv', '/d/p.yaml',
                                                  '/d/p.schema')


def test_init_names_the_file_and_line_of_a_row_and_exits_as_for_bad_input(tmp_path, capsys):
  path = tmp_path / 'sales.csv'
  path.write_text('day,sales\n2024-01-01,1\n2024-01-02,2,3\n')
  code = init_spec.main(['--data', str(path), '--target', 'sales',
                         '--output', str(tmp_path / 'sales.yaml')])
  assert (code, capsys.readouterr().err) == (
      exit_codes.BAD_INPUT, f'tft-pipeline init: error: {path}, line 3: 3 fields, but the '
      'header has 2; fix the row\n')
  path.write_text('day,sales\n2024-01-01,1\n')  # an error of the whole file: named before it
  code = init_spec.main(['--data', str(path), '--target', 'units',
                         '--output', str(tmp_path / 'sales.yaml')])
  assert code == exit_codes.BAD_INPUT
  assert capsys.readouterr().err.startswith(f'tft-pipeline init: error: {path}: ')


@pytest.mark.parametrize('frequency, horizon, history', [
    ('daily', 7, 28),  # the grid's default
    ('daily', 28, 56),  # two horizons, in whole weeks
    ('daily', 30, 63),
    ('hourly', 24, 168),  # a week back holds more than two days
    ('hourly', 168, 336),
    ('hourly', 240, 384),  # two horizons, but at most the longest default history
    ('hourly', 500, 500),  # ... unless one horizon is longer
    ('monthly', 12, 24),
    ('monthly', 18, 36),
    ('quarterly', 8, 16),
])
def test_a_longer_horizon_gets_a_history_of_two_horizons_in_whole_seasons(
    frequency, horizon, history):
  assert drafted_history(Frequency(frequency), horizon) == history


def test_init_drafts_the_longer_history_of_a_longer_horizon_where_the_data_holds_it(tmp_path):
  drafted = spec_draft.draft(_read(tmp_path, _daily(days=400)), 'sales', 'sales', horizon=28)
  assert (drafted.encoder_steps, drafted.horizon) == (56, 28)
  # Too few days for it: shortened so that the training period holds windows, and said.
  drafted = spec_draft.draft(_read(tmp_path, _daily(days=150)), 'sales', 'sales', horizon=28)
  assert drafted.encoder_steps < 56
  assert any(finding.startswith(f'history shortened from 56 to {drafted.encoder_steps} steps')
             for finding in drafted.findings)


def _months(values):
  return 'month,level\n' + ''.join(f'{2015 + m // 12}-{m % 12 + 1:02d}-01,{value}\n'
                                   for m, value in enumerate(values))


def test_a_drifting_level_gets_windows_centred_on_their_last_value(tmp_path):
  walk = 1000 + np.cumsum(np.random.default_rng(0).normal(0, 5, 96)).round(1)
  drafted = spec_draft.draft(_read(tmp_path, _months(walk)), 'level', 'level')
  assert drafted.best_naive == 'repeat_last' and drafted.target_location == 'last'
  text = init_spec.render(drafted, '/d/level.csv', '/d/level.yaml', '/d/level.schema')
  [model] = [line for line in text.splitlines() if line.startswith('model:')]
  assert model.startswith('model: {ensemble_size: 3, target_location: last, batch_size: 16}')
  assert ("before the test period the last value forecasts better than the history's mean "
          '(the level drifts): each window is centred on its last value') in model
  assert dataset_file.from_dict(yaml.safe_load(text), '/d').model_overrides[
      'target_location'] == 'last'


def test_only_the_windows_before_the_test_period_decide_the_centring(tmp_path):
  # A yearly season up to the test period (the last 18 months), a steady climb in it: the
  # last value forecasts the test windows best, but nothing before them.
  values = [100 + 5 * (m % 12) for m in range(78)] + [200 + 2 * m for m in range(18)]
  drafted = spec_draft.draft(_read(tmp_path, _months(values)), 'level', 'level')
  assert drafted.test_start == '2021-07-01' and drafted.best_naive == 'repeat_last'
  assert drafted.target_location is None
  assert 'target_location' not in init_spec.render(drafted, '/d/l.csv', '/d/l.yaml', '/d/l.s')


def test_the_level_drifts_where_the_last_value_forecasts_better_than_the_history_mean():
  assert spec_draft.drifting_level({'repeat_last': 2.0, 'history_mean': 3.0, 'seasonal_12': 9.0})
  # The seasonal naive forecast's MAE does not decide the centre.
  assert spec_draft.drifting_level({'repeat_last': 2.0, 'history_mean': 3.0, 'seasonal_12': 1.0})
  assert not spec_draft.drifting_level({'repeat_last': 3.0, 'history_mean': 2.0,
                                        'seasonal_12': 9.0})
  assert not spec_draft.drifting_level({'repeat_last': 2.0, 'history_mean': 2.0})
  assert not spec_draft.drifting_level({})
