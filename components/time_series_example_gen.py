"""An ExampleGen that reads rows typed by a dataset spec and splits them by time.

TFX's own ExampleGens split rows by hash, which leaks the future into training for time
series. This one keeps TFX's file handling (input patterns, spans, output format), reads
the rows of CSV or TFRecord files by the spec a chunk at a time (`components.input_rows`)
and assigns each row to train / eval / test by its timestamp (`schema.split_placement`).
It writes `split_report.json` into the output artifact (`components.split_report`): the
row count of each split, where each boundary fell, the spans and files read (where a later
component's error about rows finds them), the CSV columns the spec does not declare and
the spec's calendar features whose eval and test rows, or forecasts after the newest row,
take values no training row does.

Retraining on several spans (`train_spans` > 1, a `{SPAN}` pattern): TFX's driver
resolves the newest span; the executor also reads the spans before it, up to
`train_spans` in all, listed from the input files (`components.span_files`), and emits
them as one artifact: the newest span is split by time as above, every row of an older
span is training data. Listing files rather than resolving earlier ExampleGen outputs
from the metadata store is what lets a compiled Vertex AI pipeline do the same.
"""

import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import apache_beam as beam
import numpy as np
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

from components import csv_chunks, record_chunks, span_files
from components.input_rows import matching_files, read_chunks, undeclared_columns
from components.split_report import AFTER_END, SPLIT_REPORT_FILE, write_split_report
from schema.dataset_spec import DatasetSpec
from schema.split_placement import split_indices
from schema.time_split import TRAINING_SPLIT, TimeSplit
from trainer_module.preprocessing import calendar_values, untrained_calendar_values

_SPEC_KEY = 'dataset_spec'
_SPLIT_KEY = 'time_split'
_TRAIN_SPANS_KEY = 'train_spans'
_PATTERN_KEY = 'input_pattern'  # as given: TFX's driver puts the resolved span into it


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


class _Union(beam.CombineFn):
  """The union of {calendar feature: set of ids} dicts."""

  def create_accumulator(self):
    return {}

  def add_input(self, accumulator, values):
    for feature, ids in values.items():
      accumulator.setdefault(feature, set()).update(ids)
    return accumulator

  def merge_accumulators(self, accumulators):
    merged = {}
    for accumulator in accumulators:
      self.add_input(merged, accumulator)
    return merged

  def extract_output(self, accumulator):
    return accumulator


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
    untrained_calendar = (self._untrained_calendar(pipeline, outputs, split, spec, time_range)
                          if spec.calendar_features else {})
    counts = [split_chunks | f'Rows[{name}]' >> beam.Map(lambda chunk: len(chunk.serialized))
              | f'Count[{name}]' >> beam.CombineGlobally(sum)
              | f'Name[{name}]' >> beam.Map(lambda n, name=name: (name, n))
              for name, split_chunks in outputs.items()]
    _ = (counts | 'AllCounts' >> beam.Flatten() | beam.combiners.ToList()
         | 'WriteReport' >> beam.Map(write_split_report, self._report_path, split,
                                     self._spans_read,
                                     [path for span, _ in older for path in files[span]]
                                     + newest, spec, time_range, self._undeclared, ends,
                                     untrained_calendar))
    return {name: outputs[name] for name in split.split_names}

  @staticmethod
  def _untrained_calendar(pipeline: beam.Pipeline, outputs: Dict[str, beam.PCollection],
                          split: TimeSplit, spec: DatasetSpec, time_range
                          ) -> beam.pvalue.AsSingleton:
    """The calendar features whose eval and test rows, or forecasts after the newest row,
    take values no training row does (`preprocessing.untrained_calendar_values`), as a
    side input."""
    def ids(seconds):
      return calendar_values(spec.calendar_features, seconds, spec.time_zone)

    def values(name, chunks):
      return (chunks | f'Calendar[{name}]' >> beam.Map(lambda chunk: ids(chunk.seconds))
              | f'CalendarUnion[{name}]' >> beam.CombineGlobally(_Union()))
    forecasts = (pipeline | 'Newest' >> beam.Create([None])
                 | 'ForecastCalendar' >> beam.Map(
                     lambda _, times: ids(spec.frequency.seconds_after(
                         spec.frequency.period_of(times[1]), spec.horizon)),
                     time_range))
    later = ([values(name, outputs[name]) for name in split.split_names[1:]] + [forecasts]
             | 'LaterCalendar' >> beam.Flatten() | 'LaterUnion' >> beam.CombineGlobally(_Union()))
    return beam.pvalue.AsSingleton(
        values(TRAINING_SPLIT, outputs[TRAINING_SPLIT])
        | 'UntrainedCalendar' >> beam.Map(untrained_calendar_values,
                                          beam.pvalue.AsSingleton(later)))


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
