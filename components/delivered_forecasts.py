"""The forecasts a run delivers: every series, the H steps after the end of its data.

Each series' rows come from the ExampleGen output (every split of the newest span, as
the pipeline read them); its window is its last E rows and the next H steps of the time
grid, built and served exactly as `tft-predict` does (`serving.prediction`). Known
columns need values over those H steps: they come from a future file (the key, time and
known columns, a row per series and future step), or, when the spec declares no known
columns, nothing is needed: the steps are written as the data files write the series'
last time (the examples keep only the instant): in its notation or format and its UTC
offset, or on the spec's `time_zone` clock where the data are written on it. A series
that cannot be forecast is listed with the reason, never dropped: its rows end a horizon
or more before the newest rows (its forecast would lie in the past), too little history,
a gap in its last E rows, no known values for the horizon, unknown to the model, or only
in the future file.

Outputs, in one directory: `forecasts.csv` and `forecasts.parquet` (key columns, the
time of the step, `horizon_step`, one column per quantile, original units),
`naive_forecasts.parquet` (the same rows' naive forecasts from the same history, which
the forecast ledger scores beside them: `components.forecast_ledger`),
`not_forecast.csv` (key columns, reason) and `forecast_report.json`.
"""

import collections
import dataclasses
import json
import logging
import os
import tempfile
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
import tensorflow as tf

from schema.dataset_spec import DatasetSpec, Role
from schema.frequency import DAY
from schema.features import series_key
from schema.time_split import format_time
from common import artifact_json
from components import example_columns
from serving import csv_rows, input_errors, prediction, published_models, series_windows
from trainer_module import naive_forecasts, training_period

FORECASTS_CSV = 'forecasts.csv'
FORECASTS_PARQUET = 'forecasts.parquet'
NAIVE_PARQUET = 'naive_forecasts.parquet'
NOT_FORECAST_CSV = 'not_forecast.csv'
REPORT_JSON = 'forecast_report.json'
SeriesRows = csv_rows.SeriesRows
NotForecast = csv_rows.NotForecast


@dataclasses.dataclass
class Forecasts:
  """Forecast rows and the series left out, with why (the error's class says what kind
  of reason, its message the details and the fix)."""
  rows: List[Dict[str, object]]
  not_forecast: List[NotForecast]
  columns: List[str]  # of the rows; the header of a file without rows too
  naive: List[Dict[str, object]] = dataclasses.field(default_factory=list)  # row by row


def series_from_examples(files: Sequence[str], spec: DatasetSpec,
                         keep: Optional[int] = None) -> SeriesRows:
  """Every series' rows from ExampleGen's tf.Examples, ordered by time: its last `keep`
  rows (every row with None; a window reads the last E). Records are parsed in batches
  and rows built for the rows kept only, so that the cost of the history is a parse."""
  columns = example_columns.parsed_columns(files, spec)
  times = columns[spec.time_column][0].astype(np.int64)
  rows_of: Dict[Tuple[str, ...], List[int]] = {}
  for index, key in enumerate(example_columns.record_keys(columns, spec)):
    rows_of.setdefault(key, []).append(index)
  series: SeriesRows = {}
  for key, indices in rows_of.items():
    indices = np.asarray(indices)
    in_order = indices[np.argsort(times[indices], kind='stable')]
    series[key] = [_input_row(int(index), columns, spec)
                   for index in (in_order if keep is None else in_order[-keep:])]
  return series


def _time_text(seconds: int, spec: DatasetSpec) -> str:
  """Epoch seconds as UTC text: in the spec's time format if it has one, else a date on a
  grid of days, weeks, months or quarters (its times are UTC midnights), so that the
  forecasts' times read as the data's dates do."""
  if spec.time_format is not None:
    return spec.write_time(seconds)
  text = format_time(seconds)
  frequency = spec.frequency
  return text[:10] if frequency.is_calendar or frequency.step_seconds % DAY == 0 else text


def _input_row(index: int, columns: example_columns.Columns,
               spec: DatasetSpec) -> csv_rows.InputRow:
  """Record `index` as a row of the data: its columns' text, '' where missing."""
  seconds = int(columns[spec.time_column][0][index])
  values = {spec.time_column: _time_text(seconds, spec)}
  for column in spec.columns:
    if column.role != Role.TIME:
      values[column.name] = example_columns.value_text(columns[column.name][0][index],
                                                       columns[column.name][1][index], column)
  return csv_rows.InputRow(None, seconds, values)


