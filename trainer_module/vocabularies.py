"""The vocabularies a model's categorical ids index.

Transform numbers each categorical column's values by frequency in the training rows and
writes the list into the exported model's `assets/` directory, one file per vocabulary.
Two models read the same ids as the same values only if their lists are equal: a new
series or category, or the same values counted in another order, moves ids. The warm
start (`trainer_module.warm_start`) moves embedding rows by value for that.
"""

import os
from typing import Dict, List

import tensorflow as tf
import tensorflow_transform as tft

VOCABULARY_DIR = 'assets'


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
