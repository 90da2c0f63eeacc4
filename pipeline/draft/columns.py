"""The role and type `init` drafts for each column besides the key, the time and the target."""

import dataclasses
from typing import Optional, Tuple

import numpy as np
import pandas as pd

from pipeline.draft.series_key import ID_SUFFIXES, ID_WORDS, name_words
from pipeline.draft.table import is_integral, line_of
from schema.dataset_spec import DType, Role


# Time-varying reals with these in their name are usually known ahead (prices, calendars).
_KNOWN_HINTS = ('price', 'promo', 'discount', 'holiday', 'event', 'weekday', 'weekend',
                'planned', 'schedule', 'tariff', 'forecast')


# Words of a name that make it read as measured, not planned, whatever else it says
# ('competitor_price', 'price_actual'; not 'contractual_price').
_OBSERVED_HINTS = ('competitor', 'actual', 'measured', 'observed', 'realised', 'realized')


_MIN_NUMBERED_SERIES = 10


@dataclasses.dataclass
class ColumnDraft:
  """One column of the drafted spec.

  Attributes:
    note: a remark written beside the column in the spec file.
    check: the draft is a guess the user must confirm (known or observed, an id or
      not); `note` asks the question.
  """
  name: str
  role: Role
  dtype: DType
  allow_missing: bool = False
  note: Optional[str] = None
  check: bool = False


def other_column(name: str, values: pd.Series, numbers: Optional[pd.Series],
                 missing: pd.Series, series: pd.Series, target_missing: pd.Series,
                 seconds: np.ndarray) -> Tuple[Optional[ColumnDraft], Optional[str]]:
  """The draft of a column that is neither key, time nor target, or (None, why not)."""
  dtype = DType.REAL if numbers is not None else DType.CATEGORICAL
  compared = values.where(~missing, '') if dtype == DType.CATEGORICAL else numbers
  if compared.nunique(dropna=False) <= 1:
    return None, 'has one value in every row'
  if dtype == DType.CATEGORICAL and missing.any():
    count = int(missing.sum())
    return None, (f'is text with {count} empty value{"s" if count > 1 else ""} (first on '
                  f'line {line_of(missing)}); fill them with a category such as "unknown" to '
                  'use it')
  per_series = compared.groupby(series.to_numpy()).nunique(dropna=False)
  if (per_series <= 1).all() and not missing.any():
    numbered = _series_numbering(name, numbers, series) if dtype == DType.REAL else None
    if numbered:
      return ColumnDraft(name, Role.STATIC, dtype, check=True, note=(
          f'CHECK: {numbered}, like an id: remove the line unless the number means something '
          '(a size, a rank)')), None
    return ColumnDraft(name, Role.STATIC, dtype, note='constant within each series'), None
  if dtype == DType.CATEGORICAL:
    return ColumnDraft(name, Role.KNOWN, dtype, check=True, note=(
        'CHECK: text that changes over time can only be known (observed inputs are '
        'real): remove the line if its future values are not known')), None
  allow_missing = bool(numbers.isna().any())
  filled_ahead = bool((target_missing & numbers.notna()).any())
  named_known = (any(hint in name.lower() for hint in _KNOWN_HINTS)
                 and not set(_OBSERVED_HINTS) & set(name_words(name)))
  flag = _calendar_flag(numbers, series, seconds)
  known = filled_ahead or named_known or flag
  reason = ('filled where the target is not yet' if filled_ahead else
            'its name suggests a value known ahead' if named_known else
            'a 0/1 flag the same in every series at each time, like a holiday' if flag else
            'default: its future values are not known')
  present = numbers.notna().groupby(series.to_numpy()).any()
  sparse = (f'; filled in {int(present.sum())} of {len(present)} series only, the others '
            'read it as missing throughout' if not present.all() else '')
  return ColumnDraft(name, Role.KNOWN if known else Role.OBSERVED, dtype,
                     allow_missing=allow_missing,
                     note=f'CHECK known or observed ({reason}){sparse}', check=True), None


def _calendar_flag(numbers: pd.Series, series: pd.Series, seconds: np.ndarray) -> bool:
  """Whether a column is 0 or 1 in every row and, over two or more series, the same in
  all of them at each time: a holiday or an event, most likely marked ahead."""
  if series.nunique() < 2 or not numbers.isin((0, 1)).all():
    return False
  return bool((numbers.groupby(seconds).nunique() == 1).all())


def _series_numbering(name: str, numbers: pd.Series, series: pd.Series) -> Optional[str]:
  """How a static column gives each series its own whole number like an id, over
  N >= _MIN_NUMBERED_SERIES series (so that a few small counts such as floors are not
  taken for one): numbering them one by one (any run of N consecutive integers), or under
  a name that reads like an id (the ids of a subset of the series are not consecutive);
  else None."""
  values = numbers.groupby(series.to_numpy()).first()
  if (len(values) < _MIN_NUMBERED_SERIES or not is_integral(values)
      or values.nunique() != len(values)):
    return None
  first, last = int(values.min()), int(values.max())
  if last - first + 1 == len(values):
    return f'numbers the series {first} to {last}, a different value in each'
  if _named_like_id(name):
    return f'a different whole number in each series ({first} to {last}), named like an id'
  return None


def _named_like_id(name: str) -> bool:
  """Whether a column's name reads like an id's: an id word as one of its words, or a
  word ending in one that names ids only ('timeseries', 'zipcode')."""
  return any(word in ID_WORDS or word.endswith(ID_SUFFIXES) for word in name_words(name))
