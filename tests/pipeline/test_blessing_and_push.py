"""A worse candidate never replaces a better blessed model; a better one does.

Three LocalDagRunner runs of one pipeline on the same data: a blessed model A, then a
candidate B trained for one step from scratch (worse), then a candidate C warm-started
from A and trained longer (better). The Evaluator compares each candidate with the last
blessed model (`max_relative_regression=0`).
"""

import filecmp
import os

import pytest
from tfx.utils import path_utils

from serving import model_publishing
from pipeline import default_data
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets

pytestmark = pytest.mark.slow  # runs a pipeline or trains a model


@pytest.fixture(scope='module')
def three_runs(tmp_path_factory, run_pipeline):
  root = tmp_path_factory.mktemp('blessing')
  default_data.generate(str(root / 'data' / 'data.csv'), num_series=3, days=12, seed=2)
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=6)
  split = datasets.get_dataset('synthetic').split

  def config(train_steps, warm_start=True):
    return PipelineConfig(
        pipeline_name='tft-blessing', pipeline_root=str(root / 'pipeline_root'),
        data_root=str(root / 'data'), serving_model_dir=str(root / 'serving'),
        dataset=spec, time_split=split,
        blessing=Blessing(beat_naive_by=None, max_mae=1e6, max_relative_regression=0.0),
        strides=default_strides(spec, split), train_steps=train_steps,
        schema_file=datasets.curated_schema_path('synthetic'),
        training_options={'warm_start': warm_start},
        model_overrides={'hidden_size': 8, 'batch_size': 32, 'max_epochs': 4})

  serving = str(root / 'serving')
  runs = {}
  for name, run_config in (('a', config(100)), ('b', config(1, warm_start=False)),
                           ('c', config(300))):
    summary = run_pipeline(run_config)
    runs[name] = (summary, model_publishing.versions(serving))
  return runs, serving


def test_the_first_model_is_blessed_and_pushed(three_runs):
  runs, serving = three_runs
  summary, versions = runs['a']
  assert summary.blessed is True and summary.not_blessed_because == []
  assert len(versions) == 1 and summary.pushed_to == os.path.join(serving, str(versions[0]))


def test_a_worse_candidate_is_not_blessed_and_not_pushed(three_runs):
  runs, _ = three_runs
  (first, first_versions), (worse, versions_after) = runs['a'], runs['b']
  assert worse.metrics['mean_absolute_error'] > first.metrics['mean_absolute_error']
  assert worse.blessed is False
  regression = (worse.metrics['mean_absolute_error'] - first.metrics['mean_absolute_error'])
  [reason] = worse.not_blessed_because
  assert reason == (f"the test MAE is {regression:.4g} above the last blessed model's, and the "
                    "rule is the MAE at most 1 times the last blessed model's "
                    '(max_relative_regression 0)')
  assert worse.pushed_to is None
  assert versions_after == first_versions


def test_a_better_candidate_is_blessed_and_replaces_the_served_model(three_runs):
  runs, serving = three_runs
  (first, first_versions), (better, versions_after) = runs['a'], runs['c']
  assert better.metrics['mean_absolute_error'] < first.metrics['mean_absolute_error']
  assert better.blessed is True
  assert len(versions_after) == 2 and versions_after[0] == first_versions[0]
  latest = model_publishing.latest_version_dir(serving)
  assert better.pushed_to == latest
  trained = path_utils.serving_model_path(better.model_uri)
  assert filecmp.cmp(os.path.join(trained, 'saved_model.pb'),
                     os.path.join(latest, 'saved_model.pb'), shallow=False)
