"""The gradient-boosted baseline: its rows read each window's history only, and it learns
what the naive forecasts cannot."""

import dataclasses

import numpy as np
import pytest

from evaluation import gbm_baseline, metrics
from schema import datasets
from schema.features import Group, features_in
from schema.window_layout import TARGET_HISTORY

SPEC = datasets.SYNTHETIC.with_window(encoder_steps=48, horizon=6)  # hourly: seasons 24


def _windows(count: int, seed: int, price_effect: float = 0.0) -> gbm_baseline.Windows:
  """Hourly windows of a daily cycle at random levels; with `price_effect`, each future
  step moves by that much per unit of the known real (price) at that step."""
  rng = np.random.default_rng(seed)
  encoder, horizon = SPEC.encoder_steps, SPEC.horizon
  window = encoder + horizon
  level = rng.uniform(50, 150, size=(count, 1))
  phase = rng.integers(0, 24, size=(count, 1))
  cycle = 10 * np.sin(2 * np.pi * (phase + np.arange(window)) / 24)
  price = rng.normal(size=(count, window))
  values = level + cycle + rng.normal(scale=0.5, size=(count, window))
  values[:, encoder:] += price_effect * price[:, encoder:]

  def group(group_name, shape, fill):
    return np.full(shape + (len(features_in(SPEC, group_name)),), fill, np.float32)

  known_real = group(Group.KNOWN_REAL, (count, window), 0.0)
  known_real[:, :, 0] = price
  inputs = {
      TARGET_HISTORY: values[:, :encoder].astype(np.float32),
      Group.STATIC_CATEGORICAL.value: group(Group.STATIC_CATEGORICAL, (count,), 1),
      Group.STATIC_REAL.value: rng.normal(size=(count, len(features_in(SPEC,
                                                                      Group.STATIC_REAL)))),
      Group.KNOWN_CATEGORICAL.value: group(Group.KNOWN_CATEGORICAL, (count, window), 0),
      Group.KNOWN_REAL.value: known_real,
      Group.OBSERVED_REAL.value: rng.normal(size=(count, encoder, len(features_in(
          SPEC, Group.OBSERVED_REAL)))),
  }
  return gbm_baseline.Windows(inputs=inputs, label=values[:, encoder:].astype(np.float32))


def test_the_spec_has_the_known_real_the_windows_fill():
  assert [f.name for f in features_in(SPEC, Group.KNOWN_REAL)][0] == 'price_xf'


def test_a_row_holds_its_step_its_windows_history_and_the_known_values_at_that_step():
  windows = _windows(3, seed=1)
  rows = gbm_baseline.table(windows, SPEC)
  horizon, encoder = SPEC.horizon, SPEC.encoder_steps
  assert rows.features.shape[0] == rows.label.shape[0] == 3 * horizon
  column = {name: rows.features[:, index] for index, name in enumerate(rows.names)}
  history = windows.inputs[TARGET_HISTORY].astype(np.float64)
  scaled = (history - history.mean(axis=1, keepdims=True)) / history.std(axis=1,
                                                                          keepdims=True)
  for window in range(3):
    for step in range(horizon):
      row = window * horizon + step
      assert column['step'][row] == step + 1
      assert column['seasonal_24'][row] == pytest.approx(scaled[window, encoder - 24 + step],
                                                         abs=1e-5)
      assert column['phase_mean_24'][row] == pytest.approx(
          (scaled[window, encoder - 24 + step] + scaled[window, encoder - 48 + step]) / 2,
          abs=1e-5)
      assert column['target_lag_1'][row] == pytest.approx(scaled[window, -1], abs=1e-5)
      assert column['price_xf'][row] == pytest.approx(
          windows.inputs[Group.KNOWN_REAL.value][window, encoder + step, 0])
      for index, feature in enumerate(features_in(SPEC, Group.OBSERVED_REAL)):
        observed = windows.inputs[Group.OBSERVED_REAL.value][window, :, index]
        assert column[f'{feature.name}_last'][row] == pytest.approx(observed[-1], abs=1e-6)
        assert column[f'{feature.name}_mean'][row] == pytest.approx(observed.mean(), abs=1e-6)
      for index, feature in enumerate(features_in(SPEC, Group.STATIC_REAL)):
        assert column[feature.name][row] == pytest.approx(
            windows.inputs[Group.STATIC_REAL.value][window, index], abs=1e-6)
  back = rows.label * rows.scale + rows.location
  np.testing.assert_allclose(back.reshape(3, horizon), windows.label, rtol=1e-5)


