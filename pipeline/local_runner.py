"""Runs the pipeline on this machine with LocalDagRunner (SQLite metadata, Beam DirectRunner).

Installed as the `tft-pipeline` command (`tft-pipeline init` drafts a spec file for a
new data set: `pipeline.init_spec`). Supplies only paths, the metadata config and Beam
arguments; the pipeline itself is `pipeline.pipeline.create_pipeline`.
"""

import time

COMMAND_STARTED = time.monotonic()  # before the imports, most of the command's start-up

# pylint: disable=wrong-import-position
import argparse
import functools
import os
import re
import sys
from typing import List, Optional, Sequence

from common.exit_codes import BAD_INPUT, DONE, RUN_FAILED, InputError, input_error_message
from common import cli_logs
from common.run_layout import (BACKTEST_DIR, DEFAULT_OUTPUT, GENERATED_DATASET,
                                 METADATA_FILE, RUN_SUMMARY_FILE, SERVING_MODEL_DIR)
from schema import curated_schema, dataset_file
from schema.dataset_spec import DatasetSpec, Role
from schema.datasets import DATASETS, get_dataset
from schema.time_split import TimeSplit
from schema.hparams import DEFAULT_PRESET
from trainer_module.training_config import DEFAULT_REFIT, DEFAULT_TRAIN_STEPS

_BEAM_STEP = re.compile(r" \[while running '[^']*'\]")
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The in-memory DirectRunner stages no packages. Naming the project's setup.py as the
# workers' dependencies keeps every Beam component from building an sdist of TFX (about
# 49 MB) into a temporary directory that is never deleted (tfx.utils.dependency_utils).
BEAM_ARGS = ['--direct_running_mode=in_memory', '--direct_num_workers=1',
             f'--setup_file={os.path.join(PROJECT_ROOT, "setup.py")}']


def beam_args(workers: Optional[int] = None) -> List[str]:
  """The Beam arguments of the local components: the in-process DirectRunner (None), or
  its multi-process mode with `workers` worker processes (0: one per core), which pickles
  every DoFn into the workers as Vertex AI's containers do (`kubeflow.deployment`)."""
  if workers is None:
    return BEAM_ARGS
  if workers < 0:
    raise ValueError(f'--beam-workers must be 0 (one per core) or more, got {workers}')
  return ['--direct_running_mode=multi_processing', f'--direct_num_workers={workers}',
          *[arg for arg in BEAM_ARGS if not arg.startswith('--direct_')]]


def describe_beam(workers: Optional[int]) -> str:
  """'Beam in process' or 'Beam in N worker processes', for the run's header."""
  if workers is None:
    return 'Beam in process'
  count = os.cpu_count() if workers == 0 else workers
  return f'Beam in {count} worker process{"es" if count != 1 else ""}'


