"""What `init` notes about the series: constant, ended, late, short or apart, seasons
beyond the history, and calendar features the training period does not train.
"""

from typing import Dict, Optional, Tuple

import numpy as np
import pandas as pd

from components.split_report import describe_untrained_calendar
from pipeline.draft.table import DraftError, line_of
from pipeline.draft.time_column import time_text
from pipeline.draft.window import longest_window
from schema.frequency import Frequency


def check_target_varies(table: pd.DataFrame, numbers: pd.Series, target: str,
                        key: Tuple[str, ...], series: pd.Series) -> None:
  """Raises DraftError when the target never changes within a series: nothing to
  forecast, and a naive forecast no model can beat."""
  if (numbers.groupby(series.to_numpy()).nunique() > 1).any():
    return
  first = table.index[0]
  where = (' of the series ' + ', '.join(f'{c} {table.loc[first, c]!r}' for c in key)
           if key else '')
  raise DraftError(f"target column '{target}' never changes within a series (e.g. "
                   f'{table.loc[first, target]!r} in every row{where}): there is nothing to '
                   'forecast; check that --target names the column to forecast')


def constant_series_finding(table: pd.DataFrame, numbers: pd.Series, target: str,
                            key: Tuple[str, ...], series: pd.Series) -> Optional[str]:
  """Names the series whose target never changes (when others do), or None."""
  distinct = numbers.groupby(series.to_numpy()).nunique()
  constant = distinct[distinct <= 1]
  if constant.empty:
    return None
  line, name = _first_row_of(table, key, series, constant.index[0])
  return (f"{_series_count(len(constant), 'has', 'have')} one '{target}' value in every "
          f'row, e.g. {name} (from line {line}), {table.loc[line, target]!r}: they are '
          'trained on and forecast like the others; leave them out of the data if they are '
          'not series to forecast')


def ended_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                         steps: np.ndarray, frequency: Frequency,
                         horizon: int) -> Optional[str]:
  """Names the series whose rows end a horizon or more before the newest rows (the run's
  forecasts, which start after the newest rows, leave them out), or None."""
  last = pd.Series(steps).groupby(series.to_numpy()).max()
  ended = last[last <= last.max() - horizon]
  if ended.empty:
    return None
  line, name = _first_row_of(table, key, series, ended.index[0])
  return (f"{_series_count(len(ended), 'ends', 'end')} {horizon} or more steps before the "
          'newest rows '
          f'({time_text(frequency.seconds_of(int(last.max())))}), e.g. {name} (from line '
          f'{line}) at {time_text(frequency.seconds_of(int(ended.iloc[0])))}: the '
          "pipeline's forecasts start after the newest rows and list them as not forecast; "
          "tft-predict forecasts each series from its own last row")


def season_beyond_history_finding(frequency: Frequency, encoder_steps: int, horizon: int,
                                  train_steps: int) -> Optional[str]:
  """A suggestion when the grid's season (a year of weeks) is longer than the history
  and the training period of the longest series has room for windows that long
  (`longest_window`), or None."""
  longer = [p for p in frequency.seasons if p > encoder_steps and p >= horizon
            and p + horizon <= longest_window(train_steps)]
  if not longer:
    return None
  period = longer[0]
  return (f'the grid\'s season of {period} steps is longer than the {encoder_steps}-step '
          'history, so neither the model nor the naive forecasts see the value a season '
          f'before; the series are long enough to try --encoder-steps {period} with model: '
          f'{{seasonal_lag: {period}}} (the target {period} steps before each forecast step '
          f'as an input, and seasonal_{period} among the naive forecasts)')


def late_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                        steps: np.ndarray, frequency: Frequency,
                        eval_starts: pd.Series) -> Optional[str]:
  """Names the series whose rows start in their eval period (`eval_starts`: its first step
  per series), or None: the model trains on none of their rows (the series vocabulary
  comes from the training rows), so the run's forecasts leave them out until a later
  eval period starts after their first rows."""
  first = pd.Series(steps).groupby(series.to_numpy()).min()
  late = first[first >= eval_starts[first.index]]
  if late.empty:
    return None
  line, name = _first_row_of(table, key, series, late.index[0])
  return (f"{_series_count(len(late), 'starts', 'start')} in the eval period (from "
          f'{time_text(frequency.seconds_of(int(eval_starts[late.index[0]])))}), e.g. '
          f'{name} (from line {line}): no model trains on them, so the run does not forecast '
          'them, until the eval period of a later run starts after their first rows '
          '(docs/pipeline.md: new series)')


def _first_row_of(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                  series_id: int) -> Tuple[int, str]:
  """The line of a series' first row and its key as a message names it ("shop 'A'")."""
  line = line_of(series == series_id)
  return line, ', '.join(f'{c} {table.loc[line, c]!r}' for c in key)


def _series_count(count: int, singular: str, plural: str) -> str:
  """'1 series ends', '3 series end'."""
  return f'{count} series {singular if count == 1 else plural}'


def short_series_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                         lengths: pd.Series, window: int) -> Optional[str]:
  """Names the series too short to hold one window of `window` steps, or None."""
  short = lengths[lengths < window]
  if short.empty:
    return None
  line, name = _first_row_of(table, key, series, short.index[0])
  name = name or 'the series'
  return (f'{len(short)} series cannot fill one window of history and horizon ({window} '
          f'steps), so no window of theirs is trained on or scored: e.g. {name} (from line '
          f'{line}), {int(short.iloc[0])} steps; give them more rows, or a shorter '
          '--encoder-steps')


def apart_finding(table: pd.DataFrame, key: Tuple[str, ...], series: pd.Series,
                  last: pd.Series, frequency: Frequency, horizon: int) -> str:
  """Says that the series end at different times, so that each has its own periods."""
  early = last[last <= last.max() - horizon]
  line, name = _first_row_of(table, key, series, early.index[0])
  return (f"{_series_count(len(early), 'ends', 'end')} {horizon} or more steps before the "
          f'newest rows ({time_text(frequency.seconds_of(int(last.max())))}), e.g. {name} '
          f'(from line {line}) at {time_text(frequency.seconds_of(int(early.iloc[0])))}: '
          "the series cover different periods, so the eval and test periods are each "
          "series' own last steps ('of each series' in the split), and each series is "
          'forecast from its own last row')


def untrained_calendar_finding(untrained: Dict[str, Tuple[int, int]]) -> Optional[str]:
  """What `init` says of the calendar features it leaves out (`untrained`:
  `preprocessing.untrained_calendar_values`), or None."""
  if not untrained:
    return None
  counts = describe_untrained_calendar(untrained)
  return (f'calendar features {list(untrained)} left out ({counts}): forecasts at those '
          'times would rest on embeddings no training row trained; add them to '
          'calendar_features once the training period holds those values (a whole year of '
          'rows for month_of_year)')
