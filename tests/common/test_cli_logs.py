"""What the commands print besides their own output: TensorFlow's import without the
CUDA plugins' registration errors, everything else kept."""

import os
import pathlib
import subprocess
import sys

from common import cli_logs

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
_NOISE = (b'2026-11-28 14:19:17.807989: E external/local_xla/xla/stream_executor/cuda/'
          b'cuda_fft.cc:479] Unable to register cuFFT factory: Attempting to register '
          b'factory for plugin cuFFT when one has already been registered\n')


def test_only_the_plugin_registration_lines_are_dropped():
  kept = b'W some/file.cc:12] a real warning\nplain text\n'
  assert cli_logs.without_plugin_noise(_NOISE + kept + _NOISE) == kept
  assert cli_logs.without_plugin_noise(b'no newline at the end') == b'no newline at the end'


def _stderr_of(script: str) -> str:
  """The stderr of `script` run by a new Python, without TensorFlow log settings."""
  env = {name: value for name, value in os.environ.items() if not name.startswith('TF_CPP_')}
  run = subprocess.run([sys.executable, '-c', script], cwd=REPO_ROOT, capture_output=True,
                       text=True, timeout=300, check=False, env=env)
  assert run.returncode == 0, run.stderr
  return run.stderr


def test_a_command_imports_tensorflow_without_the_noise_and_keeps_stderr_working():
  script = ('import os, sys\n'
            'from common import cli_logs\n'
            'cli_logs.configure()\n'
            "assert 'tensorflow' in sys.modules\n"
            "os.write(2, b'native line after the import\\n')\n"
            "print('python line', file=sys.stderr)\n")
  stderr = _stderr_of(script)
  assert 'native line after the import\n' in stderr
  assert 'python line\n' in stderr
  if 'Unable to register' in _stderr_of('import tensorflow'):  # this build prints it
    assert 'Unable to register' not in stderr


def test_the_import_is_left_alone_when_more_tensorflow_logs_are_asked(monkeypatch):
  monkeypatch.setenv('TF_CPP_MIN_LOG_LEVEL', '0')
  assert cli_logs.more_tensorflow_logs_asked()
  monkeypatch.setenv('TF_CPP_MIN_LOG_LEVEL', '2')
  assert not cli_logs.more_tensorflow_logs_asked()
  monkeypatch.setenv('TF_CPP_MAX_VLOG_LEVEL', '1')
  assert cli_logs.more_tensorflow_logs_asked()
