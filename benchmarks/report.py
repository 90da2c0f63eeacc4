"""The Markdown tables of the benchmark results (the JSON files in `benchmarks/results`).

Each table has one function here; `results.md` (`markdown`) and the tables of the READMEs
and `benchmarks/pages/*.md` (`benchmarks.readme_tables`) both come from them.
"""

import functools
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

Results = Dict[str, Dict[str, Any]]  # benchmark name (JSON file stem) -> its JSON
_STALLION_METRICS = (('mae', 1), ('q_risk_p50', 3), ('q_risk_p90', 3), ('coverage_p10_p90', 2))
_NAIVE_NAMES = {'repeat_last': 'repeat last value', 'seasonal_24': 'seasonal naive, 24 h',
                'seasonal_168': 'seasonal naive, 168 h'}
_LINEAR_NAME = 'NLinear, least squares on the train windows'
# ETTh1 runs by (setting, lookback, horizon, ensemble size).
_Configurations = Dict[Tuple[str, int, int, int], List[Dict[str, Any]]]
# Pipeline components with a column of their own; the others are summed as 'other'.
_COMPONENT_COLUMNS = {'TimeSeriesExampleGen': 'ExampleGen', 'StatisticsGen': 'StatisticsGen',
                      'Transform': 'Transform', 'Windowing': 'Windowing',
                      'Trainer': 'Trainer', 'Evaluator': 'Evaluator'}
_PEER_WIDTHS = {160: 'pytorch-forecasting, real inputs embedded at 160 '
                     '(`hidden_continuous_size=160`)',
                8: 'pytorch-forecasting, its default `hidden_continuous_size=8` '
                   '(a smaller model)'}


def markdown(results: Results) -> str:
  """All sections for `results`, in a fixed order."""
  # Benchmarks may be rerun one at a time (`--only`): each says when and on what it ran.
  lines = ['# Benchmark results', '']
  lines += [f'- {name}: {_machine_line(result)}' for name, result in results.items()
            if 'machine' in result]
  lines.append('')
  if 'etth1' in results:
    lines += _etth1_section(results['etth1'])
  if 'stallion' in results:
    lines += _stallion_section(results)
  for heading, table in (('## Local pipeline: wall time per component (s) and peak memory',
                          pipeline_times_table),
                         ('## Training throughput and peak memory of the training step',
                          throughput_table)):
    rows = table(results)
    if rows:
      lines += [heading, ''] + rows + ['']
  return '\n'.join(lines)


def _machine_line(result: Dict[str, Any]) -> str:
  machine = result['machine']
  mode = 'quick smoke run (tiny data, a few steps)' if result['quick'] else 'full run'
  return (f'{mode} started {machine["started"]}: {machine["cpu_count"]} CPUs '
          f'({machine["cpu_model"]}), {machine["memory_gib"]} GiB, load average '
          f'{machine["load_average"]:.2f} at the start, commit {machine["commit"]}, '
          f'TensorFlow {machine["tensorflow"]}.')


def _table(header: List[str], rows: List[List[Any]]) -> List[str]:
  lines = ['| ' + ' | '.join(header) + ' |', '|' + ' --- |' * len(header)]
  return lines + ['| ' + ' | '.join(str(cell) for cell in row) + ' |' for row in rows]


def _etth1_section(result: Dict[str, Any]) -> List[str]:
  protocol = result['protocol']
  lines = ['## ETTh1: test MSE and MAE of the z-scored OT', '',
           f'Every stride-1 window of the {protocol["test_rows"]} test rows; z-score of the '
           f'{protocol["train_rows"]} train rows (mean {protocol["target_mean"]:.3f}, std '
           f'{protocol["target_std"]:.3f}). TFT: the Trainer\'s model of a pipeline run, '
           f'budget {result["train_steps"]} steps, early stopping on the eval split (windows '
           f'every {result["eval_stride"]} h); a TFT ensemble trains each member on this budget, '
           'one after the other, and forecasts their mean; a configuration run several '
           'times shows the mean, and the range in brackets.', '']
  lines += etth1_table({'etth1': result})
  configurations = _configurations(result)
  of_target_horizons = {horizon: _of_horizon(configurations, int(horizon))
                        for horizon in result['target_mse']}
  targets = [f'h{horizon} <= {target}: best TFT {_best_mse(of_target_horizons[horizon])}'
             for horizon, target in result['target_mse'].items()
             if of_target_horizons[horizon]]
  if targets:
    lines += ['', 'Targets (test MSE of a configuration, the mean where it ran several '
              'times): ' + ', '.join(targets) + '.']
  return lines + ['']


