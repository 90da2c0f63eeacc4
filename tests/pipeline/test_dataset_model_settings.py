"""What the runners pass to the Trainer: each data set's own model settings, the seed."""

import dataclasses

import pytest

from common import exit_codes
from kubeflow import runner as kubeflow_runner
from pipeline import local_runner
from serving import csv_rows, series_windows
from schema import datasets
from schema.time_split import TimeSplit
from tests.kubeflow.conftest import make_deployment
from schema import hparams
from trainer_module.training_config import TrainingConfig

# What `check_input_files` checks the newest span against.
_SPEC_AND_SPLIT = (datasets.SYNTHETIC, datasets.get_dataset('synthetic').split)
check_input_files = local_runner.check_input_files


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_dataset_model_settings_are_tft_config_fields(name):
  overrides = datasets.get_dataset(name).model_overrides
  # An unknown field raises TypeError, an invalid value ValueError.
  config = dataclasses.replace(hparams.TFTConfig(), **overrides)
  assert {field: getattr(config, field) for field in overrides} == dict(overrides)


def _local_pipeline_config(argv):
  args = local_runner.parse_args(argv)
  dataset = datasets.get_dataset(args.dataset)
  return local_runner.pipeline_config(
      args, 'tft-test', '/tmp/out', '/tmp/out/data', dataset.spec, dataset)


def _local_model_config(argv):
  return _local_pipeline_config(argv).model_config


def test_the_local_runner_seeds_the_trainer_only_when_asked():
  def seed(argv):
    custom_config = _local_pipeline_config(argv).trainer_custom_config()
    return TrainingConfig.from_custom_config(custom_config).seed

  assert seed(['--seed', '7']) == 7
  assert seed([]) is None


def test_the_train_steps_flag_sets_the_budget():
  assert _local_pipeline_config(['--train-steps', '20']).train_steps == 20


def test_the_gradient_boosted_baseline_is_in_the_pipeline_unless_left_out():
  from pipeline.pipeline import create_pipeline

  def node_ids(argv):
    return {node.id for node in create_pipeline(_local_pipeline_config(argv)).components}

  assert 'GbmBaseline' in node_ids([])
  assert 'GbmBaseline' not in node_ids(['--no-gbm-baseline'])


def test_the_gradient_boosted_baseline_fits_the_models_quantiles_and_calibrates_as_it():
  from pipeline.pipeline import create_pipeline

  def baseline(config):
    [node] = [node for node in create_pipeline(config).components if node.id == 'GbmBaseline']
    return node.exec_properties

  config = _local_pipeline_config([])
  assert baseline(config)['calibrate_intervals'] is True
  changed = config.replace(model_overrides={'quantiles': (0.05, 0.5, 0.95)},
                           training_options={'calibrate_intervals': False})
  assert baseline(changed)['calibrate_intervals'] is False
  assert baseline(changed)['quantiles'] == '[0.05, 0.5, 0.95]'
  assert baseline(config)['calibrate_on_the_period_before'] is False
  pooled = _local_pipeline_config(['--calibrate-on-the-period-before'])
  assert pooled.training_config.calibrate_on_the_period_before
  assert baseline(pooled)['calibrate_on_the_period_before'] is True


def test_the_local_runner_centres_etth1_on_the_last_value():
  assert _local_model_config(['--dataset', 'etth1']).target_location == 'last'
  assert _local_model_config(['--dataset', 'etth1_univariate']).target_location == 'last'
  # The settings apply over any preset; other data sets keep the preset's.
  electricity = _local_model_config(['--dataset', 'etth1', '--preset', 'electricity'])
  assert (electricity.target_location, electricity.hidden_size) == ('last', 160)
  assert _local_model_config(['--dataset', 'synthetic']).target_location == 'mean'


def test_the_compiled_pipeline_passes_the_dataset_settings_to_the_trainer():
  config = kubeflow_runner.make_pipeline_config(make_deployment(dataset='etth1'))
  overrides = config.trainer_custom_config()['model_config']['overrides']
  assert overrides['target_location'] == 'last'
  assert overrides['point_loss'] == 'squared'


