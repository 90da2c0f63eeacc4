"""The development suite: every data set as a new user runs it, scored on its held-out test.

Each data set goes through the commands a user types: `tft-pipeline init` drafts its spec
(with the horizon its domain needs, and the answers its documentation gives to the lines
`init` marks CHECK), then `tft-pipeline --spec ... --seed S` trains with the default budget.
The figures are the run's own, on the test period `init` held out, which nothing chose
on: the TFT's MAE, q-risk and P10-P90 coverage, the LightGBM the run fits beside it on the
same windows, and the naive forecasts. The runs skip the Refit (`--no-refit`): it trains
on the test rows, and the test figures are the judged model's either way.

Writes `results/suite.json` (each run as it ends, so a partial suite keeps what ran) and
the README tables generated from it.

  .venv/bin/python -m benchmarks.suite                         # every data set, seeds 1-3
  .venv/bin/python -m benchmarks.suite --datasets ercot epf --seeds 1
  .venv/bin/python -m benchmarks.suite --csv sales.csv --target units --horizon 7 \
      --output /tmp/sales.json                                  # a data set of your own
  .venv/bin/python -m benchmarks.suite --model target_location=last \
      --output /tmp/trial.json                                  # a trial of a model setting
"""

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import yaml

from benchmarks import host, readme_tables, shop_data
from benchmarks.backtest_cost import TFT_PIPELINE, timed

RESULTS_FILE = os.path.join(readme_tables.RESULTS_DIR, 'suite.json')
SEEDS = (1, 2, 3)
COVERAGE_TARGET = (0.75, 0.85)  # P10-P90: 0.80 +- 0.05


@dataclasses.dataclass(frozen=True)
class SuiteData:
  """One data set of the suite and the edits a user makes to `init`'s draft.

  Attributes:
    name: the suite's name of it (and its spec's).
    write: writes the CSV into a directory; returns its path.
    target: the column to forecast.
    horizon: the horizon its domain needs; None keeps `init`'s.
    roles: answers to `init`'s CHECK lines from the data's documentation: a column's role,
      or None to remove the column.
  """
  name: str
  write: Callable[[str], str]
  target: str
  horizon: Optional[int] = None
  roles: Dict[str, Optional[str]] = dataclasses.field(default_factory=dict)


def _shared(file_name: str) -> Callable[[str], str]:
  return lambda _: host.data_file(os.path.join(host.SHARED_DATA_DIR, file_name), '--shared')


def _default_data(directory: str) -> str:
  from pipeline import default_data
  path = os.path.join(directory, 'default_data.csv')
  default_data.generate(path)
  return path


def _shop(directory: str) -> str:
  path = os.path.join(directory, 'shop_sales.csv')
  shop_data.write_sales(path)
  return path


# The horizons and answers are `../shared/data/README.md`'s and the generators' docstrings'.
DATASETS = {data.name: data for data in (
    SuiteData('etth1', _shared('ETTh1.csv'), 'OT', 24),
    SuiteData('stallion', _shared('stallion.csv'), 'volume', 6,
              {'discount': 'observed', 'timeseries': None}),
    SuiteData('epf', _shared('epf_prices.csv'), 'y', 24,
              {'Exogenous1': 'known', 'Exogenous2': 'known'}),
    SuiteData('ercot', _shared('ercot_load.csv'), 'value', 24),
    SuiteData('default', _default_data, 'load', roles={'price': 'known'}),
    SuiteData('shop', _shop, 'units_sold'),
)}


def own_csv(path: str, target: str, horizon: Optional[int],
            roles: Sequence[str] = ()) -> SuiteData:
  """A data set outside the suite, run as the suite runs its own: `init`'s draft with the
  horizon and the answers to its CHECK lines (`roles`: 'COLUMN=ROLE', ROLE 'none' to
  remove the column) edited; named after the file."""
  if not os.path.isfile(path):
    raise SystemExit(f'--csv {path}: no such file')
  answers = {}
  for answer in roles:
    column, _, role = answer.partition('=')
    if not column or not role:
      raise SystemExit(f"--role {answer}: write COLUMN=ROLE ('price=known'; 'id=none' removes "
                       'the column)')
    answers[column] = None if role == 'none' else role
  path = os.path.abspath(path)
  return SuiteData(os.path.splitext(os.path.basename(path))[0], lambda _: path, target,
                   horizon, answers)


