"""The gradient-boosted Stallion baseline: its features see only the past of the origin,
and its windows and naive forecast are the protocol's."""

import os

import numpy as np
import pandas as pd
import pytest

from benchmarks import stallion_gbm
from schema.time_split import TimeSplit


def _frame(months=30):
  rows = []
  for offset, (agency, sku) in enumerate([('A', 'S1'), ('B', 'S2')]):
    for month in range(months):
      rows.append({'agency': agency, 'sku': sku, 'month': 24000 + month,
                   'volume': 100.0 * offset + month,
                   **{name: float(month) for name in stallion_gbm.KNOWN},
                   **{name: 1.0 + offset for name in stallion_gbm.STATIC}})
  return pd.DataFrame(rows)


def test_features_at_an_origin_hold_only_its_past_and_the_target_months_knowns():
  frame = _frame()
  origin = 24000 + 20
  rows = stallion_gbm.examples(frame, [origin]).set_index(['agency', 'sku', 'step'])
  row = rows.loc[('B', 'S2', 3)]
  level = np.mean([100.0 + m for m in range(9, 21)]) + 1.0  # last 12 months, plus 1
  assert row['level'] == pytest.approx(level)
  for lag in range(stallion_gbm.LAGS):
    assert row[f'lag_{lag}'] * level == pytest.approx(100.0 + 20 - lag)
  assert row['mean_3'] * level == pytest.approx(100.0 + 19)
  assert row['same_month_last_year'] * level == pytest.approx(100.0 + 23 - 12)
  assert row['volume'] * level == pytest.approx(100.0 + 23)  # the target, month 23
  assert row['price_regular'] == 23.0  # a known covariate of the target month
  assert row['target_month'] == origin + 3 and row['month_of_year'] == (origin + 3) % 12
  assert sorted(rows.index.get_level_values('step').unique()) == list(range(1, 7))


def test_the_last_origins_get_only_the_steps_the_data_has():
  frame = _frame()
  rows = stallion_gbm.examples(frame, [24000 + 27])
  assert sorted(rows['step'].unique()) == [1, 2]


def test_a_model_without_a_feature_neither_trains_nor_predicts_on_it():
  rows = stallion_gbm.examples(_frame(), range(24000 + 12, 24000 + 24))
  params = {'num_leaves': 3, 'min_child_samples': 2}
  model = stallion_gbm.fit(rows, 0.5, params, 5, without=['same_month_last_year'])

  assert 'same_month_last_year' not in model.feature_name()
  assert 'lag_0' in model.feature_name()
  assert stallion_gbm.predict(model, rows).shape == (len(rows),)
  with pytest.raises(ValueError, match=r"no features \['same_month'\]"):
    stallion_gbm.fit(rows, 0.5, params, 5, without=['same_month'])


@pytest.mark.slow
def test_a_run_on_some_series_scores_one_test_window_per_series(tmp_path):
  data = os.path.join(stallion_gbm.PROJECT_ROOT, '..', 'shared', 'data',
                                   'stallion.csv')
  if not os.path.exists(data):
    pytest.skip(f'reference data {data} not present')
  frame = pd.read_csv(data)
  keys = frame[stallion_gbm.KEYS].drop_duplicates().head(20)
  subset = tmp_path / 'stallion-20.csv'
  frame.merge(keys, on=stallion_gbm.KEYS).to_csv(subset, index=False)
  result = stallion_gbm.run(str(subset), grid={'num_leaves': (7,), 'learning_rate': (0.1,)},
                            max_rounds=30)
  assert result['protocol']['test_windows'] == 20
  assert set(result['rounds']) == {'0.1', '0.5', '0.9'}
  assert [trial['params'] for trial in result['tuning']] == [{'num_leaves': 7,
                                                              'learning_rate': 0.1}]
  for scores in (result['model'], result['naive_last_value']):
    assert all(np.all(np.isfinite(value)) for value in scores.values())
    assert len(scores['mae_by_step']) == 6
  assert result['eval_rows'] == 20 * 6  # the forecast from 2016-12, 6 steps a series

  # A year-long eval period: the forecasts from 2016-06 and 2016-12, as the TFT's windows;
  # training ends six months earlier.
  year = stallion_gbm.run(str(subset), grid={'num_leaves': (7,), 'learning_rate': (0.1,)},
                          max_rounds=30, split=TimeSplit('2016-07-01', '2017-07-01'))
  assert year['eval_rows'] == 20 * 2 * 6
  assert year['training_rows'] == result['training_rows'] - 20 * 6 * 6


def test_forecasts_are_raised_to_the_floor_and_left_alone_above_it():
  rows = stallion_gbm.examples(_frame(), range(24000 + 12, 24000 + 24))
  model = stallion_gbm.fit(rows, 0.5, {'num_leaves': 3, 'min_child_samples': 2}, 5)
  raw = stallion_gbm.predict(model, rows)
  floor = float(np.median(raw))
  floored = stallion_gbm.predict(model, rows, floor)
  assert np.any(raw < floor)
  np.testing.assert_array_equal(floored, np.maximum(raw, floor))
