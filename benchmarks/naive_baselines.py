"""Naive forecasts, and their MAE on the eval windows of a finished local pipeline run.

The accuracy benchmarks (`benchmarks/etth1.py`, `benchmarks/stallion.py`) score the
same naive forecasts beside the model (the Evaluator scores the eval windows' naive
forecasts itself for the blessing rule, `trainer_module.naive_forecasts`). Run the
pipeline first (`make run`, or `tft-pipeline --dataset etth1`), then:

  .venv/bin/python benchmarks/naive_baselines.py --run-dir runs/synthetic --period 24 168

It reads the windows the pipeline wrote (Split-eval of the latest Windowing output) and
prints, in original units, the MAE of each naive forecast
(`trainer_module.naive_forecasts`): repeat-last-value, the history mean and each
seasonal-naive period given (the last `period` values of the history, repeated).
"""

import argparse
import glob
import os
import sys
from typing import Sequence

import numpy as np
import tensorflow as tf

from schema.window_layout import TARGET_FUTURE, TARGET_HISTORY
from trainer_module import naive_forecasts


def eval_windows(run_dir: str, split: str = 'eval'):
  """Target histories [N, E] and futures [N, H] of the latest windowing output."""
  outputs = glob.glob(os.path.join(run_dir, 'pipeline_root', 'Windowing', 'windows', '*'))
  if not outputs:
    raise SystemExit(f'error: no Windowing output under {run_dir}/pipeline_root; run the '
                     'pipeline first (make run)')
  latest = max(outputs, key=lambda path: int(os.path.basename(path)))
  files = glob.glob(os.path.join(latest, f'Split-{split}', '*.gz'))
  histories, futures = [], []
  for record in tf.data.TFRecordDataset(files, 'GZIP'):
    example = tf.train.Example.FromString(record.numpy())
    histories.append(example.features.feature[TARGET_HISTORY].float_list.value)
    futures.append(example.features.feature[TARGET_FUTURE].float_list.value)
  return np.array(histories), np.array(futures)


def check_periods(periods: Sequence[int], encoder: int) -> None:
  """Exits naming a seasonal period that does not come from a history of `encoder`."""
  for period in periods:
    if not 1 < period <= encoder:
      raise SystemExit(f'error: period {period} must lie in [2, encoder {encoder}] to come '
                       'from the history')


def naive_quantiles(history: np.ndarray, horizon: int, quantiles) -> dict:
  """Repeat-last-value with an empirical interval: quantile forecasts [N, H] by quantile.

  At step h the q-quantile is the last value plus the q-quantile of the window's own
  h-step changes y[t + h] - y[t] over its history, less their median, so the median
  forecast is the last value itself.
  """
  last = history[:, -1]
  result = {q: np.empty((len(history), horizon)) for q in quantiles}
  for step in range(1, horizon + 1):
    changes = history[:, step:] - history[:, :-step]
    median = np.median(changes, axis=1)
    for q in quantiles:
      result[q][:, step - 1] = last + np.quantile(changes, q, axis=1) - median
  return result


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--run-dir', required=True, help='e.g. runs/synthetic')
  parser.add_argument('--period', type=int, nargs='*', default=[],
                      help='seasonal-naive periods in time steps, e.g. 24 168')
  parser.add_argument('--split', default='eval')
  args = parser.parse_args(argv)
  history, future = eval_windows(args.run_dir, args.split)
  print(f'{len(future)} {args.split} windows, horizon {future.shape[1]}')
  check_periods(args.period, history.shape[1])
  for name, mae in naive_forecasts.naive_maes(history, future, args.period).items():
    print(f'  {name:<14} MAE {mae:.3f}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