def etth1_table(results: Results) -> List[str]:
  """Each configuration's TFT runs, then the naive, linear and published figures."""
  result = results['etth1']
  rows = []
  configurations = _configurations(result)
  for horizon in sorted({key[2] for key in configurations}, reverse=True):
    of_horizon = _of_horizon(configurations, horizon)
    for (setting, lookback, _, ensemble_size), runs in of_horizon.items():
      rows.append([horizon, _runs_name(f'{forecaster(ensemble_size)}, {setting}', runs),
                   lookback, _spread(_errors(runs, 'mse')), _spread(_errors(runs, 'mae')),
                   '; '.join(_steps_trained(run['training']) for run in runs)])
    first = next(iter(of_horizon.values()))[0]  # the naive forecasts are the same in all
    for name, errors in first['naive'].items():
      rows.append([horizon, _NAIVE_NAMES.get(name, name), '', f'{errors["mse"]:.4f}',
                   f'{errors["mae"]:.4f}', ''])
    for lookback, run in _linear_by_lookback(of_horizon).items():
      rows.append([horizon, _LINEAR_NAME, lookback, f'{run["linear"]["mse"]:.4f}',
                   f'{run["linear"]["mae"]:.4f}', ''])
    for name, errors in result['published'].get(str(horizon), {}).items():
      rows.append([horizon, f'{name} (published)', 336, f'{errors["mse"]:.3f}',
                   f'{errors["mae"]:.3f}', ''])
  return _table(['horizon', 'forecast', 'lookback', 'MSE', 'MAE',
                 'steps trained (best epoch)'], rows)


def _configurations(result: Dict[str, Any]) -> _Configurations:
  return _grouped(result['runs'], 'setting', 'lookback', 'horizon', 'ensemble_size')


def _runs_name(name: str, runs: List[Dict[str, Any]]) -> str:
  """'TFT, univariate', or 'TFT, univariate, 3 runs'."""
  return name if len(runs) == 1 else f'{name}, {len(runs)} runs'


def _steps_trained(training: Dict[str, Any]) -> str:
  """'1050 (11)', or each member's for an ensemble: '1100, 800, 1050 (12, 6, 11)'."""
  members = training.get('members', [training])
  return (', '.join(str(member['steps_run']) for member in members) + ' (' +
          ', '.join(str(member['best_epoch']) for member in members) + ')')


def _linear_by_lookback(configurations: _Configurations) -> Dict[int, Dict[str, Any]]:
  """A run of each lookback, longest first, that scored the least-squares NLinear (the
  same in every run of a lookback and horizon)."""
  runs = [runs[0] for runs in configurations.values() if 'linear' in runs[0]]
  return {run['lookback']: run for run in sorted(runs, key=lambda run: -run['lookback'])}


def _grouped(runs: List[Dict[str, Any]], *fields: str
             ) -> Dict[Tuple[Any, ...], List[Dict[str, Any]]]:
  """The runs of each tuple of values of `fields`, in the order they ran."""
  groups: Dict[Tuple[Any, ...], List[Dict[str, Any]]] = {}
  for run in runs:
    groups.setdefault(tuple(run[field] for field in fields), []).append(run)
  return groups


def _of_horizon(configurations: _Configurations, horizon: int) -> _Configurations:
  return {key: runs for key, runs in configurations.items() if key[2] == horizon}


def _errors(runs: List[Dict[str, Any]], metric: str) -> List[float]:
  return [run['model'][metric] for run in runs]


def _mean(values: List[float]) -> float:
  return sum(values) / len(values)


def _spread(values: List[float], digits: int = 4) -> str:
  """'0.0538', or for several runs their mean and range: '0.0538 (0.0532-0.0547)'."""
  mean = f'{_mean(values):.{digits}f}'
  return mean if len(values) == 1 else (
      f'{mean} ({min(values):.{digits}f}-{max(values):.{digits}f})')


def _training(runs: List[Dict[str, Any]]) -> str:
  """Steps, epochs and Trainer time of each run."""
  return '; '.join(f'{training_used(run["training"])}, Trainer '
                   f'{run["training"]["trainer_seconds"]:.0f} s' for run in runs)


def training_used(training: Dict[str, Any]) -> str:
  """'1050 steps x 64 (epochs 21, best 11)', each member's for an ensemble."""
  members = training.get('members', [training])
  used = [f'{t["steps_run"]} steps x {training["batch_size"]} (epochs {t["epochs_run"]}, '
          f'best {t["best_epoch"]})' for t in members]
  return used[0] if len(used) == 1 else f'members: {", ".join(used)}'


def forecaster(ensemble_size: int) -> str:
  """'TFT', or 'TFT ensemble of 3'."""
  return 'TFT' if ensemble_size == 1 else f'TFT ensemble of {ensemble_size}'


def _best_mse(configurations: _Configurations) -> str:
  """The MSE cell of the configuration with the lowest mean MSE."""
  return _spread(min((_errors(runs, 'mse') for runs in configurations.values()), key=_mean))


