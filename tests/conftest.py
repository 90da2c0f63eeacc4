"""Shared fixtures: a pipeline runner here; the Trainer's tiny inputs and an exported
model in `tests/fixtures` (registered below, so that every test reaches them)."""

import collections
import os

# Each pytest-xdist worker gets its share of the cores for its thread pools, OpenMP's
# (LightGBM's fits) and TensorFlow's, set before either starts. With every worker's pools
# as wide as the machine, the workers' threads waited for each other: on 2 cores with the
# other core busy, a LightGBM fit took 3.4 s against 2.3 s with one thread
# (`benchmarks.worker_threads`, benchmarks/pages/dev_loop.md). A value already in the
# environment is kept.
_WORKERS = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1'))
if _WORKERS > 1:
  for _variable in ('OMP_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS'):
    os.environ.setdefault(_variable, str(max(1, (os.cpu_count() or 1) // _WORKERS)))

# Before TensorFlow loads (tfx below loads it): the tests run the kernels users get.
from common import cpu_kernels

cpu_kernels.prefer_onednn()

import pytest  # pylint: disable=wrong-import-position
from tfx import v1 as tfx  # pylint: disable=wrong-import-position

from pipeline import run_summary
from pipeline.local_runner import BEAM_ARGS
from pipeline.pipeline import create_pipeline

pytest_plugins = ('tests.fixtures.trainer_inputs', 'tests.fixtures.exported_model')


@pytest.fixture(scope='session')
def run_pipeline():
  """Runs `create_pipeline(config)` with LocalDagRunner (Beam in process unless
  `beam_pipeline_args` say otherwise); returns the run's summary."""

  def run(config, beam_pipeline_args=BEAM_ARGS):
    metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
        os.path.join(os.path.dirname(config.pipeline_root), 'metadata.sqlite'))
    try:
      tfx.orchestration.LocalDagRunner().run(create_pipeline(
          config, metadata_connection_config=metadata, beam_pipeline_args=beam_pipeline_args))
    finally:
      run.last_metadata = metadata
    return run_summary.latest_run_summary(metadata, config.pipeline_name)

  return run


def pytest_collection_modifyitems(items):
  """Files with slow tests first, the costliest first (`pytest.mark.slow(seconds=N)`: the
  file's worker time), then the others, those with the most tests first; each file's tests
  in their own order. With `--no-loadscope-reorder` (the Makefile) xdist hands out files
  in this order, so a long file never starts last while the other worker idles: the
  fast files fill in at the end."""
  tests_in = collections.Counter(item.path for item in items)
  file_order = {}
  for item in items:
    slow = item.get_closest_marker('slow')
    key = (0, -slow.kwargs.get('seconds', 0)) if slow else (1, 0)
    file_order[item.path] = min(key, file_order.get(item.path, key))
  items.sort(key=lambda item: (*file_order[item.path], -tests_in[item.path]))