def parse_args(argv: Optional[List[str]] = None, backtest: bool = False
               ) -> argparse.Namespace:
  """The run's options; with `backtest`, `tft-pipeline backtest`'s (the run's, and the
  origins)."""
  parser = argparse.ArgumentParser(
      prog='tft-pipeline backtest' if backtest else 'tft-pipeline',
      description='Train, judge and publish a Temporal Fusion Transformer forecaster with a '
      'local TFX pipeline, then forecast: ExampleGen, StatisticsGen, SchemaGen, '
      'ExampleValidator and AnomalyGate, Transform, Windowing, Trainer, GbmBaseline (a '
      'LightGBM beside it), Evaluator, InterpretationReportGen, Pusher, ForecastGen.',
      epilog="For your own CSV, 'tft-pipeline init --data my.csv --target COLUMN' drafts a "
      "spec file; then 'tft-pipeline --spec my.yaml'. 'tft-pipeline backtest --spec "
      "my.yaml' fits the pipeline at several origins at the end of the data and scores each "
      'on what happened.')
  if backtest:
    parser.add_argument('--origins', type=int, default=3,
                        help='forecast origins at the end of the data, each a full fit on '
                        'the rows before it (default: %(default)s)')
    parser.add_argument('--every', type=int,
                        help='steps between origins, a multiple of the horizon (default: '
                        'the horizon)')
  dataset = parser.add_mutually_exclusive_group()
  dataset.add_argument('--dataset', default=GENERATED_DATASET, choices=sorted(DATASETS),
                       help='a built-in data set (default: %(default)s, generated data)')
  dataset.add_argument('--spec', help="your data set's spec file (YAML or JSON); "
                       "'tft-pipeline init --data my.csv --target COLUMN' drafts one")
  parser.add_argument('--data', help='CSV file or directory of CSV files; default: the '
                      "spec's 'data' file, or freshly generated data for "
                      f"'{GENERATED_DATASET}'")
  parser.add_argument('--future', help="CSV of the known columns over the H steps after "
                      "the data, for the run's forecasts (tft-predict's horizon rows); "
                      'needed only when the spec declares known columns')
  parser.add_argument('--input-pattern', default='*',
                      help='file pattern under the data directory; may contain {SPAN} to read '
                      "the latest span, e.g. 'span-{SPAN}/*.csv' (default: %(default)s). Files "
                      'are CSV or TFRecords of tf.Examples (.tfrecord, .tfrecord.gz)')
  parser.add_argument('--train-spans', type=int, default=1,
                      help='with {SPAN} in the pattern: train on the newest N spans in the '
                      "data directory; the newest span's eval rows are the evaluation data "
                      '(default: %(default)s)')
  parser.add_argument('--no-warm-start', action='store_true',
                      help='train from scratch instead of from the last blessed model')
  parser.add_argument('--calibrate-on-the-period-before', action='store_true',
                      help="calibrate the bands on the eval windows and the period as long "
                      'before them, forecast by a copy of the model trained before it '
                      '(trains the model a second time; docs/pipeline.md)')
  parser.add_argument('--beam-workers', type=int, metavar='N',
                      help="run the Beam components (ExampleGen, StatisticsGen, Transform, "
                      "Windowing, the Evaluator) in Beam's multi-process DirectRunner with N "
                      'worker processes, 0 for one per core, as Vertex AI runs them '
                      '(default: in this process)')
  parser.add_argument('--seed', type=int,
                      help="seed the Trainer's initialisation, dropout and shuffle, so a "
                      'rerun starts alike (default: unseeded)')
  parser.add_argument('--output-dir', default=DEFAULT_OUTPUT,
                      help='where runs write artifacts, metadata and published models; '
                      'each dataset gets a subdirectory (default: %(default)s)')
  parser.add_argument('--train-steps', type=int, default=DEFAULT_TRAIN_STEPS,
                      help='optimizer steps budget for the Trainer (default: %(default)s)')
  parser.add_argument('--preset', default=DEFAULT_PRESET,
                      help='model hyperparameter preset (default: %(default)s)')
  parser.add_argument('--encoder-steps', type=int, help="override the dataset's history length")
  parser.add_argument('--horizon', type=int, help="override the dataset's forecast horizon")
  parser.add_argument('--max-mae', type=float,
                      help="blessing bound on the median forecast's MAE on the judged "
                      'windows (the test windows, else the eval ones), original units')
  parser.add_argument('--series', type=int, default=12,
                      help="series to generate for 'synthetic' (default: %(default)s)")
  parser.add_argument('--days', type=int, default=100,
                      help="days of hourly data to generate for 'synthetic' (default: %(default)s)")
  parser.add_argument('--schema', choices=('curated', 'infer'), default='curated',
                      help="'curated': import the TFDV schema the spec names; 'infer': "
                      'infer one with SchemaGen (default: %(default)s)')
  parser.add_argument('--on-anomalies', choices=('stop', 'warn'), default='stop',
                      help='when the data breaks the schema: stop before Transform, or '
                      'warn and go on (default: %(default)s)')
  parser.add_argument('--no-gbm-baseline', action='store_true',
                      help='skip the global LightGBM model fitted on the same windows and '
                      'reported beside the TFT')
  parser.add_argument('--refit', action=argparse.BooleanOptionalAction,
                      default=DEFAULT_REFIT,
                      help='once blessed, train the model again on every row (train, eval '
                      'and test) for the epochs it chose, and publish that one; --no-refit '
                      'publishes the judged model (default: %(default)s)')
  parser.add_argument('--verbose', action='store_true', help='show all TFX and Beam logs')
  return parser.parse_args(argv)