def last_instants(series: SeriesRows, spec: DatasetSpec) -> Dict[str, int]:
  """Each series' last time (epoch seconds), by series key."""
  return {series_key(key_values, spec): rows[-1].seconds
          for key_values, rows in series.items()}


def with_last_times_as_written(series: SeriesRows, written: Mapping[str, str],
                               spec: DatasetSpec) -> SeriesRows:
  """`series` with each one's last row's time as the data writes it (`written`, by
  series key: `input_rows.times_as_written`) where it is the same instant,
  so that the steps the run adds after it are written in its UTC offset or notation."""
  result = {}
  for key_values, rows in series.items():
    time = written.get(series_key(key_values, spec))
    if time is not None and spec.read_time(time) == rows[-1].seconds:
      last = rows[-1]
      rows = rows[:-1] + [dataclasses.replace(
          last, values={**last.values, spec.time_column: time})]
    result[key_values] = rows
  return result


def unknown_series_error(key: str, trained_before: Optional[str]
                         ) -> input_errors.UnknownSeriesError:
  """The reason a series the forecasting model was not trained on is not forecast;
  `trained_before` the model's eval start (`training_period`), if recorded."""
  period = (f'which ended where its eval period began, {trained_before}' if trained_before
            else 'which ended where its eval period began')
  return input_errors.UnknownSeriesError(
      f"series '{key}' is not among the series the forecasting model was trained on: its "
      f"rows start after that model's training period ({period}); it is forecast once a "
      "run's eval period begins after its first rows and that run's model is blessed")


def short_history_error(key: str, rows: Sequence[csv_rows.InputRow], spec: DatasetSpec,
                        unknown: Optional[input_errors.UnknownSeriesError]
                        ) -> input_errors.TooLittleHistoryError:
  """The reason a series with fewer than E target values is not forecast, and when it will
  be (ForecastGen keeps a series' last E rows: so these are all its rows)."""
  values = sum(1 for row in rows if row.values[spec.target_column])
  then = (f'once it has {spec.encoder_steps} and a model trained on its rows is blessed'
          if unknown else f'once it has {spec.encoder_steps}')
  return input_errors.TooLittleHistoryError(
      f"series '{key}' has {values} rows with a '{spec.target_column}' value, fewer than the "
      f"model's history length E ({spec.encoder_steps}): it is forecast {then}")


def make_forecasts(model_dir: str, series: SeriesRows, future: SeriesRows,
                   spec: DatasetSpec, future_file: str = '',
                   ends_apart: bool = False) -> Forecasts:
  """Forecasts of every series that can be forecast, and the others with the reason;
  `future` holds the rows of `future_file` ('' if none was given). With `ends_apart` the
  series end at different times by design (the periods are placed from each series' last
  row): each is forecast from its own last row, and none ending a horizon before the
  newest rows is taken for one that stopped."""
  vocabulary = published_models.series_vocabulary(model_dir)
  trained_before = training_period.trained_before(model_dir)
  newest = max((rows[-1].seconds for rows in series.values()), default=0)
  windows, not_forecast, histories = [], [], []
  for key_values, rows in series.items():
    key = series_key(key_values, spec)
    stale = None if ends_apart else series_windows.stale_series_error(key, rows, newest, spec)
    if stale:
      not_forecast.append((key_values, stale))
      continue
    unknown = (None if key in vocabulary else
               unknown_series_error(key, trained_before))
    try:
      window = series_windows.build_window(
          key_values, series_windows.with_horizon(rows, future.get(key_values, []), spec,
                                              future_file), spec)
    except input_errors.TooLittleHistoryError:
      not_forecast.append((key_values, short_history_error(key, rows, spec, unknown)))
      continue
    except input_errors.PredictionInputError as error:
      not_forecast.append((key_values, unknown or error))
      continue
    if unknown:
      not_forecast.append((key_values, unknown))
    else:
      windows.append(window)
      histories.append([_number(row.values[spec.target_column])
                        for row in rows[-spec.encoder_steps:]])
  not_forecast += series_windows.future_only_series(series, future, spec)
  for note in series_windows.unseen_categories(windows, model_dir, spec):
    logging.warning('Forecasts: %s', note)
  rows = prediction.forecast_rows(model_dir, windows, spec) if windows else []
  columns = list(rows[0]) if rows else prediction.forecast_columns(model_dir, spec)
  return Forecasts(rows=rows, not_forecast=not_forecast, columns=columns,
                   naive=naive_rows(rows, histories, spec))


