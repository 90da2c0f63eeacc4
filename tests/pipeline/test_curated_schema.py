"""The curated schema file against the spec, before any component runs
(`schema.curated_schema`, and `tft-pipeline --spec` stopping on a mismatch)."""

import pytest
import yaml
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from pipeline import local_runner
from schema import curated_schema, dataset_file, datasets

SYNTHETIC = datasets.get_dataset('synthetic')


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_the_built_in_schemas_match_their_specs_and_are_used_as_they_are(name, tmp_path):
  dataset = datasets.get_dataset(name)
  assert curated_schema.schema_for_run(dataset.schema_path, dataset.spec, name,
                                       str(tmp_path)) == (dataset.schema_path, [])
  assert not list(tmp_path.iterdir())


def _schema_text():
  with open(SYNTHETIC.schema_path, encoding='utf-8') as f:
    return f.read()


def _without_feature(text, name):
  """The schema text without the feature block named `name`."""
  blocks = text.split('feature {')
  return 'feature {'.join(block for block in blocks
                          if f'name: "{name}"' not in block.split('\n', 2)[1])


@pytest.mark.parametrize('edit, message', [
    (lambda text: _without_feature(text, 'temperature'),
     r"column 'temperature' is not in the schema"),
    (lambda text: text.replace('name: "price"\n  type: FLOAT', 'name: "price"\n  type: BYTES'),
     r"column 'price' \(known, real\) is FLOAT in the examples but BYTES in the schema"),
])
def test_a_schema_that_does_not_match_the_spec_is_named_with_the_fix(tmp_path, edit, message):
  path = tmp_path / 'synthetic.schema.pbtxt'
  edited = edit(_schema_text())
  assert edited != _schema_text()
  path.write_text(edited)
  with pytest.raises(ValueError, match=rf'the schema file {path} does not match spec.yaml: '
                     rf'{message}.*run with --schema infer'):
    curated_schema.schema_for_run(str(path), SYNTHETIC.spec, 'spec.yaml', str(tmp_path / 'run'))


def test_a_feature_whose_line_was_removed_from_the_spec_is_left_out_of_the_runs_schema(
    tmp_path):
  path = tmp_path / 'synthetic.schema.pbtxt'
  path.write_text(_schema_text() + 'feature {\n  name: "footfall"\n  type: FLOAT\n}\n')
  used, left_out = curated_schema.schema_for_run(str(path), SYNTHETIC.spec, 'spec.yaml',
                                                 str(tmp_path / 'run'))
  assert left_out == ['footfall']
  assert used == str(tmp_path / 'run' / 'synthetic.schema.pbtxt')
  schema = text_format.Parse(open(used, encoding='utf-8').read(), schema_pb2.Schema())
  assert [f.name for f in schema.feature] == [c.name for c in SYNTHETIC.spec.columns]
  assert 'footfall' in path.read_text()  # the user's file as it was


def test_an_absent_or_unreadable_schema_file_is_named(tmp_path):
  with pytest.raises(ValueError, match=r"schema file .*absent.pbtxt, named by 'schema:' in "
                     r'spec.yaml, does not exist'):
    curated_schema.schema_for_run(str(tmp_path / 'absent.pbtxt'), SYNTHETIC.spec,
                                  'spec.yaml', str(tmp_path))
  (tmp_path / 'bad.pbtxt').write_text('feature { name: "x" type: FLOAT\n')
  with pytest.raises(ValueError, match='is not a TFDV schema in text format'):
    curated_schema.schema_for_run(str(tmp_path / 'bad.pbtxt'), SYNTHETIC.spec, 'spec.yaml',
                                  str(tmp_path))


def test_a_run_whose_schema_does_not_match_stops_before_any_component(tmp_path, capsys):
  values = dataset_file.to_dict(SYNTHETIC, str(tmp_path))
  values['columns'] = [{**c, 'dtype': 'categorical'} if c['name'] == 'price' else c
                       for c in values['columns']]
  values['schema'] = SYNTHETIC.schema_path
  (tmp_path / 'data.csv').write_text('station,timestamp,load,region,capacity,price,'
                                     'temperature\n')
  values['data'] = 'data.csv'
  spec_path = tmp_path / 'spec.yaml'
  spec_path.write_text(yaml.safe_dump(values))
  assert local_runner.main(['--spec', str(spec_path), '--output-dir',
                            str(tmp_path / 'runs')]) == 2
  error = capsys.readouterr().err
  assert ("column 'price' (known, categorical) is BYTES in the examples but FLOAT in the "
          'schema' in error and str(spec_path) in error)
  assert not (tmp_path / 'runs' / 'synthetic' / 'pipeline_root').exists()
