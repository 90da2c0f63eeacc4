"""The Markdown tables of the benchmark results (the JSON files `run_all` writes)."""

from typing import Any, Dict, List, Tuple

_STALLION_METRICS = ('mae', 'q_risk_p50', 'q_risk_p90', 'coverage_p10_p90')
_NAIVE_NAMES = {'repeat_last': 'repeat last value', 'seasonal_24': 'seasonal naive, 24 h'}
_LINEAR_NAME = 'NLinear, least squares on the train windows'
# ETTh1 runs by (setting, lookback, horizon, ensemble size).
_Configurations = Dict[Tuple[str, int, int, int], List[Dict[str, Any]]]
# Pipeline components with a column of their own; the others are summed as 'other'.
_COMPONENT_COLUMNS = {'TimeSeriesExampleGen': 'ExampleGen', 'StatisticsGen': 'StatisticsGen',
                      'Transform': 'Transform', 'Windowing': 'Windowing',
                      'Trainer': 'Trainer', 'Evaluator': 'Evaluator'}


def markdown(results: Dict[str, Dict[str, Any]]) -> str:
  """All tables for `results` (benchmark name -> its JSON), in a fixed order."""
  # Benchmarks may be rerun one at a time (`--only`): each says when and on what it ran.
  lines = ['# Benchmark results', '']
  lines += [f'- {name}: {_machine_line(result)}' for name, result in results.items()]
  lines.append('')
  if 'etth1' in results:
    lines += _etth1(results['etth1'])
  if 'stallion' in results:
    lines += _stallion(results['stallion'])
  lines += _pipeline_times(results)
  if 'speed' in results:
    lines += _throughput(results['speed'])
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


def _etth1(result: Dict[str, Any]) -> List[str]:
  protocol = result['protocol']
  lines = ['## ETTh1: test MSE and MAE of the z-scored OT', '',
           f'Every stride-1 window of the {protocol["test_rows"]} test rows; z-score of the '
           f'{protocol["train_rows"]} train rows (mean {protocol["target_mean"]:.3f}, std '
           f'{protocol["target_std"]:.3f}). TFT: the Trainer\'s model of a pipeline run, '
           f'budget {result["train_steps"]} steps, early stopping on the eval split (windows '
           f'every {result["eval_stride"]} h); a TFT ensemble trains each member on this budget, '
           'one after the other, and forecasts their mean; a configuration run several '
           'times shows the mean, and the range in brackets.', '']
  rows = []
  configurations: _Configurations = _grouped(result['runs'], 'setting', 'lookback',
                                             'horizon', 'ensemble_size')
  for horizon in sorted({key[2] for key in configurations}, reverse=True):
    of_horizon = _of_horizon(configurations, horizon)
    for (setting, lookback, _, ensemble_size), runs in of_horizon.items():
      rows.append([horizon, f'{forecaster(ensemble_size)}, {setting}', lookback,
                   runs[0]['test_windows'],
                   _spread(_errors(runs, 'mse')), _spread(_errors(runs, 'mae')),
                   _training(runs)])
    first = next(iter(of_horizon.values()))[0]  # the naive forecasts are the same in all
    for name, errors in first['naive'].items():
      rows.append([horizon, _NAIVE_NAMES.get(name, name), '', first['test_windows'],
                   f'{errors["mse"]:.4f}', f'{errors["mae"]:.4f}', ''])
    for lookback, run in _linear_by_lookback(of_horizon).items():
      rows.append([horizon, _LINEAR_NAME, lookback, run['test_windows'],
                   f'{run["linear"]["mse"]:.4f}', f'{run["linear"]["mae"]:.4f}', ''])
    for name, errors in result['published'].get(str(horizon), {}).items():
      rows.append([horizon, f'{name} (published)', 336, '', f'{errors["mse"]:.3f}',
                   f'{errors["mae"]:.3f}', ''])
  lines += _table(['horizon', 'forecast', 'lookback', 'test windows', 'MSE', 'MAE',
                   'training'], rows)
  of_target_horizons = {horizon: _of_horizon(configurations, int(horizon))
                        for horizon in result['target_mse']}
  targets = [f'h{horizon} <= {target}: best TFT {_best_mse(of_target_horizons[horizon])}'
             for horizon, target in result['target_mse'].items()
             if of_target_horizons[horizon]]
  if targets:
    lines += ['', 'Targets (test MSE of a configuration, the mean where it ran several '
              'times): ' + ', '.join(targets) + '.']
  return lines + ['']


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


def _digits(metric: str) -> int:
  """Decimals of a Stallion metric: one for the MAE (volume units), four otherwise."""
  return 1 if metric == 'mae' else 4


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


def _stallion(result: Dict[str, Any]) -> List[str]:
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
  rows = [[f'{forecaster(size)} ({len(runs)} runs)'] + [
      _spread([run['model'][key] for run in runs], _digits(key)) for key in _STALLION_METRICS]
          for (size,), runs in by_size.items()]
  rows.append(['last value, empirical interval'] + [
      _spread([result['naive_last_value'][key]], _digits(key)) for key in _STALLION_METRICS])
  return lines + _table(['forecast', 'MAE', 'q-risk P50', 'q-risk P90',
                         'P10-P90 coverage'], rows) + ['']


def _pipeline_times(results: Dict[str, Dict[str, Any]]) -> List[str]:
  runs = []
  if 'speed' in results and 'synthetic_pipeline' in results['speed']:
    synthetic = results['speed']['synthetic_pipeline']
    runs.append((f'synthetic default ({synthetic["rows"]} rows, {synthetic["train_steps"]} '
                 'steps)', synthetic))
  for run in results.get('etth1', {}).get('runs', []):
    runs.append((f'ETTh1 {forecaster(run["ensemble_size"])} {run["setting"]} '
                 f'L{run["lookback"]} h{run["horizon"]} #{run["repeat"]}', run['pipeline']))
  for run in results.get('stallion', {}).get('runs', []):
    runs.append((f'Stallion {forecaster(run["ensemble_size"])} #{run["repeat"]}',
                 run['pipeline']))
  if not runs:
    return []
  rows = []
  for name, pipeline in runs:
    components = pipeline['components']
    named = [components.get(node, 0.0) for node in _COMPONENT_COLUMNS]
    other = sum(components.values()) - sum(named)
    rows.append([name] + [f'{s:.0f}' for s in named + [other, pipeline['seconds']]] +
                [f'{pipeline["peak_rss_mib"]:.0f}'])
  return ['## Local pipeline: wall time per component (s) and peak memory', '',
          'LocalDagRunner, Beam DirectRunner in memory; component times from the metadata '
          'store; peak resident memory of the whole run\'s process.', ''] + _table(
              ['run'] + list(_COMPONENT_COLUMNS.values()) +
              ['other', 'total', 'peak RSS (MiB)'], rows) + ['']


def _throughput(result: Dict[str, Any]) -> List[str]:
  rows = [[name, f'{figures["parameter_count"]:,}', figures['batch_size'],
           figures['windows_per_second'], f'{figures["seconds_per_step"]:.3f}',
           f'{figures["warmup_seconds"]:.0f}', f'{figures["peak_rss_mib"]:.0f}']
          for name, figures in result['throughput'].items()]
  return ['## Training throughput and peak memory of the training step', '',
          '`benchmarks/tft_throughput.py`\'s measurement without XLA, each model in a '
          'process that does nothing else (TensorFlow\'s runtime included).', ''] + _table(
              ['model', 'parameters', 'batch', 'windows/s', 's/step', 'warm-up (s)',
               'peak RSS (MiB)'], rows) + ['']
