"""The blessing's rules in words, and the bar against the run's own LightGBM."""

import pytest

from components import scoped_evaluator
from schema.dataset_file import Blessing

_RECORD = {'mae': 3.0, 'scored_split': 'test',
           'by_split': {'eval': {'mae': 2.0}, 'test': {'mae': 3.0}}}


def test_the_rules_that_are_set_are_named_with_their_keys():
  assert Blessing().rules(compared_with_last=False) == [
      "the MAE at most 1 times the best naive forecast's (beat_naive_by 0)"]
  assert Blessing(beat_naive_by=0.05, max_mae=4.0, max_relative_regression=0.1,
                  beat_lightgbm_by=0.0).rules(compared_with_last=True) == [
      "the MAE at most 0.95 times the best naive forecast's (beat_naive_by 0.05)",
      'the MAE at most 4 (max_mae 4)',
      "the MAE at most 1.1 times the last blessed model's (max_relative_regression 0.1)",
      "the MAE at most 1 times LightGBM's (beat_lightgbm_by 0)"]


def test_the_lightgbm_bar_is_judged_on_the_judged_windows():
  assert scoped_evaluator.lightgbm_shortfall(2.9, _RECORD, 'test', 0.0) is None
  assert scoped_evaluator.lightgbm_shortfall(3.0, _RECORD, 'test', 0.0) is None  # a tie
  assert scoped_evaluator.lightgbm_shortfall(3.1, _RECORD, 'test', 0.0) == (
      "the test MAE is 3.1, LightGBM's 3 on the same windows, and the rule is the MAE at most 1 "
      "times LightGBM's (beat_lightgbm_by 0)")
  # 5% below LightGBM's test MAE: 2.85 at most; the eval windows' 2.0 plays no part.
  assert scoped_evaluator.lightgbm_shortfall(2.9, _RECORD, 'test', 0.05).endswith(
      "the rule is the MAE at most 0.95 times LightGBM's (beat_lightgbm_by 0.05)")
  assert scoped_evaluator.lightgbm_shortfall(2.1, _RECORD, 'eval', 0.0).startswith(
      "the eval MAE is 2.1, LightGBM's 2 on the same windows")


@pytest.mark.parametrize('record, why', [
    (None, 'it has no figures on the test windows'),
    ({'error': 'LightGBMError: out of memory'}, 'LightGBMError: out of memory'),
    ({'by_split': {'eval': {'mae': 2.0}}}, 'it has no figures on the test windows'),
])
def test_a_lightgbm_that_was_not_scored_misses_the_bar_with_the_reason(record, why):
  assert scoped_evaluator.lightgbm_shortfall(1.0, record, 'test', 0.0) == (
      f'beat_lightgbm_by is set, but LightGBM could not be scored ({why}), so the model '
      'cannot be compared with it')


def test_a_withdrawn_blessing_is_marked_as_tfx_marks_a_model_not_blessed(tmp_path):
  from tfx.types import standard_artifacts

  blessing = standard_artifacts.ModelBlessing()
  blessing.uri = str(tmp_path)
  (tmp_path / 'BLESSED').write_text('')
  blessing.set_int_custom_property('blessed', 1)
  scoped_evaluator.withdraw_blessing(blessing)
  assert sorted(path.name for path in tmp_path.iterdir()) == ['NOT_BLESSED']
  assert blessing.get_int_custom_property('blessed') == 0