def _load_dataset(args: argparse.Namespace) -> dataset_file.Dataset:
  """The data set of --spec, else the built-in one of --dataset."""
  if args.spec:
    return dataset_file.load(args.spec)
  return get_dataset(args.dataset)


def _input_path(args: argparse.Namespace, dataset: dataset_file.Dataset) -> Optional[str]:
  """--data, else the spec's data file; None: generate the default data."""
  if args.data is not None:
    return os.path.abspath(args.data)
  if dataset.data_path is not None:
    return dataset.data_path
  if args.spec or args.dataset != GENERATED_DATASET:
    raise InputError(f"spec '{dataset.spec.name}' names no data file; pass "
                     "--data my.csv, or add 'data: my.csv' to the spec file")
  return None


def _data_dir(input_path: Optional[str], output_dir: str) -> str:
  """The directory of input files the pipeline reads (`_prepare_data` fills it)."""
  if input_path is not None and os.path.isdir(input_path):
    return input_path
  return os.path.join(output_dir, 'data')


def _future_file(args: argparse.Namespace, input_path: Optional[str],
                 output_dir: str) -> Optional[str]:
  """--future, or for generated data the file `_prepare_data` writes the known price to."""
  if args.future:
    return os.path.abspath(args.future)
  return os.path.join(output_dir, 'future.csv') if input_path is None else None


def _prepare_data(args: argparse.Namespace, input_path: Optional[str], data_dir: str,
                  config) -> None:
  """Generates the default data (and its future prices) into `data_dir`, or links the
  one input file there."""
  from pipeline import default_data

  if input_path is None:
    rows = default_data.generate(os.path.join(data_dir, 'synthetic.csv'),
                                 num_series=args.series, days=args.days,
                                 future_path=config.future_file,
                                 future_steps=config.dataset.horizon)
    print(f'[data] generated {rows} rows of {args.series} series into {data_dir}')
    return
  if os.path.isdir(input_path):
    return
  if not os.path.isfile(input_path):
    raise InputError(f"data file {input_path} not found; pass --data with a CSV "
                     'file or directory')
  # ExampleGen reads a directory: link the file into one of its own.
  os.makedirs(data_dir, exist_ok=True)
  for name in os.listdir(data_dir):  # a link left by an earlier run with other data
    if os.path.islink(os.path.join(data_dir, name)):
      os.remove(os.path.join(data_dir, name))
  os.symlink(input_path, os.path.join(data_dir, os.path.basename(input_path)))


def check_input_files(args: argparse.Namespace, data_dir: str, spec: DatasetSpec,
                       split: TimeSplit) -> None:
  """Stops on an input pattern that matches no file in `data_dir`, naming what is there,
  and on a newest span too short for an eval window (`span_check`); says when the data
  holds fewer spans than --train-spans asks for."""
  import tensorflow as tf
  from components import span_files
  from pipeline import future_check, span_check

  pattern = args.input_pattern
  if not tf.io.gfile.glob(os.path.join(data_dir, span_files.as_glob(pattern))):
    held = sorted(tf.io.gfile.listdir(data_dir)) if tf.io.gfile.isdir(data_dir) else []
    shown = ', '.join(held[:10]) + (f' and {len(held) - 10} more' if len(held) > 10 else '')
    raise InputError(f"no file in {data_dir} matches --input-pattern '{pattern}'"
                     f"{' ({SPAN} is a span number)' if '{SPAN' in pattern else ''}; it holds: "
                     f"{shown or 'nothing'}")
  if '{SPAN' not in pattern:
    return
  try:
    spans = span_files.spans_in(data_dir, pattern)
  except ValueError as error:
    if args.train_spans == 1:  # a pattern ExampleGen resolves itself ({VERSION}, dates)
      return
    raise InputError(f'--train-spans {args.train_spans}: {error}') from None
  short = span_check.eval_period_error(
      future_check.data_files(data_dir, pattern, 1), spec, split,
      f'span {spans[-1]} ({span_files.with_span(pattern, spans[-1])})')
  if short:
    raise InputError(short)
  if args.train_spans > len(spans):
    print(f'[pipeline] --train-spans {args.train_spans}: {data_dir} holds {len(spans)} '
          f'span{"s" if len(spans) > 1 else ""} ({", ".join(map(str, spans))}); the run '
          'reads them all')