def test_the_rows_do_not_read_the_future_target():
  windows = _windows(4, seed=2)
  before = gbm_baseline.table(windows, SPEC).features
  windows.label = windows.label + 1000.0
  np.testing.assert_array_equal(gbm_baseline.table(windows, SPEC).features, before)


def test_it_learns_a_known_covariate_the_naive_forecasts_cannot_see():
  result = gbm_baseline.compare(_windows(600, seed=3, price_effect=8.0),
                                _windows(150, seed=4, price_effect=8.0), SPEC, threads=1)
  best_naive = min(result['naive_mae'].values())
  assert result['mae'] < 0.5 * best_naive, result
  assert 'price_xf' in result['top_features']
  assert len(result['mae_by_step']) == SPEC.horizon
  assert result['training_rows'] == 600 * SPEC.horizon


def test_the_naive_forecasts_are_scored_as_the_evaluator_scores_them():
  windows = _windows(20, seed=5)
  history, actual = windows.inputs[TARGET_HISTORY], windows.label
  maes = gbm_baseline.naive_maes(windows, SPEC)
  assert maes['repeat_last'] == pytest.approx(np.abs(actual - history[:, -1:]).mean(), rel=1e-6)
  assert maes['seasonal_24'] == pytest.approx(
      np.abs(actual - history[:, -24:-24 + SPEC.horizon]).mean(), rel=1e-6)


def test_forecasts_are_raised_to_the_floor():
  windows = _windows(200, seed=6)
  windows.inputs[TARGET_HISTORY] -= 100.0  # around 0: some forecasts fall below it
  windows.label -= 100.0
  rows = gbm_baseline.table(windows, SPEC)
  model = gbm_baseline.fit(rows, rows, threads=1)
  unfloored = gbm_baseline.forecast([model], rows, SPEC.horizon)
  floored = gbm_baseline.served(unfloored, [0.5], {}, floor=0.0)
  assert unfloored.min() < 0
  np.testing.assert_allclose(floored, np.maximum(unfloored, 0.0), rtol=1e-6)


def test_the_bands_are_calibrated_on_the_eval_windows_as_the_tfts_are():
  train, evaluation = _windows(300, seed=9), _windows(200, seed=10)
  calibrated = gbm_baseline.compare(train, evaluation, SPEC, threads=1)
  raw = gbm_baseline.compare(train, evaluation, SPEC, calibrate=False, threads=1)
  assert calibrated['quantiles'] == [0.1, 0.5, 0.9]
  assert set(calibrated['rounds']) == set(calibrated['q_risk']) == {'p10', 'p50', 'p90'}
  # Each end leaves at most a tenth of the eval actuals beyond it, and not much less.
  assert 0.8 <= calibrated['coverage']['0.1:0.9'] <= 0.82
  assert raw['coverage']['0.1:0.9'] != calibrated['coverage']['0.1:0.9']
  assert raw['interval_factors'] is None
  assert set(calibrated['interval_factors']['0.1:0.9']) == {'lower', 'upper'}
  # The median is never moved.
  assert calibrated['mae'] == raw['mae'] and calibrated['q_risk']['p50'] == raw['q_risk']['p50']


def test_q_risk_is_the_normalized_quantile_loss():
  actual = np.array([[2.0, -4.0]])
  assert metrics.q_risk(actual.astype(np.float64), actual, 0.9) == 0.0
  # Forecasts of 0: 2 (0.9 * 2 + 0.1 * 4) / 6.
  assert metrics.q_risk(np.zeros_like(actual), actual, 0.9) == pytest.approx(2.2 / 3)


def test_one_window_in_k_keeps_the_rows_within_the_bound():
  assert gbm_baseline.one_in(1000, 24, max_training_rows=24_000) == 1
  assert gbm_baseline.one_in(1001, 24, max_training_rows=24_000) == 2
  assert gbm_baseline.one_in(30_000, 24, max_training_rows=200_000) == 4
  with pytest.raises(ValueError, match='max_training_rows must be at least 1, got 0'):
    gbm_baseline.one_in(10, 24, max_training_rows=0)


def test_rows_are_weighted_by_their_windows_scale(monkeypatch):
  """So that the loss on the windows' scale is the MAE in original units."""
  weights = []
  real_dataset = gbm_baseline.lightgbm.Dataset

  def dataset(*args, weight=None, **kwargs):
    weights.append(weight)
    return real_dataset(*args, weight=weight, **kwargs)

  monkeypatch.setattr(gbm_baseline.lightgbm, 'Dataset', dataset)
  windows = _windows(40, seed=8)
  windows.inputs[TARGET_HISTORY][:20] *= 10  # two scales
  rows = gbm_baseline.table(windows, SPEC)
  gbm_baseline.fit(rows, rows, threads=1)
  for weight in weights:
    np.testing.assert_allclose(weight / rows.scale, weight[0] / rows.scale[0], rtol=1e-6)


