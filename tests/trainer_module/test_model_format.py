"""The model format version: written by the export, checked before anything is read."""

import json

import pytest

from trainer_module import export, model_format


def test_a_written_format_reads_and_any_other_is_refused_with_the_fix(tmp_path):
  model_format.write(str(tmp_path))
  assert model_format.mismatch(str(tmp_path)) is None
  model_format.check(str(tmp_path))  # no error

  (tmp_path / model_format.FORMAT_FILE).write_text(json.dumps({'model_format': 0}))
  assert model_format.mismatch(str(tmp_path)) == (
      f'its {model_format.FORMAT_FILE} names model format 0, and this pipeline reads format '
      f'{model_format.VERSION}')
  (tmp_path / model_format.FORMAT_FILE).write_text('{"model_fo')  # a partial file
  assert 'names model format None' in model_format.mismatch(str(tmp_path))
  with pytest.raises(model_format.ModelFormatError) as raised:
    export.read_dataset_spec(str(tmp_path / 'older'))
  assert str(raised.value) == (
      f'the model in {tmp_path / "older"} cannot be read: it has no {model_format.FORMAT_FILE}: '
      'it was not exported by this pipeline, or by a version before model format '
      f'{model_format.VERSION}; train and export it again with this version (tft-pipeline '
      '--spec ...)')


def test_every_exported_model_records_the_format(exported, tiny):
  """The shared exported model (tests/fixtures) was saved by `export.save_model`."""
  assert model_format.mismatch(exported.model_dir) is None
  assert export.read_dataset_spec(exported.model_dir) == tiny.spec
