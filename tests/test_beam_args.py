"""The local runner's Beam arguments leave nothing behind in the temporary directory."""

import tempfile

from tfx.utils import dependency_utils

from pipeline.local_runner import BEAM_ARGS


def test_tfx_builds_no_package_of_itself_for_the_local_runner(tmp_path, monkeypatch):
  # Without a dependency flag, every Beam component's executor builds an sdist of TFX
  # (about 49 MB) into a new temporary directory and never deletes it.
  monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
  assert dependency_utils.make_beam_dependency_flags(BEAM_ARGS) == BEAM_ARGS
  assert list(tmp_path.iterdir()) == []
  # The same check sees the package built without the flag.
  assert dependency_utils.make_beam_dependency_flags(BEAM_ARGS[:2]) != BEAM_ARGS[:2]
  assert list(tmp_path.glob('*/build/tfx'))