def _stallion_section(results: Results) -> List[str]:
  result = results['stallion']
  protocol = result['protocol']
  by_size = _grouped(result['runs'], 'ensemble_size')
  training = [f'{forecaster(size)}: {_training(runs)}.' for (size,), runs in by_size.items()]
  lines = ['## Stallion: the last 6 months, volume in original units', '',
           f'{result["test_windows"]} windows, one per series: {protocol["horizon_months"]} '
           f'months ahead of {protocol["history_months"]} months of history (the naive '
           'interval\'s; the TFT reads the last '
           f'{protocol["encoder_months"]}). TFT budget '
           f'{result["train_steps"]} steps (each ensemble member\'s), early stopping on the '
           '6 months before; the mean of the pipeline runs and, for several, their range '
           f'in brackets. Training: {" ".join(training)}', '']
  return lines + stallion_table(results) + ['']


_PIPELINE_GBM = "LightGBM, the pipeline's own"


def stallion_table(results: Results) -> List[str]:
  """The TFT runs by ensemble size, LightGBM (`stallion_gbm`) when it ran, the last value."""
  result = results['stallion']
  rows = [[_runs_name(forecaster(size), runs)] + [
      _spread([run['model'][key] for run in runs], digits) for key, digits in _STALLION_METRICS]
          for (size,), runs in _grouped(result['runs'], 'ensemble_size').items()]
  if 'stallion_gbm' in results:
    rows.append(['LightGBM, global, quantile objectives'] + _stallion_cells(
        results['stallion_gbm']['model']))
  pipeline_gbm = results.get('stallion_gbm', {}).get('pipeline')
  if pipeline_gbm:
    rows.append(_pipeline_gbm_row(pipeline_gbm))
  rows.append(['last value, empirical interval'] + _stallion_cells(result['naive_last_value']))
  return _table(['forecast', 'MAE', 'q-risk P50', 'q-risk P90', 'P10-P90 coverage'], rows)


def stallion_by_step_table(results: Results) -> List[str]:
  """MAE by month ahead: the TFT runs' mean by ensemble size, LightGBM, the last value."""
  result = results['stallion']
  rows = [[_runs_name(forecaster(size), runs)] + [
      f'{_mean(list(step)):.1f}' for step in zip(*[run['model']['mae_by_step'] for run in runs])]
          for (size,), runs in _grouped(result['runs'], 'ensemble_size').items()]
  if 'stallion_gbm' in results:
    rows.append(['LightGBM, global'] + _step_cells(results['stallion_gbm']['model']))
  pipeline_gbm = results.get('stallion_gbm', {}).get('pipeline')
  if pipeline_gbm:
    rows.append([_PIPELINE_GBM] + _step_cells(pipeline_gbm))
  rows.append(['last value'] + _step_cells(result['naive_last_value']))
  horizon = result['protocol']['horizon_months']
  return _table(['forecast'] + [f'month {step}' for step in range(1, horizon + 1)], rows)


def _step_cells(figures: Dict[str, Any]) -> List[str]:
  return [f'{mae:.1f}' for mae in figures['mae_by_step']]


def _pipeline_gbm_row(record: Dict[str, Any]) -> List[str]:
  """The Stallion table's row of `GbmBaseline`'s record; a record from before its bands
  has the median's MAE only."""
  if 'q_risk' not in record:
    return [f'{_PIPELINE_GBM} (median only)', f'{record["mae"]:.1f}', '', '', '']
  return [f'{_PIPELINE_GBM}, its band calibrated on the eval split'] + _stallion_cells(
      {'mae': record['mae'], 'q_risk_p50': record['q_risk']['p50'],
       'q_risk_p90': record['q_risk']['p90'], 'coverage_p10_p90': record['coverage']['0.1:0.9']})


def _stallion_cells(figures: Dict[str, float]) -> List[str]:
  return [f'{figures[key]:.{digits}f}' for key, digits in _STALLION_METRICS]


def pipeline_times_table(results: Results) -> List[str]:
  """Per component, the default data's run and the first run of each benchmark
  configuration."""
  runs = []
  if 'synthetic_pipeline' in results.get('speed', {}):
    synthetic = results['speed']['synthetic_pipeline']
    runs.append((f'default data ({synthetic["rows"]:,} rows, {synthetic["train_steps"]} '
                 'steps)', synthetic))
  configurations = _configurations(results['etth1']) if 'etth1' in results else {}
  for (setting, lookback, horizon, size), of_configuration in configurations.items():
    runs.append((_first_of(f'ETTh1 {forecaster(size)}, {setting}, {lookback}, h{horizon}',
                           of_configuration), of_configuration[0]['pipeline']))
  stallion = results.get('stallion', {'runs': []})['runs']
  for (size,), of_size in _grouped(stallion, 'ensemble_size').items():
    runs.append((_first_of(f'Stallion {forecaster(size)}', of_size), of_size[0]['pipeline']))
  if not runs:
    return []
  rows = []
  for name, pipeline in runs:
    components = pipeline['components']
    named = [components.get(node, 0.0) for node in _COMPONENT_COLUMNS]
    other = sum(components.values()) - sum(named)
    rows.append([name] + [f'{s:.0f}' for s in named + [other, pipeline['seconds']]] +
                [_gib(pipeline['peak_rss_mib'])])
  return _table(['run'] + list(_COMPONENT_COLUMNS.values()) + ['other', 'total', 'peak RSS'],
                rows)


