"""Training throughput of pytorch-forecasting's TemporalFusionTransformer, for comparison.

Runs in its own environment, never the pipeline's (see `benchmarks/peer_comparison.py`,
which creates and calls it): the same sizes as `benchmarks/tft_throughput.py` (the
paper's electricity size: history 168, horizon 24, hidden 160, 4 heads, batch 64, 3
quantiles, one static id, 7 observed and 3 known reals), and the same measure: forward,
backward and optimizer steps on one synthetic batch after warm-up, no Lightning loop.
`--precision bfloat16` runs the forward pass under `torch.autocast` in bfloat16 (the
weights, the optimizer and the loss stay float32), torch's mixed precision on CPU.

  PEER_PYTHON benchmarks/peer_tft_throughput.py --steps 20 --hidden-continuous-size 160
"""

import argparse
import json
import os
import time

import torch
from pytorch_forecasting import TemporalFusionTransformer
from pytorch_forecasting.data.encoders import TorchNormalizer
from pytorch_forecasting.metrics import QuantileLoss

ENCODER, HORIZON, HIDDEN, HEADS, BATCH = 168, 24, 160, 4, 64
OBSERVED = [f'observed_{i}' for i in range(7)]
KNOWN = [f'known_{i}' for i in range(3)]
QUANTILES = [0.1, 0.5, 0.9]


def build(hidden_continuous_size: int, dropout: float) -> TemporalFusionTransformer:
  reals = KNOWN + OBSERVED
  return TemporalFusionTransformer(
      hidden_size=HIDDEN, lstm_layers=1, dropout=dropout, attention_head_size=HEADS,
      output_size=len(QUANTILES), loss=QuantileLoss(QUANTILES),
      max_encoder_length=ENCODER, static_categoricals=['id'], static_reals=[],
      time_varying_categoricals_encoder=[], time_varying_categoricals_decoder=[],
      time_varying_reals_encoder=reals, time_varying_reals_decoder=KNOWN,
      x_reals=reals, x_categoricals=['id'], embedding_sizes={'id': (1, HIDDEN)},
      hidden_continuous_size=hidden_continuous_size,
      # Outputs in the target's units from each window's (center, scale): as a data set's.
      output_transformer=TorchNormalizer(method='identity'))


def synthetic_batch(seed: int = 0):
  generator = torch.Generator().manual_seed(seed)
  reals = len(KNOWN) + len(OBSERVED)
  x = {
      'encoder_cat': torch.zeros(BATCH, ENCODER, 1, dtype=torch.long),
      'decoder_cat': torch.zeros(BATCH, HORIZON, 1, dtype=torch.long),
      'encoder_cont': torch.randn(BATCH, ENCODER, reals, generator=generator),
      'decoder_cont': torch.randn(BATCH, HORIZON, reals, generator=generator),
      'encoder_lengths': torch.full((BATCH,), ENCODER, dtype=torch.long),
      'decoder_lengths': torch.full((BATCH,), HORIZON, dtype=torch.long),
      'target_scale': torch.ones(BATCH, 2),
  }
  return x, torch.randn(BATCH, HORIZON, generator=generator)


def measure(hidden_continuous_size: int, steps: int, warmup: int, dropout: float,
            precision: str = 'float32') -> dict:
  torch.manual_seed(0)
  model = build(hidden_continuous_size, dropout)
  model.train()
  optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
  x, y = synthetic_batch()

  def step():
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=precision == 'bfloat16'):
      prediction = model(x)['prediction']  # [B, H, Q]
    loss = model.loss.loss(prediction.float(), y).mean()
    loss.backward()
    optimizer.step()
    return loss

  start = time.perf_counter()
  for _ in range(warmup):
    step()
  warmup_seconds = time.perf_counter() - start
  start, cpu_start = time.perf_counter(), time.process_time()
  for _ in range(steps):
    step()
  seconds = time.perf_counter() - start
  cpu_seconds = time.process_time() - cpu_start
  return {
      'hidden_continuous_size': hidden_continuous_size, 'precision': precision,
      'parameter_count': sum(p.numel() for p in model.parameters()),
      'warmup_steps': warmup, 'warmup_seconds': round(warmup_seconds, 2),
      'steps': steps, 'seconds_per_step': round(seconds / steps, 4),
      'cpu_seconds_per_step': round(cpu_seconds / steps, 4),
      'windows_per_second': round(steps * BATCH / seconds, 1),
  }


