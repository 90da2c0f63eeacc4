"""Stallion tuning: the Trainer alone on one pipeline run's windows, one model setting.

  .venv/bin/python -m benchmarks.stallion_tuning \\
      --run-root runs/benchmarks/stallion/stallion/e1-run-1/pipeline_root \\
      --overrides '{"hidden_size": 32, "num_heads": 4, "dropout": 0.2}' --seeds 1 2 3

Trains `train.run_fn` on the run's Windowing output and Transform graph (no other
component runs; a pipeline run of `benchmarks.stallion` made them) with the benchmark's
plan plus `--overrides`, once per seed, and prints for each: the eval MAE and the best
validation loss (what a setting is chosen on), then the test figures of
`benchmarks.stallion` and the test coverage by horizon step (read afterwards). With the
same seed it repeats the pipeline run's training.
"""

import argparse
import glob
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
from tfx.components.trainer.fn_args_utils import FnArgs

from benchmarks import metrics, pipeline_run, stallion
from schema.datasets import get_dataset
from trainer_module import train


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--run-root', required=True,
                      help='pipeline root of a Stallion benchmark run (its windows)')
  parser.add_argument('--overrides', default='{}',
                      help='TFTConfig fields over the benchmark plan, as JSON')
  parser.add_argument('--seeds', type=int, nargs='+', default=[1, 2, 3])
  parser.add_argument('--steps', type=int, default=stallion.FULL.train_steps)
  parser.add_argument('--work-dir', default='runs/stallion-tuning',
                      help='models and logs, one directory per seed')
  return parser.parse_args(argv)


def train_model(run_root: str, overrides: dict, seed: int, steps: int, work_dir: str,
                calibrate: bool = True) -> Tuple[str, str]:
  """Trains `train.run_fn` on the run's windows; returns `model_and_windows`."""
  model_dir, windows = model_and_windows(run_root, work_dir)
  transform_graph = pipeline_run.only_path(run_root, 'Transform', 'transform_graph', '*')
  train.run_fn(FnArgs(
      train_files=[os.path.join(windows, 'Split-train', '*')],
      eval_files=[os.path.join(windows, 'Split-eval', '*')], train_steps=steps,
      transform_graph_path=transform_graph, serving_model_dir=model_dir,
      model_run_dir=os.path.join(work_dir, 'model_run'), base_model=None,
      custom_config={'dataset_spec': get_dataset('stallion').spec.to_json(),
                     'model_config': model_config(overrides),
                     'training': {'warm_start': False, 'seed': seed,
                                  'calibrate_intervals': calibrate}}))
  return model_dir, windows


def model_and_windows(run_root: str, work_dir: str) -> Tuple[str, str]:
  """(the directory `train_model` exports the model to, the run's windows directory)."""
  windows = pipeline_run.only_path(run_root, 'Windowing', 'windows', '*')
  return os.path.join(work_dir, 'serving'), windows


def model_config(overrides: dict) -> dict:
  return {'preset': 'local', 'overrides': overrides}


def scored_splits(model_dir: str, windows: str, overrides: dict
                  ) -> Dict[str, pipeline_run.ScoredWindows]:
  """The model's forecasts of the run's eval and test windows."""
  quantiles = train.model_config_from(model_config(overrides)).quantiles
  return {split: pipeline_run.score_windows(
              model_dir, sorted(glob.glob(os.path.join(windows, f'Split-{split}', '*.gz'))),
              quantiles)
          for split in ('eval', 'test')}


def train_and_score(run_root: str, overrides: dict, seed: int, steps: int,
                    work_dir: str) -> dict:
  """One seed's figures: eval MAE, best validation loss, test errors and coverage by step."""
  model_dir, windows = train_model(run_root, overrides, seed, steps, work_dir)
  scored = scored_splits(model_dir, windows, overrides)
  errors = {split: metrics.quantile_errors(split_windows.forecasts, split_windows.actual)
            for split, split_windows in scored.items()}
  test = scored['test']
  low, high = test.forecasts[min(test.forecasts)], test.forecasts[max(test.forecasts)]
  losses = pipeline_run.validation_losses(os.path.join(work_dir, 'model_run'))
  return {'seed': seed, 'eval_mae': errors['eval']['mae'],
          'eval_mae_by_forecast_start': mae_by_forecast_start(scored['eval']),
          'best_validation_loss': float(min(losses[0])), 'epochs_run': len(losses[0]),
          'test': errors['test'],
          'test_coverage_by_step': ((test.actual >= low) & (test.actual <= high)).mean(
              axis=0).round(3).tolist()}


def mae_by_forecast_start(windows: pipeline_run.ScoredWindows) -> Dict[str, float]:
  """The median's MAE over the windows of each forecast start (date -> MAE): with an eval
  period longer than the horizon, each origin's part of the eval MAE."""
  starts = windows.forecast_start
  return {str(np.datetime64(int(start), 's').astype('datetime64[D]')): metrics.point_errors(
              windows.forecasts[0.5][starts == start], windows.actual[starts == start])['mae']
          for start in np.unique(starts)}


def plan_overrides() -> dict:
  """The benchmark plan's TFTConfig fields: the Stallion data set's, then the plan's."""
  return {**get_dataset('stallion').model_overrides, **stallion.FULL.model_overrides}


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  overrides = {**plan_overrides(), **json.loads(args.overrides)}
  results = []
  for seed in args.seeds:
    result = train_and_score(args.run_root, overrides, seed, args.steps,
                             os.path.join(args.work_dir, f'seed-{seed}'))
    results.append(result)
    print(json.dumps(result), flush=True)
  by_start = {start: np.mean([r['eval_mae_by_forecast_start'][start] for r in results])
              for start in results[0]['eval_mae_by_forecast_start']}
  print(f'mean of {len(results)} seeds: eval MAE '
        f'{np.mean([r["eval_mae"] for r in results]):.1f} (by forecast start: '
        f'{", ".join(f"{start} {mae:.1f}" for start, mae in by_start.items())}), '
        f'best validation loss '
        f'{np.mean([r["best_validation_loss"] for r in results]):.1f}; test MAE '
        f'{np.mean([r["test"]["mae"] for r in results]):.1f}', flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main())
