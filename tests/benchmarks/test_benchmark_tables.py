"""The benchmark results' Markdown tables, and the README blocks written from them."""

import re

import pytest

from benchmarks import dev_loop, readme_tables, report, scale, step_profile


_ONE_TFT = {'steps_run': 100, 'epochs_run': 2, 'best_epoch': 1}
_TWO_MEMBERS = {'members': [{'steps_run': 100, 'epochs_run': 2, 'best_epoch': 1},
                            {'steps_run': 150, 'epochs_run': 3, 'best_epoch': 2}]}


def _etth1_run(setting, horizon, repeat, mse, ensemble_size=1):
  used = _ONE_TFT if ensemble_size == 1 else _TWO_MEMBERS
  return {'setting': setting, 'lookback': 336, 'horizon': horizon, 'repeat': repeat,
          'ensemble_size': ensemble_size, 'test_windows': 10,
          'model': {'mse': mse, 'mae': 2 * mse},
          'naive': {'repeat_last': {'mse': 0.07, 'mae': 0.2}},
          'linear': {'mse': 0.0531, 'mae': 0.17},
          'training': {'batch_size': 64, 'trainer_seconds': 5.0, **used},
          'pipeline': {'components': {'Trainer': 5.0}, 'seconds': 9.0,
                       'peak_rss_mib': 100.0}}


def test_etth1_table_shows_the_mean_and_range_of_repeated_runs():
  result = {'machine': {'started': 'now', 'cpu_count': 2, 'cpu_model': 'cpu',
                        'memory_gib': 24, 'load_average': 0.0, 'commit': 'abc',
                        'tensorflow': '2.16.2'}, 'quick': False,
            'protocol': {'test_rows': 2880, 'train_rows': 8640, 'target_mean': 17.0,
                         'target_std': 9.0},
            'train_steps': 100, 'eval_stride': 4, 'published': {}, 'target_mse': {'96': 0.053},
            'runs': [_etth1_run('univariate', 96, 1, 0.050), _etth1_run('univariate', 96, 2, 0.058),
                     _etth1_run('multivariate', 96, 1, 0.053),
                     _etth1_run('univariate', 96, 1, 0.0525, ensemble_size=2)]}
  table = report.markdown({'etth1': result})

  rows = {line.split(' | ')[1]: line.split(' | ') for line in table.splitlines()
          if line.startswith('| 96 |')}
  assert rows['TFT, univariate, 2 runs'][3:6] == ['0.0540 (0.0500-0.0580)',
                                                  '0.1080 (0.1000-0.1160)', '100 (1); 100 (1) |']
  assert rows['TFT, multivariate'][3] == '0.0530'
  assert rows['TFT ensemble of 2, univariate'][3] == '0.0525'
  assert rows['TFT ensemble of 2, univariate'][5] == '100, 150 (1, 2) |'
  assert rows['repeat last value'][3] == '0.0700'
  assert rows['NLinear, least squares on the train windows'][2:4] == ['336', '0.0531']
  # The target is judged on a configuration's mean, not on its luckiest run.
  assert 'h96 <= 0.053: best TFT 0.0525.' in table
  assert '| ETTh1 TFT, univariate, 336, h96 (first of 2 runs) | ' in table
  assert '| ETTh1 TFT ensemble of 2, univariate, 336, h96 | ' in table

  # The README's line: the best single TFT's mean beside the best linear and naive figures.
  headline = report.headline_table({'etth1': result, 'stallion': _stallion_result(),
                                    'stallion_gbm': {'model': {'mae': 251.0}}})
  assert headline[2] == ('| ETTh1, multivariate, h96 (MSE) | 0.0530 | NLinear, least squares: '
                         '0.0531 | repeat last value: 0.0700 |')
  assert headline[3] == ('| Stallion, 350 series, 6 months (MAE) | 290.8; ensemble of 2: 281.0 '
                         '| LightGBM, global: 251.0 | last value: 293.0 |')


