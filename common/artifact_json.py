"""Reading the JSON records components write into their artifact directories."""

import json
import os
from typing import Any, Dict, Optional

import tensorflow as tf


def read_json(directory: str, file_name: str) -> Optional[Dict[str, Any]]:
  """The JSON object in `directory`/`file_name`, or None if there is no such file."""
  path = os.path.join(directory, file_name)
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    return json.load(f)
