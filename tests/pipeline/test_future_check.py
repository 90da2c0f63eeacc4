"""What tft-pipeline checks of a --future file before the run (`pipeline.future_check`)."""

import dataclasses

import pytest

from pipeline import future_check, local_runner
from schema import datasets
from schema.dataset_spec import Role
from schema.time_split import TimeSplit, parse_timestamp
from serving import series_windows
from trainer_module import model_format
from trainer_module.export import DATASET_SPEC_FILE

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=3, horizon=2)
SPLIT = TimeSplit(eval_start=0.5)
HEADER = 'station,region,capacity,timestamp,load,price,temperature\n'


def _rows(station, first_hour, hours, load='1.5'):
  return ''.join(f'{station},north,50,2024-04-10 {hour:02d}:00:00,{load},1.0,\n'
                 for hour in range(first_hour, first_hour + hours))


def _files(tmp_path, data, future):
  (tmp_path / 'data.csv').write_text(HEADER + data)
  (tmp_path / 'future.csv').write_text(HEADER + future)
  path = str(tmp_path / 'future.csv')
  return (future_check.read(path, SPEC), path,
          future_check.DataFiles([str(tmp_path / 'data.csv')]))


def test_a_future_file_that_gives_every_series_its_steps_passes(tmp_path):
  future, path, files = _files(tmp_path, _rows('s1', 0, 5) + _rows('s2', 0, 5),
                               _rows('s1', 5, 2, load='') + _rows('s2', 5, 2, load=''))
  assert future_check.check_coverage(future, path, files, SPEC, SPLIT) is None


def test_a_future_file_written_for_an_earlier_end_of_the_data_stops_the_run(tmp_path):
  future, path, files = _files(tmp_path, _rows('s1', 0, 8) + _rows('s2', 0, 8),
                               _rows('s1', 5, 2, load='') + _rows('s2', 5, 2, load=''))
  with pytest.raises(future_check.FutureFileError) as error:
    future_check.check_coverage(future, path, files, SPEC, SPLIT)
  assert str(error.value) == (
      f"{path} gives no series of the data the 2 steps after its last row, e.g. series 's1': "
      "the known columns ['price'] have no values for 2 of the 2 steps after the last row "
      f'(2024-04-10 07:00:00), from 2024-04-10 08:00:00: add its rows at those steps to the '
      f'future file {path}. Was it written for an earlier end of the data? Update it, or '
      'leave --future out to train and publish a model without forecasts')


def test_a_series_the_future_file_misses_is_a_warning_and_one_ending_early_is_not_counted(
    tmp_path):
  # s3's rows end a horizon before the others': it is not forecast in any case.
  future, path, files = _files(
      tmp_path, _rows('s1', 0, 5) + _rows('s2', 0, 5) + _rows('s3', 0, 3),
      _rows('s1', 5, 2, load=''))
  assert future_check.check_coverage(future, path, files, SPEC, SPLIT) == (
      "1 of the 2 series of the data cannot be forecast with it, e.g. series 's2': the known "
      "columns ['price'] have no values for 2 of the 2 steps after the last row "
      f'(2024-04-10 04:00:00), from 2024-04-10 05:00:00: add its rows at those steps to the '
      f'future file {path}')


def test_the_rows_after_the_splits_end_are_not_the_datas_end(tmp_path):
  # Hours 0 to 9; 'end' at 0.8 of the range drops hours 8 and 9, as ExampleGen does: the
  # forecasts start after hour 7.
  future, path, files = _files(tmp_path, _rows('s1', 0, 10), _rows('s1', 8, 2, load=''))
  split = TimeSplit(eval_start=0.5, end=0.8)
  assert future_check.last_times(files, SPEC, split) == {'s1': parse_timestamp(
      '2024-04-10 07:00:00')}
  assert future_check.check_coverage(future, path, files, SPEC, split) is None
  with pytest.raises(future_check.FutureFileError):  # without it, the data ends at hour 9
    future_check.check_coverage(future, path, files, SPEC, SPLIT)


def test_a_data_file_examplegen_would_refuse_is_left_to_it(tmp_path):
  future, path, files = _files(tmp_path, _rows('s1', 0, 5), _rows('s1', 5, 2, load=''))
  (tmp_path / 'data.csv').write_text('station,timestamp\ns1,2024-04-10 00:00:00\n')
  with pytest.raises(ValueError, match=r"columns \['load'"):
    future_check.check_coverage(future, path, files, SPEC, SPLIT)


def test_the_files_the_run_reads_are_the_newest_spans(tmp_path):
  for span in (1, 2, 3):
    (tmp_path / f'span-{span}').mkdir()
    (tmp_path / f'span-{span}' / 'rows.csv').write_text(HEADER)
  assert future_check.data_files(str(tmp_path), 'span-{SPAN}/*.csv', 2) == (
      future_check.DataFiles(newest=[str(tmp_path / 'span-3' / 'rows.csv')],
                             older=[str(tmp_path / 'span-2' / 'rows.csv')]))
  assert future_check.data_files(str(tmp_path), 'span-1/*.csv', 1) == future_check.DataFiles(
      [str(tmp_path / 'span-1' / 'rows.csv')])


def test_the_run_stops_on_a_stale_future_file_before_any_component(tmp_path, capsys):
  data = tmp_path / 'data.csv'
  data.write_text(HEADER + _rows('station_00', 0, 20))
  (tmp_path / 'future.csv').write_text(HEADER + ''.join(
      f'station_00,north,50,2024-04-09 {hour:02d}:00:00,,1.0,\n' for hour in range(24)))
  argv = ['--data', str(data), '--future', str(tmp_path / 'future.csv'), '--output-dir',
          str(tmp_path / 'runs')]
  assert local_runner.main(argv) == 2
  assert capsys.readouterr().err.startswith(
      f"error: --future: {tmp_path / 'future.csv'} gives no series of the data the 24 steps")
  assert not (tmp_path / 'runs' / 'synthetic' / 'metadata.sqlite').exists()


def test_a_future_file_for_a_spec_without_known_columns_is_kept_while_the_published_model_reads_it(
    tmp_path):
  unused = future_check.unused_note
  spec = datasets.SYNTHETIC
  without_known = dataclasses.replace(spec, columns=tuple(
      dataclasses.replace(c, role=Role.OBSERVED) if c.role == Role.KNOWN else c
      for c in spec.columns))
  serving = tmp_path / 'serving_model'
  assert unused(spec, str(serving)) is None  # the spec reads it
  assert unused(without_known, str(serving)) == (
      f'warning: --future: {series_windows.future_file_unused(without_known)}')  # none published
  version = serving / '1700000000'
  (version / 'assets.extra').mkdir(parents=True)
  (version / 'saved_model.pb').write_bytes(b'')
  (version / DATASET_SPEC_FILE).write_text(spec.to_json())  # 'price' known
  model_format.write(str(version))
  assert unused(without_known, str(serving)) == (
      "[pipeline] --future: the spec declares no known column now, but the published model "
      "reads ['price'] from the future file, and forecasts if the new model is not blessed: "
      'keep the file until a model of this spec is published')
  (version / DATASET_SPEC_FILE).write_text(without_known.to_json())
  assert unused(without_known, str(serving)).startswith('warning: --future: ')
