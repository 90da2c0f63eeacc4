"""The drift-bounds benchmark: its rows split as the spec's split places them, and its
findings from the drift check's functions."""

import numpy as np
import pandas as pd
import yaml

from benchmarks import drift_bounds, report
from pipeline import default_data
from schema import dataset_file, datasets


def _spec(tmp_path, rows):
  """The default data's spec over `rows` written to a CSV, the last 15% held out."""
  rows.to_csv(tmp_path / 'data.csv', index=False)
  values = dataset_file.to_dict(datasets.get_dataset('synthetic'), str(tmp_path))
  values['data'] = 'data.csv'
  (tmp_path / 'spec.yaml').write_text(yaml.safe_dump(values))
  return str(tmp_path / 'spec.yaml')


def test_a_warming_temperature_is_named_by_both_bounds_and_the_rest_by_neither(tmp_path):
  default_data.generate(str(tmp_path / 'all.csv'), num_series=2, days=40, seed=1)
  rows = pd.read_csv(tmp_path / 'all.csv', dtype=str, keep_default_na=False)
  hours = np.arange(len(rows)) % (40 * 24)
  rows['temperature'] = np.where(rows['temperature'] == '', '',
                                 (5 + 40 * (hours >= 0.85 * 40 * 24)).astype(str))
  found = drift_bounds.findings(_spec(tmp_path, rows))
  assert found['newest_split'] == 'test'
  assert found['newest_times'] + found['training_times'] < 40 * 24  # eval rows in neither
  by_column = {c['column']: c for c in found['columns']}
  assert by_column['temperature']['policy_drift'] and by_column['temperature']['sized_drift']
  assert not by_column['price']['policy_drift'] and not by_column['price']['sized_drift']
  assert found['series'] == 2
  [line] = [row for row in report.drift_bounds_table({'drift_bounds': {
      'datasets': {'default': found}}}) if row.startswith('| default')]
  assert '| temperature | temperature |' in line
