"""The trainer's parts without training: input pipeline, configs, chief, schedule, plan."""

import json
import math
import os
import types

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from components import window_builder
from schema import datasets
from schema.dataset_spec import Role
from schema.features import model_features, transformed_name
from schema.window_layout import step_value_names, window_feature_spec
from trainer_module import cluster, interval_calibration, train, training_plan, window_inputs
from schema import hparams
from trainer_module.tft.inputs import InputLayout, input_signature
from trainer_module.training_config import TrainingConfig


def test_dataset_batches_have_fully_static_shapes(tiny):
  batch = 8
  dataset = window_inputs.make_dataset(tiny.eval_files, tiny.spec, batch, shuffle=False,
                                       record_count=len(tiny.eval_windows))
  inputs, labels = dataset.element_spec

  for key, spec in input_signature(window_inputs.input_layout(
      tiny.spec, _transform_output(tiny)), batch).items():
    assert inputs[key].shape.is_fully_defined(), key
    assert inputs[key].shape == spec.shape and inputs[key].dtype == spec.dtype, key
  assert labels[window_inputs.QUANTILES_OUTPUT].shape == (batch, tiny.spec.horizon)


def test_a_finite_dataset_puts_every_window_in_a_whole_batch(tiny):
  count = len(tiny.eval_windows)
  batch = count // 2 + 1  # two batches; the second is filled up with the first windows
  dataset = window_inputs.make_dataset(tiny.eval_files, tiny.spec, batch, shuffle=False,
                                       record_count=count)

  seen = np.concatenate([labels[window_inputs.QUANTILES_OUTPUT].numpy()
                         for _, labels in dataset])

  assert dataset.cardinality() == 2  # Keras can see how many batches
  _, every_label = window_inputs.parse_windows(tf.constant(tiny.eval_windows), tiny.spec)
  first_again = every_label[:2 * batch - count]
  np.testing.assert_array_equal(seen, np.concatenate([every_label, first_again]))
  with pytest.raises(ValueError, match='finite dataset needs record_count'):
    window_inputs.make_dataset(tiny.eval_files, tiny.spec, batch, shuffle=False)


def test_one_window_in_k_keeps_every_phase_of_the_day(tiny):
  """The kept training windows' first forecast hours spread over the day: a segment's
  windows start at consecutive hours, so every k-th would keep a few hours only."""
  hours = lambda one_in: np.concatenate([
      inputs['known_categorical'][:, tiny.spec.encoder_steps, 0].numpy()  # hour of day
      for inputs, _ in window_inputs.windows_in_order(tiny.train_files, tiny.spec,
                                                      segments=True, one_in=one_in)])
  every_window, kept = hours(1), hours(4)
  assert len(every_window) / 6 < len(kept) < len(every_window) / 2.5
  assert len(set(every_window)) == 24
  assert len(set(kept)) >= 16 > len(set(every_window[::4]))


def test_windows_read_in_order_are_every_eval_window_once(tiny):
  batches = list(window_inputs.windows_in_order(tiny.eval_files, tiny.spec, segments=False,
                                                batch_size=5))
  _, every_label = window_inputs.parse_windows(tf.constant(tiny.eval_windows), tiny.spec)
  np.testing.assert_array_equal(np.concatenate([label.numpy() for _, label in batches]),
                                every_label.numpy())


def test_interval_calibration_counts_each_eval_window_once(tiny):
  """The refilled last batch does not weigh its windows twice in the factor or coverage."""
  count = len(tiny.eval_windows)
  batch = count // 2 + 1
  dataset = window_inputs.make_dataset(tiny.eval_files, tiny.spec, batch, shuffle=False,
                                       record_count=count)
  _, every_label = window_inputs.parse_windows(tf.constant(tiny.eval_windows), tiny.spec)
  # A band of +-1 around the actual, except for the first window, refilled at the end,
  # whose band misses its actual: it must count as one window, not two.
  first = tf.constant(every_label[0].numpy())

  labels = iter([labels[window_inputs.QUANTILES_OUTPUT] for _, labels in dataset])

  def model(features, training):
    del features, training
    actual = next(labels)
    missed = tf.reduce_all(tf.equal(actual, first), axis=1, keepdims=True)
    centre = tf.where(missed, actual + 10.0, actual)
    return {window_inputs.QUANTILES_OUTPUT: tf.stack([centre - 1, centre, centre + 1], -1)}

  report = train.calibrate(model, hparams.TFTConfig(), dataset, count, forecast_floor=None)

  assert report['eval_windows'] == count
  assert report['eval_coverage_before']['0.1:0.9'] == pytest.approx((count - 1) / count)


