"""The forecast ledger: the forecasts runs published, and their scores as actuals arrive.

A directory beside the published models (`PipelineConfig.ledger_dir`), on any file system
tf.io.gfile writes:

  forecasts/<forecast id>/   a published forecast, kept as ForecastGen wrote it
                             (`forecasts.parquet`, `naive_forecasts.parquet`,
                             `forecast_report.json`: the model and its expected figures)
  scored/<scoring id>.parquet   the rows one run scored: SCORED_COLUMNS

Nothing in it is ever rewritten: a run adds a forecast directory and one scored file,
each written whole (renamed into place on a local disk; an object store's write is whole
by itself). A file that cannot be read (a partial copy, another program's) is reported
and left in place; the rest of the ledger is read without it. A forecast row is scored
once, by the first run whose data holds its actual.
"""

import dataclasses
import hashlib
import json
import os
import posixpath
import tempfile
import uuid
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np
import pandas as pd
import tensorflow as tf

from components import delivered_forecasts
from schema.dataset_spec import DatasetSpec
from schema.features import series_key
from serving.prediction import HORIZON_STEP
from trainer_module.naive_forecasts import OUTPUT_PREFIX as NAIVE_PREFIX

KEPT_DIR = 'forecasts'
SCORED_DIR = 'scored'
KEPT_FILES = (delivered_forecasts.FORECASTS_PARQUET, delivered_forecasts.NAIVE_PARQUET,
              delivered_forecasts.REPORT_JSON)
# A scored row: which forecast (and its first time), made by which model, of which series'
# step, and its actual.
SCORED_COLUMNS = ('forecast_id', 'model', 'first_time', 'series', HORIZON_STEP, 'time',
                  'seconds', 'actual')  # then the quantiles' and naive forecasts' columns


@dataclasses.dataclass
class KeptForecast:
  """A published forecast in the ledger: its rows (series key, time in epoch seconds, the
  quantiles, the naive forecasts beside them) and ForecastGen's report."""
  forecast_id: str
  rows: pd.DataFrame
  report: Dict[str, object]


@dataclasses.dataclass
class Ledger:
  """What a ledger directory holds: kept forecasts (oldest origin first), every scored row,
  and the files that could not be read, with why."""
  forecasts: List[KeptForecast]
  scored: pd.DataFrame
  unreadable: List[Tuple[str, str]]

  def scored_keys(self) -> Set[Tuple[str, str, int]]:
    """(forecast id, series, step) of every row scored so far."""
    return set(zip(self.scored['forecast_id'], self.scored['series'],
                   self.scored[HORIZON_STEP].astype(int))) if len(self.scored) else set()


def forecast_id(forecasts_uri: str, first_time: str) -> str:
  """A published forecast's name in the ledger: its first forecast time (so that names
  sort by time) and a digest of where ForecastGen wrote it (so that each is kept once)."""
  stamp = ''.join(ch if ch.isalnum() else '-' for ch in first_time)
  return f'{stamp}_{hashlib.sha1(forecasts_uri.encode()).hexdigest()[:10]}'


class NotKeptError(ValueError):
  """A ForecastGen output that the ledger cannot keep (files missing)."""


def keep(forecasts_uri: str, ledger_dir: str, spec: DatasetSpec) -> Optional[str]:
  """Copies the forecast ForecastGen wrote in `forecasts_uri` into the ledger, unless it
  is there already or forecast no series; returns its id, or None when there is none.

  Raises:
    NotKeptError: a file the ledger keeps is missing (an output of a version that did not
      write it).
  """
  missing = [name for name in KEPT_FILES
             if not tf.io.gfile.exists(posixpath.join(forecasts_uri, name))]
  if missing:
    raise NotKeptError(f'the forecasts in {forecasts_uri} have no {", ".join(missing)}, so '
                       'they are not scored: they were written by a version of the pipeline '
                       'before the forecast ledger')
  frame = read_parquet(posixpath.join(forecasts_uri, delivered_forecasts.FORECASTS_PARQUET))
  if not len(frame):
    return None
  name = forecast_id(forecasts_uri, str(frame[spec.time_column].min()))
  target = posixpath.join(ledger_dir, KEPT_DIR, name)
  if tf.io.gfile.exists(target):
    return name
  staging = posixpath.join(ledger_dir, KEPT_DIR, f'.staging-{uuid.uuid4().hex}')
  tf.io.gfile.makedirs(staging)
  for file_name in KEPT_FILES:
    tf.io.gfile.copy(posixpath.join(forecasts_uri, file_name),
                     posixpath.join(staging, file_name))
  _move_into_place(staging, target, KEPT_FILES)
  return name