def _first_of(name: str, runs: List[Dict[str, Any]]) -> str:
  return name if len(runs) == 1 else f'{name} (first of {len(runs)} runs)'


def _gib(mib: float) -> str:
  return f'{mib / 1024:.1f} GiB'


def throughput_table(results: Results) -> List[str]:
  """Windows per second and peak memory of each model `speed` measured."""
  measured = results.get('speed', {}).get('throughput', {})
  rows = [[name, f'{figures["parameter_count"]:,}', figures['batch_size'],
           figures['windows_per_second'], _gib(figures['peak_rss_mib'])]
          for name, figures in measured.items()]
  return _table(['model', 'parameters', 'batch', 'windows/s', 'peak RSS'], rows) if rows else []


def _peer_precision(peer_run: Dict[str, Any]) -> str:
  """A peer run's precision; runs measured before the bfloat16 pair name none."""
  return peer_run.get('precision', 'float32')


def peer_ratio_key(peer_run: Dict[str, Any]) -> str:
  """The key of a peer run's ratio in `peer_comparison`'s results:
  'hidden_continuous_size_160', or 'bfloat16_hidden_continuous_size_160'."""
  precision = _peer_precision(peer_run)
  prefix = '' if precision == 'float32' else f'{precision}_'
  return f'{prefix}hidden_continuous_size_{peer_run["hidden_continuous_size"]}'


def peer_table(results: Results, key: str = 'peer_throughput') -> List[str]:
  """The project's windows per second beside the peer's, and their ratio: both in
  float32, then (where measured) both in bfloat16; under it, the host (`results[key]`
  is one run of `benchmarks.peer_comparison`)."""
  result = results[key]
  ours = result['project']
  rows = [[f'project, every input embedded at the hidden size '
           f'({result["size"]["hidden_size"]}), as in the paper',
           f'{ours["parameter_count"]:,}', ours['windows_per_second'], '']]
  float32_runs = [run for run in result['peer']['runs'] if _peer_precision(run) == 'float32']
  bfloat16_runs = [run for run in result['peer']['runs']
                   if _peer_precision(run) == 'bfloat16']
  for run in float32_runs:
    width = run['hidden_continuous_size']
    rows.append([_PEER_WIDTHS.get(width, f'pytorch-forecasting, `hidden_continuous_size='
                                         f'{width}`'),
                 f'{run["parameter_count"]:,}', run['windows_per_second'],
                 _ratio_cell(result, peer_ratio_key(run))])
  if 'project_bfloat16' in result:
    ours = result['project_bfloat16']
    rows.append(['project in bfloat16 (`precision: mixed_bfloat16`)',
                 f'{ours["parameter_count"]:,}', ours['windows_per_second'], ''])
  for run in bfloat16_runs:
    width = run['hidden_continuous_size']
    rows.append([f'pytorch-forecasting in bfloat16 (`torch.autocast`), '
                 f'`hidden_continuous_size={width}`', f'{run["parameter_count"]:,}',
                 run['windows_per_second'], _ratio_cell(result, peer_ratio_key(run))])
  return _table(['model', 'parameters', 'windows/s', 'project / peer'], rows) + [
      '', f'Host: {_host(result["host"])}.{_matmul_rates(result)}']


def _matmul_rates(result: Dict[str, Any]) -> str:
  """' Float32 matmuls ... TensorFlow 170 GFLOPS, torch 140.', or '' for runs measured
  before `peer_comparison` timed them."""
  if 'matmul_gflops' not in result:
    return ''
  size, rates = result['size'], result['matmul_gflops']
  rows, width = size['encoder_steps'] * size['batch_size'], size['hidden_size']
  return (f' Float32 matmuls of a per-variable GRN\'s shape, [{rows:,}, {width}] x [{width}, '
          f'{width}], in that round: TensorFlow {rates["tensorflow"]} GFLOPS, torch '
          f'{rates["torch"]}.')


def _host(description: Dict[str, Any]) -> str:
  """'AMD EPYC (family 26, model 2), 2 CPUs, with avx2, fma'
  (`benchmarks.host.description`; runs measured before the generation or the flags were
  recorded name neither)."""
  flags, generation = description.get('cpu_kernel_flags'), description.get('cpu_generation')
  return (description['cpu_model'] + (f' ({generation})' if generation else '')
          + f', {description["cpu_count"]} CPUs'
          + (f', with {", ".join(flags)}' if flags else ''))


