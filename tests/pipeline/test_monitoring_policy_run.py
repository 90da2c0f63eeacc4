"""The monitoring policy through the command: `tft-pipeline --spec` with
`monitoring: {on_breach: fail}` trains, judges and publishes as usual, and exits 1 when the
forecasts the run before published miss what their model's test windows expected.

Two spans of the default data, as a scheduled retraining would see them: the first run
publishes forecasts from the end of span 1; span 2's load stands 200 above span 1's, so
the second run scores those forecasts far worse than expected.
"""

import dataclasses
import os
import re

import pandas as pd
import pytest
import yaml

from pipeline import default_data, local_runner
from schema import dataset_file, datasets
from schema.dataset_file import Blessing
from schema.monitoring_policy import Monitoring
from tests.pipeline.span_futures import span_future

pytestmark = pytest.mark.slow(seconds=110)  # runs a pipeline twice

SPAN_2_START = pd.Timestamp('2024-01-13')
SPAN_2_END = pd.Timestamp('2024-01-20')
HORIZON = 6


def test_a_breach_under_on_breach_fail_exits_the_command_with_1(tmp_path, capsys):
  default_data.generate(str(tmp_path / 'all.csv'), num_series=3, days=21, seed=3)
  rows = pd.read_csv(tmp_path / 'all.csv')
  times = pd.to_datetime(rows['timestamp'])
  rows.loc[times >= SPAN_2_START, 'load'] += 200.0
  synthetic = datasets.get_dataset('synthetic')
  dataset = dataclasses.replace(
      synthetic, spec=synthetic.spec.with_window(encoder_steps=24, horizon=HORIZON),
      blessing=Blessing(beat_naive_by=None, max_mae=1e6),
      model_overrides={'hidden_size': 8, 'batch_size': 32, 'max_epochs': 2},
      monitoring=Monitoring(on_breach='fail'))
  spec_path = tmp_path / 'spec.yaml'
  spec_path.write_text(yaml.safe_dump(dataset_file.to_dict(dataset, str(tmp_path))))
  argv = ['--spec', str(spec_path), '--data', str(tmp_path / 'data'), '--input-pattern',
          'span-{SPAN}/*.csv', '--train-spans', '2', '--train-steps', '20', '--no-refit',
          '--no-gbm-baseline', '--output-dir', str(tmp_path / 'runs')]
  codes = []
  for span, span_rows, end in ((1, rows[times < SPAN_2_START], SPAN_2_START),
                               (2, rows[(times >= SPAN_2_START) & (times < SPAN_2_END)],
                                SPAN_2_END)):
    os.makedirs(tmp_path / 'data' / f'span-{span}')
    span_rows.to_csv(tmp_path / 'data' / f'span-{span}' / 'rows.csv', index=False)
    span_future(rows, end, HORIZON).to_csv(tmp_path / f'future-{span}.csv', index=False)
    codes.append(local_runner.main(argv + ['--future', str(tmp_path / f'future-{span}.csv')]))
  output = capsys.readouterr()
  assert codes == [0, 1]
  assert 'scored:      nothing to score yet' in output.out  # the first run's summary
  assert re.search(r'error: the pipeline stopped: the forecasts from 2024-01-13 00:00:00 '
                   r'scored MAE [\d.]+ on 18 of 18 rows, [\d.]+ times the [\d.]+ their '
                   r"model's test windows expected, and the monitoring policy allows at most "
                   r'1\.3 times \(monitoring: max_mae_vs_expected 1\.3\); the run trained, '
                   r'judged and published as usual, and fails so that the breach is noticed',
                   output.err)
  # It failed last, once the second run had forecast and kept the first run's forecasts.
  root = tmp_path / 'runs' / 'synthetic'
  assert len(os.listdir(root / 'pipeline_root' / 'ForecastGen' / 'forecasts')) == 2
  assert len(os.listdir(root / 'forecast_ledger' / 'scored')) == 1