def _stallion_result():
  def run(repeat, mae, ensemble_size=1):
    used = _ONE_TFT if ensemble_size == 1 else _TWO_MEMBERS
    return {'repeat': repeat, 'ensemble_size': ensemble_size,
            'model': {'mae': mae, 'q_risk_p50': 0.18, 'q_risk_p90': 0.09,
                      'coverage_p10_p90': 0.7},
            'training': {'batch_size': 64, 'trainer_seconds': 70.0, **used},
            'pipeline': {'components': {'Trainer': 70.0}, 'seconds': 150.0,
                         'peak_rss_mib': 2600.0}}

  return {'machine': {'started': 'now', 'cpu_count': 2, 'cpu_model': 'cpu',
                      'memory_gib': 24, 'load_average': 0.0, 'commit': 'abc',
                      'tensorflow': '2.16.2'}, 'quick': False,
          'protocol': {'series': 350, 'history_months': 36, 'encoder_months': 12,
                       'horizon_months': 6},
          'test_windows': 350, 'train_steps': 1200,
          'naive_last_value': {'mae': 293.0, 'q_risk_p50': 0.187, 'q_risk_p90': 0.093,
                               'coverage_p10_p90': 0.745},
          'runs': [run(1, 277.3), run(2, 310.5), run(3, 284.5), run(1, 280.0, 2),
                   run(2, 282.0, 2)]}


def test_stallion_table_shows_the_mean_and_range_of_the_runs():
  gbm = {'model': {'mae': 250.7, 'q_risk_p50': 0.1601, 'q_risk_p90': 0.0903,
                   'coverage_p10_p90': 0.749}}
  table = report.markdown({'stallion': _stallion_result(), 'stallion_gbm': gbm})

  rows = {line.split(' | ')[0]: line.split(' | ') for line in table.splitlines()
          if line.startswith('| TFT') or line.startswith('| L') or line.startswith('| last')}
  assert rows['| TFT, 3 runs'][1:3] == ['290.8 (277.3-310.5)', '0.180 (0.180-0.180)']
  assert rows['| TFT ensemble of 2, 2 runs'][1] == '281.0 (280.0-282.0)'
  assert rows['| LightGBM, global, quantile objectives'][1:] == ['250.7', '0.160', '0.090',
                                                                  '0.75 |']
  assert rows['| last value, empirical interval'][1] == '293.0'
  assert '36 months of history (the naive interval\'s; the TFT reads the last 12)' in table
  assert '| Stallion TFT (first of 3 runs) | ' in table
  assert '| Stallion TFT ensemble of 2 (first of 2 runs) | ' in table


def test_stallion_by_step_table_gives_each_months_mae():
  result = _stallion_result()
  result['protocol']['horizon_months'] = 2
  for run, steps in zip(result['runs'], ([1.0, 5.0], [3.0, 9.0], [2.0, 4.0], [6.0, 6.0],
                                         [8.0, 2.0])):
    run['model']['mae_by_step'] = steps
  result['naive_last_value']['mae_by_step'] = [7.3, 8.0]
  gbm = {'model': {'mae_by_step': [1.5, 2.5]}}

  table = report.stallion_by_step_table({'stallion': result, 'stallion_gbm': gbm})

  assert table[0] == '| forecast | month 1 | month 2 |'
  assert table[2:] == ['| TFT, 3 runs | 2.0 | 6.0 |', '| TFT ensemble of 2, 2 runs | 7.0 | 4.0 |',
                       '| LightGBM, global | 1.5 | 2.5 |', '| last value | 7.3 | 8.0 |']

  gbm['pipeline'] = {'mae': 2.25, 'mae_by_step': [2.0, 2.5]}
  assert report.stallion_by_step_table({'stallion': result, 'stallion_gbm': gbm})[5:] == [
      "| LightGBM, the pipeline's own | 2.0 | 2.5 |", '| last value | 7.3 | 8.0 |']
  hand_built = {'mae': 3.0, 'q_risk_p50': 0.1, 'q_risk_p90': 0.1, 'coverage_p10_p90': 0.8}
  # A record from before the baseline's bands, then one with them.
  assert "| LightGBM, the pipeline's own (median only) | 2.2 |  |  |  |" in (
      report.stallion_table({'stallion': result, 'stallion_gbm': {**gbm, 'model': hand_built}}))
  gbm['pipeline'].update(q_risk={'p10': 0.05, 'p50': 0.15, 'p90': 0.07},
                         coverage={'0.1:0.9': 0.787})
  assert ("| LightGBM, the pipeline's own, its band calibrated on the eval split | 2.2 | 0.150 "
          '| 0.070 | 0.79 |') in report.stallion_table(
              {'stallion': result, 'stallion_gbm': {**gbm, 'model': hand_built}})


