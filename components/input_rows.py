"""The rows of a data set's input files as ExampleGen reads them, typed by its spec.

CSV (`.csv`, UTF-8 with a header, a byte-order mark allowed) or TFRecords of tf.Examples
(`TFRECORD_SUFFIXES`; one feature per column, the time as text or as int64 epoch
seconds) go through the same checks. Values are read by the rules of
`schema.csv_values`: a missing value is left out of the example where the spec allows
missing values, and is an error naming the file, line and column where it does not. CSV
rows are typed and encoded `CHUNK_ROWS` at a time (`components.csv_chunks`); a chunk with
a bad value is read row by row (`parse_row`), which names the first bad one.

The same reading finds rows again for later components, which see examples without their
files: where a series' rows are (`find_rows`, for errors) and how the files write a
series' last time (`times_as_written`, for the forecasts).
"""

import csv
import itertools
import os
from typing import Collection, Dict, Iterable, Iterator, List, Mapping, Tuple

import numpy as np
import tensorflow as tf

from common.file_patterns import files_matching
from common.exit_codes import InputError
from components import csv_chunks
from schema.csv_values import check_header, clean_header, data_rows, real_value
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.features import series_key
from schema.frequency import off_grid_hint
from schema.split_placement import split_indices
from schema.time_split import TimeSplit, written_apart_from_utc

TFRECORD_SUFFIXES = ('.tfrecord', '.tfrecord.gz', '.gz')
_SHOWN_ROWS = 5  # places named by `find_rows`
CHUNK_ROWS = 10_000  # rows typed and encoded at once


def matching_files(pattern: str) -> List[str]:
  """The input files matching `pattern`, sorted; InputError when none does."""
  return files_matching(pattern, InputError(
      f'no input files match {pattern}; check the data path and pattern'))


def shown_path(path: str) -> str:
  """The path to name in messages: a linked file's own path (the local runner links the
  user's file into its data directory), else `path`."""
  return os.path.realpath(path) if '://' not in path and os.path.islink(path) else path


def read_header(path: str, spec: DatasetSpec) -> List[str]:
  """The header of CSV file `path`, checked to hold every declared column."""
  with tf.io.gfile.GFile(path) as f:
    header = next(csv.reader(f), None)
  header = clean_header(header)
  if not header:
    raise InputError(f'{shown_path(path)} is empty; expected a CSV header with columns '
                     f'{[c.name for c in spec.columns]}')
  check_header(header, shown_path(path))
  missing = [c.name for c in spec.columns if c.name not in header]
  if missing:
    raise InputError(f'{shown_path(path)}: columns {missing} are missing; dataset spec '
                     f"'{spec.name}' declares them. The file has {header}")
  return header


def undeclared_columns(files: Iterable[str], spec: DatasetSpec) -> List[str]:
  """The columns of the CSV files among `files` that the spec does not declare, in the
  order first met; reading each header checks it holds every declared column
  (`read_header`), so a missing one stops the run before any row is read."""
  declared = {column.name for column in spec.columns}
  found: Dict[str, None] = {}
  for path in files:
    if path.endswith('.csv'):
      found.update((name, None) for name in read_header(path, spec) if name not in declared)
  return list(found)


def parse_row(values: Dict[str, str], spec: DatasetSpec, where: str) -> tf.train.Example:
  """One CSV row as a tf.Example typed by the spec; the time becomes epoch seconds."""
  features = {}
  for column in spec.columns:
    text = values[column.name].strip() if values[column.name] is not None else ''
    if column.role == Role.TIME:
      seconds = spec.read_time(text, what=f"{where}, column '{column.name}'")
      _check_on_grid(seconds, text, spec, f"{where}, column '{column.name}'")
      features[column.name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[seconds]))
      continue
    if column.dtype == DType.CATEGORICAL:
      if not text:  # specs allow no missing categoricals
        raise InputError(f"{where}: column '{column.name}' is empty; dataset spec "
                         f"'{spec.name}' does not allow missing values in it. Fill the "
                         'value (e.g. with a category such as "unknown")')
      features[column.name] = tf.train.Feature(
          bytes_list=tf.train.BytesList(value=[text.encode()]))
      continue
    number = real_value(text, f"{where}: column '{column.name}'")
    if number is not None:
      features[column.name] = tf.train.Feature(float_list=tf.train.FloatList(value=[number]))
    elif column.role == Role.TARGET:
      future = ('; rows that give the known columns over the forecast horizon belong in a '
                'future file (tft-pipeline --future FILE, future_file: in a deployment '
                'file), not among the data files' if spec.columns_with(Role.KNOWN) else '')
      raise InputError(f"{where}: column '{column.name}' {_no_value(text)}; it is the target "
                       f"of dataset spec '{spec.name}', which every row of the data needs. "
                       f'Fill the value or drop the row{future}')
    elif not column.allow_missing:
      raise InputError(f"{where}: column '{column.name}' {_no_value(text)}; dataset spec "
                       f"'{spec.name}' does not allow missing values in it. Fill the value, "
                       f"or declare the column with allow_missing: true")
  return tf.train.Example(features=tf.train.Features(feature=features))