def test_a_missing_future_file_stops_the_run_before_it_starts(tmp_path, capsys):
  missing = tmp_path / 'future.csv'
  assert local_runner.main(['--future', str(missing), '--output-dir', str(tmp_path)]) == 2
  assert f'future file {missing} not found' in capsys.readouterr().err
  assert not (tmp_path / 'synthetic').exists()


def test_a_window_too_short_for_the_seasonal_lag_stops_the_run_before_it_starts(
    tmp_path, capsys):
  argv = ['--dataset', 'stallion', '--encoder-steps', '9', '--output-dir', str(tmp_path)]
  assert local_runner.main(argv) == 2
  assert ('seasonal_lag 12 must lie between the horizon (6) and the encoder steps (9)'
          in capsys.readouterr().err)
  assert not (tmp_path / 'stallion').exists()


def test_a_future_file_the_forecasts_cannot_read_stops_the_run_before_it_starts(
    tmp_path, capsys):
  future = tmp_path / 'future.csv'
  future.write_text('station,region,capacity,timestamp,load\n'  # no price
                    'station_00,north,50,2024-04-10 00:00:00,\n')
  assert local_runner.main(['--future', str(future), '--output-dir', str(tmp_path)]) == 2
  error = capsys.readouterr().err
  assert error.startswith(f"error: --future: {future}: columns ['price'] are missing; a "
                          "future file needs the key, time and known columns ['station', "
                          "'timestamp', 'price']")
  assert not (tmp_path / 'synthetic').exists()


def test_a_future_file_shorter_than_the_horizon_stops_the_run_before_it_starts(
    tmp_path, capsys):
  header = 'station,region,capacity,timestamp,load,price,temperature\n'
  rows = lambda station, hours: ''.join(
      f'{station},north,50,2024-04-10 {hour:02d}:00:00,,1.0,\n' for hour in range(hours))
  future = tmp_path / 'future.csv'
  future.write_text(header + rows('station_00', 7) + rows('station_01', 7))
  assert local_runner.main(['--future', str(future), '--output-dir', str(tmp_path)]) == 2
  assert capsys.readouterr().err.startswith(
      f"error: --future: series 'station_00' has 7 rows in the future file (from {future} "
      'line 2), fewer than the 24 steps of the horizon, and so has every series of the file')
  assert not (tmp_path / 'synthetic').exists()
  # Only some series short: they are named, and the run would go on.
  short = series_windows.short_future_series(csv_rows.read_series(
      str(future), datasets.SYNTHETIC, future=True), datasets.SYNTHETIC)
  assert len(short) == 2 and short[1].startswith("series 'station_01' has 7 rows")


@pytest.mark.parametrize('flag, value, message', [
    ('--horizon', '0', 'horizon (0) must'), ('--encoder-steps', '-5', 'encoder_steps (-5)')])
def test_a_window_flag_below_one_is_refused_not_ignored(tmp_path, capsys, flag, value,
                                                          message):
  assert local_runner.main([flag, value, '--output-dir', str(tmp_path)]) == 2
  error = capsys.readouterr().err
  assert error.startswith('error: --encoder-steps/--horizon: ') and message in error
  assert not (tmp_path / 'synthetic').exists()


def test_an_input_pattern_that_matches_no_file_stops_the_run_naming_what_is_there(
    tmp_path, capsys):
  data = tmp_path / 'data'
  (data / 'span-1').mkdir(parents=True)
  (data / 'readme.txt').write_text('x')
  argv = ['--data', str(data), '--input-pattern', 'spans-{SPAN}/*.csv', '--output-dir',
          str(tmp_path / 'runs')]
  assert local_runner.main(argv) == exit_codes.BAD_INPUT
  assert capsys.readouterr().err.endswith(
      f"\nerror: no file in {data} matches --input-pattern 'spans-{{SPAN}}/*.csv' ({{SPAN}} is "
      'a span number); it holds: readme.txt, span-1\n')


