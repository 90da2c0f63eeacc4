"""The refit: once blessed, the Trainer's model is trained again on every period's rows for
the epochs it kept, and that model is published and forecast with; a model the Evaluator
did not bless is not refit."""

import json
import os

import pytest
from tfx.utils import path_utils

from components.windowing import REFIT_SPLIT, WINDOW_REPORT_FILE
from pipeline import default_data
from pipeline.config import Blessing
from tests.pipeline.test_pipeline_end_to_end import _config
from trainer_module import interval_calibration, training_record

pytestmark = pytest.mark.slow  # runs the pipeline twice

DAYS, SERIES = 12, 3


def _run(root, run_pipeline, blessing=None):
  default_data.generate(str(root / 'data' / 'data.csv'), num_series=SERIES, days=DAYS, seed=1)
  config = _config(root)
  config = config.replace(refit_splits=tuple(config.time_split.split_names),
                          blessing=blessing or config.blessing)
  return config, run_pipeline(config)


@pytest.fixture(scope='module')
def refit_run(tmp_path_factory, run_pipeline):
  return _run(tmp_path_factory.mktemp('refit'), run_pipeline)


def _only_dir(config, component, output):
  parent = os.path.join(config.pipeline_root, component, output)
  found, = os.listdir(parent)
  return os.path.join(parent, found)


def test_the_refit_trains_on_every_window_of_every_period(refit_run):
  config, _ = refit_run
  report = json.load(open(os.path.join(_only_dir(config, 'Windowing', 'windows'),
                                       WINDOW_REPORT_FILE)))
  # Hourly rows without gaps: every start of a window over a series' whole span.
  assert report['windows'][REFIT_SPLIT] == SERIES * (DAYS * 24 - config.dataset.window_length
                                                     + 1)
  assert report['windows'][REFIT_SPLIT] > report['windows']['train'] + report['windows'][
      'eval'] + report['windows']['test']


def test_the_refit_trains_for_the_judged_epochs_and_serves_the_judged_bands(refit_run):
  config, summary = refit_run
  judged = path_utils.serving_model_path(_only_dir(config, 'Trainer', 'model'))
  refit = path_utils.serving_model_path(_only_dir(config, 'Refit', 'model'))
  kept, = training_record.read(judged)
  record, = training_record.read(refit)
  assert record['refit'] is True and 'best_epoch' not in record
  assert record['epochs_run'] == kept['best_epoch']
  assert record['steps_per_epoch'] == kept['steps_per_epoch']
  assert (interval_calibration.read(refit)['factors']
          == interval_calibration.read(judged)['factors'])
  assert summary.model_uri == _only_dir(config, 'Trainer', 'model')
  assert summary.refit.startswith(f"refit on every period: {kept['best_epoch']} epochs")


def test_the_refit_model_is_published_and_forecast_with(refit_run):
  config, summary = refit_run
  assert summary.blessed is True
  refit = path_utils.serving_model_path(_only_dir(config, 'Refit', 'model'))
  pushed = summary.pushed_to
  assert training_record.read(pushed) == training_record.read(refit)
  report = json.load(open(os.path.join(summary.forecasts_uri, 'forecast_report.json')))
  assert report['model'] == refit and report['model_blessed'] is True


def test_a_model_the_evaluator_did_not_bless_is_not_refit(tmp_path, run_pipeline):
  config, summary = _run(tmp_path, run_pipeline, Blessing(beat_naive_by=None, max_mae=1e-9))
  assert summary.blessed is False and summary.pushed_to is None
  refit = path_utils.serving_model_path(_only_dir(config, 'Refit', 'model'))
  judged = path_utils.serving_model_path(_only_dir(config, 'Trainer', 'model'))
  assert training_record.read(refit) == training_record.read(judged)
  assert summary.refit == 'none: the judged model was not blessed, so it was not refit'