_BLOCK = ('<!-- table {name}: python -m benchmarks.readme_tables writes it -->\n{body}'
          '<!-- end of table -->\n')


def test_readme_blocks_are_rewritten_from_the_results():
  speed = {'synthetic_pipeline': {
      'rows': 100, 'train_steps': 10, 'seconds': 9.0, 'peak_rss_mib': 2048.0,
      'components': {'Trainer': 5.0, 'Pusher': 1.0},
      'eval_metrics': {'mean_absolute_error': 2.1, 'naive_mae_repeat_last': 25.9,
                       'naive_mae_seasonal_168': 2.84}}}
  text = 'Intro.\n\n' + _BLOCK.format(name='headline', body='| stale |\n') + 'After.\n'
  results = {'etth1': {'runs': [_etth1_run('univariate', 96, 1, 0.050)], 'published': {}},
             'stallion': _stallion_result(), 'stallion_gbm': {'model': {'mae': 251.0}},
             'speed': speed}

  rendered = readme_tables.render(text, results)
  assert rendered.startswith('Intro.\n\n<!-- table headline: ')
  assert rendered.endswith("| LightGBM, global: 251.0 | last value: 293.0 |\n"
                           '<!-- end of table -->\nAfter.\n')
  assert '| stale |' not in rendered
  assert readme_tables.render(rendered, results) == rendered

  times = readme_tables.render(_BLOCK.format(name='pipeline_times', body=''), results)
  assert '| default data (100 rows, 10 steps) | 0 | 0 | 0 | 0 | 5 | 0 | 1 | 9 | 2.0 GiB |' in times


def test_the_headline_names_the_strongest_gradient_boosted_model():
  results = {'etth1': {'runs': [_etth1_run('univariate', 96, 1, 0.050)], 'published': {}},
             'stallion': _stallion_result(),
             'stallion_gbm': {'model': {'mae': 251.0}, 'pipeline': {'mae': 246.0}}}
  table = '\n'.join(report.headline_table(results))
  assert "| LightGBM, the pipeline's own: 246.0 | last value: 293.0 |" in table
  results['stallion_gbm']['pipeline']['mae'] = 252.0
  assert '| LightGBM, global: 251.0 | last value' in '\n'.join(report.headline_table(results))


@pytest.mark.parametrize('text, message', [
    (_BLOCK.format(name='nonesuch', body=''), "unknown table 'nonesuch'"),
    (_BLOCK.format(name='peer', body=''), 'needs results/peer_throughput.json'),
    ('<!-- table peer: no end -->\n| a |\n', 'has no "<!-- end of table -->"'),
])
def test_readme_blocks_that_cannot_be_written_are_refused(text, message):
  with pytest.raises(ValueError, match=re.escape(message)):
    readme_tables.render(text, {}, source='README.md')


def test_the_readme_tables_match_the_committed_results():
  assert readme_tables.update(check=True) == [], (
      'a README table differs from benchmarks/results: run python -m benchmarks.readme_tables')