def test_fewer_spans_than_train_spans_asks_for_are_said(tmp_path, capsys):
  for span in (1, 2):
    (tmp_path / f'span-{span}').mkdir()
    (tmp_path / f'span-{span}' / 'rows.csv').write_text('x\n')
  args = local_runner.parse_args(['--input-pattern', 'span-{SPAN}/*.csv',
                                  '--train-spans', '3'])
  check_input_files(args, str(tmp_path), *_SPEC_AND_SPLIT)
  assert capsys.readouterr().out == (f'[pipeline] --train-spans 3: {tmp_path} holds 2 spans '
                                     '(1, 2); the run reads them all\n')


def _hour(hour) -> str:
  """'2024-01-03 01:00:00' for hour 49 of the data; '48:30' for half past hour 48."""
  hour, minute = (int(part) for part in hour.split(':')) if isinstance(hour, str) else (hour, 0)
  return f'2024-01-{1 + hour // 24:02d} {hour % 24:02d}:{minute:02d}:00'


def test_a_newest_span_too_short_for_an_eval_window_stops_the_run_before_it(tmp_path):
  spec = datasets.SYNTHETIC.with_window(encoder_steps=6, horizon=4)
  header = 'station,timestamp,load,region,capacity,price,temperature'

  def write_span(span, hours):
    (tmp_path / f'span-{span}').mkdir(exist_ok=True)
    (tmp_path / f'span-{span}' / 'rows.csv').write_text('\n'.join(
        [header] + [f's1,{_hour(hour)},1.0,north,50,1.1,20.0' for hour in hours]) + '\n')

  write_span(1, range(0, 48))
  write_span(2, range(48, 51))  # three new hours, a horizon of four
  args = local_runner.parse_args(['--input-pattern', 'span-{SPAN}/*.csv', '--train-spans', '2'])
  split = dataclasses.replace(_SPEC_AND_SPLIT[1], eval_start='last 8 steps', test_start=None)
  with pytest.raises(exit_codes.InputError) as stopped:
    check_input_files(args, str(tmp_path), spec, split)
  assert str(stopped.value) == (
      'the newest span, span 2 (span-2/*.csv), holds 3 steps of the hourly grid '
      '(2024-01-03 00:00:00 to 2024-01-03 02:00:00), and its own split gives the eval and '
      "test windows (the older spans' rows are all training data): eval_start 'last 8 steps' "
      "leaves it an eval period of 3 steps, in which no eval window's 4 forecast steps fit "
      '(they start on a multiple of 4). Make each span hold an eval (and test) period of new '
      'rows, or append the new rows to one growing file instead of adding spans '
      '(docs/pipeline.md: retraining as new data arrives)')
  # Four steps, but from hour 49: the first eval forecast starts at hour 52, after them.
  write_span(2, range(49, 53))
  with pytest.raises(exit_codes.InputError, match='an eval period of 4 steps, in which no eval window'):
    check_input_files(args, str(tmp_path), spec,
                      dataclasses.replace(split, eval_start='last 4 steps'))
  write_span(2, range(48, 60))  # twelve hours: an eval period of 8
  check_input_files(args, str(tmp_path), spec, split)
  write_span(2, ['48:30'])  # a time off the grid: ExampleGen names its file and line
  check_input_files(args, str(tmp_path), spec, split)
  # A test period is checked as the eval period is: hours 58 and 59 hold no test window.
  write_span(2, range(48, 60))
  held_out = dataclasses.replace(split, eval_start='last 12 steps',
                                 test_start='2024-01-03 10:00:00')
  with pytest.raises(exit_codes.InputError, match="test_start '2024-01-03 10:00:00' leaves it a test "
                     "period of 2 steps, in which no test window's 4 forecast steps fit"):
    check_input_files(args, str(tmp_path), spec, held_out)
  check_input_files(args, str(tmp_path), spec,
                    dataclasses.replace(held_out, test_start='2024-01-03 08:00:00'))


