"""What a component says of its progress on long work: records of one logger family,
`tft.progress.<component>`, which a local run prints as `[<component>] message`
(`pipeline.progress`) while the commands keep the rest of TFX's, Beam's and TensorFlow's
INFO logs out (`common.cli_logs`). On Vertex AI, where the component's container logs at
INFO, they are ordinary log lines."""

import logging
import sys
from typing import Callable, Optional

ROOT = 'tft.progress'


def logger(component: str) -> logging.Logger:
  """The logger of `component`'s progress ('Trainer', 'GbmBaseline')."""
  return logging.getLogger(f'{ROOT}.{component}')


class _ComponentFormatter(logging.Formatter):
  """'[Trainer] message', the component named by the logger's last part."""

  def format(self, record: logging.LogRecord) -> str:
    return f'[{record.name.rsplit(".", 1)[-1]}] {record.getMessage()}'


class _Handler(logging.StreamHandler):
  """A stream handler that calls `before_each` before it writes a record."""

  def __init__(self, stream, before_each: Optional[Callable[[], None]]):
    super().__init__(stream)
    self._before_each = before_each

  def emit(self, record: logging.LogRecord) -> None:
    if self._before_each is not None:
      try:  # the hook's failure must not fail the component that logs
        self._before_each()
      except Exception:  # pylint: disable=broad-except
        self.handleError(record)
    super().emit(record)


def print_to(stream=None, before_each: Optional[Callable[[], None]] = None) -> None:
  """Prints every progress record to `stream` (by default the current stdout), after
  calling `before_each` (a run's live progress, so that a component's start is printed
  before its first record), and no longer passes them on to the root logger's handlers,
  which the commands keep at WARNING. Calling it again replaces the stream and the hook."""
  root = logging.getLogger(ROOT)
  for handler in list(root.handlers):
    root.removeHandler(handler)
  handler = _Handler(stream if stream is not None else sys.stdout, before_each)
  handler.setFormatter(_ComponentFormatter())
  root.addHandler(handler)
  root.setLevel(logging.INFO)
  root.propagate = False