def matmul_gflops(rows: int, width: int, repeats: int = 20, rounds: int = 3) -> float:
  """torch's float32 rate (GFLOPS, best of `rounds`) for [rows, width] x [width, width]
  matmuls on this host: `benchmarks.tft_throughput.matmul_gflops`' measure."""
  generator = torch.Generator().manual_seed(0)
  inputs = [torch.randn(rows, width, generator=generator) for _ in range(repeats)]
  kernel = torch.randn(width, width, generator=generator)
  torch.matmul(inputs[0], kernel)
  best = float('inf')
  for _ in range(rounds):
    start = time.perf_counter()
    for x in inputs:
      torch.matmul(x, kernel)
    best = min(best, time.perf_counter() - start)
  return round(2 * rows * width * width * repeats / best / 1e9, 1)


def lstm_matmul_flops(model: TemporalFusionTransformer) -> int:
  """The flops of the model's LSTMs' matmuls per training step, from their shapes: torch
  2.13's `FlopCounterMode` does not see its fused LSTM kernel. Each step multiplies the
  input and the state by the four gates' weights; the input and weight gradients cost
  twice the forward."""
  total = 0
  for lstm, steps in ((model.lstm_encoder, ENCODER), (model.lstm_decoder, HORIZON)):
    if lstm.num_layers != 1 or lstm.bidirectional:
      raise ValueError(f'counted for one forward layer only, got {lstm}')
    forward = 2 * BATCH * steps * 4 * lstm.hidden_size * (lstm.input_size + lstm.hidden_size)
    total += 3 * forward
  return total


def matmul_flops(hidden_continuous_size: int, dropout: float) -> dict:
  """The matmul flops of one training step, forward and backward, by aten op, and the
  LSTMs' (`lstm_matmul_flops`)."""
  from torch.utils import flop_counter  # pylint: disable=import-outside-toplevel
  torch.manual_seed(0)
  model = build(hidden_continuous_size, dropout)
  model.train()
  x, y = synthetic_batch()
  with flop_counter.FlopCounterMode(display=False) as counter:
    model.loss.loss(model(x)['prediction'], y).mean().backward()
  counted = {str(op): count for op, count in counter.get_flop_counts()['Global'].items()}
  return {**counted, 'lstm (from shapes)': lstm_matmul_flops(model)}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--warmup', type=int, default=3)
  parser.add_argument('--dropout', type=float, default=0.1)
  parser.add_argument('--precision', choices=('float32', 'bfloat16'), default='float32',
                      help='bfloat16: the forward pass under torch.autocast')
  parser.add_argument('--flops', action='store_true',
                      help='print the matmul flops of one training step at the paper\'s '
                      'width instead of timing (benchmarks/step_flops.py)')
  parser.add_argument('--hidden-continuous-size', type=int, action='append',
                      help='width of the real inputs\' embeddings and their GRNs; repeat '
                      'to measure several (default: 160, the hidden size, as the paper '
                      'and the project embed every input)')
  args = parser.parse_args()
  if args.flops:
    print(json.dumps(matmul_flops(HIDDEN, args.dropout)))
    return
  import pytorch_forecasting  # pylint: disable=import-outside-toplevel
  report = {'torch': torch.__version__, 'pytorch_forecasting': pytorch_forecasting.__version__,
            'threads': torch.get_num_threads(), 'cpu_count': os.cpu_count(),
            'matmul_gflops': matmul_gflops(BATCH * ENCODER, HIDDEN),
            'runs': [measure(size, args.steps, args.warmup, args.dropout, args.precision)
                     for size in args.hidden_continuous_size or [HIDDEN]]}
  print(json.dumps(report))


if __name__ == '__main__':
  main()