def first_run_note(output_root: str, name: str) -> Optional[str]:
  """A note when data set `name` has no run under `output_root` and other data sets do:
  a renamed spec (init names a data set after its file) starts a new pipeline, without
  the last blessed model to start from and compare with."""
  if os.path.isfile(os.path.join(output_root, name, METADATA_FILE)):
    return None
  others = sorted(entry for entry in (os.listdir(output_root) if os.path.isdir(output_root)
                                      else [])
                  if os.path.isfile(os.path.join(output_root, entry, METADATA_FILE)))
  if not others:
    return None
  return (f"[pipeline] '{name}' has no earlier run in {output_root}, which holds "
          f"{', '.join(others)}: this run starts a new pipeline, trained from scratch with no "
          "last blessed model to compare with; to retrain one of those on new data, give its "
          "name (the spec's name:)")


def _schema_file(args: argparse.Namespace, dataset: dataset_file.Dataset,
                 output_dir: str) -> Optional[str]:
  """The curated schema file the run uses (`curated_schema.schema_for_run`); ValueError
  names a mismatch with the spec."""
  if args.schema == 'infer':
    return None
  if dataset.schema_path is None:
    raise InputError(f"spec '{dataset.spec.name}' names no curated schema; add "
                     "'schema: FILE.pbtxt' to the spec file (tft-pipeline init writes one), "
                     'or run with --schema infer')
  path, left_out = curated_schema.schema_for_run(
      dataset.schema_path, dataset.spec, dataset.source or f"spec '{dataset.spec.name}'",
      os.path.join(output_dir, 'schema'))
  if left_out:
    print(f'[pipeline] schema: features {left_out} of {dataset.schema_path} are not in the '
          f'spec, so the run leaves them out ({path})')
  return path


def main(argv: Optional[List[str]] = None) -> int:
  """The command: exits 0 when done, 2 on bad input, 1 when the run fails
  (`common.exit_codes`)."""
  # Called as the command: its start-up began before this module's imports.
  command_started = COMMAND_STARTED if argv is None else time.monotonic()
  argv = sys.argv[1:] if argv is None else argv
  if argv[:1] == ['init']:
    from pipeline import init_spec  # configures the logs after its own arguments
    return init_spec.main(argv[1:])
  backtest = argv[:1] == ['backtest']
  args = parse_args(argv[1:] if backtest else argv, backtest=backtest)
  cli_logs.configure(args.verbose)
  try:
    return _run(args, backtest, command_started)
  except InputError as error:
    print(f'error: {error}', file=sys.stderr)
    return BAD_INPUT


