"""What a run does when its data moved, or the forecasts it scores missed what was expected.

A spec file's `monitoring` block, e.g. `monitoring: {max_mae_vs_expected: 1.3, on_breach:
fail, drift: fail}`. Each run scores the forecasts of earlier runs whose horizon its data
now covers (`components.forecast_scoring`); the newest scored forecast breaches the policy
when its MAE is more than `max_mae_vs_expected` times the held-out test MAE of the model
that made it. Before training, each run compares its newest rows with its training rows
(`components.drift_check`): a column whose distribution moved by more than `max_drift`, a
series whose level moved by more than `max_level_shift` of its training standard
deviation (each bound raised to what stretches of the training rows as long as the newest
moved from the rest of them, where that is more: a season is not drift), or series that
appeared or vanished, is drift. `warn` says so in the run summary
and the log at WARNING; `fail` also fails the run (the local command exits non-zero, a
Vertex AI run fails, so the platform's failure notifications fire): a breach once the run
has trained, judged and published as usual, drift before anything is trained.
"""

import dataclasses
from typing import Any, Dict, Mapping

ON_BREACH = ('warn', 'fail')
POLICY_KEYS = ('max_mae_vs_expected', 'on_breach', 'drift', 'max_drift', 'max_level_shift')


@dataclasses.dataclass(frozen=True)
class Monitoring:
  """The policy on scored forecasts.

  Attributes:
    max_mae_vs_expected: the scored MAE may be at most this many times the held-out test
      MAE the forecasting model was published with.
    on_breach: 'warn' (the summary and the log say so) or 'fail' (the run fails too).
    drift: the same choice for drift.
    max_drift: the largest distance between a column's training and newest distributions
      that is not drift: TFDV's Jensen-Shannon divergence for a real column, its
      L-infinity distance for a categorical one (both from 0, the same, to 1); or, where
      larger, the most a stretch of the training rows moved from the rest of them.
    max_level_shift: the largest move of a series' mean target from its training rows to
      its newest rows, in its training rows' standard deviations, that is not drift; or,
      where larger, the most a stretch of its training rows moved from the rest.
  """
  max_mae_vs_expected: float = 1.3
  on_breach: str = 'warn'
  drift: str = 'warn'
  max_drift: float = 0.3
  max_level_shift: float = 3.0

  def __post_init__(self):
    for key, lowest, example in (('max_mae_vs_expected', 1.0, '1.3: the scored MAE at most '
                                  '1.3 times the expected'),
                                 ('max_level_shift', 0.0, '3: within 3 standard deviations')):
      bound = getattr(self, key)
      if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not bound >= lowest:
        raise ValueError(f"'{key}' must be a number of at least {lowest:g} ({example}), got "
                         f'{bound!r}')
    drift = self.max_drift
    if isinstance(drift, bool) or not isinstance(drift, (int, float)) or not 0 < drift < 1:
      raise ValueError(f"'max_drift' must be a number between 0 and 1 (0.3), got {drift!r}")
    for key in ('on_breach', 'drift'):
      if getattr(self, key) not in ON_BREACH:
        raise ValueError(f"'{key}' must be one of {list(ON_BREACH)}, got "
                         f'{getattr(self, key)!r}')

  def breach(self, scored_mae: float, expected_mae: float) -> bool:
    """Whether a scored MAE breaks the bound on `expected_mae`."""
    return scored_mae > self.max_mae_vs_expected * expected_mae

  def to_dict(self) -> Dict[str, Any]:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> 'Monitoring':
    return cls(**values)
