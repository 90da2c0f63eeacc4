"""Writes chunks of serialized records as a split's gzipped TFRecord files.

TFX's `WriteSplit` takes one element per example: it serializes, reshuffles and writes
each on its own, and on the in-process runner that per-example work is most of an
ExampleGen's time once reading is done a chunk at a time. Here each element is a chunk of
already serialized records, written in one go through Beam's file sink: the same files
(`data_tfrecord-SSSSS-of-NNNNN.gz`, TFRecord framing, gzip), written to temporary files and
moved into place only when the write completes, on any runner.

The rows keep their order within a chunk; chunks come in the runner's order. No consumer
of an ExampleGen's splits depends on their order.
"""

import os
from typing import List

import apache_beam as beam
from apache_beam.io import filebasedsink, tfrecordio
from apache_beam.io.filesystem import CompressionTypes
from tfx.components.example_gen import write_split

FILE_PREFIX = write_split.DEFAULT_TF_RECORD_FILE_NAME
FILE_SUFFIX = '.gz'


class _RecordChunkSink(filebasedsink.FileBasedSink):
  """A file sink whose records are lists of serialized records, each framed as TFRecord."""

  def __init__(self, file_path_prefix: str):
    super().__init__(file_path_prefix=file_path_prefix, coder=None,
                     file_name_suffix=FILE_SUFFIX, num_shards=0, shard_name_template=None,
                     mime_type='application/octet-stream',
                     compression_type=CompressionTypes.GZIP)

  def write_record(self, file_handle, value: List[bytes]) -> None:
    for record in value:  # Beam's own TFRecord framing (private in Beam 2.61)
      tfrecordio._TFRecordUtil.write_record(file_handle, record)  # pylint: disable=protected-access


@beam.ptransform_fn
def WriteRecordChunks(chunks: beam.PCollection, split_dir: str  # pylint: disable=invalid-name
                      ) -> beam.pvalue.PDone:
  """Writes every record of `chunks` (lists of serialized records) under `split_dir`."""
  return chunks | 'Write' >> beam.io.Write(
      _RecordChunkSink(os.path.join(split_dir, FILE_PREFIX)))
