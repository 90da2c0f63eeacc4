"""A TFX component that turns rows into fixed-length windows of transformed features.

Beam applies Transform's graph to the raw rows of every split (Transform itself does
not materialize: it cannot write one output per input span, tensorflow/tfx#2889),
groups them by series key, `window_builder` cuts each series into windows, and
`window_files` writes them per split as gzipped TFRecords of tf.Examples laid out as in
`schema.window_layout`, in an order that depends on the data alone, so a seeded Trainer
sees the same batches in a rerun: the training split as segments (each row stored about
twice instead of once per window over it; the Trainer cuts the windows out) with every
series spread over all shards in a fixed mixed order (a shuffle buffer smaller than the
split still mixes series), the other splits as windows in series key and time order,
holding each step's raw columns too, for the Evaluator's baseline to read through its own
Transform (`schema.window_layout`).
A series whose rows cannot be windowed (two at one time, a static value that changes)
stops the run with an error naming those rows' files and lines, found again in the files
ExampleGen read (`input_rows.find_rows`).
`window_report.json` in the output artifact counts series, rows, windows per split,
training segments and windows skipped, by reason, and gives the most steps one series
spans in all and in each split (`longest_*`), which the errors for a split without
windows quote, and where ExampleGen placed the eval start, which the Trainer records with
the model (`trainer_module.training_period`); `schema.window_report` reads it.

With `refit_splits`, Windowing also writes the split `refit`: training segments over the
rows of those splits taken as one period (every step, windows crossing their boundaries
included), which the refit Trainer trains on (`trainer_module.refit`).

With several spans (ExampleGen's `train_spans`), older spans' rows arrive in the training
split and are windowed with the newest span's, so windows may reach back across span
borders.
"""

import collections
import dataclasses
import json
import logging
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import apache_beam as beam
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
from tfx import types
from tfx.dsl.components.base import base_beam_component, base_beam_executor, executor_spec
from tfx.types import artifact_utils, standard_artifacts
from tfx.types.component_spec import ChannelParameter, ExecutionParameter

from common.exit_codes import InputError
from components import input_rows
from components import split_report
from components import window_builder, window_files
from schema.dataset_spec import DatasetSpec, DType, Role
from schema.time_split import TRAINING_SPLIT
from schema.window_report import EVAL_START, WINDOW_REPORT_FILE

REFIT_SPLIT = 'refit'  # the windows artifact's split of every row the refit trains on
SEGMENT_SPLITS = (TRAINING_SPLIT, REFIT_SPLIT)  # written as segments, series mixed

_FILE_PREFIX = 'windows'


class WindowingSpec(types.ComponentSpec):
  PARAMETERS = {
      'dataset_spec': ExecutionParameter(type=str),  # DatasetSpec.to_json()
      'strides': ExecutionParameter(type=str),  # JSON: split name -> stride in grid steps
      'sample_rates': ExecutionParameter(type=str),  # JSON: split name -> share kept
      'refit_splits': ExecutionParameter(type=str),  # JSON: splits the refit split covers
  }
  INPUTS = {
      'examples': ChannelParameter(type=standard_artifacts.Examples),  # raw rows
      'transform_graph': ChannelParameter(type=standard_artifacts.TransformGraph),
  }
  OUTPUTS = {'windows': ChannelParameter(type=standard_artifacts.Examples)}


class _TransformRows(beam.DoFn):
  """Applies Transform's graph to batches of raw serialized rows: (series key, RowChunk)
  for each series in a batch."""

  def __init__(self, transform_graph_uri: str, spec: DatasetSpec, split: str):
    self._uri = transform_graph_uri
    self._spec = spec
    self._split = split

  def setup(self):
    transform_output = tft.TFTransformOutput(self._uri)
    self._raw_feature_spec = transform_output.raw_feature_spec()
    self._transform = transform_output.transform_features_layer()

  def process(self, serialized_batch: List[bytes]):
    raw = tf.io.parse_example(tf.constant(serialized_batch), self._raw_feature_spec)
    transformed = {name: value.numpy() for name, value in self._transform(raw).items()}
    yield from window_builder.series_chunks(transformed, raw_row_values(raw, self._spec),
                                            self._spec, self._split)


def raw_row_values(raw: Dict[str, Any], spec: DatasetSpec) -> Dict[str, np.ndarray]:
  """Every column but the time, one value per row, as the windows hold them: bytes for
  a categorical (b'' if missing), a float for a real (NaN if missing).

  Args:
    raw: parsed raw rows, a dense [B] or [B, 1] tensor or a sparse [B, <=1] one per column.
    spec: the dataset spec.
  """
  values = {}
  for column in spec.columns:
    if column.role == Role.TIME:
      continue
    tensor = raw[column.name]
    categorical = column.dtype == DType.CATEGORICAL
    if isinstance(tensor, tf.SparseTensor):
      rows = tf.shape(tensor, out_type=tf.int64)[0]
      tensor = tf.sparse.to_dense(tf.sparse.reset_shape(tensor, [rows, 1]),
                                  default_value=b'' if categorical else float('nan'))
    column_values = tf.reshape(tensor, [-1]).numpy()
    values[column.name] = (column_values.astype(object) if categorical
                           else column_values.astype(float))
  return values


