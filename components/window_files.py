"""Writes a split's windows as gzipped TFRecord shards whose content depends on the data alone.

Beam leaves the order of a PCollection to the runner: written with `WriteToTFRecord`, the
windows of many series come out in another order from run to run, and a seeded Trainer,
which shuffles through a buffer, then sees other batches. Here the files depend on the
data alone, on any runner. A split of about N x `max_shard_bytes` of serialized windows
gets N shards, and its series are dealt in key order to the least-filled shard. Then:

- by default a shard's file holds its series in key order, each series' windows in the
  order given (time order, from `window_builder`);
- with `mix` (training), each series' windows are dealt in turn to all N shards, starting
  at the series' own, and each file holds its share of every series in a fixed
  pseudo-random order. Read one file after the other through a shuffle buffer much
  smaller than the split, every stretch of batches still comes from all series, where
  series-ordered files would give it a few neighbouring series at a time.
"""

import heapq
import logging
import math
import os
import random
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

  The count is the total size over `max_shard_bytes`, rounded up (at most one shard per
  series); series are taken in key order, each to the least-filled shard (the lowest
  index on a tie), so every shard spans the key range and holds at most one series more
  than the bound.
  """
  sizes = sorted(series_sizes)
  count = min(len(sizes), math.ceil(sum(size for _, size in sizes) / max_shard_bytes))
  shards = [(0, index) for index in range(count)]  # a heap of (bytes filled, index)
  plan = {}
  for key, size in sizes:
    filled, index = heapq.heappop(shards)
    plan[key] = (index, count)
    heapq.heappush(shards, (filled + size, index))
  return plan


def shard_path(file_prefix: str, shard: Shard) -> str:
  index, count = shard
  return f'{file_prefix}-{index:05d}-of-{count:05d}.gz'


def write_shard(shard: Shard, series: Iterable[SeriesWindows], file_prefix: str,
                mix: bool = False) -> Tuple[str, int]:
  """Writes one shard's series in key order; returns (path, windows written).

  With `mix`, the shard's windows are written in a pseudo-random order seeded by the
  shard's index instead, the same for the same windows.

  The file appears under its final name only once complete, and a failed write removes
  its partial file, so a retried or failed write leaves no half-written shard behind.
  """
  path = shard_path(file_prefix, shard)
  partial = f'{path}.partial-{uuid.uuid4().hex}'
  written = 0
  tf.io.gfile.makedirs(os.path.dirname(path))
  try:
    with tf.io.TFRecordWriter(partial, options='GZIP') as writer:
      for serialized in _shard_order(shard, series, mix):
        writer.write(serialized)
        written += 1
  except BaseException:
    tf.io.gfile.remove(partial)
    raise
  tf.io.gfile.rename(partial, path, overwrite=True)
  logging.info('Wrote %d windows to %s', written, path)
  return path, written


def deal_windows(series: SeriesWindows, plan: Dict[str, Shard]
                 ) -> List[Tuple[Shard, SeriesWindows]]:
  """A series' windows dealt in turn to every shard, from the series' shard in `plan` on.

  Returns:
    (shard, (series key, that shard's windows in the order given)) per shard that gets any.
  """
  key, windows = series
  first, count = plan[key]
  dealt = [[] for _ in range(count)]
  for position, serialized in enumerate(windows):
    dealt[(first + position) % count].append(serialized)
  return [((index, count), (key, share)) for index, share in enumerate(dealt) if share]


def _shard_order(shard: Shard, series: Iterable[SeriesWindows], mix: bool
                 ) -> Iterable[bytes]:
  """The shard's windows in key then given order, or mixed in a fixed order."""
  ordered = (serialized for _, windows in sorted(series, key=lambda item: item[0])
             for serialized in windows)
  if not mix:
    return ordered
  mixed = list(ordered)
  random.Random(shard[0]).shuffle(mixed)
  return mixed


def _series_size(series: SeriesWindows) -> Tuple[str, int]:
  key, windows = series
  return key, sum(len(serialized) for serialized in windows)


@beam.ptransform_fn
def WriteSeriesWindows(series: beam.PCollection, file_prefix: str,  # pylint: disable=invalid-name
                       max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
                       mix: bool = False) -> beam.PCollection:
  """Writes (series key, windows) elements, one per series, as shards in a fixed order.

  `mix` spreads every series over all shards, each in a fixed pseudo-random order (for
  training; see the module docstring).

  Returns:
    (path, windows written) per shard file.
  """
  plan = beam.pvalue.AsSingleton(
      series
      | 'Sizes' >> beam.Map(_series_size)
      | 'AllSizes' >> beam.combiners.ToList()
      | 'Plan' >> beam.Map(plan_shards, max_shard_bytes))
  if mix:
    by_shard = series | 'DealWindows' >> beam.FlatMap(deal_windows, plan)
  else:
    by_shard = series | 'ToShard' >> beam.Map(lambda item, plan: (plan[item[0]], item), plan)
  return (by_shard
          | 'ByShard' >> beam.GroupByKey()
          | 'Write' >> beam.Map(lambda item: write_shard(*item, file_prefix, mix)))
