"""A new user's own CSV, end to end, through the commands they type.

The data (`benchmarks.shop_data`) is unlike the built-in sets: daily rows, two key columns,
a known covariate, missing values written two ways, a byte-order mark. `tft-pipeline init`
drafts the spec, the pipeline runs on it with a small budget, and the run's forecasts are
read back.
"""

import csv
import datetime
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import shop_data
from common import exit_codes
from components import delivered_forecasts
from pipeline import run_summary
from schema import dataset_file
from schema.dataset_spec import DType, Role

pytestmark = pytest.mark.slow(seconds=150)  # runs a pipeline


def _tft_pipeline(*args, cwd, env=None):
  return subprocess.run([sys.executable, '-m', 'pipeline.local_runner', *args], cwd=cwd,
                        capture_output=True, text=True, timeout=900, check=False, env=env)


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
  root = tmp_path_factory.mktemp('own_data')
  shop_data.write_sales(root / 'shop_sales.csv')
  shop_data.write_future(root / 'future.csv')
  (root / 'scratch').mkdir()  # its temporary files, which must not outlive it
  init = _tft_pipeline('init', '--data', 'shop_sales.csv', '--target', 'units_sold', cwd=root,
                       env={**os.environ, 'TMPDIR': str(root / 'scratch')})
  return root, init


def test_init_drafts_the_spec_and_the_schema_and_says_what_to_run(workspace):
  root, init = workspace
  assert init.returncode == 0, init.stderr
  assert ('tft-pipeline --spec shop_sales.yaml --data shop_sales.csv --future FUTURE.csv'
          in init.stdout)
  assert "FUTURE.csv: the known columns ['promo_flag'] over the 7 steps" in init.stdout
  dataset = dataset_file.load(str(root / 'shop_sales.yaml'))
  spec = dataset.spec
  assert spec.series_key_columns == ('region_code', 'store_no')
  assert (spec.time_column, spec.target_column) == ('day', 'units_sold')
  assert spec.frequency.value == 'daily'
  assert (spec.encoder_steps, spec.horizon) == (28, shop_data.HORIZON)
  assert spec.forecast_floor is None  # units with decimals that never reach 0: no floor drafted
  roles = {c.name: (c.role, c.dtype, c.allow_missing) for c in spec.columns}
  assert roles['floor_m2'] == (Role.STATIC, DType.REAL, False)
  assert roles['promo_flag'] == (Role.KNOWN, DType.REAL, False)
  assert roles['footfall'] == (Role.OBSERVED, DType.REAL, True)
  assert dataset.schema_path == str(root / 'shop_sales.schema.pbtxt')
  assert os.path.exists(dataset.schema_path)
  assert dataset.data_path == str(root / 'shop_sales.csv')
  # The lines the data cannot decide are marked for the user.
  text = (root / 'shop_sales.yaml').read_text()
  assert text.count('# CHECK') == 3  # store_no (a number as id), promo_flag, footfall
  # Nothing of the data (TFDV's statistics, say) is left in a temporary directory.
  assert os.listdir(root / 'scratch') == []


