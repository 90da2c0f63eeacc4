"""The host and the code a benchmark ran on."""

import os
import platform
import subprocess
from typing import Dict, List, Union

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The reference data sets (ETTh1.csv, stallion.csv), beside the repository.
SHARED_DATA_DIR = os.path.join(PROJECT_ROOT, '..', 'shared', 'data')


def data_file(path: str, option: str) -> str:
  """`path` if it is a file; otherwise an error that names `option`, the command-line
  option that sets it (a git worktree, for one, has no ../shared beside it)."""
  if not os.path.isfile(path):
    raise FileNotFoundError(
        f'{os.path.abspath(path)} not found: the benchmarks read the reference data sets '
        f'from ../shared/data beside the repository; pass {option} with where they are')
  return path


# The CPU flags that decide TensorFlow's and PyTorch's CPU kernels (vector width, bfloat16
# and int8 dot products): a virtual machine's model name ('AMD EPYC') often hides them.
KERNEL_FLAGS = ('avx2', 'fma', 'avx512f', 'avx512_bf16', 'avx512_vnni', 'avx_vnni',
                'amx_tile')


def _cpuinfo_field(name: str) -> str:
  """The first value of `name` in /proc/cpuinfo, or ''."""
  if os.path.exists('/proc/cpuinfo'):
    with open('/proc/cpuinfo') as f:
      for line in f:
        if line.split(':', 1)[0].strip() == name:
          return line.split(':', 1)[1].strip()
  return ''


def cpu_model() -> str:
  """The CPU's model name, e.g. 'AMD EPYC 7B13'."""
  return _cpuinfo_field('model name') or platform.processor() or 'unknown'


def cpu_generation() -> str:
  """'family 26, model 2' from /proc/cpuinfo, or '': a virtual machine's model name
  ('AMD EPYC') hides which generation of that line the host is."""
  family, model = _cpuinfo_field('cpu family'), _cpuinfo_field('model')
  return f'family {family}, model {model}' if family and model else ''


def cpu_kernel_flags() -> List[str]:
  """Which of `KERNEL_FLAGS` the CPU has."""
  flags = set(_cpuinfo_field('flags').split())
  return [flag for flag in KERNEL_FLAGS if flag in flags]


def description() -> Dict[str, Union[str, int, List[str]]]:
  """{'cpu_model', 'cpu_generation', 'cpu_count', 'cpu_kernel_flags'}, as the results
  files record the host."""
  return {'cpu_model': cpu_model(), 'cpu_generation': cpu_generation(),
          'cpu_count': os.cpu_count(), 'cpu_kernel_flags': cpu_kernel_flags()}


def commit(checkout: str = PROJECT_ROOT) -> str:
  """The commit of the checkout at `checkout` (`git describe --always --dirty`)."""
  described = subprocess.run(['git', '-C', checkout, 'describe', '--always', '--dirty'],
                             capture_output=True, text=True, check=False).stdout.strip()
  return described or 'unknown'
