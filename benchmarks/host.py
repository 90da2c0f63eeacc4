"""The host a benchmark ran on."""

import os
import platform


def cpu_model() -> str:
  """The CPU's model name, e.g. 'AMD EPYC 7B13'."""
  if os.path.exists('/proc/cpuinfo'):
    with open('/proc/cpuinfo') as f:
      for line in f:
        if line.startswith('model name'):
          return line.split(':', 1)[1].strip()
  return platform.processor() or 'unknown'