def read(ledger_dir: str, spec: DatasetSpec) -> Ledger:
  """The ledger in `ledger_dir` (empty if there is none yet)."""
  forecasts, unreadable = [], []
  kept_root = posixpath.join(ledger_dir, KEPT_DIR)
  for name in sorted(_entries(kept_root)):
    if name.startswith('.'):
      continue
    directory = posixpath.join(kept_root, name)
    try:
      forecasts.append(_read_kept(name, directory, spec))
    except Exception as error:  # pylint: disable=broad-except
      unreadable.append((directory, f'{type(error).__name__}: {error}'))
  parts = []
  scored_root = posixpath.join(ledger_dir, SCORED_DIR)
  for name in sorted(_entries(scored_root)):
    if name.startswith('.') or not name.endswith('.parquet'):
      continue
    path = posixpath.join(scored_root, name)
    try:
      part = read_parquet(path)
      missing = [column for column in SCORED_COLUMNS if column not in part.columns]
      if missing:
        raise ValueError(f'it has no columns {missing}')
      parts.append(part)
    except Exception as error:  # pylint: disable=broad-except
      unreadable.append((path, f'{type(error).__name__}: {error}'))
  scored = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
      columns=list(SCORED_COLUMNS))
  return Ledger(forecasts, scored, unreadable)


def _read_kept(name: str, directory: str, spec: DatasetSpec) -> KeptForecast:
  written = read_parquet(posixpath.join(directory, delivered_forecasts.FORECASTS_PARQUET))
  naive = read_parquet(posixpath.join(directory, delivered_forecasts.NAIVE_PARQUET))
  with tf.io.gfile.GFile(posixpath.join(directory, delivered_forecasts.REPORT_JSON)) as f:
    report = json.load(f)
  if len(naive) != len(written):
    raise ValueError(f'its naive forecasts hold {len(naive)} rows, its forecasts '
                     f'{len(written)}')
  keys = spec.series_key_columns
  rows = pd.DataFrame({
      'series': [series_key(tuple(str(v) for v in values), spec) for values in (
          written[list(keys)].itertuples(index=False) if keys else [()] * len(written))],
      HORIZON_STEP: written[HORIZON_STEP].astype(int),
      'time': written[spec.time_column].astype(str),
      'seconds': [spec.read_time(str(text)) for text in written[spec.time_column]]})
  for column in written.columns:
    if is_quantile(column):
      rows[column] = written[column].astype(float)
  for column in naive.columns:
    if column.startswith(NAIVE_PREFIX):
      rows[column] = naive[column].astype(float).to_numpy()
  return KeptForecast(name, rows, report)


Actuals = Mapping[str, Mapping[int, float]]  # series key -> epoch seconds -> target value


def actuals_from_examples(files: Sequence[str], spec: DatasetSpec
                          ) -> Tuple[Dict[str, Dict[int, float]], Dict[str, int]]:
  """Each series' target values by time in ExampleGen's tf.Examples (`files`), missing
  values left out, and the time of each series' last row."""
  values, last = {}, {}
  for key_values, rows in delivered_forecasts.series_from_examples(files, spec).items():
    key = series_key(key_values, spec)
    values[key] = {row.seconds: float(row.values[spec.target_column]) for row in rows
                   if row.values[spec.target_column]}
    last[key] = rows[-1].seconds
  return values, last


@dataclasses.dataclass
class Scoring:
  """What one run scored: the new rows, and per kept forecast what is left unscored."""
  rows: pd.DataFrame  # SCORED_COLUMNS, the quantiles and the naive forecasts
  not_yet_due: Dict[str, int]  # forecast id -> rows past the end of their series' data
  no_actual: Dict[str, int]  # forecast id -> rows within the data, whose actual is missing


