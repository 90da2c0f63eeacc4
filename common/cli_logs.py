"""The log settings of every command (`tft-pipeline`, `tft-predict`, `tft-report`,
`tft-cloud`): what the command prints itself, warnings and errors, and with `verbose`
everything TFX, Beam and TensorFlow log (a run's progress lines are printed by
`pipeline.progress`). Call before TensorFlow is imported."""

import logging
import os
import re
import sys
import tempfile
import warnings

# What TFX logs when a component fails, before the command prints the error itself.
_EXECUTION_FAILED = 'Execution %d failed.'
# What TensorFlow's CUDA plugins print as it is imported on a machine without a GPU.
_PLUGIN_REGISTRATION = re.compile(rb'Unable to register cu\w+ factory')


def configure(verbose: bool = False) -> None:
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  if verbose:
    logging.getLogger().setLevel(logging.INFO)
    return
  for category in (FutureWarning, DeprecationWarning, UserWarning):
    warnings.filterwarnings('ignore', category=category)
  logging.getLogger().setLevel(logging.WARNING)
  # Beam logs a failing step's traceback at ERROR (its modules log as children); the
  # command prints that error once, cleanly, when the run stops.
  logging.getLogger('apache_beam').setLevel(logging.CRITICAL)
  # A filter, not a level: TFX components reset absl's verbosity while they run.
  for name in ('absl', 'tensorflow'):
    logging.getLogger(name).addFilter(
        lambda record: record.levelno >= logging.ERROR and record.msg != _EXECUTION_FAILED)
  _import_tensorflow_without_plugin_noise()


def _import_tensorflow_without_plugin_noise() -> None:
  """Imports TensorFlow with its native stderr captured in a temporary file, then passes
  that on but for the CUDA plugins' 'Unable to register cuDNN factory ...' errors, which
  say nothing on a machine without a GPU. A file, not a pipe that a thread would empty:
  the import holds the interpreter while TensorFlow's native code writes. Left alone
  when the user asks TensorFlow for more of its logs, or TensorFlow is already imported.
  A process killed during the import (a CPU TensorFlow was not built for) loses what
  TensorFlow printed; run with --verbose to see it."""
  if 'tensorflow' in sys.modules or more_tensorflow_logs_asked():
    return
  try:
    captured = tempfile.TemporaryFile()
  except OSError:  # no writable temporary directory: the command imports it as it is
    return
  with captured:
    sys.stderr.flush()
    stderr = os.dup(2)
    os.dup2(captured.fileno(), 2)
    try:
      import tensorflow  # pylint: disable=import-outside-toplevel,unused-import
    finally:
      os.dup2(stderr, 2)
      os.close(stderr)
      captured.seek(0)
      kept = without_plugin_noise(captured.read())
      if kept:
        sys.stderr.write(kept.decode(errors='replace'))
        sys.stderr.flush()


def more_tensorflow_logs_asked() -> bool:
  """Whether the environment asks TensorFlow's native code for more than its errors."""
  level = os.environ.get('TF_CPP_MIN_LOG_LEVEL', '2')
  return (not level.isdigit() or int(level) < 2) or 'TF_CPP_MAX_VLOG_LEVEL' in os.environ


def without_plugin_noise(output: bytes) -> bytes:
  """`output` without the lines of the CUDA plugins' registration errors."""
  return b''.join(line for line in output.splitlines(keepends=True)
                  if not _PLUGIN_REGISTRATION.search(line))