def _read_spec(spec_path: str) -> Dict[str, Any]:
  with open(spec_path, encoding='utf-8') as f:
    return yaml.safe_load(f)


def _write_spec(spec_path: str, spec: Mapping[str, Any]) -> None:
  with open(spec_path, 'w', encoding='utf-8') as f:
    yaml.safe_dump(dict(spec), f, sort_keys=False)


def draft_spec(data: SuiteData, work_dir: str) -> str:
  """`init`'s spec of `data` in `work_dir` with the user's edits; its path."""
  csv_path = data.write(work_dir)
  spec_path = os.path.join(work_dir, f'{data.name}.yaml')
  command = [TFT_PIPELINE, 'init', '--data', csv_path, '--target', data.target, '--name',
             data.name, '--output', spec_path, '--force']
  if data.horizon:
    command += ['--horizon', str(data.horizon)]
  timed(command, os.path.join(work_dir, 'init.log'))
  spec = _read_spec(spec_path)
  missing = set(data.roles) - {column['name'] for column in spec['columns']}
  if missing:
    raise SystemExit(f"{data.name}: init's draft has no column {sorted(missing)}")
  spec['columns'] = [{**column, 'role': data.roles.get(column['name'], column['role'])}
                     for column in spec['columns']
                     if data.roles.get(column['name'], column['role']) is not None]
  _write_spec(spec_path, spec)
  return spec_path


def model_overrides(settings: Sequence[str]) -> Dict[str, Any]:
  """`--model`'s 'FIELD=VALUE' settings as TFTConfig fields and their values (read as YAML:
  `hidden_size=32` an integer, `target_location=last` text)."""
  from schema.hparams import TFTConfig

  fields = [field.name for field in dataclasses.fields(TFTConfig)]
  overrides = {}
  for setting in settings:
    name, _, value = setting.partition('=')
    if not name or not value:
      raise SystemExit(f'--model {setting}: write FIELD=VALUE (target_location=last)')
    if name not in fields:
      raise SystemExit(f"--model {setting}: the model has no setting '{name}'; its settings: "
                       f'{", ".join(fields)}')
    overrides[name] = yaml.safe_load(value)
  return overrides


def set_model(spec_path: str, overrides: Mapping[str, Any]) -> None:
  """Sets `overrides` in the spec's `model:` section, over what `init` drafted there."""
  spec = _read_spec(spec_path)
  spec['model'] = {**(spec.get('model') or {}), **overrides}
  _write_spec(spec_path, spec)


def earlier_by_the_eval_period(spec_path: str) -> None:
  """Moves the spec's eval and test periods back by the eval period's length: the eval
  period ends where it began, the test period is the eval period before. A run of it is a
  backtest origin before the drafted one (`benchmarks.calibration_transfer
  --backtest-run-dirs`)."""
  from schema import time_split

  spec = _read_spec(spec_path)
  split = spec['split']
  eval_steps, test_steps = (time_split.last_steps(split[key])
                            for key in ('eval_start', 'test_start'))
  if eval_steps is None or test_steps is None:
    raise SystemExit(f"the drafted split reads {split!r}, not 'last N steps ...'")
  each = time_split.EACH_SERIES if time_split.of_each_series(split['eval_start']) else ''
  split['eval_start'] = f'last {2 * eval_steps - test_steps} steps{each}'
  split['test_start'] = f'last {eval_steps} steps{each}'
  _write_spec(spec_path, spec)