def test_step_profile_table_compares_the_profiles_block_by_block():
  def profile(commit, blocks, wall):
    return {'commit': commit, 'wall_ms_per_step': wall, 'blocks_op_ms': blocks,
            'op_ms_per_step': sum(blocks.values())}
  results = {'step_profile': {'profiles': {
      'before': profile('aaa', {'history_vsn: selection GRN': 300.0, 'lstm': 100.0,
                                'attention': 4.0, 'optimizer': 596.0}, 600.0),
      'after': profile('bbb', {'history_vsn: selection GRN': 100.0, 'lstm': 100.0,
                               'attention': 3.0, 'optimizer': 597.0}, 450.0)}}}

  table = report.step_profile_table(results)
  assert table[0] == '| block | before (ms, share): aaa | after (ms, share): bbb |'
  rows = [line.split(' | ')[0][2:] for line in table[2:]]
  # Largest first in the first profile; blocks under 1% of every profile summed.
  assert rows == ['optimizer', 'history_vsn: selection GRN', 'lstm', 'the other blocks',
                  '**all ops** (summed over threads)', '**wall time per step**']
  assert table[3] == '| history_vsn: selection GRN | 300 (30%) | 100 (12%) |'
  assert table[5] == '| the other blocks | 4 (0%) | 3 (0%) |'
  assert table[-1] == '| **wall time per step** | 600 | 450 |'


def test_step_profile_table_can_break_the_profiles_down_by_op_type():
  def profile(op_types, wall):
    return {'commit': 'ccc', 'wall_ms_per_step': wall, 'op_ms_per_step': sum(op_types.values()),
            'blocks_op_ms': {'lstm': sum(op_types.values())}, 'op_types_op_ms': op_types}
  results = {'step_profile_avx2': {'profiles': {
      'as-built': profile({'_MklMatMul': 600.0, 'Mul': 395.0, 'Cast': 5.0}, 700.0),
      'matmuls-only': profile({'_MklMatMul': 600.0, 'Mul': 195.0, 'Cast': 5.0}, 500.0)}}}

  table = report.TABLES['step_profile_avx2_op_types'](results)
  assert table[0] == '| op type | as-built (ms, share): ccc | matmuls-only (ms, share): ccc |'
  assert table[2:5] == ['| _MklMatMul | 600 (60%) | 600 (75%) |', '| Mul | 395 (40%) | 195 (24%) |',
                        '| the other op types | 5 (0%) | 5 (1%) |']
  assert table[-1] == '| **wall time per step** | 700 | 500 |'


@pytest.mark.parametrize('op_name, block', [
    ('tft/history_vsn/variable_grn_3/output_dense/MatMul', 'history_vsn: one GRN per variable'),
    ('gradient_tape/tft/history_vsn/selection_grn/MatMul', 'history_vsn: selection GRN'),
    ('tft/history_vsn/unstack', 'history_vsn: the rest'),
    ('tft/observed_embedding/mul', 'input embeddings'),
    ('gradient_tape/tft/lstm/encoder/while', 'lstm'),
    ('tft/strided_slice_6/stack', 'slices and concatenations between blocks'),
    ('Adam/sub_384/ReadVariableOp', 'optimizer'),
    ('quantile_loss/Mean', 'loss, metrics and the rest'),
])
def test_profiled_ops_are_attributed_to_their_block(op_name, block):
  layers = {'history_vsn', 'observed_embedding', 'lstm'}
  assert step_profile.block_of(op_name, 'tft', layers) == block


def test_scale_table_gives_rows_per_second_and_bytes_against_the_csv():
  def component(seconds, rows_per_second, artifact_bytes):
    return {'seconds': seconds, 'rows_per_second': rows_per_second,
            'artifact_bytes': artifact_bytes}
  run = {'scale': 10, 'beam_workers': 1, 'series': 60, 'days': 200, 'rows': 288000,
         'csv_bytes': 2 * 2**20, 'train_steps': 20, 'seconds': 301.4, 'peak_rss_mib': 5120.0,
         'components': {'TimeSeriesExampleGen': component(61.0, 4721, 6 * 2**20),
                        'StatisticsGen': component(10.0, 28800, 1000),
                        'Transform': component(26.0, 11077, 8 * 2**20),
                        'Windowing': component(111.0, 2595, 30 * 2**20),
                        'Trainer': component(40.0, 7200, 5000)}}

  [_, _, row] = report.scale_table({'scale': {'runs': [run]}})
  assert row == ('| 10x: 60 x 200 days | in process | 288,000 | 301 s | 61 s (4,721/s) | 10 s (28,800/s) | '
                 '26 s (11,077/s) | 111 s (2,595/s) | 40 s | - | - | 5.0 GiB | 2.0 MiB | '
                 '3.0 / 15.0 |')  # measured before GbmBaseline and ForecastGen were timed
  run['components'].update(GbmBaseline=component(35.0, None, 100),
                           ForecastGen=component(2.4, None, 200))
  [_, _, row] = report.scale_table({'scale': {'runs': [run]}})
  assert '| 111 s (2,595/s) | 40 s | 35 s | 2 s | 5.0 GiB |' in row
  run['beam_workers'] = 2
  [_, _, row] = report.scale_table({'scale': {'runs': [run]}})
  assert row.startswith('| 10x: 60 x 200 days | 2 workers | 288,000 |')


