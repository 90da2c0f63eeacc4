"""The images' dependency sets, checked without building them (no registry here).

The components image installs requirements.lock, the set every test runs in; the trainer
images swap in TensorFlow for their hardware at the lock's version.
"""

import json
import os
import re
import subprocess
import sys

import pytest

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# TensorFlow -> the libtpu.so it runs with (Cloud TPU, "TPU software versions").
LIBTPU_FOR_TENSORFLOW = {'2.16.1': '1.10.1', '2.16.2': '1.10.1', '2.17.0': '1.11.0',
                         '2.17.1': '1.11.1', '2.18.0': '1.12.0'}


def _locked() -> dict:
  with open(os.path.join(PROJECT_ROOT, 'requirements.lock')) as f:
    pins = [line.strip().split('==') for line in f if '==' in line]
  return {name.lower().replace('_', '-'): version for name, version in pins}


def _build_args(dockerfile: str) -> dict:
  with open(os.path.join(PROJECT_ROOT, dockerfile)) as f:
    return dict(re.findall(r'^ARG (\w+)=(\S+)$', f.read(), flags=re.M))


def test_the_components_set_has_no_broken_requirements():
  """`pip check` over the lock as installed here: what the components image runs."""
  completed = subprocess.run([sys.executable, '-m', 'pip', 'check'], capture_output=True,
                             text=True, check=False)
  assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_trainer_images_use_the_locked_tensorflow_and_its_libtpu():
  tensorflow = _locked()['tensorflow']
  tpu = _build_args('kubeflow/Dockerfile.trainer-tpu')
  assert tpu['TF_VERSION'] == tensorflow
  assert tpu['LIBTPU_VERSION'] == LIBTPU_FOR_TENSORFLOW[tensorflow]
  assert _build_args('kubeflow/Dockerfile.trainer-gpu')['TF_VERSION'] == tensorflow


@pytest.mark.slow(seconds=50)  # the file's worker time
def test_the_gpu_trainer_set_resolves_against_the_index(tmp_path):
  """pip resolves the lock plus TensorFlow's CUDA extra, keeping every pin (a dry run)."""
  version = _build_args('kubeflow/Dockerfile.trainer-gpu')['TF_VERSION']
  report = tmp_path / 'report.json'
  completed = subprocess.run(
      [sys.executable, '-m', 'pip', 'install', '--dry-run', '--ignore-installed', '--quiet',
       '--report', str(report), '-r', os.path.join(PROJECT_ROOT, 'requirements.lock'),
       f'tensorflow[and-cuda]=={version}'],
      capture_output=True, text=True, check=False, timeout=600)
  assert completed.returncode == 0, completed.stderr[-2000:]
  installed = {item['metadata']['name'].lower().replace('_', '-'): item['metadata']['version']
               for item in json.loads(report.read_text())['install']}
  locked = _locked()
  assert {name: installed[name] for name in locked} == locked
  cuda = sorted(name for name in installed if name not in locked)
  assert 'nvidia-cudnn-cu12' in cuda and 'nvidia-cublas-cu12' in cuda, cuda


def test_the_components_image_copies_every_package_setup_py_installs():
  with open(os.path.join(PROJECT_ROOT, 'setup.py')) as f:
    installed = set(re.findall(r"'(\w+)'", f.read().split('find_packages(include=[')[1]
                               .split(']')[0]))
  with open(os.path.join(PROJECT_ROOT, 'Dockerfile')) as f:
    copied = set(re.findall(r'^COPY (\w+) \./\1$', f.read(), flags=re.M))
  assert 'common' in installed
  assert installed == copied
