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

import os
import re
from typing import Dict, Iterable, List, Optional

from components import time_series_example_gen as example_gen
from schema.dataset_spec import DatasetSpec, Role
from schema.features import series_key
from schema.time_split import parse_timestamp
from serving import prediction, published_models
from trainer_module import export


class FutureFileError(ValueError):
  """The future file cannot give the run's forecasts; the message says why and the fix."""


def read(path: str, spec: DatasetSpec) -> prediction.SeriesRows:
  """The future file's rows by series, as ForecastGen reads them.

  Raises:
    FutureFileError: the file cannot be read, or every series is shorter than the
      horizon.
  """
  try:
    future = prediction.read_series(path, spec, future=True)
  except prediction.PredictionInputError as error:
    raise FutureFileError(str(error)) from None
  short = prediction.short_future_series(future, spec)
  if short and len(short) == len(future):
    raise FutureFileError(f'{short[0]}, and so has every series of the file: it cannot give '
                          f'the {spec.horizon} steps of the horizon; extend it, or check '
                          '--horizon')
  return future


def short_series_note(future: prediction.SeriesRows, spec: DatasetSpec) -> Optional[str]:
  """A warning when some series of the file are shorter than the horizon, or None."""
  short = prediction.short_future_series(future, spec)
  return f'{len(short)} series cannot be forecast, e.g. {short[0]}' if short else None


def unused_note(spec: DatasetSpec, serving_model_dir: str) -> Optional[str]:
  """A warning when the spec needs no future file (`prediction.future_file_unused`), or
  None; a note instead while the published model, which forecasts when the new one is not
  blessed, reads known columns from it (the spec changed their role since)."""
  unused = prediction.future_file_unused(spec)
  if not unused:
    return None
  try:
    published = export.read_dataset_spec(published_models.resolve_model_dir(serving_model_dir))
  except (FileNotFoundError, ValueError):  # none published, or one without its spec
    published = None
  known = [column.name for column in published.columns_with(Role.KNOWN)] if published else []
  if not known:
    return f'warning: --future: {unused}'
  return (f'[pipeline] --future: the spec declares no known column now, but the published '
          f'model reads {known} from the future file, and forecasts if the new model is not '
          'blessed: keep the file until a model of this spec is published')


def check_coverage(future: prediction.SeriesRows, future_path: str, data_files: Iterable[str],
                   spec: DatasetSpec) -> Optional[str]:
  """Matches each series' future rows with the H steps after its last row of the data.

  Series whose rows end a horizon or more before the newest (not forecast in any case)
  are left out, and so are those already named as shorter than the horizon.

  Returns:
    A warning naming one series the file leaves without its steps, and how many; None
    if it gives every series its steps.

  Raises:
    FutureFileError: it gives no series of the data its steps.
  """
  last = last_times(data_files, spec)
  if not last or not spec.columns_with(Role.KNOWN):
    return None
  by_key = {series_key(key_values, spec): rows for key_values, rows in future.items()}
  short = {key for key, rows in by_key.items() if len(rows) < spec.horizon}
  newest = spec.frequency.step_of(max(last.values()))
  current = {key: seconds for key, seconds in last.items()
             if newest - spec.frequency.step_of(seconds) < spec.horizon and key not in short}
  uncovered = []
  for key, seconds in sorted(current.items()):
    try:
      prediction.with_horizon([prediction.InputRow(None, seconds, {})], by_key.get(key, []),
                              spec, future_path)
    except prediction.MissingFutureRowsError as error:
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


def last_times(files: Iterable[str], spec: DatasetSpec) -> Dict[str, int]:
  """Each series' last time (epoch seconds) in the data files, by series key; a time that
  cannot be read is left to ExampleGen, which names its line."""
  last: Dict[str, int] = {}
  for path in files:
    for _, key, text in example_gen.keys_and_times(path, spec):
      try:
        seconds = parse_timestamp(text)
      except ValueError:
        continue
      if seconds > last.get(key, seconds - 1):
        last[key] = seconds
  return last


def data_files(data_root: str, pattern: str, train_spans: int) -> List[str]:
  """The files of `data_root` the run reads: with {SPAN} in `pattern`, the newest
  `train_spans` spans'."""
  import tensorflow as tf
  from components import span_files

  if '{SPAN' not in pattern:  # TFX's {VERSION} and date specs each stand for a number
    return sorted(tf.io.gfile.glob(os.path.join(data_root, re.sub(r'\{[A-Z]+(:\d+)?\}', '*',
                                                                  pattern))))
  spans = span_files.spans_in(data_root, pattern)
  return sorted(path for span in spans[-train_spans:]
                for path in tf.io.gfile.glob(os.path.join(
                    data_root, span_files.with_span(pattern, span))))