def _no_value(text: str) -> str:
  """What a real value without a number holds, for an error."""
  return 'is empty' if not text else f'holds {text!r}, a missing or non-finite value'


def _check_on_grid(seconds: int, text: str, spec: DatasetSpec, where: str) -> None:
  """Raises ValueError naming a time off the spec's grid, here rather than at Windowing."""
  frequency = spec.frequency
  try:
    frequency.step_of(seconds)
  except ValueError:
    raise InputError(
        f'{where}: {text!r} is not on the {frequency.value} grid ({frequency.description}) '
        f"of dataset spec '{spec.name}'; "
        f'{off_grid_hint(frequency, seconds, text, spec.time_format)}. If the data '
        "has another frequency, give that as the spec's 'frequency' "
        '(tft-pipeline init finds it)') from None


def read_csv_examples(path: str, spec: DatasetSpec) -> Iterator[tf.train.Example]:
  """The rows of CSV file `path` as typed tf.Examples, one by one (`parse_row`)."""
  for header, chunk in _csv_line_chunks(path, spec):
    yield from (example for _, example in _parsed_rows(path, header, chunk, spec))


def read_csv_chunks(path: str, spec: DatasetSpec) -> Iterator[csv_chunks.Encoded]:
  """The rows of CSV file `path` as chunks of (epoch seconds, serialized tf.Examples),
  typed as `read_csv_examples` types them, and with its errors."""
  for header, chunk in _csv_line_chunks(path, spec):
    encoded = csv_chunks.encode_rows([fields for _, fields in chunk], header, spec)
    if encoded is None:  # a bad value: reading row by row names it
      encoded = _encoded(_parsed_rows(path, header, chunk, spec), spec)
    yield encoded


def _csv_line_chunks(path: str, spec: DatasetSpec
                     ) -> Iterator[Tuple[List[str], List[Tuple[int, List[str]]]]]:
  """The header and lists of up to CHUNK_ROWS (line number, fields) data rows.

  Raises:
    ValueError: a missing column, a row with the wrong field count, or no rows.
  """
  header = read_header(path, spec)
  shown = shown_path(path)
  chunk = []
  rows = 0
  with tf.io.gfile.GFile(path) as f:
    reader = csv.reader(f)
    next(reader)
    for line_number, fields in data_rows(reader, header, shown):
      rows += 1
      chunk.append((line_number, fields))
      if len(chunk) == CHUNK_ROWS:
        yield header, chunk
        chunk = []
  if chunk:
    yield header, chunk
  if not rows:
    raise InputError(f'{shown} has a header and no rows; put the data under the header, or '
                     'remove the file from the input directory')


def _parsed_rows(path: str, header: List[str], chunk: List[Tuple[int, List[str]]],
                 spec: DatasetSpec) -> Iterator[Tuple[str, tf.train.Example]]:
  """(file and line, typed tf.Example) of each row of `chunk`."""
  shown = shown_path(path)
  for line_number, fields in chunk:
    where = f'{shown}, line {line_number}'
    yield where, parse_row(dict(zip(header, fields)), spec, where)


def _encoded(located: Iterable[Tuple[str, tf.train.Example]],
             spec: DatasetSpec) -> csv_chunks.Encoded:
  examples = [example for _, example in located]
  keys = csv_chunks.series_keys(
      [{name: example.features.feature[name].bytes_list.value[0].decode()
        for name in spec.series_key_columns} for example in examples], spec)
  return csv_chunks.Encoded(
      np.array([example_time(example, spec) for example in examples], dtype=np.int64),
      [example.SerializeToString() for example in examples], keys)


def _tfrecord_examples(path: str) -> Iterator[tf.train.Example]:
  """The tf.Examples of a TFRecord file, in order (gzipped if its name ends in .gz)."""
  compression = 'GZIP' if path.endswith('.gz') else ''
  for record in tf.compat.v1.io.tf_record_iterator(
      path, tf.compat.v1.io.TFRecordOptions(compression)):
    yield tf.train.Example.FromString(record)


def _located_tfrecord_examples(path: str, spec: DatasetSpec
                               ) -> Iterator[Tuple[str, tf.train.Example]]:
  """(file and record number, tf.Example) of each record of a TFRecord file, re-typed
  and checked like CSV rows."""
  for number, example in enumerate(_tfrecord_examples(path), start=1):
    where = f'{shown_path(path)}, record {number}'
    yield where, parse_row(_as_text(example, spec, where), spec, where)


