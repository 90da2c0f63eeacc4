"""Runs the pipeline on this machine with LocalDagRunner (SQLite metadata, Beam DirectRunner).

Installed as the `tft-pipeline` command. Supplies only paths, the metadata config and
Beam arguments; the pipeline itself is `pipeline.pipeline.create_pipeline`.
"""

import argparse
import logging
import os
import sys
import time
import warnings
from typing import List, Optional

from schema.datasets import DATASETS, SCHEMA_DIR, curated_schema_path, get_dataset

DEFAULT_OUTPUT = 'runs'
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The in-memory DirectRunner stages no packages. Naming the project's setup.py as the
# workers' dependencies keeps every Beam component from building an sdist of TFX (about
# 49 MB) into a temporary directory that is never deleted (tfx.utils.dependency_utils).
BEAM_ARGS = ['--direct_running_mode=in_memory', '--direct_num_workers=1',
             f'--setup_file={os.path.join(PROJECT_ROOT, "setup.py")}']


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(
      prog='tft-pipeline',
      description='Train and publish a Temporal Fusion Transformer forecaster with a local '
      'TFX pipeline: ExampleGen, StatisticsGen, SchemaGen, ExampleValidator, Transform, '
      'Windowing, Trainer, Evaluator, Pusher.')
  parser.add_argument('--dataset', default='synthetic', choices=sorted(DATASETS),
                      help='dataset spec to use (default: %(default)s, generated data)')
  parser.add_argument('--data', help='CSV file or directory of CSV files; default: the '
                      "dataset's reference file, or freshly generated data for 'synthetic'")
  parser.add_argument('--input-pattern', default='*',
                      help='file pattern under the data directory; may contain {SPAN} to read '
                      "the latest span, e.g. 'span-{SPAN}/*.csv' (default: %(default)s). Files "
                      'are CSV or TFRecords of tf.Examples (.tfrecord, .tfrecord.gz)')
  parser.add_argument('--train-spans', type=int, default=1,
                      help='with {SPAN} in the pattern: train on the newest N spans ingested '
                      "so far (a rolling range); the newest span's eval rows are the "
                      'evaluation data (default: %(default)s)')
  parser.add_argument('--no-warm-start', action='store_true',
                      help='train from scratch instead of from the last blessed model')
  parser.add_argument('--seed', type=int,
                      help="seed the Trainer's initialisation, dropout and shuffle, so a "
                      'rerun starts alike (default: unseeded)')
  parser.add_argument('--output-dir', default=DEFAULT_OUTPUT,
                      help='where runs write artifacts, metadata and published models; '
                      'each dataset gets a subdirectory (default: %(default)s)')
  parser.add_argument('--train-steps', type=int, default=1000,
                      help='optimizer steps budget for the Trainer (default: %(default)s)')
  parser.add_argument('--preset', default='local',
                      help='model hyperparameter preset (default: %(default)s)')
  parser.add_argument('--encoder-steps', type=int, help="override the dataset's history length")
  parser.add_argument('--horizon', type=int, help="override the dataset's forecast horizon")
  parser.add_argument('--max-mae', type=float,
                      help="blessing bound on the median forecast's eval MAE, original units")
  parser.add_argument('--series', type=int, default=12,
                      help="series to generate for 'synthetic' (default: %(default)s)")
  parser.add_argument('--days', type=int, default=100,
                      help="days of hourly data to generate for 'synthetic' (default: %(default)s)")
  parser.add_argument('--schema', choices=('curated', 'infer'), default='curated',
                      help="'curated': import the data set's checked-in TFDV schema "
                      "(schema/schemas/); 'infer': infer one with SchemaGen, to bootstrap a "
                      'new data set (default: %(default)s)')
  parser.add_argument('--on-anomalies', choices=('stop', 'warn'), default='stop',
                      help='when the data breaks the schema: stop before Transform, or '
                      'warn and go on (default: %(default)s)')
  parser.add_argument('--verbose', action='store_true', help='show all TFX and Beam logs')
  return parser.parse_args(argv)


def _configure_logs(verbose: bool) -> None:
  """Warnings only, unless `verbose`; progress comes from `pipeline.progress`."""
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  if verbose:
    logging.getLogger().setLevel(logging.INFO)
    return
  for category in (FutureWarning, DeprecationWarning, UserWarning):
    warnings.filterwarnings('ignore', category=category)
  logging.getLogger().setLevel(logging.WARNING)
  # A filter, not a level: components reset absl's verbosity while they run.
  for name in ('absl', 'tensorflow'):
    logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)


