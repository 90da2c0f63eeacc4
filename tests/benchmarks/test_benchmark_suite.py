"""The development suite benchmark: the spec edits it makes, how runs are kept, its table."""

import json
import sys

import pytest
import yaml

from benchmarks import report, suite


def _result(seed, tft_mae, gbm_mae=10.0, coverage=0.8, tft_risks=(0.1, 0.2, 0.1)):
  return {'seed': seed, 'command_seconds': 100.0 + seed, 'test_windows': 56,
          'tft': {'mae': tft_mae, 'coverage': coverage,
                  'q_risk': dict(zip(('p10', 'p50', 'p90'), tft_risks))},
          'lightgbm': {'mae': gbm_mae, 'coverage': 0.9,
                       'q_risk': {'p10': 0.1, 'p50': 0.2, 'p90': 0.1}},
          'naive': {'repeat_last': 30.0, 'seasonal_24': 12.0}, 'blessed': True,
          'components': {'Trainer': 60.0}}


def test_the_draft_gets_the_documented_roles_and_loses_the_removed_columns(tmp_path,
                                                                          monkeypatch):
  drafted = {'name': 'x', 'horizon': 24, 'columns': [
      {'name': 'id', 'role': 'series_key'}, {'name': 'load', 'role': 'target'},
      {'name': 'price', 'role': 'observed'}, {'name': 'row_no', 'role': 'static'},
      {'name': 'temp', 'role': 'observed'}]}

  def fake_init(command, log_path):
    with open(command[command.index('--output') + 1], 'w') as f:
      yaml.safe_dump(drafted, f)
    assert command[command.index('--horizon') + 1] == '24'
    return 1.0

  monkeypatch.setattr(suite, 'timed', fake_init)
  data = suite.SuiteData('x', lambda d: str(tmp_path / 'data.csv'), 'load', 24,
                         {'price': 'known', 'row_no': None})
  with open(suite.draft_spec(data, str(tmp_path))) as f:
    spec = yaml.safe_load(f)
  assert [(c['name'], c['role']) for c in spec['columns']] == [
      ('id', 'series_key'), ('load', 'target'), ('price', 'known'), ('temp', 'observed')]


def test_an_answer_for_a_column_the_draft_lacks_is_refused(tmp_path, monkeypatch):
  def fake_init(command, log_path):
    with open(command[command.index('--output') + 1], 'w') as f:
      yaml.safe_dump({'name': 'x', 'columns': [{'name': 'load', 'role': 'target'}]}, f)
    return 1.0

  monkeypatch.setattr(suite, 'timed', fake_init)
  data = suite.SuiteData('x', lambda d: str(tmp_path / 'data.csv'), 'load',
                         roles={'prize': 'known'})
  with pytest.raises(SystemExit, match=r"no column \['prize'\]"):
    suite.draft_spec(data, str(tmp_path))


def test_a_rerun_seed_replaces_its_run_and_other_seeds_stay(tmp_path, monkeypatch):
  monkeypatch.setattr(suite.readme_tables, 'write_results',
                      lambda path, result: open(path, 'w').write(json.dumps(result)))
  spec_path = tmp_path / 'spec.yaml'
  spec_path.write_text(yaml.safe_dump({'horizon': 24, 'encoder_steps': 168,
                                       'frequency': 'hourly'}))
  results = str(tmp_path / 'suite.json')
  data = suite.DATASETS['ercot']
  for seed, mae in ((1, 9.0), (2, 11.0), (1, 8.0)):
    suite.record(results, data, str(spec_path), _result(seed, mae))
  with open(results) as f:
    runs = json.load(f)['datasets']['ercot']['runs']
  assert [(run['seed'], run['tft']['mae']) for run in runs] == [(1, 8.0), (2, 11.0)]


def _suite(runs_by_dataset):
  return {'suite': {'command': 'python -m benchmarks.suite', 'coverage_target': [0.75, 0.85],
                    'datasets': {name: {'horizon': 24, 'frequency': 'hourly', 'runs': runs}
                                 for name, runs in runs_by_dataset.items()}}}