def test_the_earlier_periods_scores_are_pooled_with_the_eval_windows(tiny):
  """The factors rest on both periods: a band that holds every eval actual but misses
  the earlier period's moves out, and the report gives each period's coverage."""
  count = len(tiny.eval_windows)
  dataset = window_inputs.make_dataset(tiny.eval_files, tiny.spec, count, shuffle=False,
                                       record_count=count)

  def model(features, training):
    del features, training
    actual = next(iter(dataset))[1][window_inputs.QUANTILES_OUTPUT]
    return {window_inputs.QUANTILES_OUTPUT: tf.stack([actual - 1, actual, actual + 1], -1)}

  horizon = tiny.spec.horizon
  earlier_actual = np.zeros((count, horizon), np.float32)
  earlier = (np.stack([earlier_actual + 1, earlier_actual + 2, earlier_actual + 3], -1),
             earlier_actual)  # every actual below its band, by half its width
  config = hparams.TFTConfig()

  alone = train.calibrate(model, config, dataset, count, forecast_floor=None)
  pooled = train.calibrate(model, config, dataset, count, forecast_floor=None,
                           earlier=earlier)

  assert 'earlier_windows' not in alone and alone['factors']['0.1:0.9']['lower'] < 0
  assert pooled['earlier_windows'] == count
  assert pooled['earlier_coverage_before']['0.1:0.9'] == 0.0
  assert pooled['eval_coverage_before']['0.1:0.9'] == 1.0
  # Half the pooled actuals lie half a width below the band: its lower end moves out.
  assert pooled['factors']['0.1:0.9']['lower'] == pytest.approx(0.5, abs=0.01)
  assert 'period before' not in interval_calibration.describe(alone)
  assert f'the {count} windows of the period before them pooled' in \
      interval_calibration.describe(pooled)


def test_cached_shuffled_training_data_repeats_every_window(tiny):
  count, size = window_inputs.training_window_stats(tiny.train_files)
  assert count == tiny.train_window_count and size > 0
  dataset = window_inputs.make_training_dataset(tiny.train_files, tiny.spec, count,
                                                cache=True)
  first, second = (np.sort(labels[window_inputs.QUANTILES_OUTPUT].numpy(), axis=0)
                   for _, labels in dataset.take(2))
  np.testing.assert_array_equal(first, second)


def _shuffled_labels(tiny, seed):
  dataset = window_inputs.make_training_dataset(tiny.train_files, tiny.spec, 4, seed=seed)
  return np.concatenate([labels[window_inputs.QUANTILES_OUTPUT].numpy()
                         for _, labels in dataset.take(3)])


def test_a_shuffle_seed_fixes_the_order_of_the_training_batches(tiny):
  seeded = _shuffled_labels(tiny, seed=5)

  np.testing.assert_array_equal(_shuffled_labels(tiny, seed=5), seeded)
  assert not np.array_equal(_shuffled_labels(tiny, seed=6), seeded)
  assert not np.array_equal(_shuffled_labels(tiny, seed=None), _shuffled_labels(tiny, None))


def _transform_output(tiny):
  import tensorflow_transform as tft  # pylint: disable=g-import-not-at-top
  return tft.TFTransformOutput(tiny.transform_dir)


