"""What the run summary says of how training went (`trainer_module.training_record`)."""

import pytest

from trainer_module import model_format, training_record


def test_a_fit_that_stopped_early_is_described_with_the_epoch_kept(tmp_path):
  record = training_record.of_fit([0, 1, 2, 3], [0.5, 0.4, 0.45, 0.46], epochs_planned=20,
                                  steps_per_epoch=50)
  assert record == {'epochs_run': 4, 'epochs_planned': 20, 'steps_per_epoch': 50,
                    'best_epoch': 2, 'best_val_loss': 0.4}
  model_format.write(str(tmp_path))
  training_record.write(str(tmp_path), [record])
  assert training_record.read(str(tmp_path)) == [record]
  assert training_record.describe([record]) == (
      'stopped early after 4 of 20 epochs of 50 steps, the weights of epoch 2 kept (the '
      'lowest eval loss)')


def test_a_resumed_fit_counts_its_epochs_from_the_start_and_an_ensemble_each_member():
  # Member 1 trained before an interruption: members 2 (resumed at epoch 6) and 3 here.
  resumed = training_record.of_fit([5, 6, 7], [0.3, 0.2, 0.25], 8, 10, member=2)
  assert (resumed['epochs_run'], resumed['best_epoch']) == (8, 7)
  without_validation = training_record.of_fit([0, 1], [], 2, 10, member=3)
  assert training_record.describe([resumed, without_validation]) == (
      'member 2: all 8 epochs of 10 steps, the weights of epoch 7 kept (the lowest eval '
      'loss); member 3: all 2 epochs of 10 steps')
  with pytest.raises(model_format.ModelFormatError, match='/nonexistent cannot be read: it has no'):
    training_record.read('/nonexistent')


def test_a_refit_is_described_as_one_with_the_judged_models_epochs(tmp_path):
  record = training_record.of_fit([0, 1, 2], [], 20, 50, refit=True)
  assert record == {'epochs_run': 3, 'epochs_planned': 20, 'steps_per_epoch': 50,
                    'refit': True}
  assert training_record.describe([record]) == (
      'refit on every period: 3 epochs of 50 steps, as the judged model kept')


def test_the_refit_budget_is_the_epochs_the_judged_model_kept(tmp_path):
  from trainer_module import interval_calibration, refit

  assert refit.budget_of({}) is None
  records = [training_record.of_fit([0, 1, 2, 3], [0.5, 0.4, 0.45, 0.46], 20, 50, member=1),
             training_record.of_fit(list(range(6)), [0.5, 0.4, 0.3, 0.2, 0.25, 0.3], 20, 50,
                                    member=2)]
  model_format.write(str(tmp_path))
  training_record.write(str(tmp_path), records)
  interval_calibration.write(str(tmp_path), {'factors': {'p10_p90': [1.1, 0.9]}})
  budget = refit.budget_of({refit.CONFIG_KEY: str(tmp_path)})
  assert (budget.epochs, budget.epochs_planned, budget.steps_per_epoch) == ([2, 4], 20, 50)
  assert budget.calibration == {'factors': {'p10_p90': [1.1, 0.9]}}
  training_record.write(str(tmp_path), [training_record.of_fit([0, 1], [], 20, 50)])
  with pytest.raises(ValueError, match='does not record the epoch whose weights it kept'):
    refit.budget_of({refit.CONFIG_KEY: str(tmp_path)})


def test_an_ensembles_members_left_out_of_the_mean_are_recorded_and_the_refit_keeps_them_out(
    tmp_path):
  from trainer_module import refit

  records = [training_record.of_fit([0, 1, 2], [0.5, 0.4, 0.45], 20, 50, member=member)
             for member in (1, 2, 3)]
  marked = training_record.with_members_kept(records, [0, 2])
  assert [record.get('left_out', False) for record in marked] == [False, True, False]
  assert training_record.kept_members(marked) == [0, 2]
  assert training_record.describe(marked[1:2]) == (
      'member 2: stopped early after 3 of 20 epochs of 50 steps, the weights of epoch 2 kept '
      '(the lowest eval loss), left out of the mean served (the others score the eval '
      'windows better)')
  model_format.write(str(tmp_path))
  training_record.write(str(tmp_path), marked)
  assert refit.budget_of({refit.CONFIG_KEY: str(tmp_path)}).kept_members == [0, 2]
  training_record.write(str(tmp_path), [training_record.of_fit([0, 1], [0.5, 0.4], 20, 50)])
  assert refit.budget_of({refit.CONFIG_KEY: str(tmp_path)}).kept_members is None  # one TFT
