"""ExampleGen's records read as columns: a value per record and column, and whether the
record holds one. The forecasts a run delivers build their series' rows from them; the
drift check builds a table of the compared columns."""

from typing import Dict, List, Sequence, Tuple

import numpy as np
import pandas as pd
import tensorflow as tf

from schema.dataset_spec import Column, DatasetSpec, DType, Role
from schema.features import series_key

_PARSE_BATCH = 8192  # records parsed at once
Columns = Dict[str, Tuple[np.ndarray, np.ndarray]]


def parsed_columns(files: Sequence[str], spec: DatasetSpec) -> Columns:
  """Each column's (values, present) over every record of `files`: one value per record
  (its first), and whether the record holds one (missing values are left out)."""
  features = {c.name: tf.io.VarLenFeature(
      tf.int64 if c.role == Role.TIME else
      tf.string if c.dtype == DType.CATEGORICAL else tf.float32) for c in spec.columns}
  parts: Dict[str, List[Tuple[np.ndarray, np.ndarray]]] = {name: [] for name in features}
  dataset = tf.data.TFRecordDataset(list(files), compression_type='GZIP').batch(_PARSE_BATCH)
  for batch in dataset:
    size = int(tf.shape(batch)[0])
    for name, sparse in tf.io.parse_example(batch, features).items():
      rows, values = sparse.indices.numpy()[:, 0], sparse.values.numpy()
      first = np.unique(rows, return_index=True)[1]  # a record's first value
      dense = np.empty(size, dtype=values.dtype)
      present = np.zeros(size, dtype=bool)
      dense[rows[first]], present[rows[first]] = values[first], True
      parts[name].append((dense, present))
  return {name: (np.concatenate([d for d, _ in chunks]) if chunks else np.empty(0),
                 np.concatenate([p for _, p in chunks]) if chunks else np.empty(0, bool))
          for name, chunks in parts.items()}


def value_text(value, held: bool, column: Column) -> str:
  """A parsed value as the data's text: '' where missing, a real as its repr."""
  if not held:
    return ''
  return value.decode() if column.dtype == DType.CATEGORICAL else repr(float(value))


def record_keys(columns: Columns, spec: DatasetSpec) -> List[Tuple[str, ...]]:
  """Each record's key column values as text ('' where missing); () for every record of
  data of one series, which has no key column."""
  texts = [[value_text(value, held, column) for value, held in zip(*columns[column.name])]
           for column in spec.columns_with(Role.SERIES_KEY)]
  return list(zip(*texts)) if texts else [()] * len(columns[spec.time_column][0])


def frame(files: Sequence[str], spec: DatasetSpec, names: Sequence[str]) -> pd.DataFrame:
  """The records of `files` as a table: `series` (the composite key), `seconds` (the time)
  and the columns `names`, reals as floats and categories as text, missing values NaN
  and None."""
  columns = parsed_columns(files, spec)
  table = {'series': [series_key(key, spec) for key in record_keys(columns, spec)],
           'seconds': columns[spec.time_column][0].astype(np.int64)}
  for name in names:
    values, present = columns[name]
    if spec.column(name).dtype == DType.CATEGORICAL:
      table[name] = [value.decode() if held else None for value, held in zip(values, present)]
    else:
      table[name] = np.where(present, values.astype(float), np.nan)
  return pd.DataFrame(table)
