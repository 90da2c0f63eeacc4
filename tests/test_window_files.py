"""Window files: sorted by series key and time, the same whatever order Beam delivers."""

import glob
import os
import random

import apache_beam as beam
import pytest
import tensorflow as tf

from components import window_files


def _series(count: int, windows_each: int):
  """(key, windows) per series; a window's bytes name its series and position."""
  return [(f'series_{index:03d}', [f'series_{index:03d}|{t:04d}'.encode()
                                   for t in range(windows_each)])
          for index in range(count)]


def _read(path: str):
  return [record.numpy() for record in tf.data.TFRecordDataset(path, compression_type='GZIP')]


def _write_with_beam(series, directory, max_shard_bytes):
  with beam.Pipeline() as pipeline:
    _ = (pipeline
         | beam.Create(series, reshuffle=True)
         | window_files.WriteSeriesWindows(os.path.join(directory, 'windows'),
                                           max_shard_bytes=max_shard_bytes))
  return sorted(glob.glob(os.path.join(directory, '*')))


def test_plan_cuts_series_in_key_order_into_shards_within_the_bound():
  plan = window_files.plan_shards([('c', 40), ('a', 60), ('d', 150), ('b', 30), ('e', 10)],
                                  max_shard_bytes=100)
  # a+b fit (90), c would overflow; d alone exceeds the bound and gets a shard of its own.
  assert plan == {'a': (0, 4), 'b': (0, 4), 'c': (1, 4), 'd': (2, 4), 'e': (3, 4)}


def test_plan_of_no_series_is_empty():
  assert window_files.plan_shards([], max_shard_bytes=100) == {}


def test_shards_hold_series_in_key_order_whatever_the_input_order(tmp_path):
  series = _series(count=30, windows_each=20)  # 30 x 20 windows of 15 bytes: 9000 bytes
  shuffled = list(series)
  random.Random(5).shuffle(shuffled)
  first = _write_with_beam(list(reversed(series)), str(tmp_path / 'first'), 2000)
  second = _write_with_beam(shuffled, str(tmp_path / 'second'), 2000)

  names = [os.path.basename(path) for path in first]
  assert names == [os.path.basename(path) for path in second]
  assert names == [f'windows-{index:05d}-of-00005.gz' for index in range(5)]
  for path_a, path_b in zip(first, second):
    with open(path_a, 'rb') as a, open(path_b, 'rb') as b:
      assert a.read() == b.read(), f'{os.path.basename(path_a)} differs between the runs'
  records = [record for path in first for record in _read(path)]
  assert records == [window for _, windows in series for window in windows]


def test_write_shard_publishes_only_a_complete_file(tmp_path):
  prefix = str(tmp_path / 'windows')
  path, written = window_files.write_shard((1, 3), _series(2, 4), prefix)
  assert (os.path.basename(path), written) == ('windows-00001-of-00003.gz', 8)
  assert os.listdir(tmp_path) == ['windows-00001-of-00003.gz']

  def failing_windows():
    yield b'window'
    raise OSError('disk full')

  with pytest.raises(OSError, match='disk full'):
    window_files.write_shard((2, 3), [('series_a', failing_windows())], prefix)
  assert os.listdir(tmp_path) == ['windows-00001-of-00003.gz']  # no partial file left
