"""What `tft-pipeline` checks of the newest span before the run: it must hold an eval
period that an eval window fits in.

With spans, every row of an older span is training data and the newest span's own split
gives the eval windows (`components.time_series_example_gen`), so a span of one new week
leaves an eval period of one step: Windowing would find no eval window, after ExampleGen,
StatisticsGen and Transform had run.
"""

from typing import Optional

from components import time_series_example_gen as example_gen
from pipeline.future_check import DataFiles
from schema import forecast_starts
from schema.dataset_spec import DatasetSpec
from schema.time_split import EVAL_SPLIT, TimeSplit, format_time, parse_timestamp


def eval_period_error(data: DataFiles, spec: DatasetSpec, split: TimeSplit,
                      span_name: str) -> Optional[str]:
  """The error when the newest span's eval period (its rows from the split's eval start,
  placed in that span's time range as ExampleGen places it, up to its test start or
  end) holds no window's horizon: H steps from a step where Windowing starts an eval
  forecast (a multiple of H). None when it does, or when the files cannot be read or
  hold a time off the grid (ExampleGen names the problem then). `span_name` names the
  span."""
  try:
    times = [parse_timestamp(text) for path in data.newest
             for _, _, text in example_gen.keys_and_times(path, spec)]
    return _error(times, spec, split, span_name) if times else None
  except ValueError:
    return None


def _error(times, spec: DatasetSpec, split: TimeSplit, span_name: str) -> Optional[str]:
  """`eval_period_error` of the newest span's row times (epoch seconds)."""
  step_of = spec.frequency.step_of  # raises ValueError for a time off the grid
  time_range = (min(times), max(times))
  start = max(example_gen.resolve_boundary(split.eval_start, time_range, spec), time_range[0])
  stop = next((example_gen.resolve_boundary(boundary, time_range, spec)
               for boundary in (split.test_start, split.end) if boundary is not None), None)
  eval_steps = sorted({step_of(t) for t in times if t >= start and (stop is None or t < stop)})
  if not eval_steps:
    steps = 0
  else:
    first_forecast = forecast_starts.first_start_from(
        eval_steps[0], forecast_starts.default_stride(EVAL_SPLIT, spec.horizon))
    if first_forecast + spec.horizon - 1 <= eval_steps[-1]:
      return None
    steps = eval_steps[-1] - eval_steps[0] + 1
  held = step_of(time_range[1]) - step_of(time_range[0]) + 1
  return (f'the newest span, {span_name}, holds {held} step{"s" if held > 1 else ""} of the '
          f'{spec.frequency.value} grid ({format_time(time_range[0])} to '
          f'{format_time(time_range[1])}), and its own split gives the eval windows (the older '
          f"spans' rows are all training data): eval_start {split.eval_start!r} leaves it an "
          f'eval period of {steps} step{"" if steps == 1 else "s"}, in which no eval window\'s '
          f'{spec.horizon} forecast steps fit (they start on a multiple of {spec.horizon}). '
          'Make each span hold an eval period of new rows, or append the new rows to one '
          'growing file instead of adding spans (docs/pipeline.md: retraining as new data '
          'arrives)')