def test_windows_from_transformed_steps_match_the_window_builder():
  spec = datasets.SYNTHETIC.with_window(3, 2)
  steps = spec.window_length
  names = [transformed_name(spec.target_column)] + [f.name for f in model_features(spec)]
  # Every feature gets distinct values at every step, so any misplaced slice shows; static
  # columns hold one value per series (the window builder checks it).
  static = {transformed_name(c.name) for c in spec.columns_with(Role.STATIC)}
  values = {name: 100.0 * i + np.arange(steps) * (name not in static)
            for i, name in enumerate(names)}
  rows = [window_builder.Row(seconds=3600 * step, split='train',
                             values={name: values[name][step] for name in names})
          for step in range(steps)]
  (_, serialized), = window_builder.build_windows('a', rows, spec, {'train': 1})[0]
  from_builder = window_inputs.model_inputs(
      tf.io.parse_example([serialized], window_feature_spec(spec)), spec)

  from_steps = window_inputs.model_inputs(window_inputs.window_features_from_steps(
      {name: tf.constant(v[np.newaxis]) for name, v in values.items()}, spec), spec)

  assert sorted(from_steps) == sorted(from_builder)
  for key, tensor in from_builder.items():
    np.testing.assert_array_equal(from_steps[key].numpy(), tensor.numpy(), err_msg=key)


def test_training_segments_hold_exactly_the_windows_the_builder_cuts(tmp_path):
  """Cut from segments, the training windows are those written as windows: with a gap, a
  split boundary, a stride and sampling, so that masks matter."""
  spec = datasets.SYNTHETIC.with_window(3, 2)
  names = step_value_names(spec)
  static = {transformed_name(c.name) for c in spec.columns_with(Role.STATIC)}
  hours = [hour for hour in range(60) if hour not in (17, 18)]
  rows = [window_builder.Row(seconds=3600 * hour, split='train' if hour < 45 else 'eval',
                             values={name: 100.0 * i + hour * (name not in static)
                                     for i, name in enumerate(names)})
          for hour in hours]
  options = dict(strides={'train': 2, 'eval': 1}, sample_rates={'train': 0.8})
  as_windows, counts = window_builder.build_windows('a', rows, spec, **options)
  as_segments, segment_counts = window_builder.build_windows(
      'a', rows, spec, segment_splits=('train',), **options)

  assert counts == {name: count for name, count in segment_counts.items()
                    if not name.startswith('segments_')}
  assert counts['windows_skipped_gap'] and counts['windows_sampled_out']
  assert ([tf.train.Example.FromString(w) for split, w in as_windows if split == 'eval']
          == [tf.train.Example.FromString(w) for split, w in as_segments if split == 'eval'])
  windows = [w for split, w in as_windows if split == 'train']
  segments = [w for split, w in as_segments if split == 'train']
  assert segment_counts['segments_train'] == len(segments) < len(windows)
  path = str(tmp_path / 'segments.gz')
  with tf.io.TFRecordWriter(path, options='GZIP') as writer:
    for segment in segments:
      writer.write(segment)
  assert window_inputs.training_window_stats([path])[0] == len(windows)

  inputs, labels = next(iter(window_inputs.make_training_dataset(
      [path], spec, len(windows), seed=1)))
  expected_inputs, expected_labels = window_inputs.parse_windows(tf.constant(windows), spec)

  order = np.argsort(inputs['target_history'][:, 0])  # the window's first hour
  expected_order = np.argsort(expected_inputs['target_history'][:, 0])
  np.testing.assert_array_equal(labels[window_inputs.QUANTILES_OUTPUT].numpy()[order],
                                expected_labels.numpy()[expected_order])
  assert sorted(inputs) == sorted(expected_inputs)
  for key, tensor in expected_inputs.items():
    np.testing.assert_array_equal(inputs[key].numpy()[order], tensor.numpy()[expected_order],
                                  err_msg=key)

  # Read in order, each once (the gradient-boosted baseline's reading): the windows in the
  # builder's order.
  batches = list(window_inputs.windows_in_order([path], spec, segments=True, batch_size=3))
  for key, tensor in expected_inputs.items():
    np.testing.assert_array_equal(
        np.concatenate([batch[0][key].numpy() for batch in batches]), tensor.numpy(),
        err_msg=key)
  np.testing.assert_array_equal(np.concatenate([label.numpy() for _, label in batches]),
                                expected_labels.numpy())


