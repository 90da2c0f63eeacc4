"""What the commands print besides their own output: TensorFlow's import without the
CUDA plugins' registration errors, everything else kept."""

import pathlib
import subprocess
import sys

import pytest

from pipeline import cli_logs

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
_NOISE = (b'2026-11-28 14:19:17.807989: E external/local_xla/xla/stream_executor/cuda/'
          b'cuda_fft.cc:479] Unable to register cuFFT factory: Attempting to register '
          b'factory for plugin cuFFT when one has already been registered\n')


def test_only_the_plugin_registration_lines_are_dropped():
  kept = b'W some/file.cc:12] a real warning\nplain text\n'
  assert cli_logs.without_plugin_noise(_NOISE + kept + _NOISE) == kept
  assert cli_logs.without_plugin_noise(b'no newline at the end') == b'no newline at the end'


def _stderr_of(script: str) -> str:
  run = subprocess.run([sys.executable, '-c', script], cwd=REPO_ROOT, capture_output=True,
                       text=True, timeout=300, check=False)
  assert run.returncode == 0, run.stderr
  return run.stderr


def test_a_command_imports_tensorflow_without_the_noise_and_keeps_stderr_working():
  if 'Unable to register' not in _stderr_of('import tensorflow'):
    pytest.skip("this TensorFlow build prints no plugin registration errors")
  script = ('import os, sys\n'
            'from pipeline import cli_logs\n'
            'cli_logs.configure()\n'
            "assert 'tensorflow' in sys.modules\n"
            "os.write(2, b'native line after the import\\n')\n"
            "print('python line', file=sys.stderr)\n")
  stderr = _stderr_of(script)
  assert 'Unable to register' not in stderr
  assert 'native line after the import\n' in stderr
  assert 'python line\n' in stderr