def score_run(data: SuiteData, spec_path: str, seed: int, work_dir: str,
              flags: Sequence[str] = ()) -> Dict[str, Any]:
  """One seeded run of `spec_path` in a fresh output directory (with `tft-pipeline`'s
  `flags` added): its test figures."""
  output_dir = os.path.join(work_dir, f'seed-{seed}')
  shutil.rmtree(output_dir, ignore_errors=True)
  seconds = timed([TFT_PIPELINE, '--spec', spec_path, '--seed', str(seed), '--no-refit',
                   '--no-warm-start', *flags, '--output-dir', output_dir],
                  os.path.join(work_dir, f'seed-{seed}.log'))
  from pipeline import run_summary
  from common import run_layout
  from tfx import v1 as tfx
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(output_dir, data.name, run_layout.METADATA_FILE))
  return {'seed': seed, 'command_seconds': round(seconds, 1),
          **test_figures(run_summary.latest_run_summary(metadata, f'tft-{data.name}'))}


def test_figures(summary) -> Dict[str, Any]:
  """The TFT's, LightGBM's and the naive forecasts' figures on a run's test windows, and
  the run's component times.

  Raises:
    SystemExit: the run judged no test split.
  """
  from components.gbm_baseline import figures_on
  from evaluation.metrics import NAIVE_MAE_PREFIX, coverage_name, q_risk_name
  from schema.time_split import TEST_SPLIT
  from trainer_module import interval_calibration
  from trainer_module.export import quantile_key

  if summary.judged_split != TEST_SPLIT:
    raise SystemExit('the run held out no test period: its spec has no split.test_start')
  metrics, quantiles = summary.metrics, summary.gbm_baseline['quantiles']
  gbm = figures_on(summary.gbm_baseline, TEST_SPLIT)
  band = interval_calibration.band_key(quantiles, 0, -1)
  calibration = summary.calibration or {}
  naive = {name[len(NAIVE_MAE_PREFIX):]: value for name, value in metrics.items()
           if name.startswith(NAIVE_MAE_PREFIX)}
  return {
      'test_windows': int(metrics['example_count']),
      'tft': {'mae': metrics['mean_absolute_error'],
              'q_risk': {quantile_key(q): metrics[q_risk_name(q)] for q in quantiles},
              'coverage': metrics[coverage_name(quantiles)]},
      'lightgbm': {'mae': gbm['mae'], 'q_risk': dict(gbm['q_risk']),
                   'coverage': gbm['coverage'][band]},
      'naive': naive, 'blessed': summary.blessed,
      # What chose on the eval windows: the epoch and the bands.
      'eval': {'tft_mae': summary.eval_metrics.get('mean_absolute_error'),
               'tft_coverage_before_calibration': calibration.get(
                   'eval_coverage_before', {}).get(band),
               # The period before the eval period, pooled into the calibration.
               'earlier_windows': calibration.get('earlier_windows'),
               'tft_coverage_before_calibration_earlier': calibration.get(
                   'earlier_coverage_before', {}).get(band),
               'training': summary.training},
      'components': {c.node_id: round(c.seconds, 1) for c in summary.components},
  }


def _load(path: str) -> Dict[str, Any]:
  if os.path.exists(path):
    with open(path, encoding='utf-8') as f:
      return json.load(f)
  return {'datasets': {}}


def record(path: str, data: SuiteData, spec_path: str, result: Dict[str, Any],
           command: str = '.venv/bin/python -m benchmarks.suite',
           model: Optional[Mapping[str, Any]] = None) -> None:
  """Adds one run's `result` to the suite's results at `path` (replacing the same seed's),
  with the spec it ran, the host and commit it ran on, the `command` that ran it and the
  `model` settings it set over the draft, if any."""
  suite = _load(path)
  entry = suite['datasets'].setdefault(data.name, {'runs': []})
  spec = _read_spec(spec_path)
  edits = {'horizon': data.horizon, 'roles': data.roles}
  if model:
    edits['model'] = dict(model)
  entry.update(horizon=spec['horizon'], encoder_steps=spec['encoder_steps'],
               frequency=spec['frequency'], user_edits=edits)
  result = {**result, 'host': host.description(), 'commit': host.commit()}
  entry['runs'] = sorted([r for r in entry['runs'] if r['seed'] != result['seed']] + [result],
                         key=lambda r: r['seed'])
  suite.update(command=command, seeds=list(SEEDS),
               coverage_target=list(COVERAGE_TARGET))
  readme_tables.write_results(path, suite)