def _input_path(args: argparse.Namespace) -> Optional[str]:
  """--data, else the data set's reference file; None: generate the default data."""
  if args.data is not None:
    return os.path.abspath(args.data)
  default = get_dataset(args.dataset).default_path
  return default and os.path.join(PROJECT_ROOT, default)


def _data_dir(args: argparse.Namespace, output_dir: str) -> str:
  """The directory of input files the pipeline reads (`_prepare_data` fills it)."""
  path = _input_path(args)
  if path is not None and os.path.isdir(path):
    return path
  return os.path.join(output_dir, 'data')


def _prepare_data(args: argparse.Namespace, data_dir: str) -> None:
  """Generates the default data into `data_dir`, or links the one input file there."""
  from pipeline import default_data

  path = _input_path(args)
  if path is None:
    rows = default_data.generate(os.path.join(data_dir, 'synthetic.csv'),
                                 num_series=args.series, days=args.days)
    print(f'[data] generated {rows} rows of {args.series} series into {data_dir}')
    return
  if os.path.isdir(path):
    return
  if not os.path.isfile(path):
    raise SystemExit(f"error: data file {path} not found; pass --data with a CSV file or "
                     'directory')
  # ExampleGen reads a directory: link the file into one of its own.
  os.makedirs(data_dir, exist_ok=True)
  link = os.path.join(data_dir, os.path.basename(path))
  if os.path.lexists(link):
    os.remove(link)
  os.symlink(path, link)


def _schema_file(args: argparse.Namespace) -> Optional[str]:
  if args.schema == 'infer':
    return None
  path = curated_schema_path(args.dataset)
  if path is None:
    raise SystemExit(f"error: data set '{args.dataset}' has no curated schema in "
                     f'{SCHEMA_DIR}; run with --schema infer to bootstrap one')
  return path


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  _configure_logs(args.verbose)

  from tfx import v1 as tfx  # slow imports after argument parsing, so --help is quick
  from pipeline import progress, run_summary
  from pipeline.pipeline import create_pipeline

  dataset = get_dataset(args.dataset)
  spec = dataset.spec
  if args.encoder_steps or args.horizon:
    spec = spec.with_window(args.encoder_steps or spec.encoder_steps,
                            args.horizon or spec.horizon)
  output_dir = os.path.abspath(os.path.join(args.output_dir, args.dataset))
  data_root = _data_dir(args, output_dir)
  pipeline_name = f'tft-{args.dataset}'
  try:
    config = _pipeline_config(args, pipeline_name, output_dir, data_root, spec, dataset)
  except ValueError as error:
    print(f'error: {error}', file=sys.stderr)
    return 2
  _prepare_data(args, data_root)
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(output_dir, 'metadata.sqlite'))
  print(f'[pipeline] {pipeline_name}: data {data_root}, artifacts {config.pipeline_root}')
  started = time.monotonic()
  try:
    with progress.ComponentProgress(metadata):
      tfx.orchestration.LocalDagRunner().run(
          create_pipeline(config, metadata_connection_config=metadata,
                          beam_pipeline_args=BEAM_ARGS))
  except Exception as error:  # pylint: disable=broad-except
    if args.verbose:
      raise
    print(f'\nerror: the pipeline stopped: {error}\n(run with --verbose for the full trace; '
          f'artifacts so far are in {config.pipeline_root})', file=sys.stderr)
    return 1
  summary = run_summary.latest_run_summary(metadata, pipeline_name)
  print(summary.format(config.pipeline_root))
  print(f'  total:       {time.monotonic() - started:.1f} s')
  return 0


def _pipeline_config(args: argparse.Namespace, pipeline_name: str, output_dir: str,
                     data_root: str, spec, dataset):
  """The PipelineConfig the flags ask for; ValueError names a bad combination."""
  from pipeline import config as pipeline_config
  return pipeline_config.PipelineConfig(
      pipeline_name=pipeline_name,
      pipeline_root=os.path.join(output_dir, 'pipeline_root'),
      data_root=data_root,
      serving_model_dir=os.path.join(output_dir, 'serving_model'),
      dataset=spec,
      time_split=dataset.split,
      blessing=pipeline_config.Blessing(max_mae=args.max_mae or dataset.max_mae),
      strides=pipeline_config.default_strides(spec, dataset.split),
      model_preset=args.preset,
      model_overrides=dict(dataset.model_overrides),
      train_steps=args.train_steps,
      schema_file=_schema_file(args),
      input_pattern=args.input_pattern,
      train_spans=args.train_spans,
      training_options={'warm_start': not args.no_warm_start, 'seed': args.seed},
      on_anomalies=args.on_anomalies)


if __name__ == '__main__':
  sys.exit(main())
