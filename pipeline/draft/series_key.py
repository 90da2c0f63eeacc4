"""The series key `init` finds: the fewest columns that, with the time, identify every row."""

import itertools
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
import pandas as pd

from pipeline.draft.table import DraftError, line_of
from pipeline.draft.time_column import clock_change_hint, time_text
from schema.frequency import DAY


# Words in the names of columns that usually identify series: among keys that tell the
# series apart equally well, one named so is preferred.
ID_WORDS = frozenset({'id', 'key', 'code', 'series', 'sku', 'store', 'shop', 'item',
                       'product', 'station', 'site', 'sensor', 'meter', 'customer', 'agency',
                       'name'})


# Ends of words that name ids only (unlike 'meter' in 'diameter', 'shop' in 'workshop').
ID_SUFFIXES = ('series', 'key', 'code', 'sku')


_TIME_OF_DAY = re.compile(r'\d{1,2}:\d{2}(:\d{2})?')


_MAX_KEY_COLUMNS = 3


# Rows that repeat a time within their series, as a share of those series' rows, up to
# which they are taken for duplicates to report; another key column (a store within a
# product) repeats about every time of the series it splits.
_DUPLICATE_SHARE = 0.05


def guess_series_key(table: pd.DataFrame, seconds: np.ndarray, text: Sequence[str],
                     integers: Sequence[str], time: str, incomplete: Set[str],
                     time_format: Optional[str]) -> Tuple[str, ...]:
  """The fewest columns that with the time identify every row, text columns (the usual
  ids) before integer ones; of those, the ones that make the fewest, longest series, then
  those with fewest `incomplete` columns (with empty values), then those named like ids
  (`ID_WORDS`), then the first in the file.

  Raises:
    DraftError: no such columns, or a few rows (up to `_DUPLICATE_SHARE` of their
      series) repeat a series' time under the closest key: duplicates, which the
      message names, not a sign that the key needs another column.
  """
  times = pd.Series(seconds, index=table.index, name='__time__')

  def repeat(key: Tuple[str, ...]) -> pd.Series:  # rows that repeat an earlier one's time
    return pd.concat([table[list(key)], times], axis=1).duplicated()

  repeat_counts = {}
  for candidates in (list(text), list(text) + list(integers)):
    for size in range(0, min(_MAX_KEY_COLUMNS, len(candidates)) + 1):
      found = []
      for key in itertools.combinations(candidates, size):
        repeat_counts[key] = int(repeat(key).sum())
        if not repeat_counts[key]:
          found.append((len(table[list(key)].drop_duplicates()) if key else 1, key))
      if found:  # min() keeps the first of equals: the file's order
        return min(found, key=lambda item: (item[0], len(incomplete.intersection(item[1])),
                                            -_id_words(item[1])))[1]
    closest = min(repeat_counts, key=lambda key: (repeat_counts[key], len(key)))
    repeats = repeat(closest)
    series = series_ids(table, closest)
    if repeats.sum() <= _DUPLICATE_SHARE * series.isin(series[repeats]).sum():
      raise DraftError(_duplicates_message(table, times, closest, time, repeats, time_format))
  earlier, line = _first_repeat(pd.concat([table[list(closest)], times], axis=1))
  at = f'e.g. lines {earlier} and {line}, {time} {table.loc[line, time]!r}'
  if closest:
    where = (f'{int(repeats.sum())} rows repeat the time of an earlier row with the same '
             f"{', '.join(closest)} ({at})")
  else:
    where = f'rows at the same time ({at}) differ in no such column'
  raise DraftError(f'no combination of up to {_MAX_KEY_COLUMNS} text or integer columns '
                   f'tells the series apart: {where}. Remove or aggregate repeated rows; if '
                   'they belong to other series, add a column that tells them apart, or '
                   'name the key columns with --series-key')


def _id_words(key: Tuple[str, ...]) -> int:
  """How many of `key`'s columns are named like ids (`store_id`, `SKU`, `site`)."""
  return sum(bool(ID_WORDS & set(name_words(column))) for column in key)


def name_words(name: str) -> List[str]:
  """The words of a column's name, lowercased ('Store_ID' gives store, id)."""
  return re.split(r'[^a-z0-9]+', name.lower())


