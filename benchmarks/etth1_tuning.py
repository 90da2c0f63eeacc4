"""ETTh1 tuning runs: the TFT alone on the protocol's windows, without the pipeline.

A run takes minutes instead of the pipeline's five to seven, so model choices can be
compared on the eval split before a benchmark run (`benchmarks/etth1.py`) confirms them
through the product's pipeline. Windows follow the standard protocol
(../shared/data/README.md): train rows [0, 8640), eval forecasts in [8640, 11520), test
forecasts in [11520, 14400), histories reaching back across the borders. Adam with the
Trainer's learning-rate schedule (warm-up, cosine decay over the step budget), early
stopping on the eval windows, best weights kept. Prints one JSON line with the eval and
test MSE / MAE of the z-scored OT and repeat-last-value's on the same windows:

  .venv/bin/python -m benchmarks.etth1_tuning --horizon 96 --target-location last
  .venv/bin/python -m benchmarks.etth1_tuning --horizon 96 --calendar hour dow month
  .venv/bin/python -m benchmarks.etth1_tuning --horizon 96 --calendar --history-highway \
      --point-loss squared
"""

import argparse
import json
import os
import sys
import time
from typing import Dict, List, Optional, Tuple

import numpy as np
import pandas as pd
import tensorflow as tf
import tf_keras as keras

from benchmarks import host, metrics
from schema.hparams import POINT_LOSSES, TARGET_LOCATIONS, TFTConfig
from trainer_module.train import learning_rate_schedule
from trainer_module.training_config import TrainingConfig
from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model, compile_tft_model

BORDERS = (8640, 11520, 14400)  # end of train, eval and test rows
LOADS = ['HUFL', 'HULL', 'MUFL', 'MULL', 'LUFL', 'LULL']
CALENDAR = {'hour': (24, lambda d: d.dt.hour), 'dow': (7, lambda d: d.dt.dayofweek),
            'month': (12, lambda d: d.dt.month - 1)}


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--data', default=os.path.join(host.SHARED_DATA_DIR, 'ETTh1.csv'))
  parser.add_argument('--rows', type=int, help='only the first ROWS rows, split 1/2, 1/4, '
                      '1/4 (a smoke run)')
  parser.add_argument('--lookback', type=int, default=336)
  parser.add_argument('--horizon', type=int, default=96)
  parser.add_argument('--multivariate', action='store_true', help='the six loads in too')
  parser.add_argument('--train-series', choices=('OT', 'all'), default='OT',
                      help="all: the six loads, rescaled to OT's train mean and std, are "
                      'training series too, each with its own series id (univariate only)')
  parser.add_argument('--calendar', nargs='*', choices=sorted(CALENDAR),
                      default=['hour', 'dow'], help='known categorical calendar features')
  parser.add_argument('--target-location', choices=TARGET_LOCATIONS, default='last')
  parser.add_argument('--history-highway', action='store_true',
                      help='add the linear forecast of the scaled history (TFTConfig)')
  parser.add_argument('--point-loss', choices=POINT_LOSSES, default='pinball',
                      help="the 0.5 quantile's loss (TFTConfig)")
  parser.add_argument('--hidden-size', type=int, default=32)
  parser.add_argument('--num-heads', type=int, default=4)
  parser.add_argument('--dropout', type=float, default=0.3)
  parser.add_argument('--learning-rate', type=float, default=3e-4)
  parser.add_argument('--batch-size', type=int, default=64)
  parser.add_argument('--steps', type=int, default=1500, help='step budget')
  parser.add_argument('--epoch-steps', type=int, default=50, help='steps between evaluations')
  parser.add_argument('--patience', type=int, default=5)
  parser.add_argument('--eval-stride', type=int, default=4)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--output', help='append the JSON line to this file too')
  return parser.parse_args(argv)


