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
"""

import json
import os
from typing import Mapping, Tuple

TF_CONFIG_ENV = 'TF_CONFIG'


def task(environ: Mapping[str, str] = os.environ) -> Tuple[str, int]:
  """(task type, task index) from TF_CONFIG; ('chief', 0) without one.

  Raises:
    ValueError: TF_CONFIG is not JSON with a 'task' of the form {'type', 'index'}.
  """
  text = environ.get(TF_CONFIG_ENV)
  if not text:
    return 'chief', 0
  try:
    config = json.loads(text)
    task_config = config.get('task') or {}
    task_type = str(task_config.get('type', 'chief'))
    index = int(task_config.get('index', 0))
  except (ValueError, AttributeError, TypeError) as error:
    raise ValueError(f'{TF_CONFIG_ENV} is {text!r}, which is not JSON of the form '
                     '{"cluster": {...}, "task": {"type": "worker", "index": 0}}; fix or '
                     f'unset it ({error})') from None
  if task_type == 'worker' and index == 0 and 'chief' not in (config.get('cluster') or {}):
    return 'chief', 0
  return ('chief' if task_type == 'master' else task_type), index


def is_chief(environ: Mapping[str, str] = os.environ) -> bool:
  """Whether this process writes the model (see the module docstring)."""
  return task(environ)[0] == 'chief'


def write_dir(path: str, environ: Mapping[str, str] = os.environ) -> str:
  """`path` for the chief; a scratch directory next to it for any other worker."""
  task_type, index = task(environ)
  if task_type == 'chief':
    return path
  parent, name = os.path.split(path.rstrip('/'))
  return os.path.join(parent, f'.scratch_{task_type}_{index}', name)