def test_directory_bytes_counts_every_file_below(tmp_path):
  (tmp_path / 'a' / 'b').mkdir(parents=True)
  (tmp_path / 'a' / 'one').write_bytes(b'x' * 3)
  (tmp_path / 'a' / 'b' / 'two').write_bytes(b'y' * 4)
  assert scale.directory_bytes(str(tmp_path / 'a')) == 7
  assert scale.directory_bytes(str(tmp_path / 'missing')) == 0


def test_the_slowest_test_files_sum_their_tests_from_the_junit_report(tmp_path):
  (tmp_path / 'junit.xml').write_text(
      '<testsuites><testsuite name="pytest">'
      '<testcase classname="tests.pipeline.test_run" name="test_a" time="10.5"/>'
      '<testcase classname="tests.pipeline.test_run" name="test_b[x]" time="2.0"/>'
      '<testcase classname="tests.test_layers.TestGrn" name="test_c" time="20.0"/>'
      '<testcase classname="tests.common.test_fast" name="test_d" time="0.1"/>'
      '</testsuite></testsuites>')
  assert dev_loop.slowest_test_files(str(tmp_path / 'junit.xml'), 2) == {
      'tests/test_layers.py': 20.0, 'tests/pipeline/test_run.py': 12.5}


def test_a_dev_loop_test_step_asks_pytest_for_its_junit_report(tmp_path, monkeypatch):
  report = ('<testsuites><testcase classname="tests.test_x" name="test_a" time="3.5"/>'
            '</testsuites>')
  # Stands in for the Makefile: writes where PYTEST_ARGS's --junitxml says.
  monkeypatch.setattr(dev_loop, 'STEPS', {'make test': [
      'bash', '-c', f'echo \'{report}\' > "${{PYTEST_ARGS#--junitxml=}}"']})
  step = dev_loop.run_step('make test', str(tmp_path), str(tmp_path))
  assert step['slowest_test_files'] == {'tests/test_x.py': 3.5}