def test_training_config_defaults_and_checks():
  assert TrainingConfig.from_custom_config(None) == TrainingConfig()
  assert TrainingConfig.from_custom_config(
      {'training': {'steps_per_execution': 64}}).steps_per_execution == 64
  with pytest.raises(ValueError, match=r"unknown keys \['steps'\].*steps_per_execution"):
    TrainingConfig.from_custom_config({'training': {'steps': 3}})
  with pytest.raises(ValueError, match="'steps_per_execution' must be an integer >= 1"):
    TrainingConfig(steps_per_execution=0)
  with pytest.raises(ValueError, match="'warmup_fraction' must lie in"):
    TrainingConfig(warmup_fraction=1.5)
  assert TrainingConfig.from_custom_config({'training': {'seed': 3}}).seed == 3
  with pytest.raises(ValueError, match="'seed' must be an integer >= 0 or null"):
    TrainingConfig(seed='3')
  assert not TrainingConfig().calibrate_on_the_period_before
  with pytest.raises(ValueError, match="'calibrate_on_the_period_before' must be true or "
                     "false, got 'no'"):
    TrainingConfig(calibrate_on_the_period_before='no')
  with pytest.raises(ValueError, match="'backup_every_steps' must be an integer >= 1"):
    TrainingConfig(backup_every_steps=0)


@pytest.mark.parametrize('tf_config, chief', [
    (None, True),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1']}, 'task': {'type': 'chief', 'index': 0}},
     True),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1']}, 'task': {'type': 'worker', 'index': 0}},
     False),
    ({'cluster': {'worker': ['a:1', 'b:1']}, 'task': {'type': 'worker', 'index': 0}}, True),
    ({'cluster': {'worker': ['a:1', 'b:1']}, 'task': {'type': 'worker', 'index': 1}}, False),
    ({'cluster': {'master': ['a:1']}, 'task': {'type': 'master', 'index': 0}}, True),
    ({'cluster': {'worker': ['a:1']}, 'task': {'type': 'evaluator', 'index': 0}}, False),
])
def test_chief_comes_from_tf_config(tf_config, chief):
  environ = {} if tf_config is None else {'TF_CONFIG': json.dumps(tf_config)}
  assert cluster.is_chief(environ) is chief
  written = cluster.write_dir('/models/serving', environ)
  if chief:
    assert written == '/models/serving'
  else:  # one directory beside it, which the worker deletes after writing
    assert os.path.dirname(written) == '/models'
    assert os.path.basename(written).startswith('.scratch_')


def test_malformed_tf_config_says_what_to_fix():
  with pytest.raises(ValueError, match='TF_CONFIG.*not JSON'):
    cluster.is_chief({'TF_CONFIG': '{task: worker}'})


def test_learning_rate_warms_up_then_decays_to_its_final_fraction():
  training = TrainingConfig(warmup_fraction=0.1, final_learning_rate_fraction=0.2)
  schedule = train.learning_rate_schedule(1e-3, total_steps=100, training=training)
  rates = np.array([float(schedule(step)) for step in range(101)])

  assert rates[0] == 0.0
  assert rates[10] == pytest.approx(1e-3)
  assert np.all(np.diff(rates[:11]) > 0) and np.all(np.diff(rates[10:]) <= 1e-12)
  assert rates[100] == pytest.approx(2e-4)


def _fn_args(train_steps=100):
  return types.SimpleNamespace(train_steps=train_steps)


def test_plan_scales_batch_and_optionally_learning_rate_with_replicas():
  config = hparams.TFTConfig(batch_size=16, learning_rate=1e-3, max_epochs=10)

  plain = training_plan.plan(config, TrainingConfig(), _fn_args(), replicas=4,
                      train_windows=1000, eval_windows=50)
  scaled = training_plan.plan(config, TrainingConfig(scale_learning_rate=True), _fn_args(),
                       replicas=4, train_windows=1000, eval_windows=50)

  assert plain.global_batch == scaled.global_batch == 64
  assert plain.peak_learning_rate == pytest.approx(1e-3)
  assert scaled.peak_learning_rate == pytest.approx(4e-3)
  assert plain.eval_batch == 52  # one batch split evenly over 4 replicas, 2 windows twice
  assert plain.steps_per_epoch * plain.epochs >= 100


