"""The vocabularies a model's categorical ids index, and how two models' differ.

Transform numbers each categorical column's values by frequency in the training rows and
writes the list into the exported model's `assets/` directory, one file per vocabulary.
Two models read the same ids as the same values only if their lists are equal: a new
series or category, or the same values counted in another order, moves ids. The
Evaluator's baseline (`components.baseline_check`) and the warm start
(`trainer_module.warm_start`) check this.
"""

import os
from typing import Dict, List, Mapping, Optional, Sequence

import tensorflow as tf
import tensorflow_transform as tft

VOCABULARY_DIR = 'assets'
_NAMED_VALUES = 3  # new values named in a difference


def file_name(vocabulary: str) -> str:
  """The asset file of a vocabulary named `vocabulary` ('store.type' -> 'store_type'), as
  Transform writes it."""
  return tft.analyzers.sanitized_vocab_filename(filename=vocabulary)


def of_model(model_dir: str) -> Dict[str, List[bytes]]:
  """A SavedModel's vocabularies by name, each as its entries in id order: an exported
  model's, or a Transform output's (`TFTransformOutput.transform_savedmodel_dir`)."""
  directory = os.path.join(model_dir, VOCABULARY_DIR)
  if not tf.io.gfile.isdir(directory):
    return {}
  vocabularies = {}
  for name in tf.io.gfile.listdir(directory):
    with tf.io.gfile.GFile(os.path.join(directory, name), 'rb') as f:
      vocabularies[name] = f.read().splitlines()
  return vocabularies


def difference(now: Mapping[str, Sequence[bytes]],
               before: Mapping[str, Sequence[bytes]]) -> Optional[str]:
  """How the vocabularies `now` number values otherwise than `before`, one part per
  vocabulary ("'series_key' gained 1 value: 'station_12'"); None if alike."""
  parts = []
  for name in sorted(set(now) | set(before)):
    current, earlier = now.get(name), before.get(name)
    if current == earlier:
      continue
    if current is None or earlier is None:
      parts.append(f"'{name}' is in one model only")
      continue
    seen, kept = set(earlier), set(current)
    new = [value for value in current if value not in seen]
    lost = [value for value in earlier if value not in kept]
    if new:
      parts.append(f"'{name}' gained {_values(new)}")
    if lost:
      parts.append(f"'{name}' lost {_values(lost)}")
    if not new and not lost:
      parts.append(f"'{name}' holds its values in another order")
  return '; '.join(parts) or None


def _values(values: Sequence[bytes]) -> str:
  """"2 values: 'a', 'b'", the first few named."""
  shown = ', '.join(repr(v.decode(errors='replace')) for v in values[:_NAMED_VALUES])
  more = f' and {len(values) - _NAMED_VALUES} more' if len(values) > _NAMED_VALUES else ''
  return f"{len(values)} value{'s' if len(values) > 1 else ''}: {shown}{more}"
