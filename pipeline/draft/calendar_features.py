"""Which of the grid's calendar features `init` drafts: those whose every value the
training period holds.

A calendar feature enters the model as an embedding per value. A value the training rows
never take keeps the embedding it was initialised with, so forecasts at those times rest
on weights nothing trained: daily data of five months trains none of the other seven
months, and its eval and test months would be forecast from untrained months.
"""

from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from schema.frequency import CALENDAR_CARDINALITIES
from trainer_module.preprocessing import calendar_feature


def untrained_calendar_values(features: Sequence[str], training_seconds: np.ndarray
                     ) -> Dict[str, Tuple[int, int]]:
  """Of `features`, those some of whose values no training time takes (`training_seconds`:
  the training rows' UTC epoch seconds, read as the pipeline reads them): name -> (values
  taken, values in all)."""
  moments = tf.constant(np.unique(np.asarray(training_seconds, np.int64)))
  untrained = {}
  for feature in features:
    taken = np.unique(calendar_feature(feature, moments).numpy()).size
    if taken < CALENDAR_CARDINALITIES[feature]:
      untrained[feature] = (taken, CALENDAR_CARDINALITIES[feature])
  return untrained


def untrained_calendar_finding(untrained: Dict[str, Tuple[int, int]], eval_start: str
                      ) -> Optional[str]:
  """What `init` says of the calendar features it left out, or None."""
  if not untrained:
    return None
  counts = ', '.join(f'{name} {taken} of its {total}'
                     for name, (taken, total) in untrained.items())
  return (f'calendar features {sorted(untrained)} left out: the training period (before '
          f'{eval_start}) holds only some of their values ({counts}), and the model would '
          'forecast the others from embeddings no row trained; add them to '
          'calendar_features once the training period holds every value (a whole year of '
          'rows for month_of_year)')
