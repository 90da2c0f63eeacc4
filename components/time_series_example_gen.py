"""An ExampleGen that reads rows typed by a dataset spec and splits them by time.

Input files are CSV (`.csv`, UTF-8 with a header, a byte-order mark allowed) or
TFRecords of tf.Examples (`.tfrecord`, `.tfrecord.gz`, `.gz`; one feature per column,
the time as an ISO 8601 string or as int64 epoch seconds); both go through the same
checks. Values are read by the rules of `schema.csv_values`: a missing value is left out
of the example where the spec allows missing values, and is an error naming the file,
line and column where it does not. CSV rows are typed and encoded `CHUNK_ROWS` at a time
(`components.csv_chunks`); a chunk with a bad value is read row by row (`parse_row`),
which names the first bad one. The pipeline passes chunks of (epoch seconds, serialized
examples) until the splits are written.

TFX's own ExampleGens split rows by hash, which leaks the future into training for time
series. This one keeps TFX's file handling (input patterns, spans, output format) and
assigns each row to train / eval / test by its timestamp (see `schema.time_split`).
It writes `split_report.json` into the output artifact with the row count of each split,
the spans read, the CSV columns the spec does not declare (left out), and the files read
(`FILES_READ`), where a later component's error about
rows finds them (`find_rows`) and the run's forecasts the UTC offset of each series'
last time (`times_as_written`).

Retraining on several spans (`train_spans` > 1, a `{SPAN}` pattern): TFX's driver
resolves the newest span; the executor also reads the spans before it, up to
`train_spans` in all, listed from the input files (`components.span_files`), and emits
them as one artifact: the newest span is split by time as above, every row of an older
span is training data. Listing files rather than resolving earlier ExampleGen outputs
from the metadata store is what lets a compiled Vertex AI pipeline do the same.
"""