def given_series_key(table: pd.DataFrame, seconds: np.ndarray, key: Tuple[str, ...],
                     time: str, target: str, empty: Dict[str, pd.Series],
                     time_format: Optional[str]) -> Tuple[str, ...]:
  """`key` as the user named it, checked: other columns than the time and target, no
  empty values, and with the time one row each."""
  for column in key:
    if key.count(column) > 1:
      problem = 'twice'
    elif column in (time, target):
      problem = f'that is the {"time" if column == time else "target"} column'
    else:
      continue
    raise DraftError(f"--series-key names column '{column}' {problem}; name the columns "
                     'that tell the series apart, each once')
  check_key_filled(table, key, empty)
  times = pd.Series(seconds, index=table.index, name='__time__')
  repeats = pd.concat([table[list(key)], times], axis=1).duplicated()
  if repeats.any():
    raise DraftError(_duplicates_message(table, times, key, time, repeats, time_format))
  return key


def check_key_filled(table: pd.DataFrame, key: Tuple[str, ...],
                     empty: Dict[str, pd.Series]) -> None:
  """Raises DraftError naming the first row where a key column is empty."""
  for column in key:
    if empty[column].any():
      count = int(empty[column].sum())
      raise DraftError(
          f"column '{column}' tells the series apart but is empty in {count} "
          f'row{"s" if count > 1 else ""} (first on line {line_of(empty[column])}): fill '
          'them in, or remove those rows, or name the key columns with --series-key')


_HOUR_NAME = re.compile(r'(?i)hour|^(hr|he)$')


_MIN_HOURS = 12  # distinct values of a column taken for hours of the day


def check_no_time_of_day_key(table: pd.DataFrame, seconds: np.ndarray, time: str,
                             key: Tuple[str, ...]) -> None:
  """Raises DraftError when the time column holds dates and a key column the times of
  day: split so, each day's rows would be taken for series of their own."""
  if (seconds % DAY).any():
    return
  for column in key:
    values = table[column]
    if values.str.fullmatch(_TIME_OF_DAY).all():
      raise DraftError(
          f"column '{column}' holds times of day ({values.iloc[0]!r} on line "
          f"{values.index[0]}) beside the dates of column '{time}': write each row's date "
          f"and time in one column ('{time_text(int(seconds[0]))} {values.iloc[0]}') "
          'and run init again')
    if (_HOUR_NAME.search(column) and values.str.fullmatch(r'\d{1,2}').all()
        and (values.astype(int) <= 24).all() and values.nunique() >= _MIN_HOURS):
      first_hour = int(seconds[0]) + int(values.iloc[0]) * 3600
      raise DraftError(
          f"column '{column}' holds hours of the day ({values.iloc[0]!r} on line "
          f"{values.index[0]}) beside the dates of column '{time}': write each row's date "
          f"and hour in one column ('{time_text(first_hour)}', an hour 24 as 00:00 of the "
          'next day) and run init again, or name the key columns with --series-key if it '
          'is no hour of the day')


def _first_repeat(identity: pd.DataFrame) -> Tuple[int, int]:
  """The lines of the first row that repeats an earlier row of `identity`, and of that
  earlier row: (earlier, repeat)."""
  line = line_of(identity.duplicated())
  return line_of((identity == identity.loc[line]).all(axis=1)), line


def _duplicates_message(table: pd.DataFrame, times: pd.Series, key: Tuple[str, ...],
                        time: str, repeats: pd.Series, time_format: Optional[str]) -> str:
  """Names the first row that repeats a series' time under `key`, and the row it repeats."""
  earlier, line = _first_repeat(pd.concat([table[list(key)], times], axis=1))
  series = ' of the series ' + ', '.join(f'{column} {table.loc[line, column]!r}'
                                         for column in key) if key else ''
  count = int(repeats.sum())
  return (f'lines {earlier} and {line} are two rows{series} at the same time '
          f'({time} {table.loc[line, time]!r}; {count} row{"s" if count > 1 else ""} in all '
          'repeat an earlier row\'s series and time): remove or aggregate the duplicates, or, '
          'if they are rows of different series, add a column that tells those apart'
          f'{clock_change_hint(table.loc[repeats, time], times[repeats], time_format)}')


def series_ids(table: pd.DataFrame, key: Tuple[str, ...]) -> pd.Series:
  if not key:
    return pd.Series(0, index=table.index)
  return table.groupby(list(key), sort=False).ngroup()
