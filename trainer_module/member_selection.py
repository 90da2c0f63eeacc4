"""Which members of an ensemble the exported model averages: those whose mean scores the
eval windows best.

A member that lands in a poor solution (its eval loss two or three times the others',
seen on daily data with many known inputs) would pull the mean towards its forecasts;
averaging only good members keeps the variance the ensemble cuts. Greedy forward
selection (Caruana et al., "Ensemble selection from libraries of models", 2004, without
repeats): from the member of the lowest eval loss, add the member that lowers the loss of
the mean most, while one does. The eval windows also chose each member's epoch, so the
choice flatters the eval figures a little, as the epoch's does; the test windows judge it.
"""

from typing import Callable, List, Sequence

import numpy as np

from trainer_module.tft.losses import pinball_loss


def greedy_selection(loss_of: Callable[[Sequence[int]], float], members: int) -> List[int]:
  """The members (indices) chosen, sorted: from the one of the lowest `loss_of([member])`
  on, each added while adding it lowers the loss of their mean (`loss_of(indices)`)."""
  chosen = [min(range(members), key=lambda member: loss_of([member]))]
  best = loss_of(chosen)
  while len(chosen) < members:
    loss, member = min((loss_of(chosen + [member]), member)
                       for member in range(members) if member not in chosen)
    if loss >= best:
      break
    chosen, best = chosen + [member], loss
  return sorted(chosen)


def mean_loss(forecasts: np.ndarray, actual: np.ndarray, quantiles: Sequence[float]
              ) -> Callable[[Sequence[int]], float]:
  """The loss of the mean of members (indices) from their forecasts [M, N, H, Q] of the
  eval windows and the actuals [N, H]: the pinball loss the Trainer minimises."""
  return lambda chosen: float(np.mean(pinball_loss(
      actual, forecasts[list(chosen)].mean(axis=0), quantiles)))
