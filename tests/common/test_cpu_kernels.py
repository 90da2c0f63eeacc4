"""TensorFlow's oneDNN kernels: on when the project loads TensorFlow, unless the user chose.

Each case starts a fresh interpreter, since TensorFlow reads the switch once per process.
"""

import os
import platform
import subprocess
import sys

import pytest

from common import cpu_kernels

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ONEDNN_IN_USE = ('from tensorflow.python.util import _pywrap_util_port; '
                  'print(_pywrap_util_port.IsMklEnabled())')


def onednn_in_use(first_import: str, switch=None) -> bool:
  """Whether TensorFlow runs oneDNN kernels in a process that imports `first_import`
  first, with `cpu_kernels.SWITCH` set to `switch` (None: unset)."""
  env = {key: value for key, value in os.environ.items() if key != cpu_kernels.SWITCH}
  if switch is not None:
    env[cpu_kernels.SWITCH] = switch
  output = subprocess.run(
      [sys.executable, '-c', f'import {first_import}; {_ONEDNN_IN_USE}'], env=env,
      cwd=_REPO, capture_output=True, text=True, check=True).stdout
  return output.strip().splitlines()[-1] == 'True'


@pytest.mark.skipif(platform.machine().lower() not in cpu_kernels.X86_64_MACHINES,
                    reason='the switch is set on x86-64 only')
@pytest.mark.parametrize('entry_module', ['pipeline.local_runner', 'serving.predict'])
def test_an_entry_point_loads_tensorflow_with_onednn(entry_module):
  assert onednn_in_use(entry_module)


def test_a_users_choice_is_kept():
  assert not onednn_in_use('pipeline.local_runner', switch='0')
