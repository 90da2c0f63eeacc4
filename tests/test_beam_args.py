"""The Beam arguments of every runner leave nothing behind in the temporary directory."""

import os
import tempfile

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from tfx.utils import dependency_utils

from kubeflow import deployment
from pipeline.local_runner import BEAM_ARGS, PROJECT_ROOT
from tests.kubeflow.conftest import make_deployment


@pytest.mark.parametrize('beam_args', [
    BEAM_ARGS,
    make_deployment().beam_pipeline_args(),
    make_deployment(dataflow=deployment.Dataflow()).beam_pipeline_args(),
], ids=['local', 'vertex-in-container', 'vertex-dataflow'])
def test_tfx_builds_no_package_of_itself(beam_args, tmp_path, monkeypatch):
  # Without a dependency flag, every Beam component's executor builds an sdist of TFX
  # (about 49 MB) into a new temporary directory and never deletes it.
  monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
  assert dependency_utils.make_beam_dependency_flags(beam_args) == beam_args
  assert list(tmp_path.iterdir()) == []


def test_without_a_dependency_flag_tfx_builds_the_package(tmp_path, monkeypatch):
  # The check above would see the package.
  monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
  assert dependency_utils.make_beam_dependency_flags(BEAM_ARGS[:2]) != BEAM_ARGS[:2]
  assert list(tmp_path.glob('*/build/tfx'))


def test_the_multi_process_direct_runner_stages_no_setup_file(tmp_path, monkeypatch):
  # As in a Vertex component's container, with this project's setup.py for the image's.
  monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
  in_container = make_deployment().beam_pipeline_args()
  args = [arg for arg in in_container if not arg.startswith('--setup_file=')]
  args += ['--direct_num_workers=2', f'--setup_file={os.path.join(PROJECT_ROOT, "setup.py")}']
  # Library transforms only: the worker processes cannot import the test module.
  with beam.Pipeline(options=PipelineOptions(args)) as pipeline:
    _ = (pipeline | beam.Create(range(100)) | beam.combiners.Count.Globally()
         | beam.io.WriteToText(str(tmp_path / 'count'), shard_name_template=''))

  assert (tmp_path / 'count').read_text() == '100\n'
  assert [path.name for path in tmp_path.iterdir()] == ['count']
