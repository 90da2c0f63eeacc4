"""Window files: the same whatever order Beam delivers the series in; series in key and
time order, or (training) every series spread over all shards in a mixed order."""

import collections
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


def _write_with_beam(series, directory, max_shard_bytes, mix):
  with beam.Pipeline() as pipeline:
    _ = (pipeline
         | beam.Create(series, reshuffle=True)
         | window_files.WriteSeriesWindows(os.path.join(directory, 'windows'),
                                           max_shard_bytes=max_shard_bytes, mix=mix))
  return sorted(glob.glob(os.path.join(directory, '*')))


def _series_of(window: bytes) -> str:
  return window.decode().split('|')[0]


def test_plan_deals_series_in_key_order_to_the_least_filled_shard():
  plan = window_files.plan_shards([('c', 40), ('a', 60), ('d', 150), ('b', 30), ('e', 10)],
                                  max_shard_bytes=100)
  # 290 bytes: 3 shards. a, b, c open them; d goes to b's (30), e to c's (40).
  assert plan == {'a': (0, 3), 'b': (1, 3), 'c': (2, 3), 'd': (1, 3), 'e': (2, 3)}


def test_plan_gives_every_shard_a_series():
  assert window_files.plan_shards([('big', 500), ('small', 1)], max_shard_bytes=100) == {
      'big': (0, 2), 'small': (1, 2)}
  assert window_files.plan_shards([], max_shard_bytes=100) == {}


@pytest.mark.parametrize('mix', [False, True])
def test_shards_are_the_same_whatever_the_input_order(tmp_path, mix):
  series = _series(count=30, windows_each=20)  # 30 x 20 windows of 15 bytes: 9000 bytes
  shuffled = list(series)
  random.Random(5).shuffle(shuffled)
  first = _write_with_beam(list(reversed(series)), str(tmp_path / 'first'), 2000, mix)
  second = _write_with_beam(shuffled, str(tmp_path / 'second'), 2000, mix)

  names = [os.path.basename(path) for path in first]
  assert names == [os.path.basename(path) for path in second]
  assert names == [f'windows-{index:05d}-of-00005.gz' for index in range(5)]
  for path_a, path_b in zip(first, second):
    with open(path_a, 'rb') as a, open(path_b, 'rb') as b:
      assert a.read() == b.read(), f'{os.path.basename(path_a)} differs between the runs'
  assert sorted(record for path in first for record in _read(path)) == [
      window for _, windows in series for window in windows]


def test_unmixed_shards_hold_every_fifth_series_in_key_then_time_order(tmp_path):
  series = _series(count=30, windows_each=20)
  paths = _write_with_beam(series, str(tmp_path), 2000, mix=False)
  for index, path in enumerate(paths):
    assert _read(path) == [window for _, windows in series[index::5] for window in windows]


def test_mixed_shards_each_hold_a_share_of_every_series_in_a_mixed_order(tmp_path):
  series = _series(count=30, windows_each=20)
  for path in _write_with_beam(series, str(tmp_path), 2000, mix=True):
    records = _read(path)
    by_series = collections.Counter(_series_of(record) for record in records)
    assert by_series == {key: 4 for key, _ in series}  # 20 windows over 5 shards
    # In key order the first 20 windows would be five series; mixed, they come from many.
    assert len({_series_of(record) for record in records[:20]}) >= 10


def test_deal_windows_starts_at_the_series_shard_and_goes_round():
  plan = {'a': (2, 3)}
  assert window_files.deal_windows(('a', [b'0', b'1', b'2', b'3']), plan) == [
      ((0, 3), ('a', [b'1'])), ((1, 3), ('a', [b'2'])), ((2, 3), ('a', [b'0', b'3']))]


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