def test_plan_says_when_the_data_is_too_small():
  config = hparams.TFTConfig(batch_size=16)
  with pytest.raises(ValueError, match=r'fewer than one global batch of 32 \(16 per replica x '
                     r'2 replicas\): set a smaller batch \(model: \{batch_size: 8\} in the '
                     r'spec file\), a training stride of 1'):
    training_plan.plan(config, TrainingConfig(), _fn_args(), replicas=2, train_windows=20,
                eval_windows=50)
  with pytest.raises(ValueError, match=r'\(16 per replica x 4 replicas\): train on 3 or '
                     'fewer replicas, or give more data'):
    training_plan.plan(config, TrainingConfig(), _fn_args(), replicas=4, train_windows=3,
                eval_windows=50)


@pytest.mark.parametrize('eval_windows, global_batch, replicas, expected', [
    (697, 64, 1, 64),   # 11 batches, the last filled up with 7 windows again
    (130, 64, 1, 44),   # 3 batches of 44 rather than 64 + 64 + 2
    (130, 64, 8, 48),   # a multiple of the replicas
    (3, 32, 4, 4),      # fewer windows than replicas: one batch, one per replica
])
def test_eval_batches_cover_every_window_with_few_repeats(eval_windows, global_batch,
                                                          replicas, expected):
  batch = training_plan.eval_batch_size(eval_windows, global_batch, replicas)
  assert batch == expected and batch <= global_batch and batch % replicas == 0
  # no more batches than needed
  assert math.ceil(eval_windows / batch) == math.ceil(eval_windows / global_batch)


def test_the_trainer_compiles_the_configured_point_loss():
  layout = InputLayout(encoder_steps=12, horizon=4, static_cardinalities=(1,),
                       static_real_count=0, known_cardinalities=(), known_real_count=0,
                       observed_real_count=0)
  plan = training_plan.Plan(global_batch=16, eval_batch=16, steps_per_epoch=1, epochs=1,
                     peak_learning_rate=1e-3)
  for point_loss in hparams.POINT_LOSSES:
    model = train.build_and_compile(layout, hparams.TFTConfig(point_loss=point_loss),
                                     TrainingConfig(), plan, 'tft', on_tpu=False)
    assert model.loss[window_inputs.QUANTILES_OUTPUT].point_loss == point_loss


def test_a_non_finite_loss_stops_training_with_an_error_that_says_what_to_check():
  model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
  model.compile(optimizer='sgd', loss='mse')
  inputs = np.ones((8, 2), np.float32)
  targets = np.array([[1.0]] * 7 + [[np.nan]], np.float32)
  with pytest.raises(train.NonFiniteLossError, match=r'the loss became nan at training batch '
                     r'\d; training stopped and no model is exported. Check the input data'):
    model.fit(inputs, targets, batch_size=4, epochs=1, verbose=0,
              callbacks=[train.StopOnNonFiniteLoss()])


@pytest.mark.parametrize('tf_config, workers', [
    (None, 1),
    ({'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1'], 'evaluator': ['d:1'],
                  'ps': ['e:1']}, 'task': {'type': 'chief', 'index': 0}}, 3),
    ({'cluster': {'worker': ['a:1', 'b:1']}, 'task': {'type': 'worker', 'index': 1}}, 2),
    ({'cluster': {'chief': ['a:1']}, 'task': {'type': 'chief', 'index': 0}}, 1),
    ({'task': {'type': 'chief', 'index': 0}}, 1),
])
def test_worker_count_counts_the_training_tasks(tf_config, workers):
  environ = {} if tf_config is None else {'TF_CONFIG': json.dumps(tf_config)}
  assert cluster.worker_count(environ) == workers


def test_workers_of_one_run_share_a_shuffle_seed_that_differs_by_run():
  seed = train.shared_shuffle_seed('/runs/model_run/7')
  assert seed == train.shared_shuffle_seed('/runs/model_run/7')
  assert seed != train.shared_shuffle_seed('/runs/model_run/8')
