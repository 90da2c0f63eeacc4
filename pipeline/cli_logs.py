"""The log settings of every command (`tft-pipeline`, `tft-predict`, `tft-report`,
`tft-cloud`): what the command prints itself, warnings and errors, and with `verbose`
everything TFX, Beam and TensorFlow log. Call before TensorFlow is imported."""

import logging
import os
import re
import sys
import threading
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
  """Imports TensorFlow with its native stderr passed on line by line, as it comes, but
  for the CUDA plugins' 'Unable to register cuDNN factory ...' errors, which say nothing
  on a machine without a GPU."""
  if 'tensorflow' in sys.modules:
    return
  sys.stderr.flush()
  stderr = os.dup(2)
  read_end, write_end = os.pipe()
  forward = threading.Thread(target=_forward, args=(read_end, stderr), daemon=True)
  forward.start()
  os.dup2(write_end, 2)
  os.close(write_end)
  try:
    import tensorflow  # pylint: disable=import-outside-toplevel,unused-import
  finally:
    sys.stderr.flush()
    os.dup2(stderr, 2)  # closes the pipe's last write end: the thread reads to its end
    forward.join(timeout=10)
    os.close(stderr)


def _forward(read_end: int, stderr: int) -> None:
  """Writes each line read from `read_end` to `stderr`, but the plugins' noise."""
  with os.fdopen(read_end, 'rb') as pipe:
    for line in pipe:
      kept = without_plugin_noise(line)
      if kept:
        os.write(stderr, kept)


def without_plugin_noise(output: bytes) -> bytes:
  """`output` without the lines of the CUDA plugins' registration errors."""
  return b''.join(line for line in output.splitlines(keepends=True)
                  if not _PLUGIN_REGISTRATION.search(line))
