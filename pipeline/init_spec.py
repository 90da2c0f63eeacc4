"""`tft-pipeline init`: drafts a spec file and a curated TFDV schema from a CSV.

  tft-pipeline init --data my.csv --target load [--time ts] [--time-format '%d/%m/%Y']
      [--output my.yaml]

Writes `my.yaml` (the drafted spec, with the lines to check marked CHECK) and
`my.schema.pbtxt` next to it (the TFDV schema inferred from the rows as the pipeline's
ExampleGen reads them, as SchemaGen infers it), then prints the command that runs the
pipeline on them. The drafting is `pipeline.spec_draft`.
"""

import argparse
import json
import os
import re
import sys
import tempfile
from typing import TYPE_CHECKING, List, Optional

from common.exit_codes import BAD_INPUT, DONE
from common import cli_logs
from schema import dataset_file
from schema.dataset_spec import Role
from schema.time_split import EACH_SERIES, check_time_format

if TYPE_CHECKING:
  from pipeline import spec_draft

SCHEMA_SUFFIX = '.schema.pbtxt'
_ROLE_HELP = ('series_key, time, target, static (one value per series), known (its future '
              'values are known when forecasting), observed (known only up to the forecast '
              'time)')
# Why a drafted spec has a forecast floor (`spec_draft.zero_floor`).
_FLOOR_REASON = 'the target is never below it, and counts or rests on it'


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(
      prog='tft-pipeline init',
      description='Draft a dataset spec file and a TFDV schema from a CSV of your own: '
      'the time column and its frequency, the series key, static columns, categorical '
      'and real columns, missing values, a window shape and an eval period; it shows the '
      'naive forecasts\' errors a model must beat. Columns whose role the data cannot '
      'tell (known ahead or only observed) are marked CHECK in the file.')
  parser.add_argument('--data', required=True, help='the CSV file (UTF-8, with a header)')
  parser.add_argument('--target', required=True, help='the column to forecast')
  parser.add_argument('--time', help='the time column (default: the column whose every '
                      'value is a time: ISO 8601, or a quarter, month or week such as '
                      '2001 Q1, 2024-01, 2024-W05)')
  parser.add_argument('--time-format', metavar='FORMAT',
                      help="the strptime format the times are written in, for times in "
                      "none of those notations: '%%d/%%m/%%Y' (day first), '%%m/%%d/%%Y "
                      "%%H:%%M' (month first, with the time); kept in the spec, and the "
                      'forecasts are written in it')
  parser.add_argument('--series-key', nargs='+', metavar='COLUMN',
                      help='the columns that tell the series apart (default: the fewest '
                      'text or integer columns that, with the time, identify every row)')
  parser.add_argument('--output', help='the spec file to write (default: '
                      '<name>.yaml in the current directory); the schema goes next to it')
  parser.add_argument('--name', help='the data set name, which names its pipeline and run '
                      'directory (default: from the file name); give the old one to retrain '
                      'a pipeline from a newer file')
  parser.add_argument('--horizon', type=int, help='forecast length H in steps (default: '
                      'by frequency, e.g. a day of hourly steps)')
  parser.add_argument('--encoder-steps', type=int, help='history length E in steps '
                      '(default: by frequency, e.g. a week of hourly steps, or two horizons '
                      'in whole seasons when longer)')
  parser.add_argument('--force', action='store_true', help='overwrite existing files')
  return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  cli_logs.configure()
  from pipeline.draft.table import DraftError, read_table  # imports TensorFlow
  from pipeline.spec_draft import draft
  for flag in ('horizon', 'encoder_steps'):
    if getattr(args, flag) is not None and getattr(args, flag) < 1:
      print(f'tft-pipeline init: error: --{flag.replace("_", "-")} must be at least 1',
            file=sys.stderr)
      return BAD_INPUT
  if args.time_format is not None:
    try:
      check_time_format(args.time_format, '--time-format')
    except ValueError as error:
      print(f'tft-pipeline init: error: {error}', file=sys.stderr)
      return BAD_INPUT
  csv_path = os.path.abspath(args.data)
  name = args.name or _name_from(csv_path)
  spec_path = os.path.abspath(args.output or f'{name}.yaml')
  schema_path = re.sub(r'\.(ya?ml|json)$', '', spec_path) + SCHEMA_SUFFIX
  existing = [p for p in (spec_path, schema_path) if os.path.exists(p)]
  if existing and not args.force:
    print(f'tft-pipeline init: error: {existing} exist; pass --force to overwrite, or '
          '--output another spec file', file=sys.stderr)
    return BAD_INPUT
  try:
    drafted = draft(read_table(csv_path), target=args.target, name=name, time=args.time,
                    horizon=args.horizon, encoder_steps=args.encoder_steps,
                    series_key=args.series_key, time_format=args.time_format)
  except (DraftError, OSError) as error:
    where = '' if str(error).startswith(csv_path) else f'{csv_path}: '  # a row names it
    print(f'tft-pipeline init: error: {where}{error}', file=sys.stderr)
    return BAD_INPUT
  text = render(drafted, csv_path, spec_path, schema_path)
  os.makedirs(os.path.dirname(spec_path), exist_ok=True)
  with open(spec_path, 'w', encoding='utf-8') as f:
    f.write(text)
  print(f'[init] read {drafted.rows} rows of {drafted.series} series from {csv_path}; '
        'inferring the schema of the rows as the pipeline reads them', flush=True)
  try:
    dataset = dataset_file.load(spec_path)  # the spec as the pipeline will read it
    write_schema(dataset, csv_path, schema_path)
  except ValueError as error:  # a spec or a row the pipeline would reject
    os.remove(spec_path)
    print(f'tft-pipeline init: error: {error}', file=sys.stderr)
    return BAD_INPUT
  print(summary(drafted, spec_path, schema_path, csv_path))
  return DONE


