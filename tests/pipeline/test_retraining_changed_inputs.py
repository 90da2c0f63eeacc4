"""Retraining after the inputs change: a new series in the data, then a column given
another role in the spec.

After a new series the vocabularies differ (the new series, and the regions counted in
another order), and the last blessed model still scores the evaluation windows, through
their raw columns and its own Transform, so the regression rule applies. After a column
changed role it cannot read them: the Evaluator leaves it out, says why, and blesses on
the data set's other rules.
"""

import dataclasses
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
from trainer_module.export import SERVING_SIGNATURE

pytestmark = pytest.mark.slow  # runs a pipeline three times


@pytest.fixture(scope='module')
def three_runs(tmp_path_factory, run_pipeline):
  root = tmp_path_factory.mktemp('changed_inputs')
  spec = datasets.SYNTHETIC.with_window(encoder_steps=24, horizon=6)
  price_observed = dataclasses.replace(spec, columns=tuple(
      dataclasses.replace(c, role=Role.OBSERVED) if c.name == 'price' else c
      for c in spec.columns))
  split = datasets.get_dataset('synthetic').split

  def run(name, num_series, run_spec):
    data_root = root / f'data_{name}'
    default_data.generate(str(data_root / 'data.csv'), num_series=num_series, days=12, seed=2)
    return run_pipeline(PipelineConfig(
        pipeline_name='tft-changed-inputs', pipeline_root=str(root / 'pipeline_root'),
        data_root=str(data_root), serving_model_dir=str(root / 'serving'),
        dataset=run_spec, time_split=split,
        blessing=Blessing(beat_naive_by=None, max_mae=1e6, max_relative_regression=0.0),
        strides=default_strides(run_spec, split), train_steps=20,
        schema_file=datasets.curated_schema_path('synthetic'),
        model_overrides={'hidden_size': 8, 'batch_size': 32, 'max_epochs': 2}))

  runs = {'first': run('first', 3, spec), 'new_series': run('new_series', 4, spec),
          'new_role': run('new_role', 4, price_observed)}
  windowing = root / 'pipeline_root' / 'Windowing' / 'windows'
  runs['windows'] = [windowing / name for name in sorted(os.listdir(windowing), key=int)]
  return runs


def _median_mae(model_dir, windows_dir, horizon):
  """A model's MAE over a Windowing output's test windows (the judged ones), read through
  its serving signature, by hand."""
  serve = tf.saved_model.load(model_dir).signatures[SERVING_SIGNATURE]
  errors = []
  for batch in tf.data.TFRecordDataset(tf.io.gfile.glob(str(windows_dir / 'Split-test' / '*')),
                                       'GZIP').batch(64):
    actuals = tf.io.parse_example(batch, {
        TARGET_FUTURE: tf.io.FixedLenFeature([horizon], tf.float32)})[TARGET_FUTURE]
    errors.append(np.abs(serve(examples=batch)['p50'].numpy() - actuals.numpy()))
  return float(np.mean(np.concatenate(errors)))


def test_the_first_run_has_no_baseline_to_leave_out(three_runs):
  assert three_runs['first'].blessed is True
  assert three_runs['first'].baseline_left_out is None
  assert three_runs['first'].baseline_mae is None


def test_after_a_new_series_the_last_blessed_model_is_compared(three_runs):
  summary = three_runs['new_series']
  assert summary.baseline_left_out is None
  # The first run's model, read by hand on the second run's test windows.
  first_model = path_utils.serving_model_path(three_runs['first'].model_uri)
  assert summary.baseline_mae == pytest.approx(
      _median_mae(first_model, three_runs['windows'][1], horizon=6), rel=1e-4)
  # max_relative_regression is 0: blessed exactly when no worse than the last blessed model.
  mae = summary.metrics['mean_absolute_error']
  assert summary.blessed is (mae <= summary.baseline_mae)
  assert bool(summary.pushed_to) is summary.blessed
  assert ("the last blessed model's test MAE on the same windows: "
          f'{summary.baseline_mae:.4f}') in summary.format('root')


def test_a_column_given_another_role_leaves_the_last_blessed_model_out(three_runs):
  summary = three_runs['new_role']
  assert summary.baseline_left_out == ("the dataset spec changed ('price' known real -> "
                                       'observed real), so it cannot read the windows')
  assert summary.blessed is True and summary.baseline_mae is None
  assert ('without comparing the last blessed model, since the dataset spec changed' in
          summary.format('root'))
