"""Retraining: what the last blessed model decides, run after run.

Five LocalDagRunner runs of one pipeline: a blessed model A; a candidate B trained for one
step from scratch (worse), never replacing A; a candidate C warm-started from A and trained
longer (better), replacing it; then data with a new series, where the vocabularies differ
(the new series, and the regions counted in another order) but the last blessed model (C)
still scores the windows, through their raw columns and its own Transform, so the
regression rule applies; then a spec that gives a column another role, whose windows the
last blessed model cannot read: the Evaluator leaves it out, says why, and blesses on the
data set's other rules. Each candidate is compared with the last blessed model
(`max_relative_regression=0`).
"""

import dataclasses
import filecmp
import os

import numpy as np
import pytest
import tensorflow as tf
from tfx.utils import path_utils

from pipeline import default_data
from pipeline.config import Blessing, PipelineConfig, default_strides
from schema import datasets
from schema.dataset_spec import Role
from schema.window_layout import TARGET_FUTURE
from serving import model_publishing
from trainer_module.export import SERVING_SIGNATURE

pytestmark = pytest.mark.slow(seconds=340)  # runs a pipeline five times

HORIZON = 6


@pytest.fixture(scope='module')
def runs(tmp_path_factory, run_pipeline):
  """Each run's summary and the serving directory's versions after it, by name; the
  Windowing outputs in run order under 'windows'; the serving directory under 'serving'."""
  root = tmp_path_factory.mktemp('retraining')
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=HORIZON)
  price_observed = dataclasses.replace(spec, columns=tuple(
      dataclasses.replace(c, role=Role.OBSERVED) if c.name == 'price' else c
      for c in spec.columns))
  split = datasets.get_dataset('synthetic').split
  serving = str(root / 'serving')

  def run(data, num_series, run_spec=spec, train_steps=20, warm_start=True):
    data_root = root / f'data_{data}'
    if not data_root.exists():
      default_data.generate(str(data_root / 'data.csv'), num_series=num_series, days=12,
                            seed=2)
    summary = run_pipeline(PipelineConfig(
        pipeline_name='tft-retraining', pipeline_root=str(root / 'pipeline_root'),
        data_root=str(data_root), serving_model_dir=serving,
        dataset=run_spec, time_split=split,
        blessing=Blessing(beat_naive_by=None, max_mae=1e6, max_relative_regression=0.0),
        strides=default_strides(run_spec, split), train_steps=train_steps,
        schema_file=datasets.curated_schema_path('synthetic'),
        training_options={'warm_start': warm_start},
        model_overrides={'hidden_size': 8, 'batch_size': 32, 'max_epochs': 4}))
    return summary, model_publishing.versions(serving)

  done = {'a': run('three', 3, train_steps=100),
          'b': run('three', 3, train_steps=1, warm_start=False),
          'c': run('three', 3, train_steps=300),
          'new_series': run('four', 4),
          'new_role': run('four', 4, run_spec=price_observed)}
  windowing = root / 'pipeline_root' / 'Windowing' / 'windows'
  done['windows'] = [windowing / name for name in sorted(os.listdir(windowing), key=int)]
  done['serving'] = serving
  return done


def test_the_first_model_is_blessed_and_pushed_with_no_baseline_to_leave_out(runs):
  summary, versions = runs['a']
  assert summary.blessed is True and summary.not_blessed_because == []
  assert len(versions) == 1 and summary.pushed_to == os.path.join(runs['serving'],
                                                                  str(versions[0]))
  assert summary.baseline_left_out is None and summary.baseline_mae is None


def test_a_worse_candidate_is_not_blessed_and_not_pushed(runs):
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


def test_a_better_candidate_is_blessed_and_replaces_the_served_model(runs):
  (first, first_versions), (better, versions_after) = runs['a'], runs['c']
  assert better.metrics['mean_absolute_error'] < first.metrics['mean_absolute_error']
  assert better.blessed is True
  assert len(versions_after) == 2 and versions_after[0] == first_versions[0]
  latest = os.path.join(runs['serving'], str(versions_after[-1]))
  assert better.pushed_to == latest
  trained = path_utils.serving_model_path(better.model_uri)
  assert filecmp.cmp(os.path.join(trained, 'saved_model.pb'),
                     os.path.join(latest, 'saved_model.pb'), shallow=False)


def _median_mae(model_dir, windows_dir):
  """A model's MAE over a Windowing output's test windows (the judged ones), read through
  its serving signature, by hand."""
  serve = tf.saved_model.load(model_dir).signatures[SERVING_SIGNATURE]
  errors = []
  for batch in tf.data.TFRecordDataset(tf.io.gfile.glob(str(windows_dir / 'Split-test' / '*')),
                                       'GZIP').batch(64):
    actuals = tf.io.parse_example(batch, {
        TARGET_FUTURE: tf.io.FixedLenFeature([HORIZON], tf.float32)})[TARGET_FUTURE]
    errors.append(np.abs(serve(examples=batch)['p50'].numpy() - actuals.numpy()))
  return float(np.mean(np.concatenate(errors)))


def test_after_a_new_series_the_last_blessed_model_is_compared(runs):
  summary, _ = runs['new_series']
  assert summary.baseline_left_out is None
  # The last blessed model (C's), read by hand on this run's test windows (its fourth).
  last_blessed = path_utils.serving_model_path(runs['c'][0].model_uri)
  assert summary.baseline_mae == pytest.approx(
      _median_mae(last_blessed, runs['windows'][3]), rel=1e-4)
  # max_relative_regression is 0: blessed exactly when no worse than the last blessed model.
  mae = summary.metrics['mean_absolute_error']
  assert summary.blessed is (mae <= summary.baseline_mae)
  assert bool(summary.pushed_to) is summary.blessed
  assert ("the last blessed model's test MAE on the same windows: "
          f'{summary.baseline_mae:.4f}') in summary.format('root')


def test_a_column_given_another_role_leaves_the_last_blessed_model_out(runs):
  summary, _ = runs['new_role']
  assert summary.baseline_left_out == ("the dataset spec changed ('price' known real -> "
                                       'observed real), so it cannot read the windows')
  assert summary.blessed is True and summary.baseline_mae is None
  assert ('without comparing the last blessed model, since the dataset spec changed' in
          summary.format('root'))
