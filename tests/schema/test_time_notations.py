"""Times as people export them: period notations read at their first instant and written
back as given, and dates whose day and month order cannot be told refused with both
readings."""

import dataclasses

import pytest
import tensorflow as tf
import yaml

from components import delivered_forecasts
from components import input_rows
from pipeline import init_spec, spec_draft
from pipeline.draft.table import read_table
from schema import dataset_file, datasets
from schema.dataset_spec import Role
from schema.frequency import Frequency
from schema.time_split import day_month_order, format_time, format_time_as_given, parse_timestamp
from serving import csv_rows, series_windows

_SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)
_NO_KNOWN = dataclasses.replace(
    _SPEC, name='no_known', columns=tuple(c for c in _SPEC.columns if c.role != Role.KNOWN))


@pytest.mark.parametrize('text, instant, following', [
    ('2001 Q1', '2001-01-01 00:00:00', ('2001-04-01', '2001 Q2')),
    ('2001-Q4', '2001-10-01 00:00:00', ('2002-01-01', '2002-Q1')),
    ('2001Q2', '2001-04-01 00:00:00', ('2001-07-01', '2001Q3')),
    ('2024-01', '2024-01-01 00:00:00', ('2024-02-01', '2024-02')),
    ('2024/12', '2024-12-01 00:00:00', ('2025-01-01', '2025/01')),
    ('2024/3', '2024-03-01 00:00:00', ('2024-04-01', '2024/4')),
    ('2016/06/19', '2016-06-19 00:00:00', ('2016-06-20', '2016/06/20')),
    ('2024-W05', '2024-01-29 00:00:00', ('2024-02-05', '2024-W06')),
    ('2024-W52', '2024-12-23 00:00:00', ('2024-12-30', '2025-W01')),  # ISO year 2025
])
def test_a_period_notation_is_read_at_its_start_and_the_next_period_written_alike(
    text, instant, following):
  assert format_time(parse_timestamp(text)) == instant
  assert format_time_as_given(parse_timestamp(text), text) == text
  assert format_time_as_given(parse_timestamp(following[0]), text) == following[1]


def test_an_instant_that_starts_no_period_of_the_notation_is_written_in_utc():
  assert format_time_as_given(parse_timestamp('2001-02-01'), '2001 Q1') == '2001-02-01'


@pytest.mark.parametrize('text, readings', [
    ('06/07/2016', '2016-07-06 (day first) or 2016-06-07 (month first)'),
    ('06.07.2016', '2016-07-06 (day first) or 2016-06-07 (month first)'),
    ('13/07/2016', '2016-07-13 (day first);'),
    ('07/13/2016', '2016-07-13 (month first);'),
])
def test_a_date_of_day_and_month_without_the_year_first_is_refused_with_its_readings(
    text, readings):
  with pytest.raises(ValueError) as refused:
    parse_timestamp(text, what="sales.csv, line 7, column 'day'")
  assert str(refused.value).startswith(
      f"sales.csv, line 7, column 'day': cannot parse {text!r} as a timestamp; it reads as "
      f'{readings}')
  assert 'write the dates as ISO 8601 (year-month-day' in str(refused.value)


@pytest.mark.parametrize('text', ['2001 Q5', '2024-13', '2024-W54', 'Q1 2001'])
def test_text_that_only_looks_like_a_period_is_refused(text):
  with pytest.raises(ValueError, match='cannot parse'):
    parse_timestamp(text)


def _quarterly_csv(path, quarters=40, notation='{year} Q{quarter}'):
  lines = ['Quarter,unit,sales'] + [
      f"{notation.format(year=2001 + q // 4, quarter=q % 4 + 1)},{unit},{10 + q % 4 + unit}"
      for unit in (1, 2) for q in range(quarters)]
  path.write_text('\n'.join(lines) + '\n')
  return path


def test_init_finds_quarters_written_as_people_write_them_without_being_told(tmp_path):
  table = read_table(str(_quarterly_csv(tmp_path / 'sales.csv')))
  drafted = spec_draft.draft(table, 'sales', 'sales')
  assert [c.name for c in drafted.columns if c.role == Role.TIME] == ['Quarter']
  assert drafted.frequency == Frequency('quarterly')


def test_the_steps_added_after_the_data_are_written_in_its_notation():
  rows = [csv_rows.InputRow(None, parse_timestamp(text), {
      c.name: v for c, v in zip(_NO_KNOWN.columns, ['s1', text, '2.0', 'north', '50', '20.0'])})
          for text in ('2024-01', '2024-02', '2024-03')]
  monthly = dataclasses.replace(_NO_KNOWN, frequency=Frequency('monthly'),
                                calendar_features=('month_of_year',))
  window = series_windows.build_window(('s1',), series_windows.with_horizon(rows, [], monthly),
                                   monthly)
  assert window.horizon_times == ('2024-04', '2024-05')


