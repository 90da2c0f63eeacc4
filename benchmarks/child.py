"""Runs a benchmark step in a fresh process: its own memory peak, its own log file.

TensorFlow and Beam keep memory and graph state for the life of a process, so every
pipeline run and every throughput measurement gets a new one ('spawn', not 'fork').
"""

import concurrent.futures
import multiprocessing
import os
import resource
from typing import Any, Tuple


def call(function, *args, log_path: str) -> Tuple[Any, float]:
  """`function(*args)` in a new process whose stdout and stderr go to `log_path`.

  `function` must be importable by name (a module-level function) and its arguments and
  result picklable. Exceptions are raised here as in the child.

  Returns:
    The result, and the peak resident memory of the new process in MiB.
  """
  os.makedirs(os.path.dirname(log_path), exist_ok=True)
  with concurrent.futures.ProcessPoolExecutor(
      max_workers=1, mp_context=multiprocessing.get_context('spawn'),
      initializer=_redirect_output, initargs=(log_path,)) as pool:
    return pool.submit(_measured, function, *args).result()


def _measured(function, *args) -> Tuple[Any, float]:
  result = function(*args)
  # Linux reports the peak in KiB.
  return result, round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _redirect_output(log_path: str) -> None:
  log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
  os.dup2(log, 1)
  os.dup2(log, 2)
  os.close(log)