def _ratio_cell(result: Dict[str, Any], key: str) -> str:
  """'2.10', or with several rounds '2.10 (rounds: 2.02, 2.10, 2.44)'."""
  ratio = f'{result["ratio_project_over_peer"][key]:.2f}'
  rounds = result.get('rounds', [])
  if len(rounds) < 2:
    return ratio
  return f'{ratio} (rounds: {", ".join(f"{r[key]:.2f}" for r in rounds)})'


def headline_table(results: Results) -> List[str]:
  """A few lines for README.md: each published protocol's best single TFT (and ensemble),
  the strongest simple model, the best naive forecast."""
  rows = []
  etth1 = results['etth1']
  configurations = _configurations(etth1)
  for horizon in sorted({key[2] for key in configurations}, reverse=True):
    singles = {key: runs for key, runs in _of_horizon(configurations, horizon).items()
               if key[3] == 1}
    (setting, _, _, _), runs = min(singles.items(),
                                          key=lambda item: _mean(_errors(item[1], 'mse')))
    linear = min(run['linear']['mse'] for run in _linear_by_lookback(singles).values())
    naive = min(runs[0]['naive'].items(), key=lambda item: item[1]['mse'])
    rows.append([f'ETTh1, {setting}, h{horizon} (MSE)', f'{_mean(_errors(runs, "mse")):.4f}',
                 f'NLinear, least squares: {linear:.4f}',
                 f'{_NAIVE_NAMES.get(naive[0], naive[0])}: {naive[1]["mse"]:.4f}'])
  stallion = results['stallion']
  tft = '; '.join(
      f'{"" if size == 1 else forecaster(size).replace("TFT ", "") + ": "}'
      f'{_mean(_errors(runs, "mae")):.1f}'
      for (size,), runs in _grouped(stallion['runs'], 'ensemble_size').items())
  gbm = results['stallion_gbm']
  strongest = min([('LightGBM, global', gbm['model']['mae'])] + (
      [("LightGBM, the pipeline's own", gbm['pipeline']['mae'])] if 'pipeline' in gbm else []),
                  key=lambda item: item[1])
  rows.append([f'Stallion, {stallion["test_windows"]} series, '
               f'{stallion["protocol"]["horizon_months"]} months (MAE)', tft,
               f'{strongest[0]}: {strongest[1]:.1f}',
               f'last value: {stallion["naive_last_value"]["mae"]:.1f}'])
  return _table(['data', 'TFT', 'strongest simple model', 'naive'], rows)


def dev_loop_table(results: Results) -> List[str]:
  """The wall time of each command of the developer's loop in a fresh clone, and what it
  reported."""
  result = results['dev_loop']
  rows = []
  for name, step in result['steps'].items():
    reported = []
    if 'tests' in step:
      reported.append(f'{step["tests"]} (pytest {_minutes(step["pytest_seconds"])})')
    if 'eval_mae' in step:
      reported.append(f'MAE {step["eval_mae"]} against the best naive '
                      f'({step["best_naive"]}) {step["best_naive_mae"]}')
    if step.get('components'):
      slowest = sorted(step['components'].items(), key=lambda item: -item[1])[:4]
      reported.append(', '.join(f'{name} {seconds:.0f} s' for name, seconds in slowest))
    if step.get('slowest_test_files'):
      reported.append('slowest files ' + ', '.join(
          f'{os.path.basename(path)[:-3]} {_minutes(seconds)}'
          for path, seconds in list(step['slowest_test_files'].items())[:3]))
    if step.get('first_epochs'):
      reported.append('first epoch ' + ' and '.join(f'{s:g} s' for s in step['first_epochs'])
                      + ' (then ' + ' and '.join(f'{s:g} s' for s in step['second_epochs'])
                      + ')')
    command = f'`{step["command"]}`'
    rows.append([command if step['command'] == name else f'{name}: {command}',
                 _minutes(step['seconds']), '; '.join(reported)])
  host = result['host']
  flags = (f', with {", ".join(host["cpu_kernel_flags"])}' if host.get('cpu_kernel_flags')
           else '')
  return _table(['command, in a fresh clone', 'wall time', 'what it reported'], rows) + [
      '', f'Measured {result["measured"]} at commit {result["commit"]} on {host["cpu_model"]} '
      f'({host["cpu_count"]} CPUs{flags}) by `python -m benchmarks.dev_loop'
      f'{" --full" if "make test" in result["steps"] else ""}`.']


def _minutes(seconds: float) -> str:
  """'2 min 26 s', or '46 s'."""
  minutes, rest = divmod(round(seconds), 60)
  return f'{minutes} min {rest} s' if minutes else f'{rest} s'