def test_the_runs_forecasts_find_the_notation_of_the_data_files(tmp_path):
  path = _quarterly_csv(tmp_path / 'sales.csv', notation='{year}-Q{quarter}')
  drafted = spec_draft.draft(read_table(str(path)), 'sales', 'sales')
  spec = dataset_file.from_dict(yaml.safe_load(init_spec.render(
      drafted, str(path), str(tmp_path / 'sales.yaml'), str(tmp_path / 'schema'))),
                                str(tmp_path)).spec
  last = parse_timestamp('2010-10-01')
  written = input_rows.times_as_written([str(path)], spec, {'1': last, '2': last})
  assert written == {'1': '2010-Q4', '2': '2010-Q4'}


_DAY_FIRST = '%d/%m/%Y'


def _day_first_csv(path, days=60):
  """Daily sales of two shops, dated day first ('06/07/2016')."""
  start = parse_timestamp('2016-06-01')
  lines = ['date,shop,sales'] + [
      f"{format_time_as_given(start + day * 86400, '01/06/2016', _DAY_FIRST)},{shop},"
      f'{10 + day % 7 + shop}' for shop in (1, 2) for day in range(days)]
  path.write_text('\n'.join(lines) + '\n')
  return path


def _day_first_spec(tmp_path):
  path = _day_first_csv(tmp_path / 'sales.csv')
  drafted = spec_draft.draft(read_table(str(path)), 'sales', 'sales',
                             time_format=_DAY_FIRST)
  text = init_spec.render(drafted, str(path), str(tmp_path / 'sales.yaml'),
                          str(tmp_path / 'schema'))
  return path, text, dataset_file.from_dict(yaml.safe_load(text), str(tmp_path)).spec


def test_a_time_format_reads_and_writes_times_in_it():
  seconds = parse_timestamp('06/07/2016', time_format=_DAY_FIRST)
  assert format_time(seconds) == '2016-07-06 00:00:00'
  assert format_time_as_given(seconds + 86400, '06/07/2016', _DAY_FIRST) == '07/07/2016'
  with_offset = '%d/%m/%Y %H:%M%z'
  seconds = parse_timestamp('06/07/2016 13:00+0200', time_format=with_offset)
  assert format_time(seconds) == '2016-07-06 11:00:00'
  assert (format_time_as_given(seconds + 3600, '06/07/2016 13:00+0200', with_offset)
          == '06/07/2016 14:00+0200')


def test_a_time_not_in_the_format_is_refused_naming_value_and_format():
  with pytest.raises(ValueError) as refused:
    parse_timestamp('2016-07-06', "sales.csv, line 3, column 'date'", _DAY_FIRST)
  assert str(refused.value).startswith(
      "sales.csv, line 3, column 'date': cannot read '2016-07-06' in the time format "
      "'%d/%m/%Y'")


def test_the_ambiguous_date_names_the_time_format_that_settles_it():
  with pytest.raises(ValueError, match=r"init --time-format '%d/%m/%Y' \(day first\) or "
                     r"'%m/%d/%Y' \(month first\)"):
    parse_timestamp('06/07/2016')


def test_init_with_a_time_format_drafts_a_spec_that_keeps_it(tmp_path):
  _, text, spec = _day_first_spec(tmp_path)
  assert 'time_format: "%d/%m/%Y"' in text
  assert spec.time_format == _DAY_FIRST and spec.time_column == 'date'
  assert spec.frequency == Frequency('daily')
  assert type(spec).from_dict(spec.to_dict()) == spec


def test_init_refuses_day_first_dates_without_a_format_naming_line_value_and_readings(
    tmp_path, capsys):
  path = _day_first_csv(tmp_path / 'sales.csv', days=12)  # no day after the 12th
  code = init_spec.main(['--data', str(path), '--target', 'sales', '--time', 'date',
                         '--output', str(tmp_path / 'sales.yaml')])
  error = capsys.readouterr().err
  assert code == 2
  assert ("line 2: column 'date': cannot parse '01/06/2016' as a timestamp; it reads as "
          '2016-06-01 (day first) or 2016-01-06 (month first)') in error
  assert "--time-format '%d/%m/%Y' (day first) or '%m/%d/%Y' (month first)" in error


