"""The project's TFT against pytorch-forecasting's, trained at the same size, one after the other.

Both train forward, backward and optimizer steps on one synthetic batch after warm-up at
the paper's electricity size (`benchmarks/tft_throughput.py` for the project's,
`benchmarks/peer_tft_throughput.py` for the peer's), in one sequence on this machine, and
the ratio of their windows per second is the figure: absolute speeds differ between hosts
of one class by 2x. Three rounds of project then peer by default; the round with the
median float32 ratio at the paper's width is reported (every pair's figures from that
round), every round's ratios beside it, and each library's float32 rate for the matmuls
that dominate the project's step (a per-variable GRN's, [B * E, D] x [D, D]), since the
ratio follows it from host to host. The peer is measured three times:
embedding every real input at the hidden size, as the paper and the project do; with its
default narrower embeddings of real inputs (`hidden_continuous_size=8`), a smaller model;
and at the hidden size in bfloat16 (`torch.autocast`), beside the project's
`mixed_bfloat16` policy, since both libraries offer mixed precision on CPU.

pytorch-forecasting lives in its own environment, never in the pipeline's lock:

  .venv/bin/python -m benchmarks.peer_comparison --setup   # creates .peer-venv (Python 3.11)
  .venv/bin/python -m benchmarks.peer_comparison           # writes results/peer_throughput.json

The ratio depends on the CPU's vector extensions (the results record them) and its matmul
speed: on a host with AVX2 only, `--output benchmarks/results/peer_throughput_avx2.json`
keeps that run beside the AVX-512 one (the `peer_avx2` table of
benchmarks/pages/speed.md), and `peer_throughput_avx512_second_host.json` and
`peer_throughput_avx512_third_host.json` hold two more AVX-512 hosts'. A CPU without
bfloat16 instructions (AVX-512 BF16 or AMX) measures the float32 pair only.
"""

import argparse
import dataclasses
import datetime
import json
import os
import subprocess
import sys
from typing import Sequence, Tuple

from benchmarks import host, readme_tables, report, tft_throughput
from schema import hparams

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER_VENV = os.path.join(PROJECT_ROOT, '.peer-venv')
PEER_PYTHON = os.path.join(PEER_VENV, 'bin', 'python')
PEER_REQUIREMENTS = ['torch==2.13.0', 'pytorch-forecasting==1.8.0']
RESULTS = os.path.join(PROJECT_ROOT, 'benchmarks', 'results', 'peer_throughput.json')
PAPER_WIDTH, PEER_DEFAULT_WIDTH = 160, 8
BFLOAT16_FLAGS = frozenset({'avx512_bf16', 'amx_tile'})
PrecisionPair = Tuple[str, str, Tuple[int, ...]]  # peer's, project's, the peer's widths


def setup_peer(python: str) -> None:
  print(f'[peer] creating {PEER_VENV} with {python}: {" ".join(PEER_REQUIREMENTS)}')
  subprocess.run([python, '-m', 'venv', PEER_VENV], check=True)
  subprocess.run([PEER_PYTHON, '-m', 'pip', 'install', '--quiet',
                  *PEER_REQUIREMENTS], check=True)


def require_peer(peer_python: str) -> None:
  """Stops, naming the set-up command, when `peer_python` does not exist."""
  if not os.path.exists(peer_python):
    raise SystemExit(f'no peer environment at {peer_python}: run '
                     '`.venv/bin/python -m benchmarks.peer_comparison --setup` first')


def run_peer_script(peer_python: str, arguments: Sequence[str]) -> dict:
  """The JSON that `peer_tft_throughput.py arguments` prints last, run in the peer's
  environment; stops with its error output when it fails."""
  completed = subprocess.run(
      [peer_python, os.path.join(PROJECT_ROOT, 'benchmarks', 'peer_tft_throughput.py'),
       *arguments], capture_output=True, text=True, check=False)
  if completed.returncode:
    raise SystemExit(f'the peer benchmark failed:\n{completed.stderr[-3000:]}')
  return json.loads(completed.stdout.strip().splitlines()[-1])


def measure_peer(peer_python: str, steps: int, warmup: int, widths: Sequence[int],
                 precision: str) -> dict:
  return run_peer_script(peer_python, [
      '--steps', str(steps), '--warmup', str(warmup), '--precision', precision,
      *[argument for width in widths for argument in ('--hidden-continuous-size', str(width))]])