def score(ledger: Ledger, actuals: Actuals, last_times: Mapping[str, int]) -> Scoring:
  """The rows of kept forecasts that have come due and were not scored before: their
  actuals beside their quantiles and naive forecasts."""
  done = ledger.scored_keys()
  parts, not_yet_due, no_actual = [], {}, {}
  for kept in ledger.forecasts:
    rows = kept.rows
    fresh = np.array([(kept.forecast_id, s, int(h)) not in done
                      for s, h in zip(rows['series'], rows[HORIZON_STEP])], dtype=bool)
    due = np.array([seconds <= last_times.get(s, -np.inf)
                    for s, seconds in zip(rows['series'], rows['seconds'])], dtype=bool)
    actual = np.array([actuals.get(s, {}).get(int(seconds), np.nan)
                       for s, seconds in zip(rows['series'], rows['seconds'])])
    held = fresh & due & np.isfinite(actual)
    if (fresh & ~due).any():
      not_yet_due[kept.forecast_id] = int((fresh & ~due).sum())
    if (fresh & due & ~np.isfinite(actual)).any():
      no_actual[kept.forecast_id] = int((fresh & due & ~np.isfinite(actual)).sum())
    if held.any():
      part = rows[held].copy()
      part['actual'] = actual[held]
      part['forecast_id'] = kept.forecast_id
      part['model'] = str(kept.report.get('model'))
      part['first_time'] = rows['time'][rows['seconds'].idxmin()]
      parts.append(part)
  rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
      columns=list(SCORED_COLUMNS))
  rows = rows[list(SCORED_COLUMNS) + [c for c in rows.columns if c not in SCORED_COLUMNS]]
  return Scoring(rows, not_yet_due, no_actual)


def is_quantile(name: str) -> bool:
  """A forecast file's quantile column: 'p10', 'p2_5', ... (`export.quantile_key`)."""
  return name[:1] == 'p' and name[1:].replace('_', '').isdigit()


def append(ledger_dir: str, rows: pd.DataFrame) -> Optional[str]:
  """Adds `rows` to the ledger as a new scored file; its path, or None for no rows."""
  if not len(rows):
    return None
  name = f'{pd.Timestamp.now(tz="UTC").strftime("%Y%m%dT%H%M%S")}_{uuid.uuid4().hex[:8]}'
  directory = posixpath.join(ledger_dir, SCORED_DIR)
  tf.io.gfile.makedirs(directory)
  path = posixpath.join(directory, f'{name}.parquet')
  if _is_local(path):
    staging = posixpath.join(directory, f'.{name}.parquet')
    delivered_forecasts.write_parquet(rows, staging)
    os.rename(staging, path)
  else:
    delivered_forecasts.write_parquet(rows, path)
  return path


def read_parquet(path: str) -> pd.DataFrame:
  """A Parquet file on any file system tf.io.gfile reads."""
  if _is_local(path):
    return pd.read_parquet(path)
  with tempfile.TemporaryDirectory() as scratch:
    local = os.path.join(scratch, posixpath.basename(path))
    tf.io.gfile.copy(path, local)
    return pd.read_parquet(local)


def _entries(directory: str) -> List[str]:
  if not tf.io.gfile.isdir(directory):
    return []
  return [name.rstrip('/') for name in tf.io.gfile.listdir(directory)]


def _is_local(path: str) -> bool:
  return '://' not in path


def _move_into_place(staging: str, target: str, files: Sequence[str]) -> None:
  """A staged directory renamed to `target` on a local disk; on an object store, its
  files copied there (the report last: a directory without it is not read) and the
  staging copy removed."""
  if _is_local(target):
    os.rename(staging, target)
    return
  tf.io.gfile.makedirs(target)
  for file_name in sorted(files, key=lambda name: name == delivered_forecasts.REPORT_JSON):
    tf.io.gfile.copy(posixpath.join(staging, file_name), posixpath.join(target, file_name))
  tf.io.gfile.rmtree(staging)
