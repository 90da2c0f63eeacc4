"""The report ExampleGen writes beside its splits: rows per split, where each boundary fell,
the spans and files read, the CSV columns left out and the calendar features whose later
times take values no training row does; and its readers.

Later components read it: the run summary (the boundaries, the columns left out, the
untrained calendar features),
Windowing's and ForecastGen's errors and lookups (`files_read`: the files whose rows a
later error points to, `components.input_rows.find_rows`).
"""

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import tensorflow as tf

from common import artifact_json
from common.exit_codes import InputError
from schema.dataset_spec import DatasetSpec
from schema.split_placement import resolve_boundary
from schema.time_split import TimeSplit, format_time

SPLIT_REPORT_FILE = 'split_report.json'
AFTER_END = 'after_end'
SPANS_READ = 'spans'  # in the split report: the spans whose rows the artifact holds
FILES_READ = 'files'  # in the split report: the input files whose rows the artifact holds
BOUNDARIES = 'boundaries'  # in the split report: where eval_start (test_start, end) fell, UTC
# In the split report, for periods placed from each series' last row: the earliest and the
# latest place of each boundary, UTC.
SERIES_BOUNDARIES = 'series_boundaries'
# In the split report: columns of the CSV files that the spec does not declare, left out.
UNDECLARED_COLUMNS = 'undeclared_columns'
# In the split report: the spec's calendar features whose eval and test rows, or forecasts
# after the newest row, take values no training row does, name -> [how many such values,
# how many values those times take] (`preprocessing.untrained_calendar_values`).
UNTRAINED_CALENDAR = 'untrained_calendar_values'


def read_split_report(examples_uri: str) -> Optional[Dict[str, Any]]:
  """The split report of an ExampleGen output artifact; None if it has none (another
  component's Examples)."""
  return artifact_json.read_json(examples_uri, SPLIT_REPORT_FILE)


def files_read(examples_uri: str) -> List[str]:
  """The input files an ExampleGen output artifact holds the rows of, from its split
  report ([] for another component's Examples)."""
  return (read_split_report(examples_uri) or {}).get(FILES_READ, [])


def write_split_report(counts: List[Tuple[str, int]], path: str, split: TimeSplit,
                       spans: List[int], files: List[str], spec: DatasetSpec,
                       time_range: Tuple[int, int], undeclared: Sequence[str] = (),
                       ends: Optional[Mapping[str, int]] = None,
                       untrained_calendar: Optional[Mapping[str, Tuple[int, int]]] = None
                       ) -> None:
  """Rows per split, the spans and files read, where each boundary fell in the data
  (`BOUNDARIES`, UTC; placed from each series' last row at `ends`, the latest of them,
  every training row lying before it, and `SERIES_BOUNDARIES` the earliest and the
  latest), the CSV columns left out (`UNDECLARED_COLUMNS`) and the calendar features
  whose later times take values no training row does (`UNTRAINED_CALENDAR`)."""
  report = {name: 0 for name in split.split_names + (AFTER_END,)}
  report.update(dict(counts))
  report[SPANS_READ] = spans
  report[FILES_READ] = files
  report[UNDECLARED_COLUMNS] = list(undeclared)
  report[UNTRAINED_CALENDAR] = {name: list(values)
                                for name, values in (untrained_calendar or {}).items()}
  names = [name for name in ('eval_start', 'test_start', 'end')
           if getattr(split, name) is not None]
  if split.of_each_series:
    placed = {name: sorted(resolve_boundary(getattr(split, name), (time_range[0], end), spec)
                           for end in ends.values()) for name in names}
    report[BOUNDARIES] = {name: format_time(times[-1]) for name, times in placed.items()}
    report[SERIES_BOUNDARIES] = {name: [format_time(times[0]), format_time(times[-1])]
                                 for name, times in placed.items()}
  else:
    report[BOUNDARIES] = {name: format_time(resolve_boundary(getattr(split, name), time_range,
                                                             spec)) for name in names}
  empty = [name for name in split.split_names if report[name] == 0]
  if empty:
    raise InputError(f'time split {split} leaves splits {empty} empty (rows per split: '
                     f'{report}); move the split boundaries inside the data time range')
  with tf.io.gfile.GFile(path, 'w') as f:
    json.dump(report, f, indent=2)


def describe_untrained_calendar(untrained: Mapping[str, Sequence[int]]) -> str:
  """'month_of_year takes 3 values after the training period, 2 never in it' for each
  feature of a `UNTRAINED_CALENDAR` entry (or `preprocessing.untrained_calendar_values`)."""
  return '; '.join(f'{name} takes {later} value{"" if later == 1 else "s"} after the training '
                   f'period, {new} never in it' for name, (new, later) in untrained.items())