def _timed(drafted: 'spec_draft.Draft') -> bool:
  """Whether the eval start has a time of day, which the user should read as UTC (the
  pipeline's, whatever offset the data's times were written with)."""
  return drafted.frequency.is_sub_daily


def _quoted(text: str) -> str:
  """`text` as a YAML double-quoted string, its letters as written (`"Absatz (Stück)"`)."""
  return json.dumps(text, ensure_ascii=False)


def _shown(path: str, start: str = os.curdir) -> str:
  """`path` relative to `start` when it lies under it, else absolute: a file elsewhere
  reads better as /data/sales.csv than as ../../data/sales.csv."""
  relative = os.path.relpath(path, start)
  return path if relative.startswith(os.pardir) else relative


def _name_from(path: str) -> str:
  stem = os.path.splitext(os.path.basename(path))[0].lower()
  return re.sub(r'[^a-z0-9]+', '_', stem).strip('_') or 'my_data'


def render(drafted: 'spec_draft.Draft', csv_path: str, spec_path: str, schema_path: str) -> str:
  """The spec file's text, with comments on what was found and what to check."""
  base = os.path.dirname(spec_path)
  maes = ', '.join(f'{name} {value:.4g}' for name, value in drafted.naive_maes.items())
  utc = ' UTC' if _timed(drafted) else ''
  judged = 'eval' if drafted.test_start is None else 'test'
  checks = sum(column.check for column in drafted.columns)
  lines = [
      f'# Dataset spec drafted by `tft-pipeline init` from {os.path.basename(csv_path)}: '
      f'{drafted.rows} rows, {drafted.series} series.',
      f'# {checks} lines are marked CHECK: confirm or change them, then run',
      f'#   tft-pipeline --spec {_shown(spec_path)}',
      f'name: {_quoted(drafted.name)}',
      f'frequency: {drafted.frequency.value}  # {drafted.frequency.description}',
      f'encoder_steps: {drafted.encoder_steps}  # history length E, in steps',
      f'horizon: {drafted.horizon}  # forecast length H, in steps',
      f'calendar_features: [{", ".join(drafted.calendar_features)}]'
      + (f'  # left out: {", ".join(drafted.untrained_calendar_features)}, which takes '
         'values after the training period that no training row takes (see init\'s note)'
         if drafted.untrained_calendar_features else ''),
  ]
  if drafted.time_format:
    lines.append(f'time_format: {_quoted(drafted.time_format)}  # the strptime format of the '
                 'times, read and written back in it')
  if drafted.time_zone:
    lines.append(f'# time_zone: "{drafted.time_zone}"  # a clock the times follow (their UTC '
                 'offset changes): uncomment to read the calendar features on it; see init\'s '
                 'note for the other zones whose clock fits')
  if drafted.forecast_floor is not None:
    lines.append(f'forecast_floor: {drafted.forecast_floor:g}  # {_FLOOR_REASON} in the data: '
                 'no forecast will be below it (remove the line if the target can be lower)')
  lines.append(f'columns:  # roles: {_ROLE_HELP}')
  for column in drafted.columns:
    fields = [f'name: {_quoted(column.name)}', f'role: {column.role.value}',
              f'dtype: {column.dtype.value}']
    if column.allow_missing:
      fields.append('allow_missing: true')
    note = f'  # {column.note}' if column.note else ''
    lines.append(f'  - {{{", ".join(fields)}}}{note}')
  lines += [
      _split_line(drafted, utc),
      f'blessing: {{beat_naive_by: 0.0}}  # a pushed model\'s {judged} MAE is at most the '
      f'best naive forecast\'s; here: {maes}',
      f'schema: {_quoted(os.path.relpath(schema_path, base))}',
      f'data: {_quoted(_shown(csv_path, base))}',
  ]
  model = {'ensemble_size': drafted.ensemble_size} if drafted.ensemble_size > 1 else {}
  notes = ([f'{drafted.ensemble_size} TFTs of different seeds, serving the mean of those '
            'chosen on the eval windows (1: one TFT, about 2.5 times faster to train)']
           if model else [])
  if drafted.target_location:
    model['target_location'] = drafted.target_location
    notes.append('before the test period the last value forecasts better than the '
                 "history's mean (the level drifts): each window is centred on its last value")
  if drafted.batch_size:
    from pipeline.draft.window import DEFAULT_BATCH_SIZE  # loaded already, by the draft
    model['batch_size'] = drafted.batch_size
    notes.append(f'{drafted.training_windows} training windows, fewer than the default batch '
                 f'of {DEFAULT_BATCH_SIZE}')
  if model:
    values = ', '.join(f'{key}: {value}' for key, value in model.items())
    lines.append(f'model: {{{values}}}  # {"; ".join(notes)}')
  return '\n'.join(lines) + '\n'


