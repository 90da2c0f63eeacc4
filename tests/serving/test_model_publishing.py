"""Publishing versions into a serving directory: growing versions, never half-copied."""

import os

import pytest

from serving import model_publishing


def _saved_model(path, marker='a'):
  os.makedirs(os.path.join(path, 'variables'))
  with open(os.path.join(path, 'variables', 'variables.index'), 'w') as f:
    f.write(marker)
  with open(os.path.join(path, 'saved_model.pb'), 'w') as f:
    f.write(marker)
  return str(path)


def test_versions_grow_even_within_one_second(tmp_path):
  model = _saved_model(tmp_path / 'model')
  base = str(tmp_path / 'serving')
  first = model_publishing.publish(model, base, clock=lambda: 1000.9)
  second = model_publishing.publish(model, base, clock=lambda: 1000.2)
  assert [os.path.basename(first), os.path.basename(second)] == ['1000', '1001']
  assert model_publishing.versions(base) == [1000, 1001]
  assert model_publishing.latest_version_dir(base) == second
  assert open(os.path.join(second, 'variables', 'variables.index')).read() == 'a'


def test_a_reader_never_sees_a_half_copied_version(tmp_path, monkeypatch):
  model = _saved_model(tmp_path / 'model')
  base = str(tmp_path / 'serving')
  model_publishing.publish(model, base, clock=lambda: 5)
  seen_during_copy = []
  real_copy = model_publishing.io_utils.copy_dir

  def observing_copy(source, destination, *args, **kwargs):
    real_copy(source, destination, *args, **kwargs)
    # The copy is complete but not yet renamed: what would a reader find now?
    seen_during_copy.append((sorted(os.listdir(base)),
                             model_publishing.latest_version_dir(base)))

  monkeypatch.setattr(model_publishing.io_utils, 'copy_dir', observing_copy)
  published = model_publishing.publish(model, base, clock=lambda: 9)
  [(entries, latest)] = seen_during_copy
  assert '9' not in entries and latest == os.path.join(base, '5')
  assert [e for e in entries if e.startswith('.')]  # the staged copy is hidden
  assert published == os.path.join(base, '9')
  assert sorted(os.listdir(base)) == ['5', '9']  # staging removed


def test_a_failed_copy_leaves_no_version_and_no_staging(tmp_path, monkeypatch):
  model = _saved_model(tmp_path / 'model')
  base = str(tmp_path / 'serving')

  def failing_copy(source, destination, *args, **kwargs):
    os.makedirs(destination)
    raise OSError('disk full')

  monkeypatch.setattr(model_publishing.io_utils, 'copy_dir', failing_copy)
  with pytest.raises(OSError, match='disk full'):
    model_publishing.publish(model, base, clock=lambda: 7)
  assert os.listdir(base) == []


def test_directories_without_a_saved_model_are_not_versions(tmp_path):
  base = tmp_path / 'serving'
  _saved_model(base / '12')
  os.makedirs(base / '13')  # being written by another tool: no saved_model.pb yet
  os.makedirs(base / 'notes')
  _saved_model(base / '.staging-x')
  assert model_publishing.versions(str(base)) == [12]
  assert model_publishing.latest_version_dir(str(tmp_path / 'missing')) is None


def test_publishing_a_directory_without_a_model_is_an_error(tmp_path):
  os.makedirs(tmp_path / 'empty')
  with pytest.raises(FileNotFoundError, match='saved_model.pb'):
    model_publishing.publish(str(tmp_path / 'empty'), str(tmp_path / 'serving'))
