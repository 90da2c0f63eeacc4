"""Do the bands calibrated on the eval windows hold on the test windows? A suite run's TFT
and LightGBM P10-P90 coverage on its test windows, the TFT's before calibration too, by
horizon step, and the factors the test windows themselves would have asked for; and how
far the period alone moves a coverage (the served band's on the test windows, the band's
before calibration on the eval windows, which the factors are fitted to): the 5th and
95th percentiles of a block bootstrap that draws forecast starts (every series' window
from a start together, as one day's weather or prices move them all) with replacement.
With `--backtest-run-dirs` (runs of `benchmarks.suite --earlier-by-the-eval-period`, whose
eval period is the one before), also the test coverage of the band calibrated on both
eval periods pooled, and on the earlier one alone.

```bash
.venv/bin/python -m benchmarks.suite --datasets ercot --seeds 1 --work-dir /tmp/suite
.venv/bin/python -m benchmarks.calibration_transfer /tmp/suite/ercot/seed-1
```

The exported TFT serves calibrated bands (`trainer_module.interval_calibration`); its
bands before calibration are recovered from them and the factors in its
`calibration.json` (`uncalibrated_band`), exact wherever the forecast floor did not clip
the lower end: on data with a floor (the shop and Stallion data, never below 0) the
figures before calibration and with factors per horizon step are approximate, the eval
windows' coverage before calibration is the Trainer's own.
"""

import argparse
import glob
import json
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from benchmarks import readme_tables

RESULTS_FILE = os.path.join(readme_tables.RESULTS_DIR, 'calibration_transfer.json')
BAND = '0.1:0.9'
BOOTSTRAP_DRAWS = 2000


def uncalibrated_band(lower: np.ndarray, upper: np.ndarray,
                      factors: Mapping[str, float]) -> Tuple[np.ndarray, np.ndarray]:
  """The band (lo, hi) that `interval_calibration.apply` moved to (lower, upper) with
  `factors`: the served width is (1 + w_lo + w_hi) times the band's."""
  width = (upper - lower) / (1 + factors['lower'] + factors['upper'])
  return lower + factors['lower'] * width, upper - factors['upper'] * width


def inside(lower: np.ndarray, upper: np.ndarray, actual: np.ndarray) -> np.ndarray:
  """Whether each actual fell inside its band."""
  return (actual >= lower) & (actual <= upper)


def coverage(lower: np.ndarray, upper: np.ndarray, actual: np.ndarray, axis=None):
  return np.mean(inside(lower, upper, actual), axis=axis)


def block_interval(covered: np.ndarray, blocks: np.ndarray, draws: int = BOOTSTRAP_DRAWS,
                   seed: int = 0) -> Tuple[float, float]:
  """The 5th and 95th percentiles of the coverage of `covered` [N, H] (whether each
  actual fell inside the band) over `draws` resamples of its blocks (`blocks` [N]: each
  window's block), drawn with replacement, each block's windows together."""
  ids, block_of = np.unique(blocks, return_inverse=True)
  inside = np.bincount(block_of, weights=covered.sum(axis=1), minlength=len(ids))
  points = np.bincount(block_of, weights=np.full(len(covered), covered.shape[1]),
                       minlength=len(ids))
  drawn = np.random.default_rng(seed).integers(0, len(ids), size=(draws, len(ids)))
  resampled = inside[drawn].sum(axis=1) / points[drawn].sum(axis=1)
  return float(np.percentile(resampled, 5)), float(np.percentile(resampled, 95))


def one_match(pattern: str) -> str:
  """The one path in a suite run's directory matching `pattern` (recursive globs)."""
  found = glob.glob(pattern, recursive=True)
  if len(found) != 1:
    raise SystemExit(f'expected one match of {pattern}, found {len(found)}: is this the '
                     'output directory of one suite run (benchmarks.suite --work-dir)?')
  return found[0]


