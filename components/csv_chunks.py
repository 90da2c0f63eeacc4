"""Many CSV rows typed by a dataset spec and encoded as tf.Examples at once.

The fast path of `components.input_rows`: a chunk of rows is typed column by column by
the same rules (`schema.csv_values`, `DatasetSpec.read_time`, the spec's time grid) and
encoded by tfx_bsl's native RecordBatch-to-tf.Example encoder, a few microseconds a row
instead of the tens a row-by-row tf.Example takes. A missing value is left out of its
example, as `parse_row` leaves it out: rows are encoded in groups that share which
columns are missing, each group without those columns. When any value is bad,
`encode_rows` returns None and the caller reads the chunk row by row, whose error names
the first bad row and column.
"""

from typing import Dict, List, NamedTuple, Optional, Sequence

import numpy as np
import pyarrow as pa
from tfx_bsl.coders import example_coder

from schema.csv_values import real_value
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.features import series_key


class Encoded(NamedTuple):
  """Rows as the example generator passes them on, one entry per row in each field."""
  seconds: np.ndarray  # epoch seconds [N] int64
  serialized: List[bytes]  # the typed tf.Examples
  keys: np.ndarray  # the series keys (`schema.features.series_key`) [N] object


def series_keys(rows: Sequence[Dict[str, str]], spec: DatasetSpec) -> np.ndarray:
  """The series key of each row (`schema.features.series_key`), from its key columns'
  values as written."""
  return np.array([series_key([row[name].strip() for name in spec.series_key_columns], spec)
                   for row in rows], dtype=object)


def encode_rows(rows: Sequence[Sequence[str]], header: Sequence[str],
                spec: DatasetSpec) -> Optional[Encoded]:
  """The rows (fields in `header` order) as epoch seconds and serialized tf.Examples, in
  row order; None when a value breaks the spec (read those rows one by one for the
  error)."""
  index = {name: position for position, name in enumerate(header)}
  seconds = None
  columns: Dict[str, np.ndarray] = {}
  missing: Dict[str, np.ndarray] = {}  # real columns with a missing value: where
  for column in spec.columns:
    texts = [row[index[column.name]] for row in rows]
    if column.role == Role.TIME:
      seconds = _timestamps(texts, spec)
      if seconds is None:
        return None
      columns[column.name] = seconds
    elif column.dtype == DType.CATEGORICAL:
      values = [text.strip().encode() for text in texts]
      if not all(values):
        return None
      columns[column.name] = np.array(values, dtype=object)
    else:
      values = _reals(texts)
      if values is None:
        return None
      absent = np.isnan(values)
      if absent.any():
        if not column.allow_missing:
          return None
        missing[column.name] = absent
      columns[column.name] = values.astype(np.float32)
  keys = series_keys([{name: row[index[name]] for name in spec.series_key_columns}
                      for row in rows], spec)
  return Encoded(seconds, _encode(columns, missing, len(rows)), keys)


def _timestamps(texts: List[str], spec: DatasetSpec) -> Optional[np.ndarray]:
  """Epoch seconds of each timestamp, parsing each distinct text once; None if one fails
  or is off the spec's grid."""
  parsed = {}
  try:
    for text in set(texts):
      parsed[text] = spec.read_time(text)
      spec.frequency.step_of(parsed[text])
  except ValueError:
    return None
  return np.array([parsed[text] for text in texts], dtype=np.int64)


def _reals(texts: List[str]) -> Optional[np.ndarray]:
  """Each value as `real_value` reads it, NaN where missing; None if one is not a number."""
  try:
    numbers = [real_value(text, '') for text in texts]
  except ValueError:
    return None
  return np.array([np.nan if number is None else number for number in numbers],
                  dtype=np.float64)


def _encode(columns: Dict[str, np.ndarray], missing: Dict[str, np.ndarray],
            count: int) -> List[bytes]:
  """Serialized tf.Examples, one per row; a missing value's feature is left out."""
  pattern = np.zeros(count, dtype=np.int64)  # bit i: the i-th column with gaps is missing
  for bit, absent in enumerate(missing.values()):
    pattern |= absent.astype(np.int64) << bit
  serialized: List[Optional[bytes]] = [None] * count
  for code in np.unique(pattern):
    rows = np.nonzero(pattern == code)[0]
    present = [name for name in columns if name not in missing or not missing[name][rows[0]]]
    batch = pa.RecordBatch.from_arrays(
        [_one_value_lists(columns[name][rows]) for name in present], present)
    for row, example in zip(rows, example_coder.RecordBatchToExamples(batch)):
      serialized[row] = example
  return serialized


def _one_value_lists(values: np.ndarray) -> pa.ListArray:
  """An Arrow list of one value per row, the layout the encoder takes."""
  offsets = pa.array(np.arange(len(values) + 1, dtype=np.int32))
  return pa.ListArray.from_arrays(
      offsets, pa.array(values, type=pa.binary() if values.dtype == object else None))