def load(args: argparse.Namespace) -> Tuple[pd.DataFrame, Tuple[int, int, int]]:
  """The rows used and the three borders."""
  frame = pd.read_csv(host.data_file(args.data, '--data'), parse_dates=['date'],
                      nrows=args.rows)
  borders = BORDERS if not args.rows else (args.rows // 2, args.rows * 3 // 4, args.rows)
  if borders[0] <= args.lookback + args.horizon:
    raise SystemExit(f'error: {borders[0]} train rows cannot hold one window of '
                     f'{args.lookback} + {args.horizon}; use more --rows')
  if args.train_series == 'all' and args.multivariate:
    raise SystemExit('error: --train-series all is for the univariate setting; '
                     'drop --multivariate')
  return frame, borders


def series(frame: pd.DataFrame, args: argparse.Namespace, train_end: int
           ) -> Dict[str, np.ndarray]:
  """Per-row target, z-scored loads (train statistics) and calendar codes."""
  loads = frame[LOADS].to_numpy(np.float32)
  columns = [CALENDAR[name][1](frame.date).to_numpy() for name in args.calendar]
  return {'target': frame.OT.to_numpy(np.float32),
          'loads': (loads - loads[:train_end].mean(0)) / loads[:train_end].std(0),
          'calendar': (np.stack(columns, -1).astype(np.int32) if columns
                       else np.zeros((len(frame), 0), np.int32))}


def windows(rows_by_name: Dict[str, np.ndarray], args: argparse.Namespace, first: int,
            end: int, stride: int, series_id: int = 0
            ) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
  """Model inputs and [N, H] targets of the windows forecasting from `first` to `end`."""
  lookback, horizon = args.lookback, args.horizon
  starts = np.arange(first, end - horizon + 1, stride)
  rows = starts[:, None] - lookback + np.arange(lookback + horizon)[None]
  count = len(starts)
  inputs = {'static_categorical': np.full((count, 1), series_id, np.int32),
            'static_real': np.zeros((count, 0), np.float32),
            'known_categorical': rows_by_name['calendar'][rows],
            'known_real': np.zeros((count, lookback + horizon, 0), np.float32),
            'observed_real': (rows_by_name['loads'][rows[:, :lookback]] if args.multivariate
                              else np.zeros((count, lookback, 0), np.float32)),
            'target_history': rows_by_name['target'][rows[:, :lookback]]}
  return inputs, rows_by_name['target'][rows[:, lookback:]]


def with_loads_as_series(train: Tuple[Dict[str, np.ndarray], np.ndarray],
                         rows_by_name: Dict[str, np.ndarray], args: argparse.Namespace,
                         train_end: int, train_target: pd.Series
                         ) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
  """OT's train windows followed by each load's, the load (z-scored) put on the mean and
  std of OT's train rows `train_target`; series id 0 is OT, 1 to 6 the loads in `LOADS`
  order."""
  target_mean, target_std = float(train_target.mean()), float(train_target.std())
  parts = [train]
  for series_id, load in enumerate(rows_by_name['loads'].T, start=1):
    as_target = dict(rows_by_name, target=(load * target_std + target_mean).astype(np.float32))
    parts.append(windows(as_target, args, args.lookback, train_end, 1, series_id))
  return ({key: np.concatenate([inputs[key] for inputs, _ in parts]) for key in train[0]},
          np.concatenate([actual for _, actual in parts]))


def run(args: argparse.Namespace) -> dict:
  """Trains one model and scores it; returns the JSON-ready figures."""
  tf.random.set_seed(args.seed)
  frame, (train_end, eval_end, test_end) = load(args)
  scale = float(frame.OT[:train_end].std(ddof=0))
  rows_by_name = series(frame, args, train_end)
  train = windows(rows_by_name, args, args.lookback, train_end, 1)
  if args.train_series == 'all':
    train = with_loads_as_series(train, rows_by_name, args, train_end, frame.OT[:train_end])
  evaluation = windows(rows_by_name, args, train_end, eval_end, args.eval_stride)
  test = windows(rows_by_name, args, eval_end, test_end, 1)
  series_count = 1 + len(LOADS) if args.train_series == 'all' else 1
  layout = InputLayout(args.lookback, args.horizon, (series_count,), 0,
                       tuple(CALENDAR[name][0] for name in args.calendar), 0,
                       len(LOADS) if args.multivariate else 0)
  epochs = max(1, args.steps // args.epoch_steps)
  config = TFTConfig(hidden_size=args.hidden_size, num_heads=args.num_heads,
                     dropout=args.dropout, learning_rate=args.learning_rate,
                     batch_size=args.batch_size, max_epochs=epochs,
                     early_stopping_patience=args.patience,
                     target_location=args.target_location,
                     history_highway=args.history_highway, point_loss=args.point_loss)
  model = build_tft_model(layout, config)
  compile_tft_model(model, config, learning_rate_schedule(
      args.learning_rate, epochs * args.epoch_steps, TrainingConfig()))
  dataset = tf.data.Dataset.from_tensor_slices((train[0], {'quantiles': train[1]})).shuffle(
      len(train[1]), seed=args.seed).repeat().batch(args.batch_size, drop_remainder=True)
  started = time.monotonic()
  history = model.fit(dataset, steps_per_epoch=args.epoch_steps, epochs=epochs, verbose=0,
                      validation_data=(evaluation[0], {'quantiles': evaluation[1]}),
                      callbacks=[keras.callbacks.EarlyStopping(
                          patience=args.patience, restore_best_weights=True)])
  losses = history.history['val_loss']
  median = config.quantiles.index(0.5)

  def errors(split):
    inputs, actual = split
    forecast = model.predict(inputs, batch_size=512, verbose=0)['quantiles'][..., median]
    last = np.repeat(inputs['target_history'][:, -1:], args.horizon, axis=1)
    return {'tft': metrics.point_errors(forecast, actual, scale),
            'repeat_last': metrics.point_errors(last, actual, scale),
            'windows': len(actual)}

  return {'settings': {k: v for k, v in vars(args).items() if k not in ('data', 'output')},
          'train_windows': len(train[1]), 'epochs_run': len(losses),
          'best_epoch': int(np.argmin(losses)) + 1,
          'eval': errors(evaluation), 'test': errors(test),
          'train_seconds': round(time.monotonic() - started)}


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  line = json.dumps(run(args))
  print(line, flush=True)
  if args.output:
    with open(args.output, 'a') as f:
      f.write(line + '\n')
  return 0


if __name__ == '__main__':
  sys.exit(main())
