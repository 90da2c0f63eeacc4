"""The layers of the product hold: each package imports only from those below it
(`.importlinter`, docs/architecture.md)."""

import os
import shutil
import subprocess
import sys

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CONFIG = '.importlinter'


def _lint_imports(root: str) -> subprocess.CompletedProcess:
  lint = os.path.join(os.path.dirname(sys.executable), 'lint-imports')
  return subprocess.run([lint, '--config', _CONFIG, '--no-cache'], cwd=root,
                        capture_output=True, text=True, check=False)


def _packages() -> list:
  with open(os.path.join(_ROOT, _CONFIG)) as f:
    text = f.read()
  listed = text.split('root_packages =')[1].split('[')[0].split()
  return [name for name in listed if not name.startswith('#')]


def test_no_import_runs_up_the_layers():
  result = _lint_imports(_ROOT)
  assert result.returncode == 0, result.stdout + result.stderr
  assert 'Contracts: 1 kept, 0 broken.' in result.stdout


@pytest.mark.parametrize('module, upward', [
    ('schema/frequency.py', 'from trainer_module import export'),
    ('serving/prediction.py', '  from pipeline import config  # inside a function'),
])
def test_an_import_up_the_layers_breaks_the_contract(tmp_path, module, upward):
  for package in _packages():
    shutil.copytree(os.path.join(_ROOT, package), tmp_path / package,
                    ignore=shutil.ignore_patterns('__pycache__'))
  shutil.copy(os.path.join(_ROOT, _CONFIG), tmp_path / _CONFIG)
  with open(tmp_path / module, 'a') as f:
    f.write(f'\n\ndef _upward():\n{upward}\n' if upward.startswith(' ') else f'\n{upward}\n')
  result = _lint_imports(str(tmp_path))
  assert result.returncode == 1, result.stdout
  assert 'Contracts: 0 kept, 1 broken.' in result.stdout
  importer = module[:-3].replace('/', '.')
  assert importer in result.stdout
