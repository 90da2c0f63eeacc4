"""The exit codes of every command (`tft-pipeline`, its `init` and `backtest`,
`tft-predict`, `tft-report`), and the error that marks input the user can fix.

| code | meaning |
| --- | --- |
| 0 | done |
| 1 | the run itself failed (a component, the training, the machine) |
| 2 | bad input: a file, a value in it, an option or a spec the user can fix |
| 3 | a partial result: `tft-predict --skip-bad-series` left series out |
"""

import importlib
import re
from typing import Optional

DONE = 0
RUN_FAILED = 1
BAD_INPUT = 2
PARTIAL = 3


class InputError(ValueError):
  """Input the user can fix, named in the message with where it is and the fix: the command
  that meets it exits `BAD_INPUT`, whichever component raised it."""


# A traceback's last line, as Beam's multi-process runner passes a worker's error on:
# 'components.windowing.InputError: data.csv, line 5: ...'.
_ERROR_LINE = re.compile(r'^([A-Za-z_][\w.]*)\.([A-Za-z_]\w*): (.+)$', re.M)


def input_error_message(error: BaseException) -> Optional[str]:
  """The message of `error` if it is an `InputError`, or carries one from a Beam worker
  process as a traceback's text (the multi-process runner re-raises it as its own error);
  None otherwise."""
  if isinstance(error, InputError):
    return str(error)
  for module, name, message in _ERROR_LINE.findall(str(error)):
    try:
      raised = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
      continue
    if isinstance(raised, type) and issubclass(raised, InputError):
      return message
  return None
