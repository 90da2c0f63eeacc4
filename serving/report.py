"""The `tft-report` command: an interpretation report of a model on transformed windows.

Writes variable importance, attention and forecast figures with `index.html` and
`report.json` (`serving.report_writer`) for a published model (or any SavedModel the
Trainer exported) over windows written by the Windowing component.
"""

import argparse
import os
import sys
from typing import List, Optional

from common.exit_codes import BAD_INPUT, DONE
from common import cli_logs
from serving.predict import DEFAULT_MODEL_DIR


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
  parser = argparse.ArgumentParser(
      prog='tft-report',
      description='Write an interpretation report (variable importance, attention, '
      'forecast plots) of a TFT model over windows of the Windowing component.')
  parser.add_argument('--model-dir', default=DEFAULT_MODEL_DIR,
                      help='a serving directory (its newest integer-named version is used) '
                      'or one SavedModel directory (default: %(default)s)')
  parser.add_argument('--windows', required=True, nargs='+',
                      help='file patterns of window TFRecords, e.g. "runs/synthetic/'
                      'pipeline_root/Windowing/windows/<id>/Split-eval/*"; take them from '
                      "the model's own run (another Transform run may number categories "
                      'differently)')
  parser.add_argument('--output-dir', required=True, help='where to write the report')
  parser.add_argument('--max-windows', type=int, default=2000,
                      help='read at most this many windows (default: %(default)s)')
  parser.add_argument('--series', type=int, default=4,
                      help='series with a forecast plot (default: %(default)s)')
  return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  cli_logs.configure()
  # After the log settings: these import TensorFlow.
  from serving import report_writer
  from serving import published_models
  from trainer_module import interpretation

  try:
    model_dir = published_models.resolve_model_dir(args.model_dir)
    windows = interpretation.read_windows(args.windows, args.max_windows)
    result = interpretation.interpret(model_dir, windows)
  except (ValueError, FileNotFoundError) as error:
    print(f'tft-report: error: {error}', file=sys.stderr)
    return BAD_INPUT
  report = report_writer.write_report(
      result, args.output_dir, title=f'Model interpretation: {model_dir}',
      sources={'model': model_dir, 'windows': ' '.join(args.windows)},
      series_count=args.series)
  print(f"tft-report: {report['windows']} windows of {report['series']} series; wrote "
        f'{os.path.join(args.output_dir, report_writer.INDEX_HTML)}')
  return DONE


if __name__ == '__main__':
  sys.exit(main())