def test_the_pipeline_runs_on_the_spec_pushes_a_model_that_beats_naive_and_forecasts(
    workspace):
  root, _ = workspace
  drafted = (root / 'shop_sales.yaml').read_text().splitlines()
  assert [line for line in drafted if line.startswith('model: {ensemble_size: 3')]
  # A small model for a quick test, in place of the drafted ensemble.
  (root / 'shop_sales.yaml').write_text('\n'.join(
      [line for line in drafted if not line.startswith('model:')] +
      ['model: {hidden_size: 8, num_heads: 1, batch_size: 32}']) + '\n')
  # Seeded: an unseeded run of this small model missed the naive bar once in a suite run.
  run = _tft_pipeline('--spec', 'shop_sales.yaml', '--data', 'shop_sales.csv',
                      '--future', 'future.csv', '--train-steps', '300', '--seed', '1',
                      '--output-dir', 'runs', cwd=root)
  assert run.returncode == 0, run.stderr[-3000:]
  assert 'MAE beside a global LightGBM and the naive forecasts: model' in run.stdout
  assert 'no --future file' not in run.stderr
  # The long components say what they do, each between its start and its end.
  lines = run.stdout.splitlines()
  first = lambda prefix: next(i for i, line in enumerate(lines) if line.startswith(prefix))
  assert (first('[pipeline] GbmBaseline ...') < first('[GbmBaseline] ')
          < first('[GbmBaseline] P50: ') < first('[GbmBaseline] eval MAE ')
          < first('[pipeline] GbmBaseline done'))
  assert (first('[pipeline] Trainer ...') < first('[Trainer] ') < first('[Trainer] epoch 1/')
          < first('[Trainer] model trained: ') < first('[Trainer] calibrating the intervals')
          < first('[Trainer] exported in ') < first('[pipeline] Trainer done'))
  assert not [line for line in lines if line.startswith('Epoch ')]  # Keras' own lines
  # The summary printed is kept beside the runs.
  saved = root / 'runs' / 'shop_sales' / 'run_summary.txt'
  assert run.stdout.endswith(f"{saved.read_text()}  saved:       {saved} (the last run's "
                             'summary)\n')
  assert saved.read_text().startswith('Pipeline run summary\n')
  from tfx import v1 as tfx
  summary = run_summary.latest_run_summary(
      tfx.orchestration.metadata.sqlite_metadata_connection_config(
          str(root / 'runs' / 'shop_sales' / 'metadata.sqlite')), 'tft-shop_sales')
  assert summary.metrics['mae_vs_best_naive'] < 1.0
  assert summary.blessed is True and summary.pushed_to is not None

  report = delivered_forecasts.read_report(summary.forecasts_uri)
  assert report['model_blessed'] is True
  assert (report['series_forecast'], report['series_not_forecast']) == (
      len(shop_data.STORES), 0)
  with open(os.path.join(summary.forecasts_uri, delivered_forecasts.FORECASTS_CSV)) as f:
    rows = list(csv.DictReader(f))
  assert len(rows) == len(shop_data.STORES) * shop_data.HORIZON
  last_day = shop_data.FIRST_DAY + datetime.timedelta(days=shop_data.DAYS - 1)
  for region, store in shop_data.STORES:
    mine = [r for r in rows if (r['region_code'], r['store_no']) == (region, str(store))]
    assert [r['day'][:10] for r in mine] == [
        (last_day + datetime.timedelta(days=step)).isoformat() for step in range(1, 8)]
    p50 = np.array([float(r['p50']) for r in mine])
    # Original units: each store's forecasts lie around its own sales level.
    level = shop_data.level(region, store)
    assert 0.4 * level < p50.mean() < 2.5 * level
    # The promotion on the third day, known ahead, lifts its forecast above the same
    # weekday's level without promotion.
    third = shop_data.FIRST_DAY + datetime.timedelta(days=shop_data.DAYS + 2)
    assert p50[2] > shop_data.level(region, store) * shop_data.WEEKLY[third.weekday()]


def test_a_literal_nan_target_stops_the_run_at_its_line_and_nothing_is_written_after(
    workspace):
  root, _ = workspace
  lines = (root / 'shop_sales.csv').read_text(encoding='utf-8-sig').splitlines()
  fields = lines[41].split(',')  # line 42 of the file
  fields[-1] = 'NaN'
  lines[41] = ','.join(fields)
  bad = root / 'bad' / 'shop_sales.csv'
  bad.parent.mkdir()
  bad.write_text('\n'.join(lines) + '\n')
  run = _tft_pipeline('--spec', 'shop_sales.yaml', '--data', str(bad), '--output-dir',
                      'bad_runs', '--train-steps', '5', cwd=root)
  assert run.returncode == exit_codes.BAD_INPUT
  assert (f"{bad}, line 42: column 'units_sold' holds 'NaN', a missing or non-finite "
          'value') in run.stderr
  # Run without a future file: said at the start, before any component.
  warning = run.stderr.find("warning: the spec declares known columns ['promo_flag'] and no "
                            '--future file gives their values over the horizon')
  assert 0 <= warning < run.stderr.find("holds 'NaN'")
  # The error once, as the command prints it: no Beam traceback or TFX log line before it.
  assert 'Traceback' not in run.stderr and not re.search(r'Execution \d+ failed', run.stderr)
  assert run.stderr.count("holds 'NaN'") == 1
  pipeline_root = root / 'bad_runs' / 'shop_sales' / 'pipeline_root'
  assert not (pipeline_root / 'Transform').exists()
  assert not (pipeline_root / 'Trainer').exists()


