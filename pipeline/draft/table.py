"""A CSV as `init` reads it, and the typing of its columns: numbers, missing values, stray text."""

import csv
import io
import re
from typing import Optional

import numpy as np
import pandas as pd

from common.exit_codes import InputError
from schema.csv_values import MISSING_MARKERS, check_header, clean_header, data_rows, decode_utf8


# Non-numbers, as a share of a column's values, up to which they are taken for
# mistakes in a column of numbers (an 'n/a', a thousands separator).
_STRAY_TEXT_SHARE = 0.05


class DraftError(InputError):
  """The data cannot be described by a spec; the message says what to change."""


def read_table(path: str) -> pd.DataFrame:
  """The CSV file at `path` as the pipeline's ExampleGen reads it (UTF-8, comma-separated,
  a byte-order mark dropped, blank lines skipped): every value as text, each row indexed
  by its line in the file.

  Raises:
    DraftError: the file is empty or not UTF-8 (named by `path` and line), its header
      repeats a name or looks separated by another character, or a row has another
      number of fields.
  """
  with open(path, 'rb') as f:
    text = decode_utf8(f.read(), path, DraftError)
  reader = csv.reader(io.StringIO(text, newline=''))
  header = clean_header(next(reader, []))
  if not header:
    raise DraftError('the file is empty; init reads a header line, then a row per series '
                     'and time step')
  check_header(header, 'line 1', DraftError)
  rows = dict(data_rows(reader, header, path, DraftError))
  return pd.DataFrame(list(rows.values()), columns=header, index=list(rows), dtype=str)


def check_target_values(values: pd.Series, target: str, numbers: Optional[pd.Series],
                        missing: pd.Series) -> None:
  """Raises DraftError, naming the first line, when a present target value is not a
  finite number (rows without a target are told apart later, by series)."""
  if numbers is None:
    line = line_of(_not_numbers(values, missing))
    raise DraftError(f"target column '{target}' holds {values[line]!r} on line {line}, which "
                     'is not a number; the target must be a number in every row (written '
                     'as 1234.5, without thousands separators)')
  non_finite = numbers.isna() & ~missing
  if non_finite.any():
    line = line_of(non_finite)
    raise DraftError(f"target column '{target}' holds {values[line]!r} on line {line}, which "
                     'is not a finite number; the model trains on finite values only: fix '
                     'the value or remove the row')


def stray_text(name: str, values: pd.Series, numbers: Optional[pd.Series],
               missing: pd.Series) -> Optional[str]:
  """What to fix when a column of numbers holds a few values that are not numbers (and is
  therefore drafted as text), or None."""
  if numbers is not None:
    return None
  stray = _not_numbers(values, missing)
  if not 0 < stray.sum() <= _STRAY_TEXT_SHARE * (~missing).sum():
    return None
  line = line_of(stray)
  count = int(stray.sum())
  markers = sorted(MISSING_MARKERS - {''})
  return (f"column '{name}' holds numbers but for {count} value{'s' if count > 1 else ''} "
          f'such as {values[line]!r} on line {line}, so it is drafted as text; if it is a '
          f'column of numbers, write a missing value as empty or one of {markers} and run '
          'init again')


_SEPARATED_NUMBER = re.compile(r'[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?')


def separated_numbers(name: str, values: pd.Series, numbers: Optional[pd.Series],
                      missing: pd.Series) -> Optional[str]:
  """What to fix when a column holds numbers written with thousands separators (and is
  therefore drafted as text), or None."""
  if numbers is not None:
    return None
  commas = values.str.contains(',', regex=False) & ~missing
  separated = values.str.fullmatch(_SEPARATED_NUMBER) & ~missing
  # '1,5' or '0,750' is a decimal comma, not a separator: then this is not the reason.
  if (not separated.any() or (commas & ~separated).any()
      or _not_numbers(values.str.replace(',', ''), missing).any()):
    return None
  line = line_of(separated)
  return (f"column '{name}' holds numbers written with thousands separators, such as "
          f'{values[line]!r} on line {line}, so it is drafted as text (a category per '
          f'value); write them without separators ({values[line].replace(",", "")}; if the '
          'comma is a decimal point, with a point) and run init again')


def missing_target_message(values: pd.Series, target: str, missing: pd.Series,
                           seconds: np.ndarray, series: pd.Series) -> str:
  """Why rows without a target stop init, and what to do with them."""
  times = pd.Series(seconds, index=missing.index)
  last_with_target = times[~missing].groupby(series[~missing]).max()
  after_the_data = (times[missing] > series[missing].map(last_with_target).fillna(-np.inf))
  count = int(missing.sum())
  line = line_of(missing)
  where = (f"target column '{target}' has no value in {count} row{'s' if count > 1 else ''} "
           f'(first on line {line}: {values[line]!r})')
  if after_the_data.all():
    return (f"{where}, all after their series' last target value: these look like the "
            'forecast horizon. Move them to a future file (the same columns) and pass it '
            'when running the pipeline (tft-pipeline --future FILE); give init the rows '
            'with a target')
  return f'{where}; the pipeline trains on rows with a target: fill them or remove those rows'


def missing_mask(values: pd.Series) -> pd.Series:
  return values.str.lower().isin(MISSING_MARKERS)


def numbers_of(values: pd.Series, missing: pd.Series) -> Optional[pd.Series]:
  """The column as floats (NaN where missing or non-finite), or None if any present
  value is not a number."""
  if _not_numbers(values, missing).any():
    return None
  parsed = pd.to_numeric(values.where(~missing))
  return parsed.where(np.isfinite(parsed.astype(float)))


def _not_numbers(values: pd.Series, missing: pd.Series) -> pd.Series:
  """Where a present value is not a number."""
  return pd.to_numeric(values.where(~missing), errors='coerce').isna() & ~missing


def is_integral(numbers: pd.Series) -> bool:
  present = numbers.dropna()
  return bool(len(present)) and bool((present == present.round()).all())


def line_of(mask: pd.Series) -> int:
  """The file line of the first row where `mask` holds (the table's index)."""
  return int(mask.index[mask.to_numpy()][0])