def test_a_dev_loop_step_reports_its_tests_and_the_runs_mae(tmp_path, monkeypatch):
  output = ('...\\n===== 481 passed, 2 skipped in 53.81s =====\\n'
            '[pipeline] Transform done in 12.8 s\\n'
            '[Trainer] epoch 1/20: loss 18.87, eval loss 5.427, 26.0 s (the first epoch also '
            'builds the training step)\\n[Trainer] epoch 2/20: loss 3.629, eval loss 2.577, '
            '5.1 s\\n[pipeline] Trainer done in 135.4 s\\n'
            '[Trainer] epoch 1/16: loss 18.52, 18.2 s (the first epoch also builds the training '
            'step)\\n[Trainer] epoch 2/16: loss 3.1, 4.9 s\\n  MAE beside a global '
            'LightGBM and the naive forecasts: model 2.243 | LightGBM 2.31 | repeat_last '
            '25.89 | seasonal_168 2.843 (best naive)')
  monkeypatch.setattr(dev_loop, 'STEPS', {'make run': ['bash', '-c', f'printf "{output}"'],
                                          'broken': ['bash', '-c', 'echo oops; exit 3']})
  step = dev_loop.run_step('make run', str(tmp_path), str(tmp_path))
  assert step['tests'] == '481 passed, 2 skipped' and step['pytest_seconds'] == 53.81
  assert (step['eval_mae'], step['lightgbm_mae'], step['best_naive'],
          step['best_naive_mae']) == (2.243, 2.31, 'seasonal_168', 2.843)
  assert step['components'] == {'Transform': 12.8, 'Trainer': 135.4}
  assert (step['first_epochs'], step['second_epochs']) == ([26.0, 18.2], [5.1, 4.9])
  with pytest.raises(SystemExit, match='broken failed \\(exit 3\\)'):
    dev_loop.run_step('broken', str(tmp_path), str(tmp_path))

  table = report.dev_loop_table({'dev_loop': {
      'measured': '2026-11-26', 'commit': 'abc',
      'host': {'cpu_model': 'cpu', 'cpu_count': 2, 'cpu_kernel_flags': ['avx2', 'fma']},
      'steps': {'make run': step, 'make test': {
          'command': 'bash .ci/run', 'seconds': 804.0, 'tests': '582 passed',
          'pytest_seconds': 793.0,
          'slowest_test_files': {'tests/a/test_one.py': 125.0, 'tests/test_two.py': 61.0}}}}})
  assert table[2].endswith(' | 481 passed, 2 skipped (pytest 54 s); MAE 2.243 against the '
                           'best naive (seasonal_168) 2.843; Trainer 135 s, Transform 13 s; '
                           'first epoch 26 s and 18.2 s (then 5.1 s and 4.9 s) |')
  assert table[3] == ('| make test: `bash .ci/run` | 13 min 24 s | 582 passed (pytest 13 min '
                      '13 s); slowest files test_one 2 min 5 s, test_two 1 min 1 s |')
  assert table[-1].endswith('(2 CPUs, with avx2, fma) by `python -m benchmarks.dev_loop '
                            '--full`.')


def _peer_results(with_bfloat16):
  def peer_run(width, windows, precision=None):
    # Results measured before the bfloat16 pair name no precision.
    return {'hidden_continuous_size': width, 'parameter_count': 2000 + width,
            'windows_per_second': windows, **({'precision': precision} if precision else {})}
  runs = [peer_run(160, 60.0, 'float32' if with_bfloat16 else None),
          peer_run(8, 120.0, 'float32' if with_bfloat16 else None)]
  ratios = {'hidden_continuous_size_160': 2.0, 'hidden_continuous_size_8': 1.0}
  result = {'size': {'hidden_size': 160}, 'peer': {'runs': runs},
            'host': {'cpu_model': 'AMD EPYC', 'cpu_count': 2,
                     'cpu_kernel_flags': ['avx2', 'fma']},
            'project': {'parameter_count': 3000, 'windows_per_second': 120.0},
            'ratio_project_over_peer': ratios, 'rounds': [ratios, ratios]}
  if with_bfloat16:
    runs.append(peer_run(160, 150.0, 'bfloat16'))
    ratios['bfloat16_hidden_continuous_size_160'] = 0.8
    result['project_bfloat16'] = {'parameter_count': 3000, 'windows_per_second': 125.0}
  return {'peer_throughput': result}


