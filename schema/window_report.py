"""The report Windowing writes beside its windows, and what later components read in it.

`window_report.json` counts series, rows and windows per split (and those skipped, with
why), and records where ExampleGen placed the eval start; the Trainer and GbmBaseline
read it here, without importing the Beam component that writes it
(`components.windowing.write_window_report`).
"""

from typing import Optional

from common import artifact_json
from schema.time_split import TRAINING_SPLIT

WINDOW_REPORT_FILE = 'window_report.json'
# The eval split's first time (UTC), as ExampleGen placed it; every training window lies
# before it.
EVAL_START = 'eval_start'


def training_window_count(windows_uri: str) -> int:
  """The training windows of a Windowing output, from its report."""
  report = artifact_json.read_json(windows_uri, WINDOW_REPORT_FILE)
  if report is None:
    raise ValueError(f'{windows_uri} has no {WINDOW_REPORT_FILE}: not a Windowing output')
  return report['windows'][TRAINING_SPLIT]


def eval_start_of(windows_uri: str) -> Optional[str]:
  """The eval start (UTC) a Windowing output's report gives; None for a report written
  before it did."""
  return (artifact_json.read_json(windows_uri, WINDOW_REPORT_FILE) or {}).get(EVAL_START)
