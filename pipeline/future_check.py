"""What `tft-pipeline` checks of a `--future` file before the run, rather than at its end.

The run's forecasts read the future file after training (ForecastGen), so a file that
cannot give them would cost a whole run. Before any component: the file is read as
ForecastGen reads it (`read`), and a file whose every series is shorter than the
horizon stops the run. Once the data is in place, each series' rows in the file are
matched with the H steps after that series' last row of the data (`check_coverage`): a
file that gives none of them (written for an earlier end of the data, say) stops the
run, one that misses some series is a warning. A spec without known columns reads
nothing of the file (`unused_note`).
"""

import dataclasses
import os
from typing import Dict, Optional, Sequence

from common.exit_codes import InputError
from components import input_rows
from schema import split_placement
from schema.dataset_spec import DatasetSpec, Role
from schema.features import series_key
from schema.time_split import TimeSplit
from serving import csv_rows, input_errors, published_models, series_windows
from trainer_module import export


class FutureFileError(InputError):
  """The future file cannot give the run's forecasts; the message says why and the fix."""


def read(path: str, spec: DatasetSpec) -> csv_rows.SeriesRows:
  """The future file's rows by series, as ForecastGen reads them.

  Raises:
    FutureFileError: the file cannot be read, or every series is shorter than the
      horizon.
  """
  try:
    future = csv_rows.read_series(path, spec, future=True)
  except input_errors.PredictionInputError as error:
    raise FutureFileError(str(error)) from None
  short = series_windows.short_future_series(future, spec)
  if short and len(short) == len(future):
    raise FutureFileError(f'{short[0]}, and so has every series of the file: it cannot give '
                          f'the {spec.horizon} steps of the horizon; extend it, or check '
                          '--horizon')
  return future


def short_series_note(future: csv_rows.SeriesRows, spec: DatasetSpec) -> Optional[str]:
  """A warning line when some series of the file are shorter than the horizon, or None."""
  short = series_windows.short_future_series(future, spec)
  return (f'warning: --future: {len(short)} series cannot be forecast, e.g. {short[0]}'
          if short else None)


def unused_note(spec: DatasetSpec, serving_model_dir: str) -> Optional[str]:
  """A warning line when the spec needs no future file (`series_windows.future_file_unused`),
  or None; a note instead while the published model, which forecasts when the new one is not
  blessed, reads known columns from it (the spec changed their role since)."""
  unused = series_windows.future_file_unused(spec)
  if not unused:
    return None
  try:
    published = export.read_dataset_spec(published_models.resolve_model_dir(serving_model_dir))
  except (FileNotFoundError, ValueError):  # none published, or one this version cannot read
    published = None
  known = [column.name for column in published.columns_with(Role.KNOWN)] if published else []
  if not known:
    return f'warning: --future: {unused}'
  return (f'[pipeline] --future: the spec declares no known column now, but the published '
          f'model reads {known} from the future file, and forecasts if the new model is not '
          'blessed: keep the file until a model of this spec is published')


@dataclasses.dataclass(frozen=True)
class DataFiles:
  """The input files a run reads: the newest span's, split by time, and the older
  spans', every row of which is training data (`time_series_example_gen`)."""
  newest: Sequence[str]
  older: Sequence[str] = ()


def check_coverage(future: csv_rows.SeriesRows, future_path: str, data: DataFiles,
                   spec: DatasetSpec, split: TimeSplit) -> Optional[str]:
  """Matches each series' future rows with the H steps after its last row of the data
  that ExampleGen keeps (`last_times`).

  Series whose rows end a horizon or more before the newest (not forecast in any case)
  are left out, and so are those already named as shorter than the horizon.

  Returns:
    A warning naming one series the file leaves without its steps, and how many; None
    if it gives every series its steps.

  Raises:
    FutureFileError: it gives no series of the data its steps.
    ValueError: a data file ExampleGen would refuse (it names the problem then).
  """
  if not spec.columns_with(Role.KNOWN):
    return None
  last = last_times(data, spec, split)
  if not last:
    return None
  by_key = {series_key(key_values, spec): rows for key_values, rows in future.items()}
  short = {key for key, rows in by_key.items() if len(rows) < spec.horizon}
  newest = max(last.values())
  current = {key: seconds for key, seconds in last.items()
             if not series_windows.ends_early(seconds, newest, spec) and key not in short}
  uncovered = []
  for key, seconds in sorted(current.items()):
    try:
      series_windows.future_rows_after(seconds, by_key.get(key, []), spec, future_path)
    except input_errors.MissingFutureRowsError as error:
      uncovered.append(f"series '{key}': {error}")
  if uncovered and len(uncovered) == len(current):
    raise FutureFileError(
        f'{future_path} gives no series of the data the {spec.horizon} steps after its last '
        f'row, e.g. {uncovered[0]}. Was it written for an earlier end of the data? Update it, '
        'or leave --future out to train and publish a model without forecasts')
  if uncovered:
    return (f'{len(uncovered)} of the {len(current)} series of the data cannot be forecast '
            f'with it, e.g. {uncovered[0]}')
  return None


def last_times(data: DataFiles, spec: DatasetSpec, split: TimeSplit) -> Dict[str, int]:
  """Each series' last time (epoch seconds) among the rows ExampleGen keeps: those of the
  newest span before the split's `end` (placed in that span's time range, as ExampleGen
  places it), and every row of the older spans.

  Raises:
    ValueError: a file ExampleGen would refuse, or a time it cannot read.
  """
  newest = [(key, spec.read_time(text)) for path in data.newest
            for _, key, text in input_rows.keys_and_times(path, spec)]
  if newest and split.end is not None:
    seconds = [time for _, time in newest]
    end = split_placement.resolve_boundary(split.end, (min(seconds), max(seconds)), spec)
    newest = [(key, time) for key, time in newest if time < end]
  older = [(key, spec.read_time(text)) for path in data.older
           for _, key, text in input_rows.keys_and_times(path, spec)]
  last: Dict[str, int] = {}
  for key, time in newest + older:
    last[key] = max(time, last.get(key, time))
  return last


def data_files(data_root: str, pattern: str, train_spans: int) -> DataFiles:
  """The files of `data_root` the run reads: with {SPAN} in `pattern`, the newest span's
  and the `train_spans - 1` spans' before it.

  Raises:
    ValueError: a span pattern `span_files` does not read.
  """
  import tensorflow as tf
  from components import span_files

  if '{SPAN' not in pattern:
    return DataFiles(sorted(tf.io.gfile.glob(os.path.join(data_root,
                                                          span_files.as_glob(pattern)))))
  spans = span_files.spans_in(data_root, pattern)[-train_spans:]
  files = [sorted(tf.io.gfile.glob(os.path.join(data_root, span_files.as_glob(
      span_files.with_span(pattern, span))))) for span in spans]
  return DataFiles(newest=files[-1] if files else [],
                   older=[path for span_paths in files[:-1] for path in span_paths])
