"""The log settings of every command (`tft-pipeline`, `tft-predict`, `tft-report`,
`tft-cloud`): what the command prints itself, warnings and errors, and with `verbose`
everything TFX, Beam and TensorFlow log. Call before TensorFlow is imported."""

import logging
import os
import warnings


def configure(verbose: bool = False) -> None:
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  if verbose:
    logging.getLogger().setLevel(logging.INFO)
    return
  for category in (FutureWarning, DeprecationWarning, UserWarning):
    warnings.filterwarnings('ignore', category=category)
  logging.getLogger().setLevel(logging.WARNING)
  logging.getLogger('apache_beam').setLevel(logging.ERROR)  # its modules log as children
  # A filter, not a level: TFX components reset absl's verbosity while they run.
  for name in ('absl', 'tensorflow'):
    logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)
