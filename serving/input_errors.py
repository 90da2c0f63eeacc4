"""The errors of a forecast's input: each names the failed check, with the series, line or
column and the fix. They are input errors (`common.exit_codes`): a command exits 2.
"""

from common.exit_codes import InputError


class PredictionInputError(InputError):
  """The input CSV cannot make windows for the model. `summary`, of each kind of error:
  the kind in words, read after a count of series ('3 with too little history')."""
  summary = 'whose rows cannot make a window'


class MissingColumnsError(PredictionInputError):
  """Columns of the dataset spec are not in the CSV."""
  summary = 'with columns missing'


class TooLittleHistoryError(PredictionInputError):
  """A series has fewer than E rows with a target value."""
  summary = 'with too little history'


class MissingFutureRowsError(PredictionInputError):
  """A series has fewer than H rows after its last target value."""
  summary = 'without known values over the horizon'


class RowsAfterHorizonError(PredictionInputError):
  """A series has more than H rows after its last target value."""
  summary = 'with rows after the horizon'


class TimeGridError(PredictionInputError):
  """Timestamps off the spec's time grid, duplicated, or not consecutive."""
  summary = 'with gaps or times off the grid'


class UnknownSeriesError(PredictionInputError):
  """A series the model was not trained on."""
  summary = 'the model was not trained on'


class NoDataRowsError(PredictionInputError):
  """The series has rows in the future file only."""
  summary = 'in the future file only'


class StaleSeriesError(PredictionInputError):
  """The series' rows end a horizon or more before the newest rows of the data."""
  summary = 'that ended a horizon or more before the others'
