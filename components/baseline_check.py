"""Whether the last blessed model can score this run's evaluation windows.

The Evaluator scores the last blessed model (the baseline) on the raw columns of the
evaluation windows, through its serving signature and so its own Transform
(`evaluation.eval_config`): new series or categories, vocabularies in another order and
new statistics are read as the baseline would read them in serving. What it cannot read
is a window of another shape: another time grid, history or horizon, a column it reads
gone or declared with another role or type, or missing values in a column it was
trained without them. A baseline that forecasts no median has no MAE to compare. The
scoped Evaluator leaves such a baseline out and says why (`components.scoped_evaluator`).
"""

from typing import List, Optional

from schema.dataset_spec import DatasetSpec
from trainer_module import export, warm_start


def incompatibility(candidate_dir: str, baseline_dir: str) -> Optional[str]:
  """Why the baseline cannot score the candidate's evaluation windows, or None if it can.

  Args:
    candidate_dir: the candidate's serving model directory.
    baseline_dir: the baseline's serving model directory.
  """
  try:
    candidate, baseline = (export.read_dataset_spec(candidate_dir),
                           export.read_dataset_spec(baseline_dir))
  except (FileNotFoundError, ValueError) as error:
    return f'its dataset spec cannot be read ({error})'
  unreadable = _unreadable(candidate, baseline)
  if unreadable:
    return f'the dataset spec changed ({"; ".join(unreadable)}), so it cannot read the windows'
  quantiles = _quantiles(baseline_dir)
  if quantiles is not None and 0.5 not in quantiles:
    return f'it forecasts the quantiles {quantiles}, without the median that the MAE scores'
  return None


def _unreadable(candidate: DatasetSpec, baseline: DatasetSpec) -> List[str]:
  """What in the candidate's windows the baseline cannot read, in the spec's terms; a
  column the baseline does not know is no obstacle: its serving signature ignores it."""
  parts = []
  window = lambda spec: (f'{spec.encoder_steps} history + {spec.horizon} forecast steps of '
                         f'the {spec.frequency.value} grid')
  if window(candidate) != window(baseline):
    parts.append(f'{window(baseline)} -> {window(candidate)}')
  now = {column.name: column for column in candidate.columns}
  gone = [column.name for column in baseline.columns if column.name not in now]
  if gone:
    parts.append(f'columns {gone} gone')
  describe = lambda column: f'{column.role.value} {column.dtype.value}'
  for before in baseline.columns:
    after = now.get(before.name)
    if after is None:
      continue
    if describe(after) != describe(before):
      parts.append(f"'{before.name}' {describe(before)} -> {describe(after)}")
    elif after.allow_missing and not before.allow_missing:
      parts.append(f"'{before.name}' may now miss values")
  return parts


def _quantiles(model_dir: str) -> Optional[List[float]]:
  """The quantiles a model forecasts, from its warm-start architecture; None if unknown."""
  recorded = warm_start.recorded_architecture(model_dir)
  return recorded.get('quantiles') if recorded else None
