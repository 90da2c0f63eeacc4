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


def asset_path(model_dir: str, vocabulary: str) -> str:
  """Where a SavedModel keeps the vocabulary named `vocabulary`."""
  return os.path.join(model_dir, VOCABULARY_DIR, file_name(vocabulary))


def entries(path: str) -> List[bytes]:
  """The entries of the vocabulary file at `path`, in id order."""
  with tf.io.gfile.GFile(path, 'rb') as f:
    return f.read().splitlines()


def of_model(model_dir: str) -> Dict[str, List[bytes]]:
  """A SavedModel's vocabularies by file name, each as its entries in id order: an
  exported model's, or a Transform output's (`TFTransformOutput.transform_savedmodel_dir`)."""
  directory = os.path.join(model_dir, VOCABULARY_DIR)
  if not tf.io.gfile.isdir(directory):
    return {}
  return {name: entries(os.path.join(directory, name))
          for name in tf.io.gfile.listdir(directory)}
