"""The host's matmul rate that `peer_comparison` records beside the ratio."""

import itertools

from benchmarks import tft_throughput


def test_matmul_rate_is_the_flops_of_the_repeated_matmuls_over_the_best_round(monkeypatch):
  # Three timed rounds of 0.5, 0.25 and 0.4 s: the best (0.25 s) sets the rate.
  clock = itertools.chain.from_iterable([(10.0, 10.5), (20.0, 20.25), (30.0, 30.4)])
  monkeypatch.setattr(tft_throughput.time, 'perf_counter', lambda: next(clock))
  rate = tft_throughput.matmul_gflops(rows=10_000, width=100, repeats=5, rounds=3)
  assert rate == 4.0  # 2 * 10,000 * 100 * 100 * 5 flops in 0.25 s (2.0 at 0.5 s)