def _read_split(pipeline, examples_uri: str, split: str, transform_graph_uri: str,
                spec: DatasetSpec):
  """The transformed rows of one split of the raw examples."""
  pattern = os.path.join(examples_uri, f'Split-{split}', '*')
  step = f'[{examples_uri}][{split}]'
  return (pipeline
          | f'Read{step}' >> beam.io.ReadFromTFRecord(pattern)
          | f'Batch{step}' >> beam.BatchElements(min_batch_size=256, max_batch_size=4096)
          | f'Transform{step}' >> beam.ParDo(_TransformRows(transform_graph_uri, spec, split)))


def cut_series(item: Tuple[str, Iterable[window_builder.RowChunk]], spec: DatasetSpec,
               strides: Dict[str, int], sample_rates: Dict[str, float],
               input_files: Sequence[str] = (), refit_splits: Sequence[str] = ()
               ) -> Tuple[List[Tuple[str, window_files.SeriesWindows]], Dict[str, int]]:
  """One series' windows as (split, (series key, windows in time order)) per split,
  and the counts of `window_builder.build_windows`; training windows come as segments,
  and with `refit_splits` the refit split's too (`refit_rows`).

  Raises:
    ValueError: the rows cannot be windowed; rows named by time are also named by file
      and line in `input_files` (ExampleGen's), when found there.
  """
  key, rows = item
  rows = window_builder.RowChunk.of(rows)
  try:
    windows, counts = window_builder.build_windows(key, [rows], spec, strides, sample_rates,
                                                   segment_splits=(TRAINING_SPLIT,))
  except window_builder.RowsError as error:
    try:
      where = input_rows.find_rows(input_files, spec, key, error.times)
    except Exception as unreadable:  # pylint: disable=broad-except
      where = f' (their files could not be read again: {unreadable})'
    raise InputError(f'{error}{where}') from None
  if refit_splits:
    refit, refit_counts = window_builder.build_windows(
        key, [refit_rows(rows, refit_splits)], spec, {REFIT_SPLIT: strides[TRAINING_SPLIT]},
        {REFIT_SPLIT: sample_rates.get(TRAINING_SPLIT, 1.0)}, segment_splits=(REFIT_SPLIT,))
    windows += refit
    counts = {**counts, **{name: value for name, value in refit_counts.items()
                           if REFIT_SPLIT in name}}
  by_split = collections.defaultdict(list)
  for split, serialized in windows:
    by_split[split].append(serialized)
  return [(split, (key, split_windows)) for split, split_windows in by_split.items()], counts


def refit_rows(rows: window_builder.RowChunk,
               refit_splits: Sequence[str]) -> window_builder.RowChunk:
  """`rows` with those of `refit_splits` in the refit split (the others keep theirs, so
  that no refit window reaches into them)."""
  splits = np.where(np.isin(rows.splits.astype(str), list(refit_splits)), REFIT_SPLIT,
                    rows.splits).astype(object)
  return dataclasses.replace(rows, splits=splits)


def write_window_report(counts: Dict[str, int], path: str, splits: List[str],
                        spec: DatasetSpec, eval_start: Optional[str] = None) -> None:
  """Writes the counts of every series (`window_builder.sum_counts`), and the eval start
  if known, to `path`; raises ValueError naming the longest spans when a split has no
  windows."""
  report = {'windows': {split: counts.get(f'windows_{split}', 0) for split in splits}}
  if eval_start is not None:
    report[EVAL_START] = eval_start
  report.update({name: value for name, value in sorted(counts.items())
                 if not name.startswith('windows_') or 'skipped' in name})
  logging.info('Windowing report: %s', report)
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump(report, f, indent=2)
  window = (f'{spec.encoder_steps} history + {spec.horizon} forecast steps of the '
            f'{spec.frequency.value} grid')
  # No "see <path>": a failed run's outputs are removed.
  if counts.get('series_too_short', 0) == counts.get('series', 0):
    raise InputError(f'every series is shorter than one window: the longest spans '
                     f'{counts.get(window_builder.LONGEST_SERIES, 0)} steps, a window '
                     f'{window}. Use a shorter encoder or horizon, or more history')
  empty = [split for split in splits if report['windows'][split] == 0]
  if empty:
    # A training window lies in its split; another split needs only the forecast steps.
    spans = '; '.join(
        f'the longest {split} period of a series spans '
        f'{counts.get(window_builder.longest_period(split), 0)} steps; '
        + (f'a training window needs {window}' if split == TRAINING_SPLIT else
           f'a window needs its {spec.horizon} forecast steps in it, from a step divisible '
           f'by {spec.horizon}') for split in empty)
    gaps = counts.get('windows_skipped_gap', 0)
    gap_note = (f' {gaps} windows were skipped for gaps in the series: if the data has none, '
                "check that the spec's frequency is the data's time step." if gaps else '')
    raise InputError(f'no windows in splits {empty} ({spans}). A window needs its history '
                     'and horizon (E + H steps) without gaps; a training window lies before '
                     'eval_start, an eval or test window has its horizon inside its split '
                     '(its history may lie before it), starting on a step divisible by H: '
                     'move the split boundaries, or shorten the history or the horizon.'
                     f'{gap_note}')


