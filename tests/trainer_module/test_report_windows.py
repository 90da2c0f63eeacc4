"""What `tft-report` reads as windows, and what it says of files that are not
(`trainer_module.interpretation.read_windows`)."""

import pytest
import tensorflow as tf

from schema.window_layout import WINDOW_MASK
from trainer_module import interpretation


def _write(path, example: tf.train.Example) -> str:
  with tf.io.TFRecordWriter(str(path), options='GZIP') as writer:
    writer.write(example.SerializeToString())
  return str(path)


def test_windows_are_read_in_file_order_up_to_the_limit(tmp_path):
  examples = [tf.train.Example() for _ in range(3)]
  for number, example in enumerate(examples):
    example.features.feature['n'].int64_list.value.append(number)
  with tf.io.TFRecordWriter(str(tmp_path / 'w.gz'), options='GZIP') as writer:
    for example in examples:
      writer.write(example.SerializeToString())
  read = interpretation.read_windows([str(tmp_path / '*.gz')], max_windows=2)
  assert read == [example.SerializeToString() for example in examples[:2]]


def test_a_pattern_under_a_windowing_output_of_another_id_names_those_there(tmp_path):
  windows = tmp_path / 'Windowing' / 'windows'
  for output in ('8', '15'):
    (windows / output / 'Split-eval').mkdir(parents=True)
  with pytest.raises(ValueError) as error:
    interpretation.read_windows([f'{windows}/<id>/Split-eval/*'])
  assert str(error.value).endswith(
      f'; {windows} holds the Windowing outputs 8, 15: e.g. {windows}/15/Split-eval/*')


def test_a_file_that_is_not_windows_is_named(tmp_path):
  (tmp_path / 'data.csv').write_text('a,b\n1,2\n')
  with pytest.raises(ValueError, match=r'data.csv and the files with it are not the gzipped '
                     'TFRecords the Windowing component writes'):
    interpretation.read_windows([str(tmp_path / 'data.csv')])
  segment = tf.train.Example()
  segment.features.feature[WINDOW_MASK].int64_list.value.extend([1, 0])
  path = _write(tmp_path / 'segments.gz', segment)
  with pytest.raises(ValueError, match=r'holds training segments \(Split-train\), from which '
                     'the Trainer cuts its windows, not windows: pass Split-eval'):
    interpretation.read_windows([path])