# A profile's breakdowns (`benchmarks.step_profile`): its figures' key -> (what a row is,
# the row that sums the small ones).
_BREAKDOWNS = {'blocks_op_ms': ('block', 'the other blocks'),
               'op_types_op_ms': ('op type', 'the other op types')}


def step_profile_table(results: Results, least_share: float = 0.01, key: str = 'step_profile',
                       breakdown: str = 'blocks_op_ms') -> List[str]:
  """Op time per training step of each block (or op type) in each profile of `key`
  (`benchmarks.step_profile`), those below `least_share` of every profile's op time summed
  into one row."""
  profiles = results[key]['profiles']
  row_name, others = _BREAKDOWNS[breakdown]
  first = next(iter(profiles.values()))[breakdown]
  names = sorted({name for profile in profiles.values() for name in profile[breakdown]},
                 key=lambda name: -first.get(name, 0.0))
  shown = [name for name in names if any(
      profile[breakdown].get(name, 0.0) >= least_share * profile['op_ms_per_step']
      for profile in profiles.values())]

  def cells(pick) -> List[str]:
    return [_share(pick(profile), profile['op_ms_per_step']) for profile in profiles.values()]

  rows = [[name] + cells(lambda profile, name=name: profile[breakdown].get(name, 0.0))
          for name in shown]
  rows.append([others] + cells(lambda profile: sum(
      ms for name, ms in profile[breakdown].items() if name not in shown)))
  rows.append(['**all ops** (summed over threads)'] + cells(
      lambda profile: profile['op_ms_per_step']))
  rows.append(['**wall time per step**'] + [f'{profile["wall_ms_per_step"]:.0f}'
                                             for profile in profiles.values()])
  header = [row_name] + [f'{label} (ms, share): {profile["commit"]}'
                         for label, profile in profiles.items()]
  return _table(header, rows)


def _share(ms: float, total: float) -> str:
  return f'{ms:.0f} ({100 * ms / total:.0f}%)'


# What `benchmarks.scale` measures. The components whose cost grows with the rows: seconds,
# rows per second and artifact bytes.
SCALE_DATA_COMPONENTS = ('TimeSeriesExampleGen', 'StatisticsGen', 'Transform', 'Windowing')
# The others, timed: the Trainer's steps are fixed, the baseline's training rows capped
# (`evaluation.gbm_baseline.DEFAULT_MAX_TRAINING_ROWS`), ForecastGen grows with the series.
SCALE_MODEL_COMPONENTS = ('Trainer', 'GbmBaseline', 'ForecastGen')


def scale_table(results: Results) -> List[str]:
  """Per scale of the default data and Beam mode (`benchmarks.scale`): the run's seconds,
  each data component's seconds and rows per second, the other components' seconds ('-' in
  runs measured before they were timed), the run's peak memory, the artifacts' bytes
  against the CSV's."""
  rows = []
  for run in results['scale']['runs']:
    components = run['components']
    cells = [f'{components[name]["seconds"]:.0f} s '
             f'({components[name]["rows_per_second"] or 0:,}/s)'
             for name in SCALE_DATA_COMPONENTS]
    timed = [f'{components[name]["seconds"]:.0f} s' if name in components else '-'
             for name in SCALE_MODEL_COMPONENTS]
    artifacts = {name: figures['artifact_bytes'] / run['csv_bytes']
                 for name, figures in components.items()}
    rows.append([f'{run["scale"]}x: {run["series"]} x {run["days"]} days',
                 _beam_mode(run['beam_workers']), f'{run["rows"]:,}',
                 f'{run["seconds"]:.0f} s'] + cells + timed + [
                     _gib(run['peak_rss_mib']), f'{run["csv_bytes"] / 2**20:.1f} MiB',
                     f'{artifacts["TimeSeriesExampleGen"]:.1f} / {artifacts["Windowing"]:.1f}'])
  return _table(['data', 'Beam', 'rows', 'run', 'ExampleGen', 'StatisticsGen', 'Transform',
                 'Windowing',
                 f'Trainer ({results["scale"]["runs"][0]["train_steps"]} steps)',
                 'GbmBaseline', 'ForecastGen', 'peak RSS', 'CSV', 'examples / windows, x CSV'],
                rows)


def _beam_mode(workers: int) -> str:
  return 'in process' if workers == 1 else f'{workers} workers'