import csv
import datetime
import itertools
import json
import os
from typing import (Any, Collection, Dict, Iterable, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

import apache_beam as beam
import numpy as np
import tensorflow as tf
from google.protobuf import any_pb2, json_format, struct_pb2
from tfx.components.example_gen import base_example_gen_executor
from tfx.components.example_gen import component as example_gen_component
from tfx.components.example_gen import utils as example_gen_utils
from tfx.components.example_gen import write_split
from tfx.components.util import examples_utils
from tfx.dsl.components.base import executor_spec
from tfx.proto import example_gen_pb2, range_config_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from common.exit_codes import InputError
from components import csv_chunks, record_chunks, span_files
from common import artifact_json
from schema import forecast_starts
from schema.csv_values import check_header, clean_header, data_rows, real_value
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.features import series_key
from schema.frequency import off_grid_hint
from schema.time_split import (EVAL_SPLIT, TRAINING_SPLIT, TimeSplit, format_time,
                               last_steps, parse_timestamp, written_apart_from_utc)

SPLIT_REPORT_FILE = 'split_report.json'
TFRECORD_SUFFIXES = ('.tfrecord', '.tfrecord.gz', '.gz')
AFTER_END = 'after_end'
SPANS_READ = 'spans'  # in the split report: the spans whose rows the artifact holds
FILES_READ = 'files'  # in the split report: the input files whose rows the artifact holds
BOUNDARIES = 'boundaries'  # in the split report: where eval_start (test_start, end) fell, UTC
# In the split report, for periods placed from each series' last row: the earliest and the
# latest place of each boundary, UTC.
SERIES_BOUNDARIES = 'series_boundaries'
# In the split report: columns of the CSV files that the spec does not declare, left out.
UNDECLARED_COLUMNS = 'undeclared_columns'
_SHOWN_ROWS = 5  # places named by `find_rows`
_SPEC_KEY = 'dataset_spec'
_SPLIT_KEY = 'time_split'
_TRAIN_SPANS_KEY = 'train_spans'
_PATTERN_KEY = 'input_pattern'  # as given: TFX's driver puts the resolved span into it
CHUNK_ROWS = 10_000  # rows typed and encoded at once


def _pack_custom_config(spec: DatasetSpec, split: TimeSplit, train_spans: int,
                        input_pattern: str) -> example_gen_pb2.CustomConfig:
  struct = struct_pb2.Struct()
  struct.update({_SPEC_KEY: spec.to_json(), _SPLIT_KEY: split.to_json(),
                 _TRAIN_SPANS_KEY: train_spans, _PATTERN_KEY: input_pattern})
  packed = any_pb2.Any()
  packed.Pack(struct)
  return example_gen_pb2.CustomConfig(custom_config=packed)


def _custom_values(exec_properties: Dict[str, Any]) -> Dict[str, Any]:
  config = example_gen_pb2.CustomConfig()
  proto_utils.json_to_proto(exec_properties[standard_component_specs.CUSTOM_CONFIG_KEY],
                            config)
  struct = struct_pb2.Struct()
  config.custom_config.Unpack(struct)
  return json_format.MessageToDict(struct)


def _unpack_custom_config(exec_properties: Dict[str, Any]) -> Tuple[DatasetSpec, TimeSplit]:
  values = _custom_values(exec_properties)
  return DatasetSpec.from_json(values[_SPEC_KEY]), TimeSplit.from_json(values[_SPLIT_KEY])


def older_spans(exec_properties: Dict[str, Any]) -> List[Tuple[int, str]]:
  """(span, pattern) of the spans read besides the newest, oldest first; none with one."""
  values = _custom_values(exec_properties)
  train_spans = int(values.get(_TRAIN_SPANS_KEY, 1))
  if train_spans == 1:
    return []
  newest = int(exec_properties[example_gen_utils.SPAN_PROPERTY_NAME])
  spans = span_files.newest_spans(exec_properties[standard_component_specs.INPUT_BASE_KEY],
                                  values[_PATTERN_KEY], newest, train_spans)
  return [(span, pattern) for span, pattern in spans if span != newest]


def matching_files(pattern: str) -> List[str]:
  files = sorted(tf.io.gfile.glob(pattern))
  if not files:
    raise InputError(f'no input files match {pattern}; check the data path and pattern')
  return files


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
      value = datetime.datetime.fromtimestamp(value, datetime.timezone.utc).isoformat()
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


def resolve_boundary(boundary, time_range: Tuple[int, int], spec: DatasetSpec) -> int:
  """Epoch seconds of a boundary given as timestamp, as fraction of `time_range` (moved
  on to the grid), or as the last N steps of the grid up to its end, moved back to where
  the windowing component starts a forecast, so that the period holds whole windows."""
  steps = last_steps(boundary)
  if steps is not None:
    last = spec.frequency.step_of(time_range[1])
    return spec.frequency.seconds_of(forecast_starts.last_start_until(
        last + 1 - steps, forecast_starts.default_stride(EVAL_SPLIT, spec.horizon)))
  if isinstance(boundary, str):
    return parse_timestamp(boundary)
  start, end = time_range
  # The first grid time at or after the fraction's instant: the same rows either side
  # (every row is on the grid), and a time the split report can show as a step's.
  instant = int(start + float(boundary) * (end - start))
  period = spec.frequency.period_of(instant)
  first = spec.frequency.seconds_of(period)
  return first if first == instant else spec.frequency.seconds_of(period + 1)


def split_index(example, spec: DatasetSpec, split: TimeSplit, time_range) -> int:
  """Index into `split.split_names`, or len(split_names) for rows at or after the end, of
  a split whose periods are placed in the data's time range (not per series)."""
  return int(split_indices(np.array([example_time(example, spec)]), split, time_range,
                           spec)[0])


def split_indices(seconds: np.ndarray, split: TimeSplit, time_range, spec: DatasetSpec,
                  keys: Optional[np.ndarray] = None,
                  series_ends: Optional[Mapping[str, int]] = None) -> np.ndarray:
  """`split_index` of rows at epoch `seconds`; when the split's periods are placed from
  each series' last row, of series `keys` whose last rows are at `series_ends`.

  Raises:
    ValueError: boundaries of both kinds (timestamps and fractions) fall out of order once
      the fractions are placed in `time_range`.
  """
  if not split.of_each_series:
    return _indices(seconds, split, time_range, spec)
  indices = np.empty(len(seconds), dtype=np.int64)
  for key in np.unique(keys):
    rows = keys == key
    indices[rows] = _indices(seconds[rows], split, (time_range[0], series_ends[key]), spec)
  return indices


def _indices(seconds: np.ndarray, split: TimeSplit, time_range,
             spec: DatasetSpec) -> np.ndarray:
  """`split_indices` of rows whose boundaries are placed in `time_range`."""
  given = [(name, getattr(split, name)) for name in ('eval_start', 'test_start', 'end')
           if getattr(split, name) is not None]
  placed = [(name, value, resolve_boundary(value, time_range, spec)) for name, value in given]
  for (earlier, first, at), (later, second, then) in zip(placed, placed[1:]):
    if not at < then:
      raise InputError(f'time split {later}={second!r} falls at or before {earlier}={first!r} '
                       f'in the data, which runs from {format_time(time_range[0])} to '
                       f'{format_time(time_range[1])}; put eval_start, test_start and end in '
                       'that order')
  starts = [split.eval_start] + ([split.test_start] if split.test_start is not None else [])
  indices = sum((seconds >= resolve_boundary(b, time_range, spec)).astype(np.int64)
                for b in starts)
  if split.end is not None:
    indices[seconds >= resolve_boundary(split.end, time_range, spec)] = len(split.split_names)
  return indices


def series_ends(chunk: csv_chunks.Encoded) -> Iterator[Tuple[str, int]]:
  """(series key, its latest epoch seconds) of each series in a chunk."""
  keys, inverse = np.unique(chunk.keys, return_inverse=True)
  latest = np.full(len(keys), np.iinfo(np.int64).min)
  np.maximum.at(latest, inverse, chunk.seconds)
  return zip(keys.tolist(), latest.tolist())


def _split_chunk(chunk: csv_chunks.Encoded, split: TimeSplit, spec: DatasetSpec, time_range,
                 ends: Optional[Mapping[str, int]]) -> Iterator[beam.pvalue.TaggedOutput]:
  """A chunk's rows as one chunk per split they fall in, tagged with the split's index."""
  indices = split_indices(chunk.seconds, split, time_range, spec, chunk.keys, ends)
  for index in np.unique(indices):
    rows = np.nonzero(indices == index)[0]
    yield beam.pvalue.TaggedOutput(str(index), csv_chunks.Encoded(
        chunk.seconds[rows], [chunk.serialized[i] for i in rows], chunk.keys[rows]))


class _MinMax(beam.CombineFn):

  def create_accumulator(self):
    return (None, None)

  def add_input(self, accumulator, value):
    low, high = accumulator
    return (value if low is None else min(low, value), value if high is None else max(high, value))

  def merge_accumulators(self, accumulators):
    result = (None, None)
    for low, high in accumulators:
      if low is not None:
        result = self.add_input(self.add_input(result, low), high)
    return result

  def extract_output(self, accumulator):
    return accumulator


def read_split_report(examples_uri: str) -> Optional[Dict[str, Any]]:
  """The split report of an ExampleGen output artifact; None if it has none (another
  component's Examples)."""
  return artifact_json.read_json(examples_uri, SPLIT_REPORT_FILE)


def files_read(examples_uri: str) -> List[str]:
  """The input files an ExampleGen output artifact holds the rows of, from its split
  report ([] for another component's Examples)."""
  return (read_split_report(examples_uri) or {}).get(FILES_READ, [])


def write_split_report(counts: List[Tuple[str, int]], path: str, split: TimeSplit,
                       spans: List[int], files: List[str], spec: DatasetSpec,
                       time_range: Tuple[int, int], undeclared: Sequence[str] = (),
                       ends: Optional[Mapping[str, int]] = None) -> None:
  """Rows per split, the spans and files read, where each boundary fell in the data
  (`BOUNDARIES`, UTC; placed from each series' last row at `ends`, the latest of them,
  every training row lying before it, and `SERIES_BOUNDARIES` the earliest and the
  latest), and the CSV columns left out (`UNDECLARED_COLUMNS`)."""
  report = {name: 0 for name in split.split_names + (AFTER_END,)}
  report.update(dict(counts))
  report[SPANS_READ] = spans
  report[FILES_READ] = files
  report[UNDECLARED_COLUMNS] = list(undeclared)
  names = [name for name in ('eval_start', 'test_start', 'end')
           if getattr(split, name) is not None]
  if split.of_each_series:
    placed = {name: sorted(resolve_boundary(getattr(split, name), (time_range[0], end), spec)
                           for end in ends.values()) for name in names}
    report[BOUNDARIES] = {name: format_time(times[-1]) for name, times in placed.items()}
    report[SERIES_BOUNDARIES] = {name: [format_time(times[0]), format_time(times[-1])]
                                 for name, times in placed.items()}
  else:
    report[BOUNDARIES] = {name: format_time(resolve_boundary(getattr(split, name), time_range,
                                                             spec)) for name in names}
  empty = [name for name in split.split_names if report[name] == 0]
  if empty:
    raise InputError(f'time split {split} leaves splits {empty} empty (rows per split: '
                     f'{report}); move the split boundaries inside the data time range')
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump(report, f, indent=2)


class Executor(base_example_gen_executor.BaseExampleGenExecutor):
  """Reads every input file once and partitions its rows by time."""

  def Do(self, input_dict, output_dict, exec_properties):
    """TFX 1.16's ExampleGen `Do`, with the splits written a chunk at a time
    (`components.record_chunks`) instead of by TFX's per-example `WriteSplit`; the
    splits come from `_split_chunks`, not from TFX's `GenerateExamplesByBeam`, which
    this executor does not use."""
    self._log_startup(input_dict, output_dict, exec_properties)
    examples = artifact_utils.get_single_instance(
        output_dict[standard_component_specs.EXAMPLES_KEY])
    self._report_path = os.path.join(examples.uri, SPLIT_REPORT_FILE)
    input_config, output_config = example_gen_pb2.Input(), example_gen_pb2.Output()
    proto_utils.json_to_proto(exec_properties[standard_component_specs.INPUT_CONFIG_KEY],
                              input_config)
    proto_utils.json_to_proto(exec_properties[standard_component_specs.OUTPUT_CONFIG_KEY],
                              output_config)
    examples.split_names = artifact_utils.encode_split_names(
        example_gen_utils.generate_output_split_names(input_config, output_config))
    with self._make_beam_pipeline() as pipeline:
      for name, chunks in self._split_chunks(
          pipeline, exec_properties, input_config.splits[0].pattern).items():
        _ = (chunks | f'Records[{name}]' >> beam.Map(lambda chunk: chunk.serialized)
             | f'WriteSplit[{name}]' >> record_chunks.WriteRecordChunks(
                 artifact_utils.get_split_uri([examples], name)))
    examples_utils.set_payload_format(
        examples, exec_properties[standard_component_specs.OUTPUT_DATA_FORMAT_KEY])
    examples_utils.set_file_format(examples, write_split.to_file_format_str(
        exec_properties[standard_component_specs.OUTPUT_FILE_FORMAT_KEY]))
    # TFX's driver records span and version as custom properties only; the typed
    # properties let metadata queries by span see them too. Without a {VERSION} in the
    # pattern every ingestion of a span is version 0.
    examples.span = int(exec_properties.get(example_gen_utils.SPAN_PROPERTY_NAME) or 0)
    examples.version = int(exec_properties.get(example_gen_utils.VERSION_PROPERTY_NAME) or 0)

  def GetInputSourceToExamplePTransform(self) -> beam.PTransform:
    return _ReadRows

  def _split_chunks(self, pipeline: beam.Pipeline, exec_properties: Dict[str, Any],
                    pattern: str) -> Dict[str, beam.PCollection]:
    """Split name -> the split's rows, read from the files matching `pattern`, as chunks
    of (epoch seconds, serialized examples); the row counts go to the split report."""
    spec, split = _unpack_custom_config(exec_properties)
    read = self.GetInputSourceToExamplePTransform()
    older = older_spans(exec_properties)
    # Listed once: the files read are the files the split report names.
    files = {span: input_files(exec_properties, span_pattern) for span, span_pattern in older}
    newest = input_files(exec_properties, pattern)
    # Their headers are checked before the Beam pipeline starts.
    self._undeclared = undeclared_columns(
        [path for span, _ in older for path in files[span]] + newest, spec)
    chunks = pipeline | 'ReadCsv' >> read(exec_properties, pattern, newest)
    time_range = beam.pvalue.AsSingleton(
        chunks | 'Time' >> beam.FlatMap(lambda chunk: (chunk.seconds.min(),
                                                        chunk.seconds.max()))
        | 'TimeRange' >> beam.CombineGlobally(_MinMax()))
    names = split.split_names + (AFTER_END,)
    # Periods placed from each series' last row need every series' last time first.
    ends = (beam.pvalue.AsDict(chunks | 'SeriesEnds' >> beam.FlatMap(series_ends)
                               | 'LatestPerSeries' >> beam.CombinePerKey(max))
            if split.of_each_series else None)
    partitions = chunks | 'SplitByTime' >> beam.FlatMap(
        _split_chunk, split, spec, time_range, ends).with_outputs(*map(str, range(len(names))))
    self._spans_read = [span for span, _ in older] + [
        int(exec_properties.get(example_gen_utils.SPAN_PROPERTY_NAME) or 0)]
    outputs = {name: partitions[str(i)] for i, name in enumerate(names)}
    if older:  # every row of an older span is training data
      outputs[TRAINING_SPLIT] = (
          [outputs[TRAINING_SPLIT]]
          + [pipeline | f'ReadSpan[{span}]' >> read(exec_properties, span_pattern, files[span])
             for span, span_pattern in older]) | 'WithOlderSpans' >> beam.Flatten()
    counts = [split_chunks | f'Rows[{name}]' >> beam.Map(lambda chunk: len(chunk.serialized))
              | f'Count[{name}]' >> beam.CombineGlobally(sum)
              | f'Name[{name}]' >> beam.Map(lambda n, name=name: (name, n))
              for name, split_chunks in outputs.items()]
    _ = (counts | 'AllCounts' >> beam.Flatten() | beam.combiners.ToList()
         | 'WriteReport' >> beam.Map(write_split_report, self._report_path, split,
                                     self._spans_read,
                                     [path for span, _ in older for path in files[span]]
                                     + newest, spec, time_range, self._undeclared, ends))
    return {name: outputs[name] for name in split.split_names}


def input_files(exec_properties: Dict[str, Any], split_pattern: str) -> List[str]:
  """The files matching `split_pattern` under the input base."""
  return matching_files(os.path.join(
      exec_properties[standard_component_specs.INPUT_BASE_KEY], split_pattern))


@beam.ptransform_fn
def _ReadRows(pipeline: beam.Pipeline, exec_properties: Dict[str, Any],
                  split_pattern: str, files: Optional[List[str]] = None) -> beam.PCollection:
  """Reads the files matching `split_pattern` under the input base (`files`, if they are
  listed already) as chunks of (epoch seconds, serialized typed tf.Examples)."""
  spec, _ = _unpack_custom_config(exec_properties)
  files = input_files(exec_properties, split_pattern) if files is None else files
  return (pipeline | 'Files' >> beam.Create(files)
          | 'Rows' >> beam.FlatMap(read_chunks, spec)
          | 'Reshuffle' >> beam.Reshuffle())


class TimeSeriesExampleGen(example_gen_component.FileBasedExampleGen):
  """Reads the CSV or TFRecord files under `input_base` and splits their rows by time."""

  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, input_base: str, dataset_spec: DatasetSpec, time_split: TimeSplit,
               input_pattern: str = '*', train_spans: int = 1,
               range_config: Optional[range_config_pb2.RangeConfig] = None):
    """Args:
      input_base: the directory holding the input files.
      dataset_spec: declares the columns to read and their types.
      time_split: where eval (and test) begin.
      input_pattern: file pattern under `input_base`; may contain `{SPAN}`.
      train_spans: with a `{SPAN}` pattern, how many of the newest spans to read; the
        older ones are training data only.
      range_config: which spans to read, when the pattern has `{SPAN}`.
    """
    if train_spans > 1:
      span_files.check_pattern(input_pattern)
    splits = [example_gen_pb2.SplitConfig.Split(name=name, hash_buckets=1)
              for name in time_split.split_names]  # buckets are required but unused
    super().__init__(
        input_base=input_base,
        input_config=example_gen_pb2.Input(
            splits=[example_gen_pb2.Input.Split(name='all', pattern=input_pattern)]),
        output_config=example_gen_pb2.Output(
            split_config=example_gen_pb2.SplitConfig(splits=splits)),
        custom_config=_pack_custom_config(dataset_spec, time_split, train_spans,
                                          input_pattern),
        range_config=range_config)
