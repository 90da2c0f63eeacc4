"""A file written whole (`common.whole_files`): the old one or the new one, never half, with
the mode of the one it replaces, through a symbolic link."""

import os
import stat

import pytest

from common import whole_files


def test_the_output_is_written_whole_or_left_as_it_was(tmp_path):
  path = tmp_path / 'forecasts.csv'
  whole_files.write_whole(str(path), lambda f: f.write('a,b\n1,2\n'))
  assert path.read_text() == 'a,b\n1,2\n'

  def fail_halfway(f):
    f.write('c,d\n')
    raise OSError(28, 'No space left on device')
  with pytest.raises(OSError):
    whole_files.write_whole(str(path), fail_halfway)
  assert path.read_text() == 'a,b\n1,2\n'  # the earlier forecasts, whole
  assert sorted(p.name for p in tmp_path.iterdir()) == ['forecasts.csv']  # nothing left over


def test_the_output_keeps_its_mode_and_is_written_through_a_link(tmp_path):
  umask = os.umask(0o022)
  try:
    fresh = tmp_path / 'fresh.csv'
    whole_files.write_whole(str(fresh), lambda f: f.write('a\n'))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # as open() would make it
    fresh.chmod(0o640)
    whole_files.write_whole(str(fresh), lambda f: f.write('b\n'))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640
  finally:
    os.umask(umask)
  link = tmp_path / 'latest.csv'
  link.symlink_to(fresh)
  whole_files.write_whole(str(link), lambda f: f.write('c\n'))
  assert link.is_symlink() and fresh.read_text() == 'c\n'
