"""Distribution strategy for training: one factory over TPU, GPU and CPU.

Accepted values of the requested distribution (`DISTRIBUTIONS`):
  auto          TPU if one can be initialised, else MirroredStrategy over the
                visible GPUs (also for a single GPU, so one code path serves
                one or many), else OneDeviceStrategy on the CPU. Logs the pick
                and why.
  tpu           TPUStrategy; raises `HardwareNotFoundError` without a TPU.
  gpu           MirroredStrategy over every visible GPU; raises
                `HardwareNotFoundError` without one.
  cpu           OneDeviceStrategy on '/cpu:0'.
  cpu:mirrored  MirroredStrategy over every logical CPU device. It has more
                than one replica only when the CPU was split with
                `tf.config.set_logical_device_configuration` before TensorFlow
                initialised; tests use it to run multi-replica code on a CPU.

Several workers: when TF_CONFIG lists more than one training worker (`cluster.worker_count`,
as Vertex AI sets it for a worker pool of several replicas), 'auto', 'gpu' and 'cpu' give
MultiWorkerMirroredStrategy over the workers: each worker's GPUs ('auto', 'gpu'; 'gpu'
raises `HardwareNotFoundError` without one) or its CPU ('cpu', and 'auto' without GPUs).
'tpu' and 'cpu:mirrored' train on one machine and raise ValueError then. The strategy
must be built before TensorFlow initialises its runtime (before any op runs).

TPU address: `tpu_address` names the TPU (a name or grpc:// address, as in
`TPU_NAME`); without one the TPU is taken to be attached to this machine, i.e.
a TPU VM, addressed as 'local'. A TPU counts as found once the resolver was
built, connected and `initialize_tpu_system` succeeded.

Within the Trainer, `strategy_from_config` reads the request from the
environment and the Trainer's custom_config.
"""

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
import logging
import os

import tensorflow as tf

from trainer_module import cluster

DISTRIBUTIONS = ('auto', 'tpu', 'gpu', 'cpu', 'cpu:mirrored')
CONFIG_KEY = 'distribution'
DISTRIBUTION_ENV = 'TFT_DISTRIBUTION'
TPU_NAME_ENV = 'TPU_NAME'
LOCAL_TPU = 'local'

ClusterResolverFactory = Callable[
    [str], tf.distribute.cluster_resolver.ClusterResolver]
TPUInitializer = Callable[
    [tf.distribute.cluster_resolver.ClusterResolver], None]
TPUStrategyFactory = Callable[
    [tf.distribute.cluster_resolver.ClusterResolver], tf.distribute.Strategy]
DeviceLister = Callable[[str], Sequence[tf.config.LogicalDevice]]
MultiWorkerStrategyFactory = Callable[
    [tf.distribute.cluster_resolver.ClusterResolver], tf.distribute.Strategy]

# TPU failures differ by environment: the resolver raises ValueError or
# RuntimeError for an unknown name, initialisation raises NotFoundError
# (an OpError) where no TPU kernel or device exists.
_TPU_NOT_FOUND_ERRORS = (ValueError, RuntimeError, tf.errors.OpError)

_REQUEST_ANOTHER = (
    f'request another distribution ({", ".join(DISTRIBUTIONS)}) through '
    f'{DISTRIBUTION_ENV} or the Trainer custom_config key {CONFIG_KEY!r}.')


class HardwareNotFoundError(RuntimeError):
  """The requested accelerator is not visible to this process."""


