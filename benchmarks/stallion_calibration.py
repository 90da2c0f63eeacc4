"""Stallion: the P10-P90 band calibrated on the eval origin alone, or pooled with a backtest
origin half a year earlier, scored on the test months.

  .venv/bin/python -m benchmarks.stallion --eval-start 2017-01-01 \\
      --work-dir runs/stallion_2017-01 --data-dir ../shared/data
  .venv/bin/python -m benchmarks.stallion --eval-start 2016-07-01 \\
      --work-dir runs/stallion_backtest_2016-07 --data-dir ../shared/data
  .venv/bin/python -m benchmarks.stallion_calibration \\
      --run-root runs/stallion_2017-01/stallion/e1-run-1/pipeline_root \\
      --backtest-run-root runs/stallion_backtest_2016-07/stallion/e1-run-1/pipeline_root

For each seed, trains the benchmark plan's TFT without calibration on each run's windows
(`stallion_tuning.train_model`). The final model (the benchmark's split) forecasts the
eval months (January to June 2017) and the test months; the backtest model (trained on
targets before 2016-07) forecasts its eval windows that start before the final model's
eval period (July to December 2016, the test's months a year earlier). The band's
factors (`trainer_module.interval_calibration.fit`) are fitted on the eval forecasts
(what the Trainer does), on the eval and backtest forecasts pooled, and on the backtest
forecasts alone, and each is scored on the test months with the spec's forecast floor,
for every single TFT and for the ensemble of their mean: coverage, the shares below P10
and above P90, q-risk P10 and P90, the mean band width. The forecasts come from the
models' eval signature, so the factors are fitted on bands already raised to the floor
(the Trainer fits them before it). Writes `stallion_calibration.json` in `--work-dir`;
run again, it scores the models already in `--work-dir` instead of training them.
"""

import argparse
import datetime
import os
import sys
from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf

from benchmarks import host, metrics, pipeline_run, readme_tables, stallion, stallion_tuning
from schema.datasets import get_dataset
from trainer_module import export, interval_calibration

QUANTILES = (0.1, 0.5, 0.9)


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--run-root', required=True,
                      help="pipeline root of a run with the benchmark's split")
  parser.add_argument('--backtest-run-root', required=True,
                      help='pipeline root of a run whose eval period starts half a year earlier')
  parser.add_argument('--seeds', type=int, nargs='+', default=[1, 2, 3])
  parser.add_argument('--work-dir', default='runs/stallion-calibration',
                      help='models, one directory per run and seed, and the results')
  return parser.parse_args(argv)


def stacked(windows: pipeline_run.ScoredWindows, keep: Optional[np.ndarray] = None
            ) -> np.ndarray:
  """Forecasts [N, H, Q] in QUANTILES' order, of the windows `keep` marks."""
  forecasts = np.stack([windows.forecasts[q] for q in QUANTILES], axis=-1)
  return forecasts if keep is None else forecasts[keep]


def band_figures(forecasts: np.ndarray, actual: np.ndarray) -> Dict[str, float]:
  """Coverage, the shares beyond each end, q-risk P10 and P90 and the mean width of the
  P10-P90 band of forecasts [N, H, Q]."""
  low, high = forecasts[..., 0], forecasts[..., -1]
  return {'coverage': metrics.coverage(low, high, actual),
          'below_p10': float(np.mean(actual < low)), 'above_p90': float(np.mean(actual > high)),
          'q_risk_p10': metrics.q_risk(low, actual, 0.1),
          'q_risk_p90': metrics.q_risk(high, actual, 0.9),
          'mean_width': float(np.mean(high - low))}


def compare(evaluation: np.ndarray, eval_actual: np.ndarray, backtest: np.ndarray,
            backtest_actual: np.ndarray, test: np.ndarray, test_actual: np.ndarray,
            floor: Optional[float]) -> Dict[str, dict]:
  """Each variant's factors and test figures, from forecasts [N, H, Q] and actuals."""
  pooled = (np.concatenate([evaluation, backtest]), np.concatenate([eval_actual, backtest_actual]))
  fitted = {'none': {}, 'eval': interval_calibration.fit(evaluation, eval_actual, QUANTILES),
            'eval and backtest': interval_calibration.fit(*pooled, QUANTILES),
            'backtest': interval_calibration.fit(backtest, backtest_actual, QUANTILES)}
  results = {}
  for variant, factors in fitted.items():
    served = export.served_quantiles(tf.constant(test, tf.float32), QUANTILES, factors,
                                     floor).numpy()
    results[variant] = {'factors': factors, 'test': band_figures(served, test_actual)}
  return results


def mean_of(models: Sequence[Mapping[str, pipeline_run.ScoredWindows]], split: str,
            keep: Optional[np.ndarray] = None) -> np.ndarray:
  """The mean forecast [N, H, Q] of models that scored the same windows."""
  return np.mean([stacked(model[split], keep) for model in models], axis=0)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  overrides = stallion_tuning.plan_overrides()
  runs = {'final': args.run_root, 'backtest': args.backtest_run_root}
  scored: Dict[str, List[Mapping[str, pipeline_run.ScoredWindows]]] = {}
  for name, run_root in runs.items():
    for seed in args.seeds:
      work_dir = os.path.join(args.work_dir, name, f'seed-{seed}')
      model_dir, windows = stallion_tuning.model_and_windows(run_root, work_dir)
      if os.path.exists(model_dir):
        print(f'[benchmarks] scoring the model trained before in {model_dir}', flush=True)
      else:
        stallion_tuning.train_model(run_root, overrides, seed, stallion.FULL.train_steps,
                                    work_dir, calibrate=False)
      scored.setdefault(name, []).append(
          stallion_tuning.scored_splits(model_dir, windows, overrides))
  final, backtest = scored['final'], scored['backtest']
  before_eval = backtest[0]['eval'].forecast_start < final[0]['eval'].forecast_start.min()
  if not before_eval.any():
    raise SystemExit('the backtest run has no eval window before the final run\'s eval '
                     'period; give it an eval period that starts earlier')
  floor = get_dataset('stallion').spec.forecast_floor
  models = {f'seed {seed}': [index] for index, seed in enumerate(args.seeds)}
  models['ensemble of the seeds'] = list(range(len(args.seeds)))
  results = {}
  for label, members in models.items():
    results[label] = compare(
        mean_of([final[i] for i in members], 'eval'), final[0]['eval'].actual,
        mean_of([backtest[i] for i in members], 'eval', before_eval),
        backtest[0]['eval'].actual[before_eval],
        mean_of([final[i] for i in members], 'test'), final[0]['test'].actual, floor)
    for variant, result in results[label].items():
      figures = result['test']
      print(f'{label:22s} {variant:18s} coverage {figures["coverage"]:.3f} (below '
            f'{figures["below_p10"]:.3f}, above {figures["above_p90"]:.3f}), q-risk P10 '
            f'{figures["q_risk_p10"]:.4f} P90 {figures["q_risk_p90"]:.4f}, width '
            f'{figures["mean_width"]:.0f}', flush=True)
  readme_tables.write_results(
      os.path.join(args.work_dir, 'stallion_calibration.json'),
      {'benchmark': 'stallion_calibration', 'measured': datetime.date.today().isoformat(),
       'commit': host.commit(), 'host': host.description(), 'seeds': args.seeds,
       'backtest_windows': int(before_eval.sum()), 'results': results})
  return 0


if __name__ == '__main__':
  sys.exit(main())
