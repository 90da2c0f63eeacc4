"""The Beam arguments of every runner leave nothing behind in the temporary directory."""

import os
import tempfile

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from tfx.utils import dependency_utils

from kubeflow import deployment
from pipeline import local_runner
from pipeline.local_runner import BEAM_ARGS, PROJECT_ROOT
from tests.kubeflow.conftest import make_deployment


@pytest.mark.parametrize('beam_args', [
    BEAM_ARGS,
    local_runner.beam_args(workers=2),
    make_deployment().beam_pipeline_args(),
    make_deployment(dataflow=deployment.Dataflow()).beam_pipeline_args(),
], ids=['local', 'local-beam-workers', 'vertex-in-container', 'vertex-dataflow'])
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


def test_beam_workers_choose_the_multi_process_runner_as_vertex_runs_it():
  assert local_runner.beam_args() == BEAM_ARGS
  multi = local_runner.beam_args(workers=3)
  in_container = make_deployment().beam_pipeline_args()
  assert multi[:2] == ['--direct_running_mode=multi_processing', '--direct_num_workers=3']
  assert in_container[0] == multi[0]  # the mode Vertex AI runs without Dataflow
  assert multi[2:] == [arg for arg in BEAM_ARGS if not arg.startswith('--direct_')]
  assert local_runner.describe_beam(None) == 'Beam in process'
  assert local_runner.describe_beam(1) == 'Beam in 1 worker process'
  assert local_runner.describe_beam(0) == f'Beam in {os.cpu_count()} worker processes'


def test_a_negative_worker_count_is_refused_before_anything_runs(tmp_path, capsys):
  code = local_runner.main(['--beam-workers', '-1', '--output-dir', str(tmp_path)])

  assert code == 2
  assert '--beam-workers must be 0 (one per core) or more, got -1' in capsys.readouterr().err
  assert list(tmp_path.iterdir()) == []
