"""A TFX component that fits a global gradient-boosted model on the run's windows and scores
it on the eval windows and, when the run holds a test period out, on the test windows
(`evaluation.gbm_baseline`): the strongest simple model, beside which the run summary
reports the TFT, its median and its bands.

It reads the Windowing output, as the Trainer does, and writes `gbm_baseline.json` into a
`BaselineEvaluation` artifact, with the judged split's forecasts beside it
(`judged_forecasts.npz`, `evaluation.gbm_baseline.write_forecasts`). It blesses nothing:
the figure is for the reader, and a failure to fit is recorded there (`error`) rather than
stopping the run.
"""

import json
import logging
import os
from typing import Dict, Optional

import tensorflow as tf
from tfx import types
from tfx import v1 as tfx
from tfx.types import artifact_utils, standard_artifacts

from common import artifact_json
from evaluation import gbm_baseline
from schema.dataset_spec import DatasetSpec
from schema import window_report
from schema.time_split import EVAL_SPLIT, TEST_SPLIT, judged_split

RESULT_FILE = 'gbm_baseline.json'
# The judged split's served forecasts and actuals, window by window (a backtest's input).
FORECASTS_FILE = 'judged_forecasts.npz'


class BaselineEvaluation(types.Artifact):
  """A directory with `gbm_baseline.json`."""
  # '<namespace>.<Type>': the form KubeflowV2DagRunner requires of custom artifact types.
  TYPE_NAME = 'tft.BaselineEvaluation'


def read_result(uri: str) -> Optional[Dict[str, object]]:
  """The record a `GbmBaseline` wrote at `uri`, or None if there is none."""
  return artifact_json.read_json(uri, RESULT_FILE)


def figures_on(record: Optional[Dict[str, object]], split: str) -> Dict[str, object]:
  """A record's figures on `split`'s windows (MAE, q-risks, coverage, naive MAEs), or {}
  when it has none (no record, a failed fit, a split not scored)."""
  return (record or {}).get('by_split', {}).get(split, {})


@tfx.dsl.components.component
def GbmBaseline(  # pylint: disable=invalid-name
    windows: tfx.dsl.components.InputArtifact[standard_artifacts.Examples],
    evaluation: tfx.dsl.components.OutputArtifact[BaselineEvaluation],
    dataset_spec: tfx.dsl.components.Parameter[str],
    quantiles: tfx.dsl.components.Parameter[str] = json.dumps(
        list(gbm_baseline.DEFAULT_QUANTILES)),
    calibrate_intervals: tfx.dsl.components.Parameter[bool] = True,
    calibrate_on_the_period_before: tfx.dsl.components.Parameter[bool] = False,
    max_training_rows: tfx.dsl.components.Parameter[int] = (
        gbm_baseline.DEFAULT_MAX_TRAINING_ROWS),
    seed: tfx.dsl.components.Parameter[int] = 1,
) -> None:
  """Fits a model per quantile on the 'train' windows, stopped early on the 'eval' windows,
  and scores them on the 'eval' and (if the artifact has it) the 'test' windows.

  Args:
    windows: the Windowing output.
    evaluation: gets `gbm_baseline.json`.
    dataset_spec: `DatasetSpec.to_json()`.
    quantiles: the TFT's quantiles, a JSON list.
    calibrate_intervals: calibrate the bands on the eval windows, as the Trainer does
      when its `TrainingConfig.calibrate_intervals` is on.
    calibrate_on_the_period_before: pool the period before the eval period into that
      calibration, as the Trainer does with `TrainingConfig.calibrate_on_the_period_before`.
    max_training_rows: windows x horizon steps to train on at most; beyond, every k-th
      training window.
    seed: LightGBM's seed.

  Raises:
    ValueError: the artifact lacks the 'train' or 'eval' split, or either has no window.
  """
  spec = DatasetSpec.from_json(dataset_spec)
  splits = artifact_utils.decode_split_names(windows.split_names)
  missing = [split for split in ('train', 'eval') if split not in splits]
  if missing:
    raise ValueError(f'the windows artifact has no split {missing} (it has {splits}); the '
                     'gradient-boosted baseline trains on train and scores eval')
  available = window_report.training_window_count(windows.uri)
  try:
    scored = [split for split in (EVAL_SPLIT, TEST_SPLIT) if split in splits]
    tf.io.gfile.makedirs(evaluation.uri)
    result = gbm_baseline.run(windows.uri, spec, available, json.loads(quantiles),
                              calibrate_intervals, max_training_rows, seed,
                              scored_splits=scored, judged=judged_split(scored),
                              forecasts_path=os.path.join(evaluation.uri, FORECASTS_FILE),
                              calibrate_on_the_period_before=calibrate_on_the_period_before)
    gbm_baseline.PROGRESS.info(
        "%s (the median's), %.0f s", ', '.join(
            f"{split} MAE {result['by_split'][split]['mae']:.4g}" for split in scored),
        result['seconds'])
  except Exception as error:  # pylint: disable=broad-except
    # A figure for the reader: the model is trained, judged and published without it.
    logging.exception('GbmBaseline: the gradient-boosted baseline could not be fitted')
    result = {'error': f'{type(error).__name__}: {error}'}
  tf.io.gfile.makedirs(evaluation.uri)
  with tf.io.gfile.GFile(os.path.join(evaluation.uri, RESULT_FILE), 'w') as f:
    json.dump(result, f, indent=2)