def _bands(run_dir: str, model_dir: str, split: str, factors: Mapping[str, float]):
  """The TFT's served bands, its bands before calibration, the actuals [N, H] and the
  forecast starts [N] of a split's windows: (served (lo, hi), before calibration (lo, hi),
  actual, starts)."""
  import tensorflow as tf

  from schema.window_layout import FORECAST_START
  from trainer_module import export, window_inputs

  files = [os.path.join(one_match(os.path.join(run_dir, '**', 'Windowing', '**',
                                           f'Split-{split}')), '*')]
  served = tf.saved_model.load(model_dir).signatures[export.EVAL_SIGNATURE]
  records = tf.stack(list(window_inputs.read_records(files)))
  batches = [served(examples=records[i:i + 256]) for i in range(0, len(records), 256)]
  lower, upper = (np.concatenate([batch[key].numpy() for batch in batches])
                  for key in ('p10', 'p90'))
  actual = np.concatenate([label.numpy() for _, label in window_inputs.windows_in_order(
      files, export.read_dataset_spec(model_dir), segments=False)])
  starts = tf.io.parse_example(records, {FORECAST_START: tf.io.FixedLenFeature(
      [1], tf.int64)})[FORECAST_START].numpy()[:, 0]
  return (lower, upper), uncalibrated_band(lower, upper, factors), actual, starts


def _calibrated_per_step(lower: np.ndarray, upper: np.ndarray, eval_lower: np.ndarray,
                         eval_upper: np.ndarray, eval_actual: np.ndarray):
  """Bands (lo, hi) [N, H] moved by factors fitted on the eval windows step by step."""
  from trainer_module import interval_calibration

  moved = [interval_calibration.apply(
               np.stack([lower[:, [step]], upper[:, [step]]], -1), (0.1, 0.9),
               {BAND: interval_calibration.conformal_factors(
                   eval_lower[:, step], eval_upper[:, step], eval_actual[:, step], 0.1)}
           ).numpy()[:, 0] for step in range(lower.shape[1])]
  return np.stack(moved, axis=1)[..., 0], np.stack(moved, axis=1)[..., 1]


def _model_and_calibration(run_dir: str) -> Tuple[str, Mapping[str, Any]]:
  """A suite run's exported TFT and its calibration report."""
  from trainer_module import interval_calibration

  model_dir = one_match(os.path.join(run_dir, '**', 'Trainer', 'model', '*', 'Format-Serving'))
  with open(os.path.join(model_dir, interval_calibration.CALIBRATION_FILE)) as f:
    calibration = json.load(f)
  return model_dir, calibration


def pooled(test_raw, test_actual, eval_raw, eval_actual, backtest_raw, backtest_actual
           ) -> Dict[str, Any]:
  """Test coverage of the band (lo, hi) calibrated on the eval windows and a backtest
  origin's pooled, and on the backtest origin's alone, with their factors."""
  from trainer_module import interval_calibration

  fitted = {
      'pooled': interval_calibration.conformal_factors(
          *(np.concatenate(ends) for ends in zip(eval_raw, backtest_raw)),
          np.concatenate([eval_actual, backtest_actual]), 0.1),
      'backtest': interval_calibration.conformal_factors(*backtest_raw, backtest_actual, 0.1)}
  figures = {'backtest_windows': int(backtest_actual.shape[0]),
             'tft_uncalibrated_backtest': float(coverage(*backtest_raw, backtest_actual))}
  band = np.stack(test_raw, axis=-1)
  for name, factors in fitted.items():
    moved = interval_calibration.apply(band, (0.1, 0.9), {BAND: factors}).numpy()
    figures[f'tft_{name}'] = float(coverage(moved[..., 0], moved[..., 1], test_actual))
    figures[f'factors_{name}'] = factors
  return figures


def _backtest_band(backtest_run_dir: str):
  """The band before calibration (lo, hi) and the actuals of the eval windows of a run
  whose eval period ends where the judged run's begins (`benchmarks.suite
  --earlier-by-the-eval-period`)."""
  model_dir, calibration = _model_and_calibration(backtest_run_dir)
  _, band, actual, _ = _bands(backtest_run_dir, model_dir, 'eval', calibration['factors'][BAND])
  return band, actual


