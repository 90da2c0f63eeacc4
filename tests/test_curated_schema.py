"""The curated schema file against the spec, before any component runs
(`schema.curated_schema`, and `tft-pipeline --spec` stopping on a mismatch)."""

import pytest
import yaml

from pipeline import local_runner
from schema import curated_schema, dataset_file, datasets

SYNTHETIC = datasets.get_dataset('synthetic')


@pytest.mark.parametrize('name', sorted(datasets.DATASETS))
def test_the_built_in_schemas_match_their_specs(name):
  dataset = datasets.get_dataset(name)
  curated_schema.check_matches_spec(dataset.schema_path, dataset.spec, name)


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
    (lambda text: text + 'feature {\n  name: "footfall"\n  type: FLOAT\n}\n',
     r"feature 'footfall' is not a column of the spec"),
])
def test_a_schema_that_does_not_match_the_spec_is_named_with_the_fix(tmp_path, edit, message):
  path = tmp_path / 'synthetic.schema.pbtxt'
  edited = edit(_schema_text())
  assert edited != _schema_text()
  path.write_text(edited)
  with pytest.raises(ValueError, match=rf'the schema file {path} does not match spec.yaml: .*'
                     rf'{message}.*run with --schema infer'):
    curated_schema.check_matches_spec(str(path), SYNTHETIC.spec, 'spec.yaml')


def test_an_absent_or_unreadable_schema_file_is_named(tmp_path):
  with pytest.raises(ValueError, match=r"schema file .*absent.pbtxt, named by 'schema:' in "
                     r'spec.yaml, does not exist'):
    curated_schema.check_matches_spec(str(tmp_path / 'absent.pbtxt'), SYNTHETIC.spec,
                                      'spec.yaml')
  (tmp_path / 'bad.pbtxt').write_text('feature { name: "x" type: FLOAT\n')
  with pytest.raises(ValueError, match='is not a TFDV schema in text format'):
    curated_schema.check_matches_spec(str(tmp_path / 'bad.pbtxt'), SYNTHETIC.spec, 'spec.yaml')


def test_a_run_whose_schema_does_not_match_stops_before_any_component(tmp_path, capsys):
  values = dataset_file.to_dict(SYNTHETIC, str(tmp_path))
  values['columns'] = [c for c in values['columns'] if c['name'] != 'temperature']
  values['schema'] = SYNTHETIC.schema_path
  (tmp_path / 'data.csv').write_text('station,timestamp,load,region,capacity,price\n')
  values['data'] = 'data.csv'
  spec_path = tmp_path / 'spec.yaml'
  spec_path.write_text(yaml.safe_dump(values))
  assert local_runner.main(['--spec', str(spec_path), '--output-dir',
                            str(tmp_path / 'runs')]) == 2
  error = capsys.readouterr().err
  assert ("feature 'temperature' is not a column of the spec" in error
          and str(spec_path) in error)
  assert not (tmp_path / 'runs' / 'synthetic' / 'pipeline_root').exists()
