"""Where a series holds whole windows: the one gap rule the windowing component and `init`
both cut by."""

import numpy as np


def whole_windows(present: np.ndarray, window: int) -> np.ndarray:
  """For each step of a series' grid (`present`: whether each step from the series' first
  one holds a value), whether the `window` steps from it all do: a window there has no gap.
  False where fewer than `window` steps remain."""
  present = np.asarray(present, dtype=np.int64)
  whole = np.zeros(len(present), dtype=bool)
  if len(present) >= window:
    complete_before = np.concatenate([[0], np.cumsum(present)])
    whole[:len(present) - window + 1] = (complete_before[window:]
                                         - complete_before[:-window]) == window
  return whole
