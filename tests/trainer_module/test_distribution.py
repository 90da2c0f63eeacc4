"""Tests of the distribution-strategy factory, with simulated accelerators."""

import json
import logging
import types

import pytest
import tensorflow as tf

from trainer_module import distribution

CPU_DEVICES = [tf.config.LogicalDevice('/device:CPU:0', 'CPU')]
GPU_DEVICES = [tf.config.LogicalDevice('/device:GPU:0', 'GPU'),
               tf.config.LogicalDevice('/device:GPU:1', 'GPU')]


class FakeTPU:
  """Stands in for the TPU calls of `make_strategy` and records them.

  Args:
    available: Whether initialising the TPU system succeeds.
  """

  def __init__(self, available: bool):
    self.available = available
    self.calls = []
    self.strategy = object()

  def resolver(self, address):
    self.calls.append(('resolve', address))
    return types.SimpleNamespace(address=address)

  def initialize(self, resolver):
    self.calls.append(('initialize', resolver.address))
    if not self.available:
      raise tf.errors.NotFoundError(
          None, None, 'TPUs not found in the cluster.\nRegistered devices: CPU')

  def build_strategy(self, resolver):
    self.calls.append(('strategy', resolver.address))
    return self.strategy

  def overrides(self, devices=()):
    """Keyword arguments for `make_strategy` on a machine with `devices`."""
    return dict(
        cluster_resolver_factory=self.resolver,
        tpu_initializer=self.initialize,
        tpu_strategy_factory=self.build_strategy,
        list_devices=lambda device_type: [
            d for d in devices if d.device_type == device_type])


def test_tpu_found_is_connected_initialised_and_returned():
  tpu = FakeTPU(available=True)
  address = 'grpc://10.0.0.2:8470'

  strategy = distribution.make_strategy(
      'tpu', tpu_address=address, **tpu.overrides(CPU_DEVICES))

  assert strategy is tpu.strategy
  assert tpu.calls == [('resolve', address), ('initialize', address),
                       ('strategy', address)]


def test_tpu_without_address_is_looked_for_on_this_machine():
  tpu = FakeTPU(available=True)

  distribution.make_strategy('tpu', **tpu.overrides(CPU_DEVICES))

  assert tpu.calls[0] == ('resolve', 'local')


def test_missing_tpu_raises_naming_request_devices_and_fix():
  tpu = FakeTPU(available=False)

  with pytest.raises(distribution.HardwareNotFoundError) as raised:
    distribution.make_strategy('tpu', tpu_address='my-tpu',
                               **tpu.overrides(CPU_DEVICES + GPU_DEVICES))

  message = str(raised.value)
  assert "'tpu' was requested" in message
  assert "'my-tpu'" in message
  assert "['/device:CPU:0', '/device:GPU:0', '/device:GPU:1']" in message
  assert 'TPU_NAME' in message and 'TFT_DISTRIBUTION' in message
  assert ('strategy', 'my-tpu') not in tpu.calls


def test_missing_tpu_on_this_machine_raises_runtime_error():
  with pytest.raises(RuntimeError, match=r"no TPU was found at 'local'.*"
                     r"Visible devices: \['/device:CPU:0'\]"):
    distribution.make_strategy('tpu')


def test_gpu_mirrors_over_every_visible_gpu():
  tpu = FakeTPU(available=True)

  strategy = distribution.make_strategy('gpu', **tpu.overrides(GPU_DEVICES))

  assert isinstance(strategy, tf.distribute.MirroredStrategy)
  assert strategy.num_replicas_in_sync == 2
  assert [d.rsplit('/', 1)[-1] for d in strategy.extended.worker_devices] == [
      'device:GPU:0', 'device:GPU:1']
  assert not tpu.calls


def test_missing_gpu_raises_naming_visible_devices():
  with pytest.raises(RuntimeError) as raised:
    distribution.make_strategy('gpu', **FakeTPU(True).overrides(CPU_DEVICES))

  message = str(raised.value)
  assert "'gpu' was requested but no GPU is visible" in message
  assert "['/device:CPU:0']" in message
  assert 'CUDA_VISIBLE_DEVICES' in message


@pytest.mark.parametrize('requested', ['mirrored', 'tpu_v3', '', None])
def test_unknown_value_lists_valid_values(requested):
  with pytest.raises(ValueError) as raised:
    distribution.make_strategy(requested)

  assert repr(requested) in str(raised.value)
  assert 'auto, tpu, gpu, cpu, cpu:mirrored' in str(raised.value)