def _split_line(drafted: 'spec_draft.Draft', utc: str) -> str:
  """The spec's split: the data's (or each series') last steps as the test period, those
  before them as the eval period (the eval period alone when the series are too short
  for both)."""
  from pipeline.draft.window import EVAL_SHARE, TEST_SHARE  # loaded already, by the draft
  each = EACH_SERIES if drafted.each_series else ''
  whose = "each series' own" if drafted.each_series else "the data's"
  where = ("in the longest series" if drafted.each_series else 'in this data')
  moves = ('moves with the data as rows are added; fewer steps train on more rows, and a '
           'timestamp instead fixes it')
  if drafted.test_start is None:
    return (f'split: {{eval_start: "last {drafted.eval_steps} steps{each}"}}  # the eval '
            f'period: {whose} last {drafted.eval_steps} steps (from {drafted.eval_start}{utc} '
            f'{where}; about {EVAL_SHARE:.0%} of the longest series, at least a horizon); '
            f'no test period fits (see init\'s note). It {moves}')
  return (f'split: {{eval_start: "last {drafted.eval_steps} steps{each}", test_start: "last '
          f'{drafted.test_steps} steps{each}"}}  # {whose} last {drafted.test_steps} steps '
          f'(from {drafted.test_start}{utc} {where}) are held out as the test period, which '
          f'nothing chooses on and the blessing is decided on; the '
          f'{drafted.eval_steps - drafted.test_steps} steps before them (from '
          f'{drafted.eval_start}{utc}) are the eval period, which chooses the epoch and the '
          f'bands. Each is about {TEST_SHARE:.0%} of the longest series, at least a horizon, '
          f'and {moves}')


