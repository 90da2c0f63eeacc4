"""Files matching glob patterns, local or on Cloud Storage (`tf.io.gfile`)."""

from typing import List, Sequence, Union

import tensorflow as tf


def files_matching(patterns: Union[str, Sequence[str]], no_match: Exception) -> List[str]:
  """Every file matching `patterns`, sorted; raises `no_match` when none does."""
  files = sorted(tf.io.gfile.glob(patterns if isinstance(patterns, str) else list(patterns)))
  if not files:
    raise no_match
  return files