def test_cpu_is_one_replica_on_the_cpu():
  strategy = distribution.make_strategy(' CPU ')

  assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
  assert strategy.num_replicas_in_sync == 1
  assert strategy.extended.worker_devices[0].endswith('/device:CPU:0')


def test_cpu_mirrored_spans_every_logical_cpu():
  strategy = distribution.make_strategy('cpu:mirrored')

  assert isinstance(strategy, tf.distribute.MirroredStrategy)
  assert strategy.num_replicas_in_sync == len(
      tf.config.list_logical_devices('CPU'))


def test_auto_picks_cpu_on_this_machine_and_logs_why(caplog):
  with caplog.at_level(logging.INFO):
    strategy = distribution.make_strategy('auto')

  assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
  assert strategy.extended.worker_devices[0].endswith('/device:CPU:0')
  assert any("'auto' picked CPU" in m and "no TPU at 'local'" in m and
             'no GPU is visible' in m for m in caplog.messages)


def test_auto_prefers_a_tpu(caplog):
  tpu = FakeTPU(available=True)

  with caplog.at_level(logging.INFO):
    strategy = distribution.make_strategy('auto',
                                          **tpu.overrides(GPU_DEVICES))

  assert strategy is tpu.strategy
  assert any("'auto' picked TPU" in m for m in caplog.messages)


def test_auto_without_tpu_mirrors_over_gpus_and_logs_why(caplog):
  tpu = FakeTPU(available=False)

  with caplog.at_level(logging.INFO):
    strategy = distribution.make_strategy('auto',
                                          **tpu.overrides(GPU_DEVICES))

  assert isinstance(strategy, tf.distribute.MirroredStrategy)
  assert strategy.num_replicas_in_sync == 2
  assert any("'auto' picked MirroredStrategy" in m and 'NotFoundError' in m
             for m in caplog.messages)


def test_environment_overrides_custom_config():
  strategy = distribution.strategy_from_config(
      {'distribution': 'gpu'}, environ={'TFT_DISTRIBUTION': 'cpu'})

  assert isinstance(strategy, tf.distribute.OneDeviceStrategy)


def test_custom_config_applies_when_environment_is_unset_or_empty():
  for environ in ({}, {'TFT_DISTRIBUTION': ''}):
    tpu = FakeTPU(available=True)

    strategy = distribution.strategy_from_config(
        {'distribution': 'tpu'}, environ=environ, **tpu.overrides())

    assert strategy is tpu.strategy


def test_tpu_address_comes_from_tpu_name():
  tpu = FakeTPU(available=True)

  distribution.strategy_from_config(
      None, environ={'TFT_DISTRIBUTION': 'tpu', 'TPU_NAME': 'my-tpu'},
      **tpu.overrides())

  assert tpu.calls[0] == ('resolve', 'my-tpu')


def test_auto_is_the_default_without_config_or_environment():
  tpu = FakeTPU(available=True)

  strategy = distribution.strategy_from_config({}, environ={},
                                               **tpu.overrides())

  assert strategy is tpu.strategy
  assert tpu.calls[0] == ('resolve', 'local')


def test_unknown_value_names_its_source():
  with pytest.raises(ValueError, match='environment variable TFT_DISTRIBUTION'):
    distribution.strategy_from_config(
        {'distribution': 'cpu'}, environ={'TFT_DISTRIBUTION': 'tpu-v3'})
  with pytest.raises(ValueError, match=r"custom_config\['distribution'\]"):
    distribution.strategy_from_config({'distribution': 3}, environ={})


def test_learning_rate_scales_linearly_with_global_batch():
  assert distribution.scaled_learning_rate(1e-3, 256, 64) == pytest.approx(
      4e-3)
  assert distribution.scaled_learning_rate(1e-3, 32, 64) == pytest.approx(
      5e-4)
  with pytest.raises(ValueError, match='reference_batch'):
    distribution.scaled_learning_rate(1e-3, 32, 0)


class _UnconnectedTPUStrategy(tf.distribute.TPUStrategy):
  """A TPUStrategy by type only: a real one needs TPU hardware."""

  def __init__(self):  # pylint: disable=super-init-not-called
    pass


def test_save_options_route_io_through_host_only_for_tpu():
  tpu_options = distribution.save_options(_UnconnectedTPUStrategy())
  cpu_options = distribution.save_options(distribution.make_strategy('cpu'))

  assert tpu_options.experimental_io_device == '/job:localhost'
  assert cpu_options.experimental_io_device is None