def precisions_to_compare(cpu_flags: Sequence[str]) -> Tuple[PrecisionPair, ...]:
  """(peer precision, project precision, peer widths) of each pair a round measures:
  float32 at both widths, and bfloat16 at the paper's width where the CPU has bfloat16
  instructions (without them torch has no bfloat16 LSTM kernel, and the run fails)."""
  pairs = (('float32', 'float32', (PAPER_WIDTH, PEER_DEFAULT_WIDTH)),)
  if BFLOAT16_FLAGS.intersection(cpu_flags):
    pairs += (('bfloat16', 'mixed_bfloat16', (PAPER_WIDTH,)),)
  return pairs


def measure_round(config, args) -> dict:
  """The project's throughput, then the peer's at both widths, then (where the CPU has
  bfloat16 instructions) both in bfloat16 at the paper's width; the ratios of each peer
  run to the project at its precision."""
  ours, peer_runs, ratios = {}, [], {}
  for precision, project_precision, widths in precisions_to_compare(host.cpu_kernel_flags()):
    ours[precision] = tft_throughput.measure(
        tft_throughput.ELECTRICITY_LAYOUT,
        dataclasses.replace(config, precision=project_precision), args.steps, args.warmup)
    print(f'[project] {project_precision}: {ours[precision]["windows_per_second"]} '
          'windows/s', flush=True)
    peer = measure_peer(args.peer_python, args.steps, args.warmup, widths, precision)
    for run in peer['runs']:
      key = report.peer_ratio_key(run)
      ratios[key] = round(ours[precision]['windows_per_second'] / run['windows_per_second'], 2)
      print(f'[peer] {precision}, hidden_continuous_size {run["hidden_continuous_size"]}: '
            f'{run["windows_per_second"]} windows/s, {run["parameter_count"]:,} parameters; '
            f'project / peer = {ratios[key]}', flush=True)
    peer_runs += peer['runs']
  rows = tft_throughput.ELECTRICITY_LAYOUT.encoder_steps * config.batch_size
  matmul_gflops = {'tensorflow': tft_throughput.matmul_gflops(rows, config.hidden_size),
                   'torch': peer['matmul_gflops']}
  print(f'[host] float32 matmuls [{rows}, {config.hidden_size}] x [{config.hidden_size}, '
        f'{config.hidden_size}]: {matmul_gflops} GFLOPS', flush=True)
  return {'project': ours['float32'], 'project_bfloat16': ours.get('bfloat16'),
          'peer': {**peer, 'runs': peer_runs}, 'ratios': ratios,
          'matmul_gflops': matmul_gflops}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--setup', action='store_true',
                      help=f'create {PEER_VENV} with pytorch-forecasting, then stop')
  parser.add_argument('--setup-python', default='python3.11',
                      help='the Python that creates it (torch 2.13 wheels: 3.11)')
  parser.add_argument('--peer-python', default=PEER_PYTHON)
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--warmup', type=int, default=3)
  parser.add_argument('--rounds', type=int, default=3,
                      help='rounds of project then peer; the median ratio is the figure, '
                      'since a shared host\'s speed drifts between measurements')
  parser.add_argument('--output', default=RESULTS)
  args = parser.parse_args()
  if args.setup:
    setup_peer(args.setup_python)
    return
  require_peer(args.peer_python)

  config = dataclasses.replace(hparams.from_name('electricity'), jit_compile=False)
  rounds = [measure_round(config, args) for _ in range(args.rounds)]
  # The round with the median ratio at the paper's width gives the figures.
  median = sorted(rounds, key=lambda r: r['ratios'][f'hidden_continuous_size_{PAPER_WIDTH}'])[
      len(rounds) // 2]
  report = {
      'measured': datetime.date.today().isoformat(),
      'host': host.description(),
      'size': {'encoder_steps': 168, 'horizon': 24, 'hidden_size': config.hidden_size,
               'heads': config.num_heads, 'batch_size': config.batch_size},
      'project': {**median['project'], 'python': sys.version.split()[0]},
      **({'project_bfloat16': median['project_bfloat16']}
         if median['project_bfloat16'] else {}),
      'peer': median['peer'],
      'ratio_project_over_peer': median['ratios'],
      'matmul_gflops': median['matmul_gflops'],
      'rounds': [r['ratios'] for r in rounds],
  }
  print(f'[peer] median of {len(rounds)} rounds: project / peer = '
        f'{report["ratio_project_over_peer"]}', flush=True)
  readme_tables.write_results(args.output, report)


if __name__ == '__main__':
  main()
