"""Chunks of serialized records written as a split's gzipped TFRecord files."""

import glob
import os

import apache_beam as beam
import tensorflow as tf

from components import record_chunks


def test_every_record_of_every_chunk_is_written_once_as_gzipped_tfrecords(tmp_path):
  chunks = [[f'chunk{c}|row{r}'.encode() * (r + 1) for r in range(c * 7)] for c in range(6)]
  with beam.Pipeline() as pipeline:
    _ = (pipeline | beam.Create(chunks, reshuffle=True)
         | record_chunks.WriteRecordChunks(str(tmp_path / 'Split-train')))
  files = glob.glob(str(tmp_path / 'Split-train' / '*'))
  assert files and all(os.path.basename(path).startswith('data_tfrecord-')
                       and path.endswith('.gz') for path in files)
  records = [record.numpy() for record in tf.data.TFRecordDataset(files, 'GZIP')]
  assert sorted(records) == sorted(record for chunk in chunks for record in chunk)
  for chunk in chunks[1:]:  # a chunk's records stay together and in order
    start = records.index(chunk[0])
    assert records[start:start + len(chunk)] == chunk
