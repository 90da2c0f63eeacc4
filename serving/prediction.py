"""Forecasts from a published model for CSVs of recent history and known future values.

`predict` reads each series' rows (`serving.csv_rows`), builds its raw window
(`serving.series_windows`), checks the series against the model's vocabulary and serves
the windows in batches; `write_forecasts` writes the rows. Bad input raises
`PredictionInputError`, or a subclass naming the failed check (`serving.input_errors`),
with the series, line or column and the fix.
"""

import csv
import logging
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from schema.dataset_spec import DatasetSpec
from schema.features import series_key
from serving import published_models
from serving.csv_rows import read_inputs, read_series
from serving.input_errors import (MissingFutureRowsError, PredictionInputError,
                                  UnknownSeriesError)
from serving.series_windows import (SeriesWindow, build_window, early_forecasts,
                                    future_file_unused, rows_with_horizon, stale_series_error,
                                    unseen_categories)
from trainer_module import export

HORIZON_STEP = 'horizon_step'
REASON = 'reason'  # why a series is not forecast, beside its key columns
_BATCH_SIZE = 256
_SERIES_NAMED = 10  # series a message lists by name


def predict(model_dir: str, csv_paths: Union[str, Sequence[str]],
            allow_unknown_series: bool = False,
            skip_bad_series: bool = False,
            warn: Callable[[str], None] = logging.warning,
            not_forecast: Optional[List[Dict[str, str]]] = None,
            future_path: Optional[str] = None) -> List[Dict[str, object]]:
  """Forecast rows, one per series and horizon step, in the CSV's series order.

  Args:
    model_dir: a SavedModel directory, or a serving directory (its newest version).
    csv_paths: a CSV of recent history and known future values, with the spec's columns;
      with `future_path`, the history alone (`rows_with_horizon`). Or several such files
      (a series' rows may be spread over them, as over span files).
    future_path: a future file: the known columns over the H steps after each series'
      last row of `csv_paths`, as `tft-pipeline --future` reads it. Its series without
      rows in `csv_paths` are named through `warn`, not forecast. A series that ends a
      horizon or more before the others and has no future rows after its end is not
      forecast for that reason (`stale_series_error`).
    allow_unknown_series: forecast series the model was not trained on instead of
      raising UnknownSeriesError.
    skip_bad_series: forecast the other series when a series' rows cannot be read or
      cannot make its window (a value that is not a number, too little history, too few
      horizon rows, a gap, a static value that changes, an unknown series), and name
      each series left out through `warn`; a file that cannot be read, or a row without
      its key, stops the run all the same.
    warn: called with each categorical value the model was not trained on, and with
      each series left out.
    not_forecast: with `skip_bad_series`, appended with a row for each series left
      out: its key columns and `REASON`.

  Returns:
    Dicts with the key columns, the time column (UTC), `HORIZON_STEP` (1 to H) and one
    value per quantile ('p10', 'p50', 'p90'), ordered by quantile.

  Raises:
    published_models.ModelNotFoundError: no model at `model_dir`.
    FileNotFoundError: the model has no dataset spec (exported before specs were saved).
    PredictionInputError: the CSV cannot make the windows (with `skip_bad_series`: those
      of any series); the subclass says why.
  """
  model_dir = published_models.resolve_model_dir(model_dir)
  paths = [csv_paths] if isinstance(csv_paths, str) else list(csv_paths)
  input_name = paths[0] if len(paths) == 1 else f'the {len(paths)} input files'
  spec = export.read_dataset_spec(model_dir)

  gone = set()  # the key values of the series left out, each named once

  def left_out(key_values: Tuple[str, ...], why: str, warned: bool = False) -> None:
    if key_values in gone:
      return
    gone.add(key_values)
    if not warned:
      warn(f'{input_name}: not forecast: {why}')
    if not_forecast is not None:
      not_forecast.append({**dict(zip(spec.series_key_columns, key_values)), REASON: why})

  on_bad_series = left_out if skip_bad_series else None
  unused = future_path and future_file_unused(spec)
  if unused:
    warn(f'{future_path}: {unused}')
  series = read_inputs(paths, spec, on_bad_series)
  future = read_series(future_path, spec, on_bad_series, future=True) if future_path else None
  vocabulary = published_models.series_vocabulary(model_dir)
  keys = {key_values: series_key(key_values, spec) for key_values in series}
  unknown = [key_values for key_values, key in keys.items() if key not in vocabulary]
  unknown_keys = [keys[key_values] for key_values in unknown]
  if unknown and allow_unknown_series:
    warn(f'{input_name}: {_series_list(unknown_keys)} not among the {len(vocabulary)} series '
         "the model was trained on: forecast with the model's out-of-vocabulary series "
         'embedding (as one series never seen), from the rows given')
  elif unknown:  # first, as the run's forecasts: no other reason matters
    error = _unknown_series_error(unknown_keys, len(vocabulary), model_dir)
    if not skip_bad_series:
      raise type(error)(f'{input_name}: {error}')
    warn(f'{input_name}: not forecast: {error}')
    for key_values, key in zip(unknown, unknown_keys):
      left_out(key_values, f"series '{key}' is not among the {len(vocabulary)} series the "
               'model was trained on', warned=True)
  windows = []
  newest = max((rows[-1].seconds for rows in series.values()), default=0)
  for key_values, rows in series.items():
    if key_values in gone:  # its future rows could not be read, or it is unknown
      continue
    try:
      try:
        rows = rows_with_horizon(key_values, rows, None if future is None else future.get(
            key_values, []), spec, future_path or '')
      except MissingFutureRowsError as missing:  # after a stale series' end: it is stale
        stale = stale_series_error(keys[key_values], rows, newest, spec, 'the input')
        raise (stale or missing) from None
      windows.append(build_window(key_values, rows, spec))
    except PredictionInputError as error:
      if not skip_bad_series:
        raise type(error)(f'{input_name}: {error}') from None
      left_out(key_values, str(error))  # it names the series
  future_only = sorted(set(future or {}) - set(series))
  if future_only:
    warn(f'{future_path}: {_series_list([series_key(k, spec) for k in future_only])} in the '
         f'future file only, not in {input_name}: not forecast')
  if not windows:
    raise PredictionInputError(f'{input_name}: no series could be forecast; the warnings '
                               'above say why for each')
  early = early_forecasts(windows, spec)
  if early:
    warn(f'{input_name}: {early}')
  for note in unseen_categories(windows, model_dir, spec, input_name=input_name):
    warn(note)
  return forecast_rows(model_dir, windows, spec)


