"""The names closest to a misspelt one, for messages that name the fix."""

import difflib
from typing import List, Sequence


def closest(name: str, choices: Sequence[str], n: int = 1) -> List[str]:
  """Up to `n` of `choices` close to `name`, the closest first."""
  return difflib.get_close_matches(name, list(choices), n=n)


def did_you_mean(name: str, choices: Sequence[str], n: int = 1) -> str:
  """" (did you mean 'hidden_size'?)" with the choices closest to `name` (up to `n`,
  joined by 'or'), or '' when none is close."""
  close = closest(name, choices, n)
  return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ''
