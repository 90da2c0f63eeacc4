"""Whether the last blessed model can score this run's evaluation windows.

The Evaluator scores the candidate and the last blessed model (the baseline) on the
windows the windowing component wrote, which hold this run's Transform outputs: each
categorical value as its id in this run's vocabulary. A baseline trained on other window
features (a column added, removed or given another role, another history or horizon), or
with other vocabularies (a new series or category, or the same values in another order,
since vocabularies are ordered by frequency), would read those windows wrongly, or not at
all: an id beyond its embedding table stops the Evaluator. The scoped Evaluator leaves
such a baseline out and says why (`components.scoped_evaluator`).
"""

from typing import List, Optional

from schema.dataset_spec import DatasetSpec
from schema.window_layout import window_feature_spec
from trainer_module import export, vocabularies, warm_start


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
  if window_feature_spec(candidate) != window_feature_spec(baseline):
    return (f'the dataset spec changed ({_spec_difference(candidate, baseline)}), so it reads '
            'other window features')
  quantiles = [_quantiles(directory) for directory in (candidate_dir, baseline_dir)]
  if None not in quantiles and quantiles[0] != quantiles[1]:
    return (f'it forecasts the quantiles {quantiles[1]}, the candidate {quantiles[0]}, so the '
            'scores of one are not the scores of the other')
  differ = vocabularies.difference(vocabularies.of_model(candidate_dir),
                                   vocabularies.of_model(baseline_dir))
  return f"this run's vocabularies give other ids than its own ({differ})" if differ else None


def _spec_difference(candidate: DatasetSpec, baseline: DatasetSpec) -> str:
  """What changed from the baseline's spec to the candidate's, in the spec's terms."""
  parts = []
  window = lambda spec: f'{spec.encoder_steps} history + {spec.horizon} forecast steps'
  if window(candidate) != window(baseline):
    parts.append(f'{window(baseline)} -> {window(candidate)}')
  now, before = ({c.name: c for c in spec.columns} for spec in (candidate, baseline))
  added, removed = sorted(set(now) - set(before)), sorted(set(before) - set(now))
  if added:
    parts.append(f'new columns {added}')
  if removed:
    parts.append(f'columns {removed} gone')
  describe = lambda column: f'{column.role.value} {column.dtype.value}'
  parts += [f"'{name}' {describe(before[name])} -> {describe(now[name])}"
            for name in sorted(set(now) & set(before))
            if describe(now[name]) != describe(before[name])]
  return '; '.join(parts) or 'its columns are read otherwise'


def _quantiles(model_dir: str) -> Optional[List[float]]:
  """The quantiles a model forecasts, from its warm-start architecture; None if unknown."""
  recorded = warm_start.recorded_architecture(model_dir)
  return recorded.get('quantiles') if recorded else None