def forecast_rows(model_dir: str, windows: Sequence[SeriesWindow],
                  spec: DatasetSpec) -> List[Dict[str, object]]:
  """The model's forecast rows for `windows` (see `predict`), in their order."""
  serve = tf.saved_model.load(model_dir).signatures[export.SERVING_SIGNATURE]
  forecasts: Dict[str, List[np.ndarray]] = {}
  for start in range(0, len(windows), _BATCH_SIZE):
    batch = windows[start:start + _BATCH_SIZE]
    outputs = serve(examples=tf.constant([w.example.SerializeToString() for w in batch]))
    for name, values in outputs.items():
      forecasts.setdefault(name, []).append(values.numpy())
  if not windows:
    return []
  columns = _columns(spec, forecasts)
  quantiles = [np.concatenate(forecasts[name]) for name in columns[-len(forecasts):]]
  return [dict(zip(columns, [*window.key_values, time, step + 1,
                             *(float(values[index, step]) for values in quantiles)]))
          for index, window in enumerate(windows)
          for step, time in enumerate(window.horizon_times)]


def forecast_columns(model_dir: str, spec: DatasetSpec) -> List[str]:
  """The columns of `forecast_rows`' rows, without forecasting (for a file with none)."""
  serve = tf.saved_model.load(model_dir).signatures[export.SERVING_SIGNATURE]
  return _columns(spec, serve.structured_outputs)


def _columns(spec: DatasetSpec, quantile_keys: Iterable[str]) -> List[str]:
  """A forecast row's columns: the series key, the time, the step, then the quantiles."""
  return [*spec.series_key_columns, spec.time_column, HORIZON_STEP,
          *sorted(quantile_keys, key=export.key_quantile)]


def write_forecasts(rows: Sequence[Dict[str, object]], stream,
                    columns: Optional[Sequence[str]] = None) -> None:
  """Writes forecast rows (or rows of series not forecast) as CSV, values with 4
  decimals; the header is `columns`, by default the first row's."""
  header = list(columns or rows[0])
  writer = csv.writer(stream, lineterminator='\n')
  writer.writerow(header)
  for row in rows:
    writer.writerow([f'{row[name]:.4f}' if isinstance(row[name], float) else row[name]
                     for name in header])


def _series_list(keys: Sequence[str]) -> str:
  """The series a message names: `series ['a', 'b'] are`, or beyond ten
  `12 series (['a', ..., 'j'] ...) are`."""
  if len(keys) <= _SERIES_NAMED:
    return f'series {list(keys)} {"is" if len(keys) == 1 else "are"}'
  return f'{len(keys)} series ({list(keys[:_SERIES_NAMED])} ...) are'


def _unknown_series_error(unknown: Sequence[str], known: int,
                          model_dir: str) -> UnknownSeriesError:
  return UnknownSeriesError(
      f'{_series_list(unknown)} not among the '
      f'{known} series the model in {model_dir} was trained on; check the key columns, or '
      "forecast them with the model's out-of-vocabulary series embedding "
      '(--allow-unknown-series), or retrain with their history')