def main(argv: Optional[List[str]] = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--datasets', nargs='+', choices=sorted(DATASETS),
                      help='default: every one')
  parser.add_argument('--seeds', nargs='+', type=int, default=list(SEEDS))
  parser.add_argument('--output', default=RESULTS_FILE)
  parser.add_argument('--work-dir', help='keep the runs and their logs here (default: a '
                      'temporary directory, removed)')
  parser.add_argument('--calibrate-on-the-period-before', action='store_true',
                      help="tft-pipeline's flag: the bands calibrated on the eval period and "
                      'the one before it (a trial; give another --output)')
  parser.add_argument('--earlier-by-the-eval-period', action='store_true',
                      help="move the drafted eval and test periods back by the eval period's "
                      'length (a backtest origin; give another --output)')
  parser.add_argument('--csv', help='a data set of your own instead of the suite\'s, run '
                      'the same way (with --target and --horizon; another --output)')
  parser.add_argument('--target', help="--csv's column to forecast")
  parser.add_argument('--horizon', type=int, help="--csv's horizon (default: init's)")
  parser.add_argument('--role', nargs='+', default=[], metavar='COLUMN=ROLE',
                      help="--csv's answers to init's CHECK lines: a column's role, or none "
                      'to remove it')
  parser.add_argument('--model', nargs='+', default=[], metavar='FIELD=VALUE',
                      help="model settings over the draft's (schema/hparams.py TFTConfig), "
                      'e.g. target_location=last (a trial; give another --output)')
  args = parser.parse_args(argv)
  if args.csv and not args.target:
    parser.error('--csv needs --target, the column to forecast')
  if args.csv and args.datasets:
    parser.error('--csv runs instead of the suite: leave out --datasets')
  if args.csv and args.output == RESULTS_FILE:
    parser.error("--csv runs a data set outside the suite: give another --output")
  if (args.target or args.horizon or args.role) and not args.csv:
    parser.error('--target, --horizon and --role describe a --csv: give one')
  if args.model and args.output == RESULTS_FILE:
    parser.error('--model is a trial: give another --output')
  model = model_overrides(args.model)
  command = ' '.join(['.venv/bin/python -m benchmarks.suite', *(
      sys.argv[1:] if argv is None else argv)])
  suite = ([own_csv(args.csv, args.target, args.horizon, args.role)] if args.csv
           else [DATASETS[name] for name in args.datasets or DATASETS])
  if args.earlier_by_the_eval_period and args.output == RESULTS_FILE:
    parser.error('--earlier-by-the-eval-period scores another period: give another --output')
  flags = ['--calibrate-on-the-period-before'] if args.calibrate_on_the_period_before else []
  if flags and args.output == RESULTS_FILE:
    parser.error('--calibrate-on-the-period-before is a trial: give another --output')
  work_root = args.work_dir or tempfile.mkdtemp(prefix='suite-')
  try:
    for data in suite:
      name = data.name
      work_dir = os.path.join(work_root, name)
      os.makedirs(work_dir, exist_ok=True)
      spec_path = draft_spec(data, work_dir)
      if args.earlier_by_the_eval_period:
        earlier_by_the_eval_period(spec_path)
      if model:
        set_model(spec_path, model)
      for seed in args.seeds:
        print(f'[suite] {name}, seed {seed} (log: {work_dir}/seed-{seed}.log)', flush=True)
        result = score_run(data, spec_path, seed, work_dir, flags)
        print(f"[suite] {name}, seed {seed}: test MAE TFT {result['tft']['mae']:.4g} | "
              f"LightGBM {result['lightgbm']['mae']:.4g} | best naive "
              f"{min(result['naive'].values()):.4g}; {result['command_seconds']} s", flush=True)
        record(args.output, data, spec_path, result, command, model)
  finally:
    if not args.work_dir:
      shutil.rmtree(work_root, ignore_errors=True)


if __name__ == '__main__':
  main()