def test_patterns_with_tfx_version_and_date_specs_are_globbed_as_tfx_reads_them(tmp_path):
  (tmp_path / 'span-1' / 'ver-2').mkdir(parents=True)
  (tmp_path / 'span-1' / 'ver-2' / 'rows.csv').write_text('x\n')
  args = local_runner.parse_args(['--input-pattern', 'span-{SPAN}/ver-{VERSION}/*.csv'])
  check_input_files(args, str(tmp_path), *_SPEC_AND_SPLIT)
  args = local_runner.parse_args(['--input-pattern', 'span-{SPAN}/ver-{VERSION}/*.csv',
                                  '--train-spans', '2'])
  with pytest.raises(exit_codes.InputError, match=r'--train-spans 2: training on several spans '
                     r'reads patterns with \{SPAN\} only'):
    check_input_files(args, str(tmp_path), *_SPEC_AND_SPLIT)


def test_a_first_run_beside_other_pipelines_says_it_starts_a_new_one(tmp_path):
  first_run = local_runner.first_run_note
  runs = tmp_path / 'runs'
  assert first_run(str(runs), 'sales_v3') is None  # no output directory yet
  for name in ('sales', 'benchmarks', 'sales_v3'):
    (runs / name).mkdir(parents=True)
  (runs / 'sales' / 'metadata.sqlite').write_text('')
  assert first_run(str(runs), 'sales_v3') == (
      f"[pipeline] 'sales_v3' has no earlier run in {runs}, which holds sales: this run "
      'starts a new pipeline, trained from scratch with no last blessed model to compare '
      "with; to retrain one of those on new data, give its name (the spec's name:)")
  assert first_run(str(runs), 'sales') is None  # a pipeline that ran before
  (runs / 'sales' / 'metadata.sqlite').unlink()
  assert first_run(str(runs), 'sales_v3') is None  # the first pipeline of all


def test_a_stopped_run_names_the_error_without_the_beam_steps_beam_appended():
  error = ValueError("series 'a' has more than one row at 2024-01-05 02:00 [while running "
                     "'Cut'] [while running 'Windows']")
  assert local_runner.stopped_because(error) == (
      "series 'a' has more than one row at 2024-01-05 02:00")


def test_a_lightgbm_bar_without_the_lightgbm_baseline_is_refused_before_the_run():
  from pipeline.config import Blessing, PipelineConfig

  fields = dict(pipeline_name='p', pipeline_root='/r', data_root='/d', serving_model_dir='/s',
                dataset=_SPEC_AND_SPLIT[0], time_split=_SPEC_AND_SPLIT[1],
                blessing=Blessing(beat_lightgbm_by=0.0))
  assert PipelineConfig(**fields).gbm_baseline
  with pytest.raises(ValueError, match="beat_lightgbm_by compares the model with the LightGBM "
                     'baseline, which this run does not fit: drop --no-gbm-baseline'):
    PipelineConfig(**fields, gbm_baseline=False)


def test_the_refit_flag_refits_on_every_period_and_a_period_the_split_lacks_is_refused(
    tmp_path):
  from pipeline.config import Blessing, PipelineConfig
  from trainer_module.training_config import DEFAULT_REFIT

  dataset = datasets.get_dataset('synthetic')
  made = lambda *flags: local_runner.pipeline_config(
      local_runner.parse_args(['--output-dir', str(tmp_path), *flags]), 'p', str(tmp_path),
      str(tmp_path), dataset.spec, dataset)
  assert made().refit_splits == (dataset.split.split_names if DEFAULT_REFIT else ())
  assert made('--refit').refit_splits == ('train', 'eval', 'test')
  assert made('--no-refit').refit_splits == ()
  with pytest.raises(ValueError, match=r"refit splits \['test'\] are not periods of the split "
                     r"\['train', 'eval'\]"):
    PipelineConfig(pipeline_name='p', pipeline_root='/r', data_root='/d',
                   serving_model_dir='/s', dataset=_SPEC_AND_SPLIT[0],
                   time_split=TimeSplit(eval_start='2024-01-05'),
                   blessing=Blessing(), refit_splits=('train', 'test'))