def test_init_names_the_format_a_date_of_the_column_tells(tmp_path, capsys):
  path = _day_first_csv(tmp_path / 'sales.csv')
  code = init_spec.main(['--data', str(path), '--target', 'sales',
                         '--output', str(tmp_path / 'sales.yaml')])
  assert code == 2
  assert ("line 2: column 'date' writes dates with the day and the month in an order "
          "'01/06/2016' does not tell; '13/06/2016' (line 14) does: pass --time-format "
          "'%d/%m/%Y'") in capsys.readouterr().err


@pytest.mark.parametrize('texts, told', [
    (['01/02/2016', '13/02/2016'], ('%d/%m/%Y', '13/02/2016')),
    (['02.01.2016', '02.13.2016'], ('%m.%d.%Y', '02.13.2016')),
    (['01/02/2016', '02/01/2016'], None),  # each reads both ways
    (['13/02/2016', '02/13/2016'], None),  # the file reads in both orders
    (['13/02/2016', '2016-02-14'], None),  # not every text is such a date
])
def test_the_order_of_day_and_month_is_told_by_a_date_that_reads_one_way(texts, told):
  assert day_month_order(texts) == told


def test_a_date_that_reads_the_same_either_way_still_needs_the_order():
  with pytest.raises(ValueError, match="it reads as 2016-01-01 either way, but its notation "
                     'does not say whether the day or the month comes first'):
    parse_timestamp('01/01/2016')


@pytest.mark.parametrize('time_format, problem', [
    ('%d/%m', 'holds no year'),
    ('%d/%m/%Q', "bad directive"),
    ('day-month-year', 'give a strptime format'),
])
def test_init_refuses_a_time_format_it_cannot_read_times_in(tmp_path, capsys, time_format,
                                                            problem):
  path = _day_first_csv(tmp_path / 'sales.csv')
  code = init_spec.main(['--data', str(path), '--target', 'sales',
                         '--time-format', time_format, '--output', str(tmp_path / 's.yaml')])
  error = capsys.readouterr().err
  assert code == 2
  assert f"--time-format {time_format!r}" in error and problem in error
  assert not (tmp_path / 's.yaml').exists()


def test_a_spec_refuses_a_time_format_without_the_time_of_day_its_grid_needs(tmp_path):
  _, _, spec = _day_first_spec(tmp_path)
  hourly = dict(spec.to_dict(), frequency='hourly')
  with pytest.raises(ValueError, match="'time_format' '%d/%m/%Y' holds no time of day"):
    type(spec).from_dict(hourly)
  assert type(spec).from_dict(dict(hourly, time_format='%d/%m/%Y %H:%M')).time_format


def test_example_gen_reads_the_formatted_times_and_forecasts_are_written_in_them(tmp_path):
  path, _, spec = _day_first_spec(tmp_path)
  fast = next(input_rows.read_csv_chunks(str(path), spec))
  by_row = [input_rows.example_time(e, spec)
            for e in input_rows.read_csv_examples(str(path), spec)]
  assert list(fast.seconds) == by_row
  assert format_time(by_row[0]) == '2016-06-01 00:00:00'
  assert format_time(by_row[59]) == '2016-07-30 00:00:00'
  last = parse_timestamp('2016-07-30')
  assert input_rows.times_as_written([str(path)], spec, {'1': last}) == {'1': '30/07/2016'}
  series = csv_rows.read_series(str(path), spec)
  rows = series_windows.with_horizon(series[('1',)], [], spec)
  window = series_windows.build_window(('1',), rows, spec)
  assert window.horizon_times[:2] == ('31/07/2016', '01/08/2016')
  assert len(window.horizon_times) == spec.horizon
  records = str(tmp_path / 'examples.gz')
  with tf.io.TFRecordWriter(records, options='GZIP') as writer:
    for example in input_rows.read_csv_examples(str(path), spec):
      writer.write(example.SerializeToString())
  from_examples = delivered_forecasts.series_from_examples([records], spec)
  assert from_examples[('1',)][-1].values['date'] == '30/07/2016'


def test_a_row_off_the_format_names_file_line_and_format(tmp_path):
  path, _, spec = _day_first_spec(tmp_path)
  lines = path.read_text().splitlines()
  lines[4] = lines[4].replace('04/06/2016', '2016-06-04')
  path.write_text('\n'.join(lines) + '\n')
  with pytest.raises(ValueError) as refused:
    list(input_rows.read_csv_examples(str(path), spec))
  assert "sales.csv, line 5, column 'date': cannot read '2016-06-04' in the time format " in str(
      refused.value)
