"""MAE of naive forecasts on the eval windows of a finished local pipeline run.

The blessing bounds in `schema/datasets.py` are set from these figures. Run the pipeline
first (`make run`, or `tft-pipeline --dataset etth1`), then:

  .venv/bin/python benchmarks/naive_baselines.py --run-dir runs/synthetic --period 24 168

It reads the windows the pipeline wrote (Split-eval of the latest Windowing output) and
prints, in original units, the MAE of repeat-last-value and of each seasonal-naive period
(the value `period` steps before each forecast step, taken from the history).
"""

import argparse
import glob
import os
import sys

import numpy as np
import tensorflow as tf

from schema.window_layout import TARGET_FUTURE, TARGET_HISTORY


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


def naive_maes(history: np.ndarray, future: np.ndarray, periods) -> dict:
  encoder, horizon = history.shape[1], future.shape[1]
  result = {'repeat_last': float(np.abs(future - history[:, -1:]).mean())}
  for period in periods:
    if period < horizon or period > encoder:
      raise SystemExit(f'error: period {period} must lie in [horizon {horizon}, encoder '
                       f'{encoder}] to come from the history')
    seasonal = history[:, encoder - period:encoder - period + horizon]
    result[f'seasonal_{period}'] = float(np.abs(future - seasonal).mean())
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
  for name, mae in naive_maes(history, future, args.period).items():
    print(f'  {name:<14} MAE {mae:.3f}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