def transfer(run_dir: str, backtest_run_dir: Optional[str] = None) -> Dict[str, Any]:
  """The coverage figures of the suite run in `run_dir` (a `seed-N` directory), with the
  backtest origin's in `backtest_run_dir` pooled if given."""
  from evaluation.gbm_baseline import read_forecasts
  from trainer_module import interval_calibration

  model_dir, calibration = _model_and_calibration(run_dir)
  factors = calibration['factors'][BAND]
  served, raw, actual, starts = _bands(run_dir, model_dir, 'test', factors)
  _, eval_raw, eval_actual, eval_starts = _bands(run_dir, model_dir, 'eval', factors)
  gbm = read_forecasts(one_match(os.path.join(run_dir, '**', 'GbmBaseline', '**',
                                          'judged_forecasts.npz')))
  return {
      'test_windows': int(actual.shape[0]),
      'test_forecast_starts': int(len(np.unique(starts))),
      'tft_served': float(coverage(*served, actual)),
      'tft_served_interval': block_interval(inside(*served, actual), starts),
      'tft_uncalibrated': float(coverage(*raw, actual)),
      'tft_uncalibrated_eval': calibration['eval_coverage_before'][BAND],  # exact
      'eval_forecast_starts': int(len(np.unique(eval_starts))),
      'tft_uncalibrated_eval_interval': block_interval(inside(*eval_raw, eval_actual),
                                                       eval_starts),
      'tft_uncalibrated_by_step': [round(float(c), 3)
                                   for c in coverage(*raw, actual, axis=0)],
      'tft_factors_per_step': float(coverage(
          *_calibrated_per_step(*raw, *eval_raw, eval_actual), actual)),
      'factors_eval': factors,
      'factors_test_would_ask': interval_calibration.conformal_factors(*raw, actual, 0.1),
      'lightgbm_served': float(coverage(gbm['forecasts'][..., 0], gbm['forecasts'][..., -1],
                                        gbm['actual'])),
      **(pooled(raw, actual, eval_raw, eval_actual, *_backtest_band(backtest_run_dir))
         if backtest_run_dir else {}),
  }


def describe(name: str, figures: Mapping[str, Any]) -> str:
  eval_factors, test_factors = figures['factors_eval'], figures['factors_test_would_ask']
  steps = figures['tft_uncalibrated_by_step']
  low, high = figures['tft_served_interval']
  eval_low, eval_high = figures['tft_uncalibrated_eval_interval']
  return (f'{name}: P10-P90 coverage on {figures["test_windows"]} test windows: TFT '
          f'{figures["tft_served"]:.3f} served ({low:.3f} to {high:.3f} over resamples of '
          f'its {figures["test_forecast_starts"]} forecast starts), '
          f'{figures["tft_uncalibrated"]:.3f} before '
          f'calibration (eval windows {figures["tft_uncalibrated_eval"]:.3f}, {eval_low:.3f} '
          f'to {eval_high:.3f} over their {figures["eval_forecast_starts"]} starts); LightGBM '
          f'{figures["lightgbm_served"]:.3f}; factors lower/upper from eval '
          f'{eval_factors["lower"]:.3f}/{eval_factors["upper"]:.3f}, the test would ask '
          f'{test_factors["lower"]:.3f}/{test_factors["upper"]:.3f}; with factors per step '
          f'{figures["tft_factors_per_step"]:.3f}; before calibration by '
          f'step: first {steps[0]:.2f}, last {steps[-1]:.2f}'
          + (f'; pooled with the backtest origin\'s {figures["backtest_windows"]} eval windows '
             f'{figures["tft_pooled"]:.3f}, on those alone {figures["tft_backtest"]:.3f}'
             if 'tft_pooled' in figures else ''))


def main(argv: Optional[List[str]] = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('run_dirs', nargs='+', help='seed-N directories of benchmarks.suite '
                      '--work-dir: WORK/DATA/seed-N')
  parser.add_argument('--backtest-run-dirs', nargs='+', default=[],
                      help="the same data sets' and seeds' runs of `benchmarks.suite "
                      "--earlier-by-the-eval-period`, in the run_dirs' order: the band "
                      'calibrated on their eval windows and the run\'s pooled is scored too')
  parser.add_argument('--output', default=RESULTS_FILE)
  args = parser.parse_args(argv)
  if args.backtest_run_dirs and len(args.backtest_run_dirs) != len(args.run_dirs):
    parser.error(f'{len(args.backtest_run_dirs)} --backtest-run-dirs for '
                 f'{len(args.run_dirs)} run_dirs: give one for each, in the same order')
  results = {'command': '.venv/bin/python -m benchmarks.calibration_transfer '
                        'WORK/DATA/seed-N ...', 'runs': {}}
  backtests = args.backtest_run_dirs or [None] * len(args.run_dirs)
  for run_dir, backtest_run_dir in zip(args.run_dirs, backtests):
    name = '/'.join(os.path.normpath(run_dir).split(os.sep)[-2:])
    results['runs'][name] = transfer(run_dir, backtest_run_dir)
    print(describe(name, results['runs'][name]), flush=True)
  readme_tables.write_results(args.output, results)


if __name__ == '__main__':
  main(sys.argv[1:])
