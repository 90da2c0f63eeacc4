"""Where windows start their forecasts: the one rule that windowing applies and that the
pipeline's defaults and `tft-pipeline init`'s draft follow.

A split's windows start their forecasts on the grid steps divisible by the split's stride
(grid steps count from the epoch, `Frequency.step_of`), so the same data gives the same
windows whatever its first row. Training windows start at every step; evaluation and test
windows one horizon apart, so that their forecasts tile the period without overlap.
"""

from schema.time_split import TRAINING_SPLIT


def default_stride(split: str, horizon: int) -> int:
  """Grid steps between the forecast starts of `split`'s windows."""
  return 1 if split == TRAINING_SPLIT else horizon


def starts_forecast(step: int, stride: int) -> bool:
  """Whether a window's forecast may start at grid `step`."""
  return step % stride == 0


def first_start_from(step: int, stride: int) -> int:
  """The first forecast start at or after grid `step`."""
  return step + (-step % stride)


def last_start_until(step: int, stride: int) -> int:
  """The last forecast start at or before grid `step`."""
  return step - step % stride