def test_the_table_averages_the_seeds_and_names_the_goals_missed():
  lines = report.suite_table(_suite({
      'wins': [_result(1, 9.0), _result(2, 10.0)],
      'loses': [_result(1, 11.0, coverage=0.7, tft_risks=(0.1, 0.3, 0.1))]}))
  wins = next(line for line in lines if line.startswith('| wins'))
  loses = next(line for line in lines if line.startswith('| loses'))
  assert '| 9.5 | 10 | seasonal naive, 24 h: 12 |' in wins and wins.endswith('| 2 | all |')
  assert loses.endswith('misses: MAE at most LightGBM, coverage, q-risks at most LightGBM |')
  assert '1 of 2 data sets meet every goal' in lines[-1]


def test_the_times_table_averages_each_component_and_gives_the_baselines_share():
  runs = [_result(1, 9.0), _result(2, 9.0)]
  runs[0]['components'] = {'GbmBaseline': 10.0, 'Trainer': 80.0, 'Pusher': 10.0}
  runs[1]['components'] = {'GbmBaseline': 30.0, 'Trainer': 160.0, 'Pusher': 10.0}
  [line] = [line for line in report.suite_times_table(_suite({'x': runs}))
            if line.startswith('| x')]
  # ExampleGen, StatisticsGen, Transform, Windowing, GbmBaseline, Trainer, Evaluator, the
  # rest, the pipeline; GbmBaseline 20 of 150 seconds.
  assert line == '| x | 0 | 0 | 0 | 0 | 20 | 120 | 0 | 10 | 150 | 13.3% |'


def test_a_tft_at_or_above_the_best_naive_misses_that_goal():
  lines = report.suite_table(_suite({'flat': [_result(1, 9.0, gbm_mae=9.0)]}))
  row = next(line for line in lines if line.startswith('| flat'))
  assert row.endswith('| all |')
  lines = report.suite_table(_suite({'flat': [_result(1, 12.0, gbm_mae=13.0)]}))
  assert next(line for line in lines if line.startswith('| flat')).endswith(
      'misses: below the best naive |')


@pytest.mark.parametrize('each', ['', ' of each series'])
def test_an_earlier_origin_moves_both_periods_back_by_the_eval_period(tmp_path, each):
  spec_path = tmp_path / 'x.yaml'
  spec_path.write_text(yaml.safe_dump({'name': 'x', 'split': {
      'eval_start': f'last 337 steps{each}', 'test_start': f'last 169 steps{each}'}}))

  suite.earlier_by_the_eval_period(str(spec_path))

  # The eval period (337 - 169 = 168 steps) ends where it began; the test is the old eval.
  assert yaml.safe_load(spec_path.read_text())['split'] == {
      'eval_start': f'last 505 steps{each}', 'test_start': f'last 337 steps{each}'}


def test_an_earlier_origin_needs_the_drafted_kind_of_split(tmp_path):
  spec_path = tmp_path / 'x.yaml'
  spec_path.write_text(yaml.safe_dump({'split': {'eval_start': '2021-08-20',
                                                 'test_start': '2021-08-27'}}))
  with pytest.raises(SystemExit, match="not 'last N steps"):
    suite.earlier_by_the_eval_period(str(spec_path))


def test_a_csv_of_ones_own_runs_as_the_suite_runs_its_data_sets(tmp_path, monkeypatch):
  csv_path = tmp_path / 'city_temps.csv'
  csv_path.write_text('city,date,temp\n')
  ran = []
  monkeypatch.setattr(suite, 'draft_spec', lambda data, work_dir: ran.append(data) or 'spec')
  monkeypatch.setattr(suite, 'score_run', lambda *args: ran.append(args[2]) or {
      'tft': {'mae': 1.0}, 'lightgbm': {'mae': 1.0}, 'naive': {'x': 2.0},
      'command_seconds': 1.0})
  monkeypatch.setattr(suite, 'record', lambda *args: None)

  suite.main(['--csv', str(csv_path), '--target', 'temp', '--horizon', '24', '--role',
              'weather=none', 'wind=known', '--seeds', '1', '2', '--output',
              str(tmp_path / 'out.json'), '--work-dir', str(tmp_path / 'w')])

  data, *seeds = ran
  assert (data.name, data.target, data.horizon) == ('city_temps', 'temp', 24)
  assert data.roles == {'weather': None, 'wind': 'known'}
  assert data.write('anywhere') == str(csv_path) and seeds == [1, 2]


