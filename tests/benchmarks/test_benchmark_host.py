"""What the benchmarks record of the host, where they find the reference data, and what
the peer comparison measures on the host."""

import pytest

from benchmarks import etth1, host, peer_comparison, stallion


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


def test_host_names_the_cpu_generation_that_a_vm_model_name_hides(monkeypatch):
  fields = {'model name': 'AMD EPYC', 'cpu family': '26', 'model': '2'}
  monkeypatch.setattr(host, '_cpuinfo_field', lambda name: fields.get(name, ''))
  assert host.description()['cpu_generation'] == 'family 26, model 2'
  fields.pop('cpu family')
  assert host.cpu_generation() == ''


def test_a_missing_data_file_names_the_option_that_sets_it(tmp_path):
  present = tmp_path / 'stallion.csv'
  present.write_text('agency,sku\n')
  assert host.data_file(str(present), '--data') == str(present)
  with pytest.raises(FileNotFoundError, match=r'ETTh1\.csv not found.*pass --data-dir'):
    host.data_file(str(tmp_path / 'ETTh1.csv'), '--data-dir')


@pytest.mark.parametrize('benchmark', [etth1, stallion])
def test_a_benchmark_run_stops_on_a_data_dir_without_its_data_set(benchmark, tmp_path):
  with pytest.raises(FileNotFoundError, match=rf'{benchmark.DATA_FILE} not found.*--data-dir'):
    benchmark.run(benchmark.QUICK, str(tmp_path), str(tmp_path / 'work'))
  assert not (tmp_path / 'work').exists()  # stopped before any run began
