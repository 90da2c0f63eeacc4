"""Which worker of a training cluster is the chief, and where each worker writes.

The chief writes the model and the warm-start checkpoint. It is determined from the
`TF_CONFIG` environment variable that multi-worker training sets:
  - no TF_CONFIG, or one without a task (one worker, including a TPU VM host, whose
    TPUStrategy runs from a single host): chief;
  - task type 'chief' (or the legacy 'master'): chief;
  - task type 'worker' with index 0 when the cluster has no 'chief' task: chief;
  - any other task (other workers, 'evaluator', 'ps'): not chief.
Under a multi-worker strategy every worker must still run the save (it may need
collective ops), so the others save into a scratch directory that is deleted afterwards.
`keras.callbacks.BackupAndRestore` makes the same distinction by itself.

`worker_count` tells how many training workers the cluster has (its 'chief', 'master'
and 'worker' tasks); more than one means multi-worker training
(`trainer_module.distribution`).
"""

import json
import os
from typing import Mapping, Tuple

TF_CONFIG_ENV = 'TF_CONFIG'
TRAINING_TASKS = ('chief', 'master', 'worker')  # the tasks that train (not 'evaluator', 'ps')


def task(environ: Mapping[str, str] = os.environ,
         as_named: bool = False) -> Tuple[str, int]:
  """(task type, task index) from TF_CONFIG; ('chief', 0) without one.

  Args:
    environ: Environment variables.
    as_named: the task as TF_CONFIG names it, not the role that decides who writes
      (worker 0 of a cluster without a chief is then 'worker', 'master' stays 'master').

  Raises:
    ValueError: TF_CONFIG is not JSON with a 'task' of the form {'type', 'index'}.
  """
  config = tf_config(environ)
  try:
    task_config = config.get('task') or {}
    task_type = str(task_config.get('type', 'chief'))
    index = int(task_config.get('index', 0))
  except (ValueError, AttributeError, TypeError) as error:
    raise _malformed(environ, error) from None
  if as_named:
    return task_type, index
  if task_type == 'worker' and index == 0 and 'chief' not in _cluster(config, environ):
    return 'chief', 0
  return ('chief' if task_type == 'master' else task_type), index


def worker_count(environ: Mapping[str, str] = os.environ) -> int:
  """The training workers TF_CONFIG's cluster lists; 1 without a TF_CONFIG or cluster.

  Raises:
    ValueError: TF_CONFIG is not JSON, or its cluster does not list addresses by task.
  """
  cluster = _cluster(tf_config(environ), environ)
  try:
    return max(1, sum(len(cluster.get(name) or ()) for name in TRAINING_TASKS))
  except TypeError as error:
    raise _malformed(environ, error) from None


def tf_config(environ: Mapping[str, str] = os.environ) -> dict:
  """TF_CONFIG parsed; {} when it is not set.

  Raises:
    ValueError: TF_CONFIG is not a JSON object.
  """
  text = environ.get(TF_CONFIG_ENV)
  if not text:
    return {}
  try:
    config = json.loads(text)
  except ValueError as error:
    raise _malformed(environ, error) from None
  if not isinstance(config, dict):
    raise _malformed(environ, 'not a JSON object')
  return config


def _cluster(config: dict, environ: Mapping[str, str]) -> dict:
  cluster = config.get('cluster') or {}
  if not isinstance(cluster, dict):
    raise _malformed(environ, "'cluster' is not an object of task lists")
  return cluster


def _malformed(environ: Mapping[str, str], reason: object) -> ValueError:
  return ValueError(f'{TF_CONFIG_ENV} is {environ.get(TF_CONFIG_ENV)!r}, which is not JSON '
                    'of the form {"cluster": {"worker": ["host:port", ...]}, "task": '
                    f'{{"type": "worker", "index": 0}}}}; fix or unset it ({reason})')


def is_chief(environ: Mapping[str, str] = os.environ) -> bool:
  """Whether this process writes the model (see the module docstring)."""
  return task(environ)[0] == 'chief'


def write_dir(path: str, environ: Mapping[str, str] = os.environ) -> str:
  """`path` for the chief; a scratch directory next to it for any other worker."""
  task_type, index = task(environ)
  if task_type == 'chief':
    return path
  parent, name = os.path.split(path.rstrip('/'))
  return os.path.join(parent, f'.scratch_{task_type}_{index}_{name}')