class Executor(base_beam_executor.BaseBeamExecutor):
  """Builds the windows of every split in one Beam pipeline."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    examples = artifact_utils.get_single_instance(input_dict['examples'])
    transform_graph = artifact_utils.get_single_instance(input_dict['transform_graph'])
    windows = artifact_utils.get_single_instance(output_dict['windows'])
    splits = artifact_utils.decode_split_names(examples.split_names)
    windows.split_names = artifact_utils.encode_split_names(splits)
    spec = DatasetSpec.from_json(exec_properties['dataset_spec'])
    strides = json.loads(exec_properties['strides'])
    sample_rates = json.loads(exec_properties['sample_rates'])
    unknown = sorted((set(strides) | set(sample_rates)) - set(splits))
    if unknown:
      raise ValueError(f'strides or sample rates given for splits {unknown}, but the '
                       f'examples have splits {splits}')
    strides = {split: strides.get(split, 1) for split in splits}
    refit_splits = json.loads(exec_properties.get('refit_splits') or '[]')
    outside = sorted(set(refit_splits) - set(splits))
    if outside:
      raise ValueError(f'refit splits {outside} are not splits of the examples ({splits})')
    if refit_splits:
      splits_written = splits + [REFIT_SPLIT]
      windows.split_names = artifact_utils.encode_split_names(splits_written)
    else:
      splits_written = splits
    eval_start = (split_report.read_split_report(examples.uri) or {}).get(
        split_report.BOUNDARIES, {}).get('eval_start')
    with self._make_beam_pipeline() as pipeline:
      rows = ([_read_split(pipeline, examples.uri, split, transform_graph.uri, spec)
               for split in splits]
              | 'AllRows' >> beam.Flatten())
      built = (rows | 'BySeries' >> beam.GroupByKey()
               | 'Cut' >> beam.Map(cut_series, spec, strides, sample_rates,
                                  split_report.files_read(examples.uri), refit_splits))
      _ = (built | 'Counts' >> beam.Map(lambda result: result[1])
           | 'SumCounts' >> beam.CombineGlobally(window_builder.sum_counts)
           | 'Report' >> beam.Map(write_window_report,
                                  os.path.join(windows.uri, WINDOW_REPORT_FILE),
                                  splits_written, spec, eval_start))
      series_windows = built | 'Windows' >> beam.FlatMap(lambda result: result[0])
      for split in splits_written:
        _ = (series_windows
             | f'Keep[{split}]' >> beam.Filter(lambda item, split=split: item[0] == split)
             | f'Series[{split}]' >> beam.Values()
             | f'Write[{split}]' >> window_files.WriteSeriesWindows(
                 os.path.join(windows.uri, f'Split-{split}', _FILE_PREFIX),
                 mix=split in SEGMENT_SPLITS))


class Windowing(base_beam_component.BaseBeamComponent):
  """Cuts transformed rows into fixed-length windows per series and split."""

  SPEC_CLASS = WindowingSpec
  EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

  def __init__(self, examples: types.BaseChannel, transform_graph: types.BaseChannel,
               dataset_spec: DatasetSpec, strides: Dict[str, int],
               sample_rates: Optional[Dict[str, float]] = None,
               refit_splits: Sequence[str] = ()):
    """Args:
      examples: the raw examples (ExampleGen's output).
      transform_graph: Transform's graph, applied to every row.
      dataset_spec: gives the window shape, time grid and features.
      strides: forecast-start stride per split in grid steps (default 1 for others).
      sample_rates: share of windows kept per split, in (0, 1] (default 1).
      refit_splits: the splits whose rows the refit split covers; none: no refit split.
    """
    sample_rates = sample_rates or {}
    bad = {split: stride for split, stride in strides.items() if int(stride) < 1}
    bad.update({split: rate for split, rate in sample_rates.items() if not 0 < rate <= 1})
    if bad:
      raise ValueError(f'strides must be at least 1 and sample rates in (0, 1], got {bad}')
    super().__init__(spec=WindowingSpec(
        examples=examples, transform_graph=transform_graph,
        dataset_spec=dataset_spec.to_json(), strides=json.dumps(strides),
        sample_rates=json.dumps(sample_rates), refit_splits=json.dumps(list(refit_splits)),
        windows=types.Channel(type=standard_artifacts.Examples)))
