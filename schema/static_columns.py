"""The rule of static columns: one value per series, in training as in serving."""

from typing import Optional, Sequence


def first_change(values: Sequence) -> Optional[int]:
  """The index of the first of `values` that differs from the first one, or None."""
  return next((index for index, value in enumerate(values) if value != values[0]), None)


def changed_value_message(series_key: str, column: str, first: str, changed: str) -> str:
  """The error for a static column whose value changes within a series: `first` and
  `changed` say where each value is ("'a' at line 3 of data.csv")."""
  return (f"series '{series_key}': static column '{column}' is {first} but {changed}; a "
          'static column holds one value per series: make it constant within each series, '
          'or declare it known (or observed) if it changes over time, and retrain')
