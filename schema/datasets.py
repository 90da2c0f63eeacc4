"""The data sets the pipeline knows by name: the spec files in `schema/specs/`."""

import os
from typing import Dict

from schema.dataset_file import Dataset, load

SPEC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'specs')
SPEC_SUFFIX = '.yaml'

DATASETS: Dict[str, Dataset] = {
    name[:-len(SPEC_SUFFIX)]: load(os.path.join(SPEC_DIR, name))
    for name in sorted(os.listdir(SPEC_DIR)) if name.endswith(SPEC_SUFFIX)}

SYNTHETIC = DATASETS['synthetic'].spec
ETTH1 = DATASETS['etth1'].spec
STALLION = DATASETS['stallion'].spec


def get_dataset(name: str) -> Dataset:
  if name not in DATASETS:
    raise ValueError(f"unknown dataset '{name}'; choose one of {sorted(DATASETS)}, or "
                     'give your own spec file (tft-pipeline init drafts one)')
  return DATASETS[name]


def curated_schema_path(name: str):
  """The curated TFDV schema of built-in data set `name`, or None if it has none."""
  return get_dataset(name).schema_path