def make_strategy(
    requested: str = 'auto',
    *,
    tpu_address: str | None = None,
    cluster_resolver_factory: ClusterResolverFactory | None = None,
    tpu_initializer: TPUInitializer | None = None,
    tpu_strategy_factory: TPUStrategyFactory | None = None,
    list_devices: DeviceLister | None = None,
    environ: Mapping[str, str] | None = None,
    multi_worker_strategy_factory: MultiWorkerStrategyFactory | None = None,
) -> tf.distribute.Strategy:
  """Returns the distribution strategy for `requested` (see module docstring).

  The keyword arguments other than `tpu_address` replace the hardware calls,
  so that tests can simulate machines with or without accelerators.

  Args:
    requested: One of `DISTRIBUTIONS`, case-insensitive.
    tpu_address: TPU name or grpc:// address; None means a TPU attached to
      this machine ('local').
    cluster_resolver_factory: Builds the TPU cluster resolver from the
      address; default `tf.distribute.cluster_resolver.TPUClusterResolver`.
    tpu_initializer: Connects to and initialises the TPU system of a
      resolver; default `connect_and_initialize_tpu`.
    tpu_strategy_factory: Builds the strategy from an initialised resolver;
      default `tf.distribute.TPUStrategy`.
    list_devices: Lists logical devices of a type ('GPU', 'CPU', 'TPU');
      default `tf.config.list_logical_devices`.
    environ: Environment variables, for TF_CONFIG; default `os.environ`.
    multi_worker_strategy_factory: Builds the strategy over several workers from their
      cluster resolver; default `tf.distribute.MultiWorkerMirroredStrategy`.

  Raises:
    ValueError: `requested` is not one of `DISTRIBUTIONS`, or trains on one machine
      while there are several workers, or TF_CONFIG lists several workers but no task.
    HardwareNotFoundError: 'tpu' or 'gpu' was requested but none was found.
  """
  name = _checked_name(requested, source='requested distribution')
  list_devices = list_devices or tf.config.list_logical_devices
  environ = os.environ if environ is None else environ
  workers = cluster.worker_count(environ)
  if workers > 1:
    return _multi_worker_strategy(
        name, workers, environ, list_devices,
        multi_worker_strategy_factory or _multi_worker_mirrored_strategy)
  address = tpu_address or LOCAL_TPU
  cluster_resolver_factory = (
      cluster_resolver_factory
      or tf.distribute.cluster_resolver.TPUClusterResolver)
  tpu_initializer = tpu_initializer or connect_and_initialize_tpu
  tpu_strategy_factory = tpu_strategy_factory or tf.distribute.TPUStrategy

  # 'auto' falls through TPU, then GPU, then CPU.
  if name in ('tpu', 'auto'):
    try:
      resolver = cluster_resolver_factory(address)
      tpu_initializer(resolver)
    except _TPU_NOT_FOUND_ERRORS as error:
      if name == 'tpu':
        raise HardwareNotFoundError(
            f"distribution 'tpu' was requested but no TPU was found at "
            f'{address!r} ({type(error).__name__}: {_first_line(error)}). '
            f'Visible devices: {_visible_devices(list_devices)}. Run on a TPU '
            f'VM, set {TPU_NAME_ENV} to the TPU name or address, or '
            f'{_REQUEST_ANOTHER}') from error
      no_tpu_reason = (f'no TPU at {address!r} ({type(error).__name__}: '
                       f'{_first_line(error)})')
    else:
      if name == 'auto':
        logging.info("Distribution 'auto' picked TPU: initialised the TPU at "
                     '%r.', address)
      return tpu_strategy_factory(resolver)

  if name in ('gpu', 'auto'):
    gpus = [gpu.name for gpu in list_devices('GPU')]
    if gpus:
      if name == 'auto':
        logging.info("Distribution 'auto' picked MirroredStrategy over GPUs "
                     '%s: %s.', gpus, no_tpu_reason)
      return tf.distribute.MirroredStrategy(gpus)
    if name == 'gpu':
      raise HardwareNotFoundError(
          "distribution 'gpu' was requested but no GPU is visible. Visible "
          f'devices: {_visible_devices(list_devices)}. Check the GPU driver '
          f'and CUDA_VISIBLE_DEVICES, or {_REQUEST_ANOTHER}')

  if name == 'cpu:mirrored':
    return tf.distribute.MirroredStrategy(
        [cpu.name for cpu in list_devices('CPU')])
  if name == 'auto':
    logging.info("Distribution 'auto' picked CPU (OneDeviceStrategy on "
                 '/cpu:0): %s and no GPU is visible.', no_tpu_reason)
  return tf.distribute.OneDeviceStrategy('/cpu:0')


def strategy_from_config(
    custom_config: Mapping[str, object] | None,
    environ: Mapping[str, str] = os.environ,
    **make_strategy_overrides,
) -> tf.distribute.Strategy:
  """Returns the strategy requested for a Trainer run.

  Precedence: the environment variable `TFT_DISTRIBUTION` (when set and not
  empty) over custom_config['distribution'] over 'auto', so that one compiled
  pipeline can be redirected per machine. The TPU address comes from
  `TPU_NAME`; without it a TPU is looked for on this machine ('local').

  Args:
    custom_config: The Trainer's custom_config (`fn_args.custom_config`);
      may be None.
    environ: Environment variables.
    **make_strategy_overrides: Hardware replacements forwarded to
      `make_strategy` (for tests).

  Raises:
    ValueError: The requested value, naming where it came from, is not one
      of `DISTRIBUTIONS`.
    HardwareNotFoundError: As `make_strategy`.
  """
  if environ.get(DISTRIBUTION_ENV):
    requested = environ[DISTRIBUTION_ENV]
    source = f'environment variable {DISTRIBUTION_ENV}'
  else:
    requested = (custom_config or {}).get(CONFIG_KEY, 'auto')
    source = f'Trainer custom_config[{CONFIG_KEY!r}]'
  name = _checked_name(requested, source)
  logging.info('Distribution %r from %s.', name, source)
  return make_strategy(name, tpu_address=environ.get(TPU_NAME_ENV) or None,
                       environ=environ, **make_strategy_overrides)