def stallion_calibration_table(results: Results) -> List[str]:
  """Per way of fitting the band's factors (`benchmarks.stallion_calibration`): the test
  coverage, shares beyond each end, q-risk P10 and P90 and band width, the single TFTs'
  mean and the ensemble's."""
  result = results['stallion_calibration']
  singles = [figures for label, figures in result['results'].items()
             if not label.startswith('ensemble')]
  [ensemble] = [figures for label, figures in result['results'].items()
                if label.startswith('ensemble')]
  fitted_on = {'none': 'none (the models\' own bands)', 'eval': 'the eval months (the Trainer)',
               'eval and backtest': 'the eval months and the backtest origin, pooled',
               'backtest': 'the backtest origin alone'}
  rows = []
  for variant, name in fitted_on.items():
    single = {key: _mean([s[variant]['test'][key] for s in singles])
              for key in ensemble[variant]['test']}
    rows.append([name] + [
        f'{single[key]:{form}} / {ensemble[variant]["test"][key]:{form}}'
        for key, form in (('coverage', '.3f'), ('below_p10', '.3f'), ('above_p90', '.3f'),
                          ('q_risk_p10', '.4f'), ('q_risk_p90', '.4f'), ('mean_width', '.0f'))])
  return _table(['factors fitted on', 'test coverage', 'below P10', 'above P90',
                 'q-risk P10', 'q-risk P90', 'band width (volume)'], rows) + [
                     '', f'Host: {_host(result["host"])}; seeds {result["seeds"]}; single '
                     'TFTs (mean) / their ensemble.']


def time_zone_table(results: Results) -> List[str]:
  """Per scenario (`benchmarks.time_zone`): the eval MAE with the calendar features in UTC
  and on the zone's clock, and the best naive forecast's."""
  result = results['time_zone']
  rows = []
  for pair in result['scenarios']:
    utc, local = pair['runs']['UTC'], pair['runs'][result['zone']]
    period = (f'eval {pair["eval_start"]} to {pair["end"]}' if pair.get('end') else
              f'eval from {pair["eval_start"]}')
    rows.append([f'{pair["scenario"]} ({period})',
                 f'{utc["mae"]:.3f}', f'{local["mae"]:.3f}', f'{local["mae"] / utc["mae"]:.2f}',
                 f'{local["best_naive_mae"]:.3f}', f'{utc["coverage_p10_p90"]:.2f} / '
                 f'{local["coverage_p10_p90"]:.2f}', str(local['eval_windows'])])
  return _table(['scenario', 'MAE, calendar in UTC', f'MAE, on {result["zone"]} time',
                 'ratio', 'best naive MAE', 'P10-P90 coverage', 'eval windows'], rows) + [
                     '', f'Host: {_host(result["host"])}; seed {result["seed"]}, '
                     f'{result["train_steps"]} training steps per run.']


def _figure(value: Optional[float]) -> str:
  return '-' if value is None else f'{value:.2f}'


def drift_bounds_table(results: Results) -> List[str]:
  """Per suite data set (`benchmarks.drift_bounds`): the columns and series levels the drift
  check names drift with the policy's bounds alone and with the bounds sized from the
  training rows, each column with its distance and the most a training stretch moved."""
  result = results['drift_bounds']
  rows = []
  for name, found in result['datasets'].items():
    columns = '; '.join(f"{c['column']} {max(c['value'], 0.0):.2f} "
                        f"({_figure(c['within_training'])})" for c in found['columns'])
    policy = [c['column'] for c in found['columns'] if c['policy_drift']]
    sized = [c['column'] for c in found['columns'] if c['sized_drift']]
    rows.append([name, f"{found['newest_split']}, {found['newest_times']} of "
                 f"{found['training_times']}", found['training_stretches'], columns,
                 ', '.join(policy) or 'none', ', '.join(sized) or 'none',
                 f"{found['levels_policy_drift']} / {found['levels_sized_drift']} of "
                 f"{found['series']}"])
  return _table(['data', 'newest rows: split, its times of the training rows\'', 'stretches',
                 'distance (most a stretch moved)', 'drift: policy bound',
                 'drift: sized bound', 'levels drifted: policy / sized'], rows)