def _as_text(example: tf.train.Example, spec: DatasetSpec, where: str) -> Dict[str, str]:
  """The declared columns of `example` as strings, '' where absent."""
  values = {}
  for column in spec.columns:
    feature = example.features.feature.get(column.name)
    kind = feature.WhichOneof('kind') if feature is not None else None
    found = list(getattr(feature, kind).value) if kind else []
    if len(found) > 1:
      raise InputError(f"{where}: column '{column.name}' holds {len(found)} values; "
                       'each example is one row with one value per column')
    value = found[0] if found else ''
    if kind == 'int64_list' and column.role == Role.TIME:
      value = spec.write_time(value)
    values[column.name] = value.decode() if isinstance(value, bytes) else str(value)
  return values


def read_chunks(path: str, spec: DatasetSpec) -> Iterator[csv_chunks.Encoded]:
  """Rows of a CSV or TFRecord file as chunks of (epoch seconds, serialized typed
  tf.Examples), the format chosen by the file name."""
  if path.endswith('.csv'):
    return read_csv_chunks(path, spec)
  if path.endswith(TFRECORD_SUFFIXES):
    located = _located_tfrecord_examples(path, spec)
    return (_encoded(chunk, spec) for chunk in iter(
        lambda: list(itertools.islice(located, CHUNK_ROWS)), []))
  raise _unknown_format(path)


def _unknown_format(path: str) -> InputError:
  if tf.io.gfile.isdir(path):
    return InputError(f'{path} is a directory among the input files; for span directories '
                      "(span-1/, span-2/, ...) give --input-pattern 'span-{SPAN}/*.csv' "
                      '(input_pattern in a deployment file), else leave it out of the '
                      'data directory')
  return InputError(f'{path}: unknown input format; use .csv, or TFRecords of tf.Examples '
                    f'named {TFRECORD_SUFFIXES}')


def find_rows(files: Iterable[str], spec: DatasetSpec, series_key: str,
              times: Collection[int]) -> str:
  """Where the rows of series `series_key` at epoch seconds `times` are in `files`, read
  again as this component reads them: '; rows at <file>, line 12 and <file>, line 40'
  (the first few), or '' if none is found. For the errors of later components, which
  see the rows without their files: rows are matched by their key's text before their
  time is parsed."""
  places = [place for path in files for place, key, time in keys_and_times(path, spec)
            if key == series_key and spec.read_time(time) in times]
  if not places:
    return ''
  more = f' and {len(places) - _SHOWN_ROWS} more' if len(places) > _SHOWN_ROWS else ''
  return f"; rows at {' and '.join(places[:_SHOWN_ROWS])}{more}"


def times_as_written(files: Iterable[str], spec: DatasetSpec,
                     instants: Mapping[str, int]) -> Dict[str, str]:
  """How `files` write the time of each series' row at `instants` (epoch seconds, by
  series key), for the UTC offset or period notation ('2001 Q1') the examples' epoch
  seconds do not keep; {} when no file's first row has either. For later components,
  which see times as epoch seconds only; then every row of `files` is read again."""
  files = list(files)
  first_times = (next(keys_and_times(path, spec), (None, None, ''))[2] for path in files)
  if not any(written_apart_from_utc(time, spec.time_format) for time in first_times if time):
    return {}
  written = {}
  for path in files:
    for _, key, time in keys_and_times(path, spec):
      if key in instants and key not in written and spec.read_time(time) == instants[key]:
        written[key] = time
  return written


def keys_and_times(path: str, spec: DatasetSpec) -> Iterator[Tuple[str, str, str]]:
  """(place, series key, time as written) of each row of a CSV or TFRecord file, its
  other columns left unread: '<file>, line N' or '<file>, record N'; an int64 time as
  UTC text (in the spec's time format if it has one)."""
  shown = shown_path(path)
  if path.endswith('.csv'):
    for header, chunk in _csv_line_chunks(path, spec):
      keys = [header.index(column) for column in spec.series_key_columns]
      time = header.index(spec.time_column)
      for line, fields in chunk:
        yield (f'{shown}, line {line}', series_key([fields[i].strip() for i in keys], spec),
               fields[time].strip())
  elif path.endswith(TFRECORD_SUFFIXES):
    for number, example in enumerate(_tfrecord_examples(path), start=1):
      where = f'{shown}, record {number}'
      values = _as_text(example, spec, where)
      time = example.features.feature[spec.time_column].int64_list.value
      yield (where, series_key([values[column].strip() for column in spec.series_key_columns],
                                spec),
             spec.write_time(time[0]) if time else values[spec.time_column].strip())
  else:
    raise _unknown_format(path)


def example_time(example: tf.train.Example, spec: DatasetSpec) -> int:
  return example.features.feature[spec.time_column].int64_list.value[0]


def split_index(example, spec: DatasetSpec, split: TimeSplit, time_range) -> int:
  """Index into `split.split_names`, or len(split_names) for rows at or after the end, of
  a split whose periods are placed in the data's time range (not per series)."""
  return int(split_indices(np.array([example_time(example, spec)]), split, time_range,
                           spec)[0])
