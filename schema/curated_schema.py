"""A curated TFDV schema file checked against the dataset spec before a run.

ExampleGen writes exactly the spec's columns (the time as INT seconds, reals as FLOAT,
categoricals as BYTES), and ExampleValidator compares them with the schema file: a
column added or retyped in one file and not the other would stop the run there, after
ExampleGen, StatisticsGen and the validator have run. Checked first, it stops before any
component, naming both files and the fix. A feature the spec leaves out (a column whose
line was removed from the spec, as `init`'s notes suggest for some) is left out of the
schema the run uses, a copy written beside the run.
"""

import os
from typing import List, Tuple

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from schema.dataset_spec import DatasetSpec, DType, Role

_FIX = ('make the two agree (edit the feature in the schema file, or the column in the '
        'spec), or run with --schema infer to have SchemaGen infer the schema from the data')


def expected_type(role: Role, dtype: DType) -> str:
  """The feature type ExampleGen writes for a column."""
  if role == Role.TIME:
    return 'INT'
  return 'FLOAT' if dtype == DType.REAL else 'BYTES'


def schema_for_run(schema_path: str, spec: DatasetSpec, spec_source: str,
                   directory: str) -> Tuple[str, List[str]]:
  """The schema file a run uses, and the features of `schema_path` it leaves out.

  `schema_path` itself when its features are the spec's columns with ExampleGen's
  types; a copy in `directory` without the features the spec does not declare when it
  has more. Remote paths (gs://) are used as they are, unread.

  Raises:
    ValueError: the file is absent or unreadable, lacks a column of the spec, or types
      one otherwise than ExampleGen writes it.
  """
  if '://' in schema_path:
    return schema_path, []
  schema = _read(schema_path, spec_source)
  features = {feature.name: schema_pb2.FeatureType.Name(feature.type)
              for feature in schema.feature}
  problems = []
  for column in spec.columns:
    expected = expected_type(column.role, column.dtype)
    if column.name not in features:
      problems.append(f"column '{column.name}' is not in the schema")
    elif features[column.name] != expected:
      problems.append(f"column '{column.name}' ({column.role.value}, {column.dtype.value}) is "
                      f'{expected} in the examples but {features[column.name]} in the schema')
  if problems:
    raise ValueError(f'the schema file {schema_path} does not match {spec_source}: '
                     f'{"; ".join(problems)}. ExampleValidator would stop the run on it: '
                     f'{_FIX}')
  declared = {column.name for column in spec.columns}
  left_out = [name for name in features if name not in declared]
  if not left_out:
    return schema_path, []
  kept = [feature for feature in schema.feature if feature.name in declared]
  del schema.feature[:]
  schema.feature.extend(kept)
  os.makedirs(directory, exist_ok=True)
  copy = os.path.join(directory, os.path.basename(schema_path))
  with open(copy, 'w', encoding='utf-8') as f:
    f.write(f'# {schema_path} without the features {spec_source} does not declare: '
            f'{left_out}\n')
    f.write(text_format.MessageToString(schema))
  return copy, left_out


def _read(schema_path: str, spec_source: str) -> schema_pb2.Schema:
  if not os.path.isfile(schema_path):
    raise ValueError(f"the schema file {schema_path}, named by 'schema:' in {spec_source}, "
                     'does not exist; point it at the schema tft-pipeline init wrote, or run '
                     'with --schema infer')
  schema = schema_pb2.Schema()
  try:
    with open(schema_path, encoding='utf-8') as f:
      text_format.Parse(f.read(), schema)
  except text_format.ParseError as error:
    raise ValueError(f'the schema file {schema_path} is not a TFDV schema in text format: '
                     f'{error}') from None
  return schema