def write_schema(dataset: dataset_file.Dataset, csv_path: str, schema_path: str) -> None:
  """Infers the TFDV schema of the rows as ExampleGen reads them, as SchemaGen does, and
  writes it without value lists for the series key and the static columns (later data
  brings new series, and new values that describe them).

  Raises:
    ValueError: a row that the pipeline would reject, naming file, line and column.
  """
  import tensorflow as tf
  import tensorflow_data_validation as tfdv
  from google.protobuf import text_format

  from components.input_rows import read_csv_chunks

  spec = dataset.spec
  with tempfile.TemporaryDirectory() as scratch:
    records = os.path.join(scratch, 'rows.tfrecord')
    with tf.io.TFRecordWriter(records) as writer:
      for chunk in read_csv_chunks(csv_path, spec):  # as ExampleGen encodes them
        for example in chunk.serialized:
          writer.write(example)
    # Its own output path: by default TFDV leaves the statistics in a temporary directory.
    statistics = tfdv.generate_statistics_from_tfrecord(
        data_location=records, output_path=os.path.join(scratch, 'statistics.tfrecord'))
  schema = tfdv.infer_schema(statistics, infer_feature_shape=True)
  # New series come with new data, and with new values of the columns that describe them.
  open_ended = set(spec.series_key_columns) | {c.name for c in spec.columns_with(Role.STATIC)}
  for feature in schema.feature:
    if feature.name in open_ended and feature.HasField('domain'):
      feature.ClearField('domain')
  used = {feature.domain for feature in schema.feature if feature.HasField('domain')}
  kept = [domain for domain in schema.string_domain if domain.name in used]
  del schema.string_domain[:]
  schema.string_domain.extend(kept)
  with open(schema_path, 'w', encoding='utf-8') as f:
    f.write(f"# TFDV schema of data set '{spec.name}', inferred by tft-pipeline init from "
            f'{os.path.basename(csv_path)}.\n# The time column is INT epoch seconds, as the '
            'pipeline\'s ExampleGen writes it. Curate it as your data requires.\n')
    f.write(text_format.MessageToString(schema))


def summary(drafted: 'spec_draft.Draft', spec_path: str, schema_path: str, csv_path: str) -> str:
  """What init found and wrote, and the next command."""
  by_role = {}
  for column in drafted.columns:
    mark = '*' if column.check else ''
    by_role.setdefault(column.role, []).append(column.name + mark)
  lines = [f'[init] frequency {drafted.frequency.value}; history {drafted.encoder_steps} '
           f'steps, horizon {drafted.horizon}; eval from {drafted.eval_start}'
           + (f', test (held out) from {drafted.test_start}' if drafted.test_start else '')
           + f'{" UTC" if _timed(drafted) else ""}']
  lines += [f'  {role.value:<11} {", ".join(names)}' for role in Role
            for names in [by_role.get(role)] if names]
  lines += [f'  note: {finding}' for finding in drafted.findings]
  if drafted.forecast_floor is not None:
    lines.append(f'  forecast floor: {drafted.forecast_floor:g} ({_FLOOR_REASON})')
  best = drafted.best_naive
  judged = 'eval' if drafted.test_start is None else 'test'
  lines.append(f'  blessing: a model must beat the best naive forecast, {best} ({judged} MAE '
               f'{drafted.naive_maes[best]:.4g} on this data)')
  if any(column.check for column in drafted.columns):
    lines.append('  * a guess the data cannot confirm (known ahead or only observed? an id?): '
                 'marked CHECK in the file, with the question.')
  known = [column.name for column in drafted.columns if column.role == Role.KNOWN]
  lines += [f'[init] wrote {spec_path}', f'[init] wrote {schema_path}', '',
            'Next: check the spec, then run the pipeline on your data:',
            f'  tft-pipeline --spec {_shown(spec_path)} --data {_shown(csv_path)}'
            + (' --future FUTURE.csv' if known else '')]
  if known:
    keys = [column.name for column in drafted.columns
            if column.role in (Role.SERIES_KEY, Role.TIME)]
    lines.append(f'  FUTURE.csv: the known columns {known} over the {drafted.horizon} steps '
                 f"after each series' last row, a row per series and step, with {keys} (the "
                 "data's other columns may be left out, or empty); without it the run "
                 'trains and publishes a model but forecasts no series')
  return '\n'.join(lines)