def test_peer_table_pairs_each_peer_run_with_the_project_at_its_precision():
  table = report.peer_table(_peer_results(with_bfloat16=True))
  assert table[-2:] == ['', 'Host: AMD EPYC, 2 CPUs, with avx2, fma.']
  table = table[:-2]
  assert [line.split(' | ')[0][2:] for line in table[2:]] == [
      'project, every input embedded at the hidden size (160), as in the paper',
      'pytorch-forecasting, real inputs embedded at 160 (`hidden_continuous_size=160`)',
      'pytorch-forecasting, its default `hidden_continuous_size=8` (a smaller model)',
      'project in bfloat16 (`precision: mixed_bfloat16`)',
      'pytorch-forecasting in bfloat16 (`torch.autocast`), `hidden_continuous_size=160`']
  assert table[3].endswith('| 60.0 | 2.00 (rounds: 2.00, 2.00) |')
  assert table[5] == '| project in bfloat16 (`precision: mixed_bfloat16`) | 3,000 | 125.0 |  |'
  assert table[-1].endswith('| 150.0 | 0.80 (rounds: 0.80, 0.80) |')
  # Results measured before the bfloat16 pair have only the float32 rows; those measured
  # before the CPU's flags were recorded name the model and the CPU count.
  earlier = _peer_results(with_bfloat16=False)
  del earlier['peer_throughput']['host']['cpu_kernel_flags']
  assert report.peer_table(earlier) == table[:5] + ['', 'Host: AMD EPYC, 2 CPUs.']
  # The run of another host is the same table, from its own results file.
  other_host = {'peer_throughput_avx2': _peer_results(with_bfloat16=True)['peer_throughput']}
  assert report.TABLES['peer_avx2'](other_host)[:-2] == table
  other_host['peer_throughput_avx2']['host']['cpu_generation'] = 'family 26, model 2'
  assert report.TABLES['peer_avx2'](other_host)[-1] == (
      'Host: AMD EPYC (family 26, model 2), 2 CPUs, with avx2, fma.')
  assert report.peer_ratio_key({'hidden_continuous_size': 8}) == 'hidden_continuous_size_8'


def test_peer_table_names_each_librarys_matmul_rate_when_the_run_measured_it():
  results = _peer_results(with_bfloat16=False)
  results['peer_throughput']['size'].update(encoder_steps=168, batch_size=64)
  results['peer_throughput']['matmul_gflops'] = {'tensorflow': 171.5, 'torch': 140.2}
  assert report.peer_table(results)[-1] == (
      'Host: AMD EPYC, 2 CPUs, with avx2, fma. Float32 matmuls of a per-variable GRN\'s '
      'shape, [10,752, 160] x [160, 160], in that round: TensorFlow 171.5 GFLOPS, torch '
      '140.2.')


def test_time_zone_table_puts_the_two_clocks_side_by_side():
  def run(mae, coverage):
    return {'mae': mae, 'q_risk_p50': 0.1, 'q_risk_p90': 0.05, 'coverage_p10_p90': coverage,
            'eval_windows': 168, 'best_naive_mae': 4.0}
  result = {'zone': 'Europe/Berlin', 'seed': 7, 'train_steps': 1000,
            'host': {'cpu_model': 'AMD EPYC', 'cpu_count': 2, 'cpu_kernel_flags': []},
            'scenarios': [{'scenario': 'across a clock change', 'eval_start': '2024-04-08',
                           'runs': {'UTC': run(5.0, 0.8), 'Europe/Berlin': run(2.5, 0.81)}}]}
  lines = report.time_zone_table({'time_zone': result})
  assert lines[0].startswith('| scenario | MAE, calendar in UTC | MAE, on Europe/Berlin time |')
  assert lines[2] == ('| across a clock change (eval from 2024-04-08) | 5.000 | 2.500 | 0.50 | '
                      '4.000 | 0.80 / 0.81 | 168 |')
  assert lines[-1].startswith('Host: AMD EPYC') and 'seed 7, 1000 training steps' in lines[-1]


def test_first_step_table_gives_each_stage_before_the_first_step_and_a_later_step():
  figures = {'preset': 'local', 'build_seconds': 2.8, 'trace_seconds': 7.0,
             'first_call_seconds': 4.5, 'first_step_ready_seconds': 14.3,
             'later_step_seconds': 0.13, 'step_graph_ops': 12192, 'trainable_variables': 287,
             'parameter_count': 42814, 'peak_rss_mib': 900.0}
  result = {'host': {'cpu_model': 'AMD EPYC', 'cpu_count': 2, 'cpu_kernel_flags': ['avx2']},
            'models': {'the default preset (hidden 16)': figures}}
  lines = report.TABLES['first_step']({'first_step': result})
  assert lines[0].startswith('| model | parameters | ops in the step | build (s) |')
  assert lines[2] == ('| the default preset (hidden 16) | 42,814 | 12,192 | 2.8 | 7.0 | 4.5 | '
                      '14.3 | 0.13 |')
  assert lines[-1] == 'Host: AMD EPYC, 2 CPUs, with avx2.'
  assert report.first_step_table({}) == []
