"""What the benchmarks record of the host, and what the peer comparison measures on it."""

from benchmarks import host, peer_comparison


def test_peer_comparison_measures_bfloat16_only_on_a_cpu_with_bfloat16_instructions():
  avx2 = peer_comparison.precisions_to_compare(['avx2', 'fma'])
  avx512 = peer_comparison.precisions_to_compare(['avx2', 'fma', 'avx512f', 'avx512_bf16'])
  assert [pair[0] for pair in avx2] == ['float32']
  assert [pair[:2] for pair in avx512] == [('float32', 'float32'),
                                           ('bfloat16', 'mixed_bfloat16')]
  assert avx512[0] == avx2[0]


def test_host_names_the_cpu_flags_that_decide_the_kernels(monkeypatch):
  monkeypatch.setattr(host, '_cpuinfo_field',
                      lambda name: 'fpu avx2 fma avx512f avx512_bf16' if name == 'flags' else '')
  assert host.cpu_kernel_flags() == ['avx2', 'fma', 'avx512f', 'avx512_bf16']
  assert host.description()['cpu_kernel_flags'] == host.cpu_kernel_flags()