def test_no_windows_is_an_error_that_says_so():
  empty = gbm_baseline.Windows(inputs={}, label=np.zeros([0, SPEC.horizon]))
  with pytest.raises(ValueError, match='needs training, eval and scored windows; got 0 '
                     'training and 5 eval windows'):
    gbm_baseline.compare(empty, _windows(5, seed=7), SPEC)


def test_the_test_windows_are_scored_by_a_model_that_never_saw_them():
  train, evaluation, test = _windows(300, seed=11), _windows(100, seed=12), _windows(80, seed=13)
  alone = gbm_baseline.compare(train, evaluation, SPEC, threads=1)
  both = gbm_baseline.compare(train, evaluation, SPEC, threads=1,
                              scored={'eval': evaluation, 'test': test}, judged='test')
  absurd = dataclasses.replace(test, label=test.label * 1000.0)
  scored_absurd = gbm_baseline.compare(train, evaluation, SPEC, threads=1,
                                       scored={'eval': evaluation, 'test': absurd},
                                       judged='test')
  # Nothing is chosen on the test windows: the rounds and the bands' factors stay.
  assert both['rounds'] == alone['rounds'] == scored_absurd['rounds']
  assert both['interval_factors'] == scored_absurd['interval_factors']
  assert both['by_split']['eval'] == alone['by_split']['eval']
  assert both['scored_split'] == 'test' and both['mae'] == both['by_split']['test']['mae']
  assert scored_absurd['mae'] > 10 * both['mae']
  assert both['by_split']['test']['scored_windows'] == 80
  assert both['by_split']['test']['naive_mae'] == gbm_baseline.naive_maes(test, SPEC)


def test_the_judged_forecasts_are_saved_with_their_actuals(tmp_path):
  forecasts = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
  actual = np.ones([2, 4], np.float32)
  path = str(tmp_path / 'forecasts.npz')
  gbm_baseline.write_forecasts(path, forecasts, actual, [0.1, 0.5, 0.9])
  saved = gbm_baseline.read_forecasts(path)
  np.testing.assert_array_equal(saved['forecasts'], forecasts)
  np.testing.assert_array_equal(saved['actual'], actual)
  assert saved['quantiles'].tolist() == [0.1, 0.5, 0.9]


def test_a_model_that_ran_to_the_round_cap_is_said_to_have(monkeypatch):
  train, evaluation = _windows(200, seed=5), _windows(50, seed=6)
  rows = gbm_baseline.table(train, SPEC), gbm_baseline.table(evaluation, SPEC)
  stopped = gbm_baseline.fit(*rows, threads=1)
  assert not gbm_baseline.capped(stopped)
  assert gbm_baseline.course(stopped).endswith(' rounds (stopped early)')
  monkeypatch.setattr(gbm_baseline, 'MAX_ROUNDS', 3)
  capped = gbm_baseline.fit(*rows, threads=1)
  assert gbm_baseline.capped(capped)
  assert gbm_baseline.course(capped) == (
      '3 rounds: the cap, not stopped early (the best round 3 kept)')
  # The record names the quantiles whose model ran to the cap.
  assert gbm_baseline.compare(train, evaluation, SPEC, threads=1)['capped'] == [
      'p10', 'p50', 'p90']


def test_the_bands_are_calibrated_on_the_period_before_the_eval_period_too():
  train, evaluation = _windows(200, seed=5), _windows(50, seed=6)
  before, period = _windows(150, seed=7), _windows(50, seed=8)
  # The earlier period ran above what its history says: its upper ends miss.
  period = gbm_baseline.Windows(period.inputs, period.label + 8.0)

  alone = gbm_baseline.compare(train, evaluation, SPEC, threads=1)
  pooled = gbm_baseline.compare(train, evaluation, SPEC, threads=1, earlier=(before, period))
  empty = gbm_baseline.Windows({k: v[:0] for k, v in before.inputs.items()}, before.label[:0])
  without = gbm_baseline.compare(train, evaluation, SPEC, threads=1, earlier=(empty, period))

  assert (alone['calibration_windows'], pooled['calibration_windows']) == (50, 100)
  assert pooled['interval_factors']['0.1:0.9']['upper'] > \
      alone['interval_factors']['0.1:0.9']['upper'] + 0.2
  # The same models score the same windows; only the bands moved.
  assert pooled['mae'] == alone['mae']
  assert without['interval_factors'] == alone['interval_factors']
