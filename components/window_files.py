"""Writes a split's windows as gzipped TFRecord shards whose content depends on the data alone.

Beam leaves the order of a PCollection to the runner: written with `WriteToTFRecord`, the
windows of many series come out in another order from run to run, and a seeded Trainer,
which shuffles through a buffer, then sees other batches. Here a split's series are
sorted by key and cut into contiguous shards of about `max_shard_bytes` of serialized
windows; shard i's file holds its series in key order, each series' windows in the
order given (time order, from `window_builder`). Read in file-name order, a split is
sorted by series key, on any runner.
"""

import logging
import os
import uuid
from typing import Dict, Iterable, List, Tuple

import apache_beam as beam
import tensorflow as tf

DEFAULT_MAX_SHARD_BYTES = 256 << 20

SeriesWindows = Tuple[str, List[bytes]]  # series key, its serialized windows in order
Shard = Tuple[int, int]  # (index, count)


def plan_shards(series_sizes: Iterable[Tuple[str, int]],
                max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES) -> Dict[str, Shard]:
  """Series key -> (shard index, shard count) for series of the given serialized sizes.

  Series are taken in key order and a shard is closed before it would exceed
  `max_shard_bytes`; a series bigger than that gets a shard of its own.
  """
  index_of, index, filled = {}, 0, 0
  for key, size in sorted(series_sizes):
    if filled and filled + size > max_shard_bytes:
      index, filled = index + 1, 0
    index_of[key] = index
    filled += size
  count = index + 1
  return {key: (shard, count) for key, shard in index_of.items()}


def shard_path(file_prefix: str, shard: Shard) -> str:
  index, count = shard
  return f'{file_prefix}-{index:05d}-of-{count:05d}.gz'


def write_shard(shard: Shard, series: Iterable[SeriesWindows], file_prefix: str
                ) -> Tuple[str, int]:
  """Writes one shard's series in key order; returns (path, windows written).

  The file appears under its final name only once complete, and a failed write removes
  its partial file, so a retried or failed write leaves no half-written shard behind.
  """
  path = shard_path(file_prefix, shard)
  partial = f'{path}.partial-{uuid.uuid4().hex}'
  written = 0
  tf.io.gfile.makedirs(os.path.dirname(path))
  try:
    with tf.io.TFRecordWriter(partial, options='GZIP') as writer:
      for _, windows in sorted(series, key=lambda item: item[0]):
        for serialized in windows:
          writer.write(serialized)
          written += 1
  except BaseException:
    tf.io.gfile.remove(partial)
    raise
  tf.io.gfile.rename(partial, path, overwrite=True)
  logging.info('Wrote %d windows to %s', written, path)
  return path, written


def _series_size(series: SeriesWindows) -> Tuple[str, int]:
  key, windows = series
  return key, sum(len(serialized) for serialized in windows)


@beam.ptransform_fn
def WriteSeriesWindows(series: beam.PCollection, file_prefix: str,  # pylint: disable=invalid-name
                       max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES) -> beam.PCollection:
  """Writes (series key, windows) elements, one per series, as ordered shards.

  Returns:
    (path, windows written) per shard file.
  """
  plan = beam.pvalue.AsSingleton(
      series
      | 'Sizes' >> beam.Map(_series_size)
      | 'AllSizes' >> beam.combiners.ToList()
      | 'Plan' >> beam.Map(plan_shards, max_shard_bytes))
  return (series
          | 'ToShard' >> beam.Map(lambda item, plan: (plan[item[0]], item), plan)
          | 'ByShard' >> beam.GroupByKey()
          | 'Write' >> beam.Map(lambda item: write_shard(*item, file_prefix)))