def test_models_under_a_tpu_strategy_are_built_in_bfloat16_by_default():
  """`precision: auto` (the default) resolves by the strategy run_fn builds."""
  from unittest import mock

  from schema import hparams

  tpu = mock.create_autospec(tf.distribute.TPUStrategy, instance=True)
  mirrored = tf.distribute.MirroredStrategy(['/cpu:0'])
  config = hparams.TFTConfig()
  assert config.dtype_policy(distribution.is_tpu(tpu)) == 'mixed_bfloat16'
  assert config.dtype_policy(distribution.is_tpu(mirrored)) == 'float32'


def _cluster_environ(task_type: str = 'worker', index: int = 0,
                     cluster=None) -> dict:
  """TF_CONFIG as Vertex AI sets it for a worker pool of a chief and two workers."""
  cluster = cluster or {'chief': ['c:2222'], 'worker': ['w0:2222', 'w1:2222']}
  return {'TF_CONFIG': json.dumps({'cluster': cluster,
                                   'task': {'type': task_type, 'index': index}})}


class FakeMultiWorker:
  """Stands in for MultiWorkerMirroredStrategy and keeps the resolver it was given."""

  def __init__(self, error: Exception | None = None):
    self.error = error
    self.resolver = None
    self.strategy = object()

  def __call__(self, resolver):
    self.resolver = resolver
    if self.error:
      raise self.error
    return self.strategy


@pytest.mark.parametrize('requested, devices, gpus', [
    ('auto', CPU_DEVICES, 0), ('cpu', CPU_DEVICES + GPU_DEVICES, 0),
    ('gpu', CPU_DEVICES + GPU_DEVICES, 2), ('auto', CPU_DEVICES + GPU_DEVICES, 2)])
def test_several_workers_train_under_multi_worker_mirrored_strategy(requested, devices,
                                                                    gpus, caplog):
  tpu, multi_worker = FakeTPU(available=True), FakeMultiWorker()

  with caplog.at_level(logging.INFO):
    strategy = distribution.strategy_from_config(
        {'distribution': requested}, environ=_cluster_environ('worker', 1),
        multi_worker_strategy_factory=multi_worker, **tpu.overrides(devices))

  assert strategy is multi_worker.strategy
  assert tpu.calls == []  # 'auto' does not look for a TPU
  resolver = multi_worker.resolver
  assert resolver.cluster_spec().as_dict() == {'chief': ['c:2222'],
                                               'worker': ['w0:2222', 'w1:2222']}
  assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ('worker', 1, 'grpc')
  assert resolver.num_accelerators() == ({'GPU': gpus} if gpus else {})
  assert 'over 3 workers' in caplog.text and 'this is worker 1' in caplog.text


@pytest.mark.parametrize('requested', ['tpu', 'cpu:mirrored'])
def test_single_machine_distributions_refuse_several_workers(requested):
  with pytest.raises(ValueError, match=f"'{requested}' trains on one machine.*TF_CONFIG "
                                       'lists 3 training workers.*single replica'):
    distribution.make_strategy(requested, environ=_cluster_environ(),
                               multi_worker_strategy_factory=FakeMultiWorker(),
                               **FakeTPU(available=True).overrides(CPU_DEVICES))


def test_gpu_on_several_workers_without_a_gpu_says_so():
  with pytest.raises(distribution.HardwareNotFoundError, match='no visible GPU.*worker pool'):
    distribution.make_strategy('gpu', environ=_cluster_environ(),
                               multi_worker_strategy_factory=FakeMultiWorker(),
                               **FakeTPU(available=False).overrides(CPU_DEVICES))


def test_several_workers_without_a_task_say_the_task_is_missing():
  environ = {'TF_CONFIG': json.dumps({'cluster': {'worker': ['w0:2222', 'w1:2222']}})}
  with pytest.raises(ValueError, match='lists 2 training workers but no task.*set the task'):
    distribution.make_strategy('cpu', environ=environ,
                               multi_worker_strategy_factory=FakeMultiWorker())


def test_a_cluster_of_one_worker_trains_alone():
  environ = _cluster_environ('chief', 0, cluster={'chief': ['c:2222'],
                                                  'evaluator': ['e:2222']})
  strategy = distribution.make_strategy(
      'cpu', environ=environ, multi_worker_strategy_factory=FakeMultiWorker())
  assert isinstance(strategy, tf.distribute.OneDeviceStrategy)


def test_multi_worker_strategy_after_runtime_start_says_to_build_it_first():
  started = FakeMultiWorker(RuntimeError('Collective ops must be configured at program '
                                         'startup'))
  with pytest.raises(RuntimeError, match='before TensorFlow runs its first op'):
    distribution.make_strategy('cpu', environ=_cluster_environ(),
                               multi_worker_strategy_factory=started)