def suite_table(results: Results, key: str = 'suite') -> List[str]:
  """Per data set of the development suite (`benchmarks.suite`), or of the runs in
  `results[key]`: the held-out test MAE of the TFT, the run's LightGBM and the best naive
  forecast (mean over seeds), the TFT's P10-P90 coverage, both models' q-risks, the run
  time, and which goals the TFT meets."""
  result = results[key]
  low, high = result['coverage_target']
  rows, met = [], 0
  for name, entry in result['datasets'].items():
    runs = entry['runs']
    mean = lambda path: _mean([functools.reduce(dict.get, path, run) for run in runs])
    tft, gbm = mean(('tft', 'mae')), mean(('lightgbm', 'mae'))
    naive_means = {key: _mean([run['naive'][key] for run in runs]) for key in runs[0]['naive']}
    best = min(naive_means, key=naive_means.get)
    coverage = mean(('tft', 'coverage'))
    keys = list(runs[0]['tft']['q_risk'])
    risks = {model: [mean((model, 'q_risk', key)) for key in keys]
             for model in ('tft', 'lightgbm')}
    goals = {'MAE at most LightGBM': tft <= gbm, 'below the best naive': tft < naive_means[best],
             'coverage': low <= coverage <= high,
             'q-risks at most LightGBM': all(t <= g for t, g in zip(*risks.values()))}
    missed = [goal for goal, held in goals.items() if not held]
    met += not missed
    rows.append([f'{name} (H {entry["horizon"]}, {entry["frequency"]})', f'{tft:.4g}',
                 f'{gbm:.4g}', f'{_NAIVE_NAMES.get(best, best)}: {naive_means[best]:.4g}',
                 f'{coverage:.3f}',
                 ' / '.join(f'{t:.3g}' for t in risks['tft']) + ' vs '
                 + ' / '.join(f'{g:.3g}' for g in risks['lightgbm']),
                 f'{mean(("command_seconds",)):.0f}', len(runs),
                 'all' if not missed else 'misses: ' + ', '.join(missed)])
  return _table(['data', 'TFT test MAE', 'LightGBM', 'best naive', 'TFT P10-P90 coverage',
                 f'q-risk {"/".join(k.upper() for k in keys)}: TFT vs LightGBM',
                 's per run', 'seeds', 'goals'], rows) + [
                     '', f'{met} of {len(rows)} data sets meet every goal (coverage '
                     f'{low:.2f} to {high:.2f}). Reproduce: `{result["command"]}`.']


_SUITE_COMPONENTS = ('TimeSeriesExampleGen', 'StatisticsGen', 'Transform', 'Windowing',
                     'GbmBaseline', 'Trainer', 'Evaluator')


def suite_times_table(results: Results, key: str = 'suite') -> List[str]:
  """Per data set of the development suite (or of `results[key]`): each component's
  seconds (mean over seeds, the rest summed), the pipeline's, and GbmBaseline's share."""
  rows = []
  for name, entry in results[key]['datasets'].items():
    runs = [run['components'] for run in entry['runs']]
    seconds = {key: _mean([run.get(key, 0.0) for run in runs]) for key in _SUITE_COMPONENTS}
    total = _mean([sum(run.values()) for run in runs])
    rest = total - sum(seconds.values())
    rows.append([name] + [f'{seconds[key]:.0f}' for key in _SUITE_COMPONENTS] +
                [f'{rest:.0f}', f'{total:.0f}', f'{seconds["GbmBaseline"] / total:.1%}'])
  return _table(['data', 'ExampleGen', *_SUITE_COMPONENTS[1:], 'the rest', 'pipeline',
                 'GbmBaseline share'], rows)


def first_step_table(results: Results) -> List[str]:
  """Seconds until the first training step has run, by stage, beside a later step's
  (`benchmarks.first_step`)."""
  result = results.get('first_step')
  if not result:
    return []
  rows = [[label, f'{figures["parameter_count"]:,}', f'{figures["step_graph_ops"]:,}',
           figures['build_seconds'], figures['trace_seconds'], figures['first_call_seconds'],
           figures['first_step_ready_seconds'], figures['later_step_seconds']]
          for label, figures in result['models'].items()]
  return _table(['model', 'parameters', 'ops in the step', 'build (s)', 'trace (s)',
                 'first call (s)', 'first step done (s)', 'a later step (s)'], rows) + [
                     '', f'Host: {_host(result["host"])}.']


# Each table by the name a block gives it (`<!-- table NAME ... -->`) in a README or in
# benchmarks/pages/*.md.
TABLES: Dict[str, Callable[[Results], List[str]]] = {
    'etth1': etth1_table, 'stallion': stallion_table,
    'stallion_by_step': stallion_by_step_table, 'pipeline_times': pipeline_times_table,
    'throughput': throughput_table, 'peer': peer_table,
    'peer_avx2': functools.partial(peer_table, key='peer_throughput_avx2'),
    'peer_avx512_second_host': functools.partial(
        peer_table, key='peer_throughput_avx512_second_host'),
    'peer_avx512_third_host': functools.partial(
        peer_table, key='peer_throughput_avx512_third_host'),
    'headline': headline_table, 'dev_loop': dev_loop_table,
    'step_profile': step_profile_table,
    'step_profile_avx2': functools.partial(step_profile_table, key='step_profile_avx2'),
    'step_profile_avx2_op_types': functools.partial(
        step_profile_table, key='step_profile_avx2', breakdown='op_types_op_ms'),
    'scale': scale_table,
    'stallion_calibration': stallion_calibration_table, 'time_zone': time_zone_table,
    'suite': suite_table, 'suite_times': suite_times_table,
    'suite_unseen': functools.partial(suite_table, key='suite_unseen'),
    'suite_unseen_times': functools.partial(suite_times_table, key='suite_unseen'),
    'drift_bounds': drift_bounds_table, 'first_step': first_step_table}
