"""What `tft-pipeline` checks of the newest span before the run: it must hold an eval
period, and a test period when the split holds one out, that a window fits in.

With spans, every row of an older span is training data and the newest span's own split
gives the eval and test windows (`components.time_series_example_gen`), so a span of one
new week leaves an eval period of one step: Windowing would find no eval window, after
ExampleGen, StatisticsGen and Transform had run.
"""

from typing import Optional

from components import input_rows
from schema import split_placement
from pipeline.future_check import DataFiles
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import EVAL_SPLIT, TEST_SPLIT, TimeSplit, format_time


def eval_period_error(data: DataFiles, spec: DatasetSpec, split: TimeSplit,
                      span_name: str) -> Optional[str]:
  """The error when the newest span's eval or test period (its rows from the period's
  start, placed in that span's time range as ExampleGen places it, up to the next
  boundary) holds no window's horizon: H steps from a step where Windowing starts a
  forecast (a multiple of H). None when each does, or when the files cannot be read or
  hold a time off the grid (ExampleGen names the problem then), or when the periods are
  placed from each series' last row (each series' own span would be needed). `span_name`
  names the span."""
  if split.of_each_series:
    return None
  try:
    times = [spec.read_time(text) for path in data.newest
             for _, _, text in input_rows.keys_and_times(path, spec)]
    return _error(times, spec, split, span_name) if times else None
  except ValueError:
    return None


def _error(times, spec: DatasetSpec, split: TimeSplit, span_name: str) -> Optional[str]:
  """`eval_period_error` of the newest span's row times (epoch seconds)."""
  step_of = spec.frequency.step_of  # raises ValueError for a time off the grid
  time_range = (min(times), max(times))
  boundaries = [('eval_start', EVAL_SPLIT, split.eval_start),
                ('test_start', TEST_SPLIT, split.test_start), ('end', None, split.end)]
  given = [(name, period, value) for name, period, value in boundaries if value is not None]
  for (name, period, value), (_, _, following) in zip(given, given[1:] + [(None, None, None)]):
    if period is None:
      continue
    start = max(split_placement.resolve_boundary(value, time_range, spec), time_range[0])
    stop = (None if following is None
            else split_placement.resolve_boundary(following, time_range, spec))
    steps = _period_steps(times, start, stop, spec)
    if steps is None:
      continue
    held = step_of(time_range[1]) - step_of(time_range[0]) + 1
    return (f'the newest span, {span_name}, holds {held} step{"s" if held > 1 else ""} of '
            f'the {spec.frequency.value} grid ({format_time(time_range[0])} to '
            f'{format_time(time_range[1])}), and its own split gives the eval and test '
            f"windows (the older spans' rows are all training data): {name} {value!r} leaves "
            f'it {"an" if period == EVAL_SPLIT else "a"} {period} period of {steps} '
            f'step{"" if steps == 1 else "s"}, in which no {period} window\'s '
            f'{spec.horizon} forecast steps fit (they start on a multiple of '
            f'{spec.horizon}). Make each span hold an eval (and test) period of new rows, or '
            'append the new rows to one growing file instead of adding spans '
            '(docs/pipeline.md: retraining as new data arrives)')
  return None


def _period_steps(times, start: int, stop: Optional[int], spec: DatasetSpec
                  ) -> Optional[int]:
  """The steps a period [start, stop) of the span spans when no window's horizon fits in
  it (0 if it holds no row); None when one fits."""
  steps = sorted({spec.frequency.step_of(t) for t in times
                  if t >= start and (stop is None or t < stop)})
  if not steps:
    return 0
  first_forecast = forecast_starts.first_start_from(
      steps[0], forecast_starts.default_stride(EVAL_SPLIT, spec.horizon))
  if first_forecast + spec.horizon - 1 <= steps[-1]:
    return None
  return steps[-1] - steps[0] + 1