def _run(args: argparse.Namespace, backtest: bool, command_started: float) -> int:
  """`main` after the arguments: checks the input, then runs the pipeline or the
  backtest."""
  try:
    beam = beam_args(args.beam_workers)
  except ValueError as error:
    print(f'error: {error}', file=sys.stderr)
    return BAD_INPUT
  dataset = _load_dataset(args)
  if args.future and not os.path.isfile(args.future):
    print(f'error: future file {os.path.abspath(args.future)} not found; pass --future with '
          "a CSV of the spec's columns over the horizon, or leave it out", file=sys.stderr)
    return BAD_INPUT

  spec = dataset.spec
  if args.encoder_steps is not None or args.horizon is not None:
    try:
      spec = spec.with_window(
          spec.encoder_steps if args.encoder_steps is None else args.encoder_steps,
          spec.horizon if args.horizon is None else args.horizon)
    except ValueError as error:
      print(f'error: --encoder-steps/--horizon: {error}', file=sys.stderr)
      return BAD_INPUT
  future = None
  if args.future:
    from pipeline import future_check
    try:  # the whole file, now, rather than at ForecastGen after training
      future = future_check.read(os.path.abspath(args.future), spec)
    except future_check.FutureFileError as error:
      print(f'error: --future: {error}', file=sys.stderr)
      return BAD_INPUT
  output_dir = os.path.abspath(os.path.join(args.output_dir, spec.name))
  if future is not None:
    notes = (future_check.short_series_note(future, spec),
             future_check.unused_note(spec, os.path.join(output_dir, SERVING_MODEL_DIR)))
    for note in filter(None, notes):
      print(note, file=sys.stderr)
  first_run = first_run_note(os.path.abspath(args.output_dir), spec.name) if args.spec else None
  if first_run:  # a spec of one's own, perhaps renamed; the built-in ones keep their names
    print(first_run)
  input_path = _input_path(args, dataset)
  data_root = _data_dir(input_path, output_dir)
  pipeline_name = f'tft-{spec.name}'
  try:
    config = pipeline_config(args, pipeline_name, output_dir, data_root, spec, dataset,
                              future_file=_future_file(args, input_path, output_dir))
  except ValueError as error:
    print(f'error: {error}', file=sys.stderr)
    return BAD_INPUT
  known = [column.name for column in spec.columns_with(Role.KNOWN)]
  if known and not config.future_file and not backtest:
    print(f'warning: the spec declares known columns {known} and no --future file gives '
          'their values over the horizon: the run trains, judges and publishes a model, but '
          'forecasts no series (each is listed in not_forecast.csv)', file=sys.stderr)
  _prepare_data(args, input_path, data_root, config)
  check_input_files(args, data_root, spec, config.time_split)
  if backtest:
    return _backtest(args, config, os.path.join(output_dir, BACKTEST_DIR), beam)
  if future is not None:
    try:
      uncovered = future_check.check_coverage(
          future, os.path.abspath(args.future),
          future_check.data_files(data_root, args.input_pattern, args.train_spans), spec,
          config.time_split)
    except future_check.FutureFileError as error:
      print(f'error: --future: {error}', file=sys.stderr)
      return BAD_INPUT
    except ValueError:  # data ExampleGen refuses, naming the file, line and fix
      uncovered = None
    if uncovered:
      print(f'warning: --future: {uncovered}', file=sys.stderr)
  saved = os.path.join(output_dir, RUN_SUMMARY_FILE)
  if os.path.exists(saved):  # the last run's: it would read as this one's if this one fails
    os.remove(saved)
  print(f'[pipeline] {pipeline_name}: data {data_root}, artifacts {config.pipeline_root}; '
        f'{describe_beam(args.beam_workers)}')
  started = time.monotonic()
  try:
    summary = run_pipeline(config, os.path.join(output_dir, METADATA_FILE), beam)
  except Exception as error:  # pylint: disable=broad-except
    return _stopped(args, 'the pipeline', error, config.pipeline_root)
  text = (f'{summary.format(config.pipeline_root)}\n'
          f'  total:       {time.monotonic() - started:.1f} s (the pipeline; the command '
          f'took {time.monotonic() - command_started:.1f} s with its start-up)\n')
  with open(saved, 'w', encoding='utf-8') as f:
    f.write(text.lstrip('\n'))
  print(f'{text}  saved:       {saved} (the last run\'s summary)')
  return DONE


def run_pipeline(config, metadata_path: str, beam_pipeline_args: Sequence[str] = BEAM_ARGS):
  """Runs `create_pipeline(config)` with LocalDagRunner, its metadata at `metadata_path`,
  printing each component's progress; the run's `run_summary.RunSummary`."""
  from tfx import v1 as tfx
  from pipeline import progress, run_summary
  from pipeline.pipeline import create_pipeline

  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(metadata_path)
  with progress.ComponentProgress(metadata):
    tfx.orchestration.LocalDagRunner().run(
        create_pipeline(config, metadata_connection_config=metadata,
                        beam_pipeline_args=list(beam_pipeline_args)))
  return run_summary.latest_run_summary(metadata, config.pipeline_name)