def _number(text: str) -> float:
  return float(text) if text else float('nan')


def naive_rows(rows: Sequence[Dict[str, object]], histories: Sequence[Sequence[float]],
               spec: DatasetSpec) -> List[Dict[str, object]]:
  """Beside each forecast row (a series' H rows in a run, `histories` its last E target
  values, NaN where missing), its key, time and step and each naive forecast of it
  (`naive_<name>`)."""
  if not rows:
    return []
  periods = naive_forecasts.periods_for(spec.frequency.seasons, spec.encoder_steps)
  forecasts = {name: values.numpy().reshape(-1) for name, values in
               naive_forecasts.naive_forecasts(np.asarray(histories, dtype=np.float64),
                                               spec.horizon, periods).items()}
  kept = [*spec.series_key_columns, spec.time_column, prediction.HORIZON_STEP]
  return [{**{column: row[column] for column in kept},
           **{f'{naive_forecasts.OUTPUT_PREFIX}{name}': float(values[index])
              for name, values in forecasts.items()}}
          for index, row in enumerate(rows)]


def write_forecasts(forecasts: Forecasts, spec: DatasetSpec, directory: str,
                    report: Dict[str, object]) -> None:
  """Writes the output files (see the module docstring) into `directory`."""
  tf.io.gfile.makedirs(directory)
  frame = pd.DataFrame(forecasts.rows, columns=forecasts.columns)
  with tf.io.gfile.GFile(os.path.join(directory, FORECASTS_CSV), 'w') as f:
    prediction.write_forecasts(forecasts.rows, f, forecasts.columns)
  write_parquet(frame, os.path.join(directory, FORECASTS_PARQUET))
  write_parquet(pd.DataFrame(forecasts.naive), os.path.join(directory, NAIVE_PARQUET))
  not_forecast = pd.DataFrame(
      [dict(zip(spec.series_key_columns, key), **{prediction.REASON: str(error)})
       for key, error in forecasts.not_forecast],
      columns=list(spec.series_key_columns) + [prediction.REASON])
  with tf.io.gfile.GFile(os.path.join(directory, NOT_FORECAST_CSV), 'w') as f:
    not_forecast.to_csv(f, index=False)
  series_forecast = len(forecasts.rows) // spec.horizon
  with tf.io.gfile.GFile(os.path.join(directory, REPORT_JSON), 'w') as f:
    json.dump({**report, 'series_forecast': series_forecast,
               'series_not_forecast': len(forecasts.not_forecast),
               'reasons_not_forecast': reasons_by_kind(forecasts.not_forecast),
               'horizon': spec.horizon}, f, indent=2)


def write_parquet(frame: pd.DataFrame, path: str) -> None:
  """`frame` as a Parquet file at `path` (any file system tf.io.gfile writes): written
  locally, then copied."""
  with tempfile.TemporaryDirectory() as scratch:  # pyarrow writes local files only
    local = os.path.join(scratch, os.path.basename(path))
    frame.to_parquet(local, index=False)
    tf.io.gfile.copy(local, path, overwrite=True)


def reasons_by_kind(not_forecast: Sequence[NotForecast]) -> List[Dict[str, object]]:
  """Per kind of reason (the error's class), commonest first: how many series it stopped,
  the kind in words (its `summary`, read after the count) and the first of their
  messages; [] if every series was forecast."""
  kinds = collections.Counter(type(error) for _, error in not_forecast)
  return [{'kind': kind.__name__, 'series': count,
           'summary': kind.summary,
           'example': str(next(error for _, error in not_forecast if type(error) is kind))}
          for kind, count in kinds.most_common()]


def read_report(directory: str) -> Optional[Dict[str, object]]:
  return artifact_json.read_json(directory, REPORT_JSON)
