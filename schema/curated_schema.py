"""A curated TFDV schema file checked against the dataset spec before a run.

ExampleGen writes exactly the spec's columns (the time as INT seconds, reals as FLOAT,
categoricals as BYTES), and ExampleValidator compares them with the schema file: a
column added, removed or retyped in one file and not the other would stop the run
there, after ExampleGen, StatisticsGen and the validator have run. Checked first, it
stops before any component, naming both files and the fix.
"""

import os

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


def check_matches_spec(schema_path: str, spec: DatasetSpec, spec_source: str) -> None:
  """Raises ValueError when the schema file is absent or unreadable, or its features are
  not the spec's columns with ExampleGen's types. Remote paths (gs://) are not read."""
  if '://' in schema_path:
    return
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
  features = {feature.name: schema_pb2.FeatureType.Name(feature.type)
              for feature in schema.feature}
  columns = {column.name: column for column in spec.columns}
  problems = [f"column '{name}' is not in the schema" for name in columns
              if name not in features]
  problems += [f"feature '{name}' is not a column of the spec" for name in features
               if name not in columns]
  for name, column in columns.items():
    expected = expected_type(column.role, column.dtype)
    if name in features and features[name] != expected:
      problems.append(f"column '{name}' ({column.role.value}, {column.dtype.value}) is "
                      f'{expected} in the examples but {features[name]} in the schema')
  if problems:
    raise ValueError(f'the schema file {schema_path} does not match {spec_source}: '
                     f'{"; ".join(problems)}. ExampleValidator would stop the run on it: '
                     f'{_FIX}')