@pytest.mark.parametrize('arguments, refusal', [
    (['--csv', 'x.csv', '--output', 'o.json'], '--csv needs --target'),
    (['--csv', 'x.csv', '--target', 't'], 'give another --output'),
    (['--csv', 'x.csv', '--target', 't', '--datasets', 'ercot', '--output', 'o.json'],
     'leave out --datasets'),
    (['--target', 't'], 'describe a --csv'),
    (['--role', 'a=known'], 'describe a --csv'),
])
def test_a_csv_run_is_refused_without_what_it_needs(arguments, refusal, capsys):
  with pytest.raises(SystemExit):
    suite.main(arguments)
  assert refusal in capsys.readouterr().err


def test_a_role_not_written_column_equals_role_is_refused(tmp_path):
  (tmp_path / 'x.csv').write_text('a\n')
  with pytest.raises(SystemExit, match='write COLUMN=ROLE'):
    suite.own_csv(str(tmp_path / 'x.csv'), 'a', None, ['weather'])


def test_a_model_trial_sets_its_settings_over_the_draft_and_records_them(tmp_path, monkeypatch):
  spec_path = tmp_path / 'x.yaml'
  spec_path.write_text(yaml.safe_dump({'name': 'x', 'horizon': 24, 'encoder_steps': 168,
                                       'frequency': 'hourly',
                                       'model': {'ensemble_size': 3, 'hidden_size': 16}}))
  monkeypatch.setattr(suite, 'draft_spec', lambda data, work_dir: str(spec_path))
  monkeypatch.setattr(suite, 'score_run', lambda data, path, seed, *args: _result(seed, 9.0))
  output = tmp_path / 'trial.json'

  suite.main(['--datasets', 'ercot', '--seeds', '1', '--model', 'target_location=last',
              'hidden_size=32', '--output', str(output), '--work-dir', str(tmp_path / 'w')])

  spec = yaml.safe_load(spec_path.read_text())
  assert spec['model'] == {'ensemble_size': 3, 'hidden_size': 32, 'target_location': 'last'}
  edits = json.loads(output.read_text())['datasets']['ercot']['user_edits']
  assert edits['model'] == {'target_location': 'last', 'hidden_size': 32}


@pytest.mark.parametrize('setting, refusal', [
    ('hidden=32', "the model has no setting 'hidden'"),
    ('target_location', 'write FIELD=VALUE'),
])
def test_a_model_setting_the_model_lacks_or_without_a_value_is_refused(setting, refusal):
  with pytest.raises(SystemExit, match=refusal):
    suite.model_overrides([setting])


def test_a_model_trial_is_refused_into_the_suites_own_results(capsys):
  with pytest.raises(SystemExit):
    suite.main(['--model', 'target_location=last'])
  assert '--model is a trial: give another --output' in capsys.readouterr().err


def test_a_csv_that_is_not_there_is_named(tmp_path):
  with pytest.raises(SystemExit, match='no_such.csv: no such file'):
    suite.main(['--csv', str(tmp_path / 'no_such.csv'), '--target', 't', '--output',
                str(tmp_path / 'o.json')])


def test_the_unseen_data_sets_say_which_package_they_need(tmp_path, monkeypatch):
  from benchmarks import unseen_data
  monkeypatch.setitem(sys.modules, 'vega_datasets', None)  # as if not installed
  with pytest.raises(SystemExit, match='pip install vega_datasets'):
    unseen_data.write(str(tmp_path))