def test_a_value_that_is_not_a_number_exits_2_from_every_command_naming_its_line(workspace):
  root, _ = workspace
  lines = (root / 'shop_sales.csv').read_text(encoding='utf-8-sig').splitlines()
  line = 1 + shop_data.DAYS - 2  # the first store's third-last day, inside its last window
  fields = lines[line - 1].split(',')
  fields[-1] = 'x'
  lines[line - 1] = ','.join(fields)
  bad = root / 'not_a_number' / 'shop_sales.csv'
  bad.parent.mkdir()
  bad.write_text('\n'.join(lines) + '\n')
  where = f'line {line}'
  init = _tft_pipeline('init', '--data', str(bad), '--target', 'units_sold',
                       '--output', str(bad.parent / 'drafted.yaml'), cwd=root)
  assert (init.returncode, where in init.stderr) == (exit_codes.BAD_INPUT, True), init.stderr
  run = _tft_pipeline('--spec', 'shop_sales.yaml', '--data', str(bad), '--output-dir',
                      'not_a_number_runs', '--train-steps', '5', cwd=root)
  assert (run.returncode, f'{bad}, {where}' in run.stderr) == (exit_codes.BAD_INPUT, True), (
      run.stderr[-3000:])
  model_dir = root / 'runs' / 'shop_sales' / 'serving_model'  # the run above published it
  predict = subprocess.run([sys.executable, '-m', 'serving.predict', '--model-dir',
                            str(model_dir), '--input', str(bad)], cwd=root,
                           capture_output=True, text=True, timeout=600, check=False)
  assert (predict.returncode, where in predict.stderr) == (exit_codes.BAD_INPUT, True), (
      predict.stderr)


def test_init_explains_data_it_cannot_use(tmp_path):
  (tmp_path / 'empty.csv').write_text(','.join(shop_data.HEADER) + '\n')
  run = _tft_pipeline('init', '--data', 'empty.csv', '--target', 'units_sold', cwd=tmp_path)
  assert run.returncode == 2
  assert 'the file has a header and no rows' in run.stderr
  (tmp_path / 'sales.csv').write_text('day,units_sold\n2024-01-01,3\n2024-01-02,x\n')
  run = _tft_pipeline('init', '--data', 'sales.csv', '--target', 'units_sold', cwd=tmp_path)
  assert run.returncode == 2
  assert ("target column 'units_sold' holds 'x' on line 3, which is not a number"
          in run.stderr)


def test_init_tells_horizon_rows_from_missing_targets(tmp_path):
  rows = 'day,units_sold,promo\n' + ''.join(
      f'2024-01-{d:02d},{d},0\n' for d in range(1, 21))
  (tmp_path / 'with_future.csv').write_text(rows + '2024-01-21,,1\n2024-01-22,,0\n')
  run = _tft_pipeline('init', '--data', 'with_future.csv', '--target', 'units_sold',
                      cwd=tmp_path)
  assert run.returncode == 2
  assert ("target column 'units_sold' has no value in 2 rows (first on line 22: ''), all "
          "after their series' last target value") in run.stderr
  assert 'tft-pipeline --future FILE' in run.stderr
  (tmp_path / 'gap.csv').write_text(rows.replace('2024-01-05,5,0', '2024-01-05,NA,0'))
  run = _tft_pipeline('init', '--data', 'gap.csv', '--target', 'units_sold', cwd=tmp_path)
  assert run.returncode == 2
  assert ("target column 'units_sold' has no value in 1 row (first on line 6: 'NA'); the "
          'pipeline trains on rows with a target') in run.stderr
