"""How the text values of input files are read, the same for training and prediction.

In real columns, an empty value and the markers of `MISSING_MARKERS` (any case) are
missing values, and so are non-finite numbers (`nan`, `inf`, `-inf`, values beyond
float32's range, which the model computes in). Categorical values are kept as written
('NA' may be a country); only an empty one is missing. A UTF-8 byte-order mark before
the header (Excel's CSV export writes one) is not part of the first column's name.
"""

import re
from typing import Iterable, Iterator, List, Optional, Tuple, Type

import numpy as np

from common.exit_codes import InputError
MISSING_MARKERS = frozenset({'', 'na', 'nan', 'null', 'none'})
BYTE_ORDER_MARK = '\ufeff'
OTHER_SEPARATORS = (';', '\t', '|')  # what a one-column header holds when not comma-separated
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def real_value(text: str, where: str) -> Optional[float]:
  """The number in `text`; None for a missing marker or a non-finite number.

  Raises:
    ValueError: `text` is neither a number nor a missing marker; the message starts
      with `where` (e.g. "data.csv, line 7: column 'load'").
  """
  text = text.strip()
  if text.lower() in MISSING_MARKERS:
    return None
  try:
    number = float(text)
  except ValueError:
    if re.fullmatch(r'[-+]?\d+,(\d{1,2}|\d{4,})', text):  # no thousands group after it
      fix = f"a decimal comma: write {text.replace(',', '.')}"
    elif re.fullmatch(r'[-+]?[\d.]*\d,\d+', text):
      fix = "write decimals with '.' and no thousands separator (12.5, 1234.5)"
    else:
      fix = f'a missing value may be empty or one of {sorted(MISSING_MARKERS - {""})}'
    raise InputError(f'{where} holds {text!r}, which is not a number; the dataset spec '
                     f'declares it real ({fix})') from None
  return number if abs(number) <= _FLOAT32_MAX else None  # inf, nan and overflows


def data_rows(reader: Iterable[List[str]], header: List[str], where: str,
              error: Type[ValueError] = InputError) -> Iterator[Tuple[int, List[str]]]:
  """(line number, fields) of each non-empty row after the header.

  Raises:
    error: a row whose field count differs from the header's, named by `where` (the
      file) and its line.
  """
  for line, fields in enumerate(reader, start=2):
    if not fields:
      continue
    if len(fields) != len(header):
      raise error(f'{where}, line {line}: {len(fields)} fields, but the header has '
                  f'{len(header)}; fix the row')
    yield line, fields


def clean_header(header: List[str]) -> List[str]:
  """The header's column names without a leading byte-order mark."""
  if header:
    header = [header[0].lstrip(BYTE_ORDER_MARK)] + list(header[1:])
  return header


def decode_utf8(raw: bytes, where: str, error: Type[ValueError] = InputError) -> str:
  """`raw` as text; `error`, naming `where` (the file) and the line, if it is not UTF-8."""
  try:
    return raw.decode('utf-8')
  except UnicodeDecodeError as failure:
    line = raw[:failure.start].count(b'\n') + 1
    raise error(f'{where}, line {line}: byte {raw[failure.start]:#04x} is not UTF-8 text; '
                'save the file as UTF-8 (in a spreadsheet: CSV UTF-8)') from None


def check_header(header: List[str], where: str, error: Type[ValueError] = InputError) -> None:
  """Raises `error`, naming `where` (the file), when the header is one name that holds
  another separator (';', tab, '|'), or gives a name twice: the later column would hide
  the earlier one."""
  separators = [mark for mark in OTHER_SEPARATORS if len(header) == 1 and mark in header[0]]
  if separators:
    raise error(f'{where}: the header is one column, {header[0]!r}: the file looks '
                f'separated by {separators[0]!r}; the pipeline reads comma-separated values, '
                "so save it with commas between values and '.' as the decimal mark")
  for position, name in enumerate(header):
    if name in header[:position]:
      raise error(f'{where}: the header names {name!r} twice (columns '
                  f'{header.index(name) + 1} and {position + 1}); give each column its own '
                  'name')
