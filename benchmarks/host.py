"""The host and the code a benchmark ran on."""

import os
import platform
import subprocess
from typing import Dict, Union

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The reference data sets (ETTh1.csv, stallion.csv), beside the repository.
SHARED_DATA_DIR = os.path.join(PROJECT_ROOT, '..', 'shared', 'data')


def cpu_model() -> str:
  """The CPU's model name, e.g. 'AMD EPYC 7B13'."""
  if os.path.exists('/proc/cpuinfo'):
    with open('/proc/cpuinfo') as f:
      for line in f:
        if line.startswith('model name'):
          return line.split(':', 1)[1].strip()
  return platform.processor() or 'unknown'


def description() -> Dict[str, Union[str, int]]:
  """{'cpu_model': ..., 'cpu_count': ...}, as the results files record the host."""
  return {'cpu_model': cpu_model(), 'cpu_count': os.cpu_count()}


def commit(checkout: str = PROJECT_ROOT) -> str:
  """The commit of the checkout at `checkout` (`git describe --always --dirty`)."""
  described = subprocess.run(['git', '-C', checkout, 'describe', '--always', '--dirty'],
                             capture_output=True, text=True, check=False).stdout.strip()
  return described or 'unknown'
