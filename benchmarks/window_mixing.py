"""How many series the Trainer's batches draw from: series-ordered against mixed window files.

Writes hand-made windows of many series with `window_files.WriteSeriesWindows`, once in
series order (how eval windows are written) and once mixed (training windows), reads
them as the Trainer does (`window_inputs.read_records` through a seeded shuffle buffer)
and counts, over the first share of an epoch, the series seen and the distinct series
per batch, beside what uniform sampling gives.

  python -m benchmarks.window_mixing --series 200 --windows 500 --output mixing.json
"""

import argparse
import glob
import json
import os
import sys
import tempfile
from typing import List, Optional

import apache_beam as beam
import numpy as np

from components import window_files
from trainer_module.window_inputs import read_records


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--series', type=int, default=200)
  parser.add_argument('--windows', type=int, default=500, help='windows per series')
  parser.add_argument('--shards', type=int, default=3, help='shard files per split')
  parser.add_argument('--shuffle-buffer', type=int, default=10_000)
  parser.add_argument('--batch-size', type=int, default=64)
  parser.add_argument('--share', type=float, default=0.1,
                      help='share of an epoch counted, from its start')
  parser.add_argument('--seed', type=int, default=1)
  parser.add_argument('--output', help='write the figures as JSON here too')
  args = parser.parse_args(argv)
  for name in ('series', 'windows', 'shards', 'shuffle_buffer', 'batch_size'):
    if getattr(args, name) < 1:
      parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
  if not 0 < args.share <= 1:
    parser.error(f'--share must be in (0, 1], got {args.share}')
  if args.shards > args.series:
    parser.error(f'--shards ({args.shards}) cannot exceed --series ({args.series}): '
                 'a split gets at most one shard per series')
  if args.series * args.windows < args.batch_size:
    parser.error('--series x --windows must hold at least one batch')
  return args


def _window(series: int, position: int) -> bytes:
  return f'{series:06d}|{position:06d}'.encode()


def measure(args: argparse.Namespace, mix: bool) -> dict:
  """Writes the windows (mixed or not), reads the first share of an epoch, counts series."""
  series = [(f'{index:06d}', [_window(index, t) for t in range(args.windows)])
            for index in range(args.series)]
  total_bytes = args.series * args.windows * len(_window(0, 0))
  with tempfile.TemporaryDirectory() as directory:
    with beam.Pipeline() as pipeline:
      _ = (pipeline
           | beam.Create(series)
           | window_files.WriteSeriesWindows(
               os.path.join(directory, 'windows'),
               max_shard_bytes=-(-total_bytes // args.shards), mix=mix))
    files = sorted(glob.glob(os.path.join(directory, '*.gz')))
    batches = max(1, int(args.share * args.series * args.windows) // args.batch_size)
    records = read_records(files).shuffle(args.shuffle_buffer, seed=args.seed)
    keys = [[record[:6] for record in batch.numpy()]
            for batch in records.batch(args.batch_size, drop_remainder=True).take(batches)]
  return {'shards': len(files), 'batches': len(keys),
          'series_seen': len({key for batch in keys for key in batch}),
          'series_per_batch': round(float(np.mean([len(set(batch)) for batch in keys])), 1)}


def run(args: argparse.Namespace) -> dict:
  uniform = args.series * (1 - (1 - 1 / args.series) ** args.batch_size)
  return {'settings': vars(args),
          'series_order': measure(args, mix=False),
          'mixed': measure(args, mix=True),
          'uniform_series_per_batch': round(uniform, 1)}


def table(results: dict) -> str:
  settings = results['settings']
  lines = [f"{settings['series']} series x {settings['windows']} windows, shuffle buffer "
           f"{settings['shuffle_buffer']}, the first {settings['share']:.0%} of an epoch in "
           f"batches of {settings['batch_size']}",
           '', '| window files | shards | batches | series seen | distinct series per batch |',
           '| --- | --- | --- | --- | --- |']
  for name, label in (('series_order', 'series order'), ('mixed', 'mixed')):
    figures = results[name]
    lines.append(f"| {label} | {figures['shards']} | {figures['batches']} | "
                 f"{figures['series_seen']} | {figures['series_per_batch']} |")
  lines.append(f"| uniform sampling | | | | {results['uniform_series_per_batch']} |")
  return '\n'.join(lines)


def main(argv: Optional[List[str]] = None) -> int:
  args = parse_args(argv)
  results = run(args)
  print(table(results))
  if args.output:
    with open(args.output, 'w') as file:
      json.dump(results, file, indent=2)
  return 0


if __name__ == '__main__':
  sys.exit(main())