def _backtest(args: argparse.Namespace, config, output_dir: str, beam: List[str]) -> int:
  """`tft-pipeline backtest`: every origin's fit and score (`pipeline.backtest`), the
  verdict printed, the files written into `output_dir`."""
  from evaluation import backtest_scores
  from pipeline import backtest

  if not config.gbm_baseline:
    print('error: a backtest scores the TFT beside LightGBM: leave out --no-gbm-baseline',
          file=sys.stderr)
    return BAD_INPUT
  try:
    times = backtest.data_times(config)
  except backtest.BacktestError as error:
    print(f'error: {error}', file=sys.stderr)
    return BAD_INPUT
  started = time.monotonic()
  try:
    summary = backtest.run(config, times, args.origins, args.every, output_dir,
                           functools.partial(run_pipeline, beam_pipeline_args=beam))
  except backtest.BacktestError as error:
    print(f'error: {error}', file=sys.stderr)
    return BAD_INPUT
  except Exception as error:  # pylint: disable=broad-except
    return _stopped(args, 'the backtest', error, output_dir)
  print(f"\nBacktest of {config.dataset.name}: {len(summary['origins'])} origins, "
        f"{summary['windows']} windows, {time.monotonic() - started:.1f} s")
  for line in backtest_scores.verdict(summary):
    print(f'  {line}')
  print(f'  report:      {os.path.join(output_dir, "index.html")}\n'
        f'  forecasts:   {os.path.join(output_dir, "forecasts.csv")} (and .parquet), '
        f'with the actuals')
  return DONE


def _stopped(args: argparse.Namespace, what: str, error: Exception, artifacts: str) -> int:
  """Says that `what` stopped with `error` (re-raised with --verbose) and where its
  artifacts are; the exit code: `BAD_INPUT` when a component met input the user can fix,
  `RUN_FAILED` otherwise."""
  if args.verbose:
    raise error
  bad_input = input_error_message(error)
  because = stopped_because(error) if bad_input is None else _BEAM_STEP.sub('', bad_input)
  print(f'\nerror: {what} stopped: {because}\n(run with --verbose for the full trace; '
        f'artifacts so far are in {artifacts})', file=sys.stderr)
  return RUN_FAILED if bad_input is None else BAD_INPUT


def stopped_because(error: Exception) -> str:
  """The error a component stopped the run with, without the Beam step names that Beam
  appends to it (" [while running 'Cut']")."""
  return _BEAM_STEP.sub('', str(error))


def pipeline_config(args: argparse.Namespace, pipeline_name: str, output_dir: str,
                     data_root: str, spec, dataset: dataset_file.Dataset,
                     future_file: Optional[str] = None):
  """The PipelineConfig the flags ask for; ValueError names a bad combination."""
  from pipeline import config as config_lib
  return config_lib.from_dataset(
      dataset, spec=spec, max_mae=args.max_mae,
      pipeline_name=pipeline_name,
      pipeline_root=os.path.join(output_dir, 'pipeline_root'),
      data_root=data_root,
      serving_model_dir=os.path.join(output_dir, SERVING_MODEL_DIR),
      schema_file=_schema_file(args, dataset, output_dir),
      model_preset=args.preset,
      train_steps=args.train_steps,
      input_pattern=args.input_pattern,
      train_spans=args.train_spans,
      training_options={'warm_start': not args.no_warm_start, 'seed': args.seed,
                        'calibrate_on_the_period_before': args.calibrate_on_the_period_before},
      on_anomalies=args.on_anomalies,
      future_file=future_file,
      gbm_baseline=not args.no_gbm_baseline, refit=args.refit)


if __name__ == '__main__':
  sys.exit(main())