def _multi_worker_strategy(name: str, workers: int, environ: Mapping[str, str],
                           list_devices: DeviceLister,
                           factory: MultiWorkerStrategyFactory) -> tf.distribute.Strategy:
  """MultiWorkerMirroredStrategy over the `workers` of the TF_CONFIG cluster, on GPUs or
  the CPU."""
  if name in ('tpu', 'cpu:mirrored'):
    raise ValueError(
        f'distribution {name!r} trains on one machine, but {cluster.TF_CONFIG_ENV} lists '
        f'{workers} training workers; request auto, gpu or cpu (MultiWorkerMirroredStrategy '
        'over the workers), or run the Trainer as a single replica.')
  gpus = list_devices('GPU') if name in ('auto', 'gpu') else []
  if name == 'gpu' and not gpus:
    raise HardwareNotFoundError(
        "distribution 'gpu' was requested but this worker has no visible GPU. Visible "
        f'devices: {_visible_devices(list_devices)}. Check the worker pool\'s machine '
        f'spec, or {_REQUEST_ANOTHER}')
  config = cluster.tf_config(environ)
  if not config.get('task'):
    raise ValueError(
        f'{cluster.TF_CONFIG_ENV} lists {workers} training workers but no task, so this '
        "process cannot tell which of them it is; set the task, e.g. \"task\": {\"type\": "
        '"worker", "index": 1}, or leave out the cluster to train on one machine.')
  task_type, index = cluster.task(environ, as_named=True)
  # The resolver names the accelerators: MultiWorkerMirroredStrategy would otherwise use
  # every GPU it finds, also for 'cpu'.
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(config['cluster']), task_type=task_type, task_id=index,
      rpc_layer=config.get('rpc_layer') or 'grpc',
      num_accelerators={'GPU': len(gpus)} if gpus else {})
  logging.info('Distribution %r over %d workers (%s): MultiWorkerMirroredStrategy on '
               "each worker's %s; this is %s %d.", name, workers, cluster.TF_CONFIG_ENV,
               f'{len(gpus)} GPUs' if gpus else 'CPU', task_type, index)
  try:
    return factory(resolver)
  except RuntimeError as error:
    if 'program startup' not in str(error):
      raise
    raise RuntimeError(
        'MultiWorkerMirroredStrategy must be built before TensorFlow runs its first op, '
        'but the runtime was already initialised in this process; build the strategy '
        f'first in the training entry point ({error})') from error


def _multi_worker_mirrored_strategy(
    resolver: tf.distribute.cluster_resolver.ClusterResolver) -> tf.distribute.Strategy:
  return tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)


def connect_and_initialize_tpu(
    resolver: tf.distribute.cluster_resolver.ClusterResolver) -> None:
  """Connects to the TPU cluster of `resolver` and initialises its TPU system.

  Connecting is a no-op for a TPU attached to this machine ('local').
  """
  tf.config.experimental_connect_to_cluster(resolver)
  tf.tpu.experimental.initialize_tpu_system(resolver)


def scaled_learning_rate(base_lr: float, global_batch: int,
                         reference_batch: int) -> float:
  """Scales `base_lr`, tuned at `reference_batch`, linearly to `global_batch`.

  The linear scaling rule (Goyal et al. 2017) keeps the update per example
  roughly constant when more replicas enlarge the global batch.

  Raises:
    ValueError: An argument is not positive.
  """
  if base_lr <= 0 or global_batch < 1 or reference_batch < 1:
    raise ValueError(
        f'base_lr ({base_lr}), global_batch ({global_batch}) and '
        f'reference_batch ({reference_batch}) must be positive.')
  return base_lr * global_batch / reference_batch


def is_tpu(strategy: tf.distribute.Strategy) -> bool:
  return isinstance(strategy, (tf.distribute.TPUStrategy,
                               tf.distribute.experimental.TPUStrategy))


def save_options(
    strategy: tf.distribute.Strategy) -> tf.saved_model.SaveOptions:
  """Returns the SaveOptions for saving a model built under `strategy`.

  Under a TPUStrategy the variables live on the TPU workers; the SavedModel
  must be written through the host ('/job:localhost'), which reaches the
  local or GCS path.
  """
  if is_tpu(strategy):
    return tf.saved_model.SaveOptions(experimental_io_device='/job:localhost')
  return tf.saved_model.SaveOptions()


def _checked_name(requested: object, source: str) -> str:
  """Returns `requested` normalised, or raises ValueError naming `source`."""
  name = requested.strip().lower() if isinstance(requested, str) else None
  if name not in DISTRIBUTIONS:
    raise ValueError(
        f'{source} is {requested!r}, which is not a distribution; choose one '
        f'of {", ".join(DISTRIBUTIONS)}.')
  return name


def _first_line(error: Exception) -> str:
  """The first line of an error's message; TPU errors list every kernel."""
  return str(error).split('\n', 1)[0]


def _visible_devices(list_devices: DeviceLister) -> list[str]:
  """Names of the visible CPU, GPU and TPU devices, for error messages."""
  return [device.name for device_type in ('CPU', 'GPU', 'TPU')
          for device in list_devices(device_type)]
