"""The `tft-predict` command: forecasts from a published model for a CSV of recent rows.

Prints the forecasts (series key columns, time, horizon step, P10/P50/P90 in original
units) as CSV, or with `--output` writes them there (whole or not at all: a file beside
it, renamed into place) and prints a line saying so. A categorical value the model was not
trained on is named on stderr as a warning; so is each series left out with
`--skip-bad-series`, and then the command exits with `PARTIAL` (3, `common.exit_codes`)
instead of 0 and, with `--output`, lists them (key columns and reason, as the pipeline's
`not_forecast.csv`) in `<output>.not_forecast.csv`. The input format and its checks are
in `serving.prediction`.
"""

import argparse
import contextlib
import os
import sys
from typing import List, Optional

from common.exit_codes import BAD_INPUT, DONE, PARTIAL
from common.whole_files import write_whole
from common import run_layout
from common import cli_logs

DEFAULT_MODEL_DIR = os.path.join(run_layout.DEFAULT_OUTPUT, run_layout.GENERATED_DATASET,
                                 run_layout.SERVING_MODEL_DIR)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(
      prog='tft-predict',
      description='Forecast each series of a CSV with a published TFT model. The CSV has '
      "the training data's columns: per series at least the last E rows with the target, "
      'then H horizon rows with the known columns filled and the target and observed '
      'columns empty; or the history alone, with the horizon rows in a --future file (a '
      'model without known columns needs none).')
  parser.add_argument('--model-dir', default=DEFAULT_MODEL_DIR,
                      help='a serving directory (its newest integer-named version is used) '
                      'or one SavedModel directory (default: %(default)s)')
  parser.add_argument('--input', required=True, nargs='+', metavar='CSV',
                      help='CSV of recent history and known future values, or of the history '
                      'alone (the training data will do); several files are read as one '
                      "(span files: a series' rows may be spread over them)")
  parser.add_argument('--future', help="CSV of the known columns over the H steps after "
                      "each series' last row of --input (the file tft-pipeline --future "
                      'reads); --input then holds no horizon rows')
  parser.add_argument('--output', help='also write the forecasts to this CSV file')
  parser.add_argument('--allow-unknown-series', action='store_true',
                      help='forecast series the model was not trained on (with its '
                      'out-of-vocabulary series embedding) instead of stopping')
  parser.add_argument('--skip-bad-series', action='store_true',
                      help='forecast the other series when the rows of one cannot be read '
                      'or cannot make its window (a value that is not a number, too little '
                      'history, too few horizon rows, a gap, a static value that changes, an '
                      'unknown series), naming each series left out on stderr (and, with '
                      '--output, in OUTPUT.not_forecast.csv) and exiting with code 3, '
                      'instead of stopping; a file that cannot be read or a row without its '
                      'key still stops')
  return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  cli_logs.configure()
  problem = (_output_problem(args.output, [*args.input, args.future]) if args.output
             else None)
  if problem:
    print(f'tft-predict: error: --output {args.output}: {problem}', file=sys.stderr)
    return BAD_INPUT
  from serving import input_errors, prediction  # after the log settings: it imports TensorFlow

  not_forecast = []
  try:
    rows = prediction.predict(
        args.model_dir, args.input, args.allow_unknown_series, args.skip_bad_series,
        warn=lambda note: print(f'tft-predict: warning: {note}', file=sys.stderr),
        not_forecast=not_forecast, future_path=args.future)
  except (input_errors.PredictionInputError, FileNotFoundError) as error:
    print(f'tft-predict: error: {error}', file=sys.stderr)
    return BAD_INPUT
  if not args.output:
    prediction.write_forecasts(rows, sys.stdout)
  else:
    written = [(args.output, rows)]
    if not_forecast:
      written.append((not_forecast_path(args.output), not_forecast))
    elif args.skip_bad_series:  # a list left by an earlier run would read as this one's
      with contextlib.suppress(FileNotFoundError):
        os.remove(not_forecast_path(args.output))
    for path, table in written:
      try:
        write_whole(path, lambda f, table=table: prediction.write_forecasts(table, f))
      except OSError as error:
        print(f'tft-predict: error: --output {path}: {error.strerror}', file=sys.stderr)
        return BAD_INPUT
    series = sum(row[prediction.HORIZON_STEP] == 1 for row in rows)
    print(f'tft-predict: wrote {len(rows)} forecast rows ({series} series) to {args.output}')
  if not_forecast:
    listed = f', listed in {not_forecast_path(args.output)}' if args.output else ''
    print(f'tft-predict: {len(not_forecast)} series not forecast{listed}', file=sys.stderr)
    return PARTIAL
  return DONE


def not_forecast_path(output: str) -> str:
  """Where the series `--skip-bad-series` left out are listed, beside `output`."""
  return os.path.splitext(output)[0] + '.not_forecast.csv'


def _output_problem(output: str, input_paths: List[Optional[str]]) -> Optional[str]:
  """Why `output` cannot take the forecasts (checked before the model runs), or None."""
  directory = os.path.dirname(os.path.abspath(output))
  if not os.path.isdir(directory):
    return f'the directory {directory} does not exist; create it or write elsewhere'
  if os.path.isdir(output):
    return 'is a directory; name a file in it, e.g. forecasts.csv'
  for path in filter(None, input_paths):
    if os.path.exists(output) and os.path.exists(path) and os.path.samefile(output, path):
      return (f'is the input file {path}, which the forecasts would overwrite; name another '
              'file')
  return None


if __name__ == '__main__':
  sys.exit(main())
