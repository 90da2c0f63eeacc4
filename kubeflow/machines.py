"""Which training machines Vertex AI runs and the Trainer can drive, checked before compiling.

From the Vertex AI custom-training compute page ("Configure compute resources for custom
training") and the Cloud TPU pages, as read for this TFX 1.16 / TensorFlow 2.16 stack:

- TPU: the Trainer's TPUStrategy resolves the TPU attached to its own VM
  (`TPUClusterResolver(tpu='local')`, `trainer_module.distribution`), so only slices of
  one host qualify: `cloud-tpu` with TPU_V2 or TPU_V3 and 8 cores (v2-8, v3-8; pods of 32
  cores and more span several hosts), or the TPU v5e VM types in their one-VM topologies.
  TPU v6e and later take no TensorFlow training on Vertex AI; TPU VM types take no
  accelerator_type or accelerator_count (the topology says it).
- GPU: accelerator-optimized machine types hold a fixed model and number of GPUs; N1
  types take P4, P100, T4 or V100 in the counts their vCPUs allow. GPU types this table
  does not list (newer ones of the SDK) are not checked beyond the SDK's own names.
"""

import re
from typing import Dict, Optional, Tuple

TPU_NODE_MACHINE = 'cloud-tpu'  # TPU v2/v3, sized by accelerator_type and count
TPU_NODE_TYPES = ('TPU_V2', 'TPU_V3')
TPU_NODE_CORES = 8  # v2-8, v3-8: one host
# TPU VM machine type -> its one-VM topology.
TPU_VM_TOPOLOGIES = {'ct5lp-hightpu-1t': '1x1', 'ct5lp-hightpu-4t': '2x2',
                     'ct5lp-hightpu-8t': '2x4'}
_NO_TENSORFLOW_TRAINING = re.compile(r'^(ct6e|tpu7x)-')
_TOPOLOGY = re.compile(r'^\d+(x\d+){1,2}$')

# Accelerator-optimized machine type -> (GPU, count): both fixed by the machine.
FIXED_GPU_MACHINES: Dict[str, Tuple[str, int]] = {
    **{f'a2-highgpu-{n}g': ('NVIDIA_TESLA_A100', n) for n in (1, 2, 4, 8)},
    'a2-megagpu-16g': ('NVIDIA_TESLA_A100', 16),
    **{f'a2-ultragpu-{n}g': ('NVIDIA_A100_80GB', n) for n in (1, 2, 4, 8)},
    **{f'a3-highgpu-{n}g': ('NVIDIA_H100_80GB', n) for n in (1, 2, 4, 8)},
    'a3-megagpu-8g': ('NVIDIA_H100_MEGA_80GB', 8),
    'a3-ultragpu-8g': ('NVIDIA_H200_141GB', 8),
    'a4-highgpu-8g': ('NVIDIA_B200', 8),
    'a4x-highgpu-4g': ('NVIDIA_GB200', 4),
    **{f'g2-standard-{n}': ('NVIDIA_L4', 1) for n in (4, 8, 12, 16, 32)},
    'g2-standard-24': ('NVIDIA_L4', 2), 'g2-standard-48': ('NVIDIA_L4', 4),
    'g2-standard-96': ('NVIDIA_L4', 8),
    'g4-standard-48': ('NVIDIA_RTX_PRO_6000', 1), 'g4-standard-96': ('NVIDIA_RTX_PRO_6000', 2),
    'g4-standard-192': ('NVIDIA_RTX_PRO_6000', 4),
    'g4-standard-384': ('NVIDIA_RTX_PRO_6000', 8),
}
N1_GPUS = ('NVIDIA_TESLA_P4', 'NVIDIA_TESLA_P100', 'NVIDIA_TESLA_T4', 'NVIDIA_TESLA_V100')
# N1 machine type -> GPU -> the counts it may hold (more vCPUs need more GPUs).
_N1_SMALL = {'NVIDIA_TESLA_P4': (1, 2, 4), 'NVIDIA_TESLA_P100': (1, 2, 4),
             'NVIDIA_TESLA_T4': (1, 2, 4), 'NVIDIA_TESLA_V100': (1, 2, 4, 8)}
_N1_16 = {**_N1_SMALL, 'NVIDIA_TESLA_V100': (2, 4, 8)}
_N1_32 = {'NVIDIA_TESLA_P4': (2, 4), 'NVIDIA_TESLA_P100': (2, 4), 'NVIDIA_TESLA_T4': (2, 4),
          'NVIDIA_TESLA_V100': (4, 8)}
_N1_LARGE = {'NVIDIA_TESLA_P4': (4,), 'NVIDIA_TESLA_T4': (4,), 'NVIDIA_TESLA_V100': (8,)}
N1_GPU_COUNTS: Dict[str, Dict[str, Tuple[int, ...]]] = {
    **{name: _N1_SMALL for name in ('n1-standard-4', 'n1-standard-8', 'n1-highmem-2',
                                     'n1-highmem-4', 'n1-highmem-8')},
    **{name: _N1_16 for name in ('n1-standard-16', 'n1-highmem-16', 'n1-highcpu-16')},
    **{name: _N1_32 for name in ('n1-standard-32', 'n1-highmem-32', 'n1-highcpu-32')},
    **{name: _N1_LARGE for name in ('n1-standard-64', 'n1-standard-96', 'n1-highmem-64',
                                     'n1-highmem-96', 'n1-highcpu-96')},
    'n1-highcpu-64': {**_N1_LARGE, 'NVIDIA_TESLA_P100': (4,)},
}


def check_training_machine(hardware: str, machine_type: str, accelerator_type: Optional[str],
                           accelerator_count: int, tpu_topology: Optional[str]) -> None:
  """Raises ValueError, saying what would work, for a machine Vertex or the Trainer refuses."""
  if hardware == 'cpu':
    if accelerator_type or accelerator_count or tpu_topology:
      raise ValueError("training hardware 'cpu' takes no accelerator_type, accelerator_count "
                       "or tpu_topology; use hardware 'gpu' or 'tpu' for an accelerator")
    return
  if hardware == 'tpu':  # first: it names the types the Trainer can drive, a few of the SDK's
    _check_tpu(machine_type, accelerator_type, accelerator_count, tpu_topology)
  if accelerator_type:
    _check_sdk_name(accelerator_type, hardware)
  if hardware == 'gpu':
    _check_gpu(machine_type, accelerator_type, accelerator_count, tpu_topology)


def _check_tpu(machine_type, accelerator_type, accelerator_count, tpu_topology) -> None:
  if tpu_topology and not _TOPOLOGY.match(tpu_topology):
    raise ValueError(f"training.tpu_topology '{tpu_topology}' is not of the form '2x2' or "
                     "'2x2x1'")
  one_host = (f"machine_type '{TPU_NODE_MACHINE}' with accelerator_type TPU_V2 or TPU_V3 and "
              f'accelerator_count {TPU_NODE_CORES}, or a TPU v5e VM type with its one-VM '
              f'topology ({_vm_choices()})')
  if machine_type == TPU_NODE_MACHINE:
    if not accelerator_type or accelerator_count < 1:
      raise ValueError(f"machine_type '{TPU_NODE_MACHINE}' needs accelerator_type (e.g. "
                       f'TPU_V3) and accelerator_count ({TPU_NODE_CORES})')
    if accelerator_type not in TPU_NODE_TYPES:
      raise ValueError(f"machine_type '{TPU_NODE_MACHINE}' runs TPU_V2 or TPU_V3, not "
                       f"{accelerator_type}; for TPU v5e use {_vm_choices()}")
    if accelerator_count != TPU_NODE_CORES:
      raise ValueError(
          f'{accelerator_count} {accelerator_type} cores is not one TPU host: the Trainer '
          f'drives the TPU attached to its own VM; use accelerator_count {TPU_NODE_CORES} '
          f'({accelerator_type[-2:].lower()}-8)')
    if tpu_topology:
      raise ValueError(f"machine_type '{TPU_NODE_MACHINE}' takes no tpu_topology; its size is "
                       'accelerator_count')
    return
  if _NO_TENSORFLOW_TRAINING.match(machine_type):
    raise ValueError(f"machine_type '{machine_type}' (TPU v6e or later) takes no TensorFlow "
                     f'training on Vertex AI; use {one_host}')
  if machine_type not in TPU_VM_TOPOLOGIES:
    raise ValueError(f"TPU machine_type '{machine_type}' is not one the Trainer can drive; "
                     f'use {one_host}')
  if accelerator_type or accelerator_count:
    raise ValueError(f"TPU VM machine_type '{machine_type}' takes no accelerator_type or "
                     'accelerator_count: its tpu_topology gives the chips')
  if not tpu_topology:
    raise ValueError(f"TPU machine_type '{machine_type}' needs tpu_topology "
                     f"('{TPU_VM_TOPOLOGIES[machine_type]}'), or use machine_type "
                     f"'{TPU_NODE_MACHINE}' with accelerator_type and accelerator_count")
  if tpu_topology != TPU_VM_TOPOLOGIES[machine_type]:
    raise ValueError(
        f"tpu_topology '{tpu_topology}' on '{machine_type}' spans several VMs, and the "
        'Trainer drives the TPU of its own VM only; use one of ' + _vm_choices())


def _vm_choices() -> str:
  return ', '.join(f"'{machine}' with '{topology}'"
                   for machine, topology in TPU_VM_TOPOLOGIES.items())


def _check_gpu(machine_type, accelerator_type, accelerator_count, tpu_topology) -> None:
  if not accelerator_type or accelerator_count < 1:
    raise ValueError("training hardware 'gpu' needs accelerator_type (e.g. NVIDIA_TESLA_T4) "
                     'and accelerator_count >= 1')
  if tpu_topology:
    raise ValueError("training hardware 'gpu' takes no tpu_topology")
  fixed = [f'{machine} ({count})' for machine, (gpu, count) in FIXED_GPU_MACHINES.items()
           if gpu == accelerator_type]
  if fixed:
    if FIXED_GPU_MACHINES.get(machine_type) != (accelerator_type, accelerator_count):
      raise ValueError(
          f'{accelerator_count} {accelerator_type} on {machine_type!r} is not a machine '
          f'Vertex AI runs: that GPU comes in fixed numbers with its machine type: '
          f"{', '.join(fixed)}")
    return
  if accelerator_type not in N1_GPUS:
    return  # a GPU of the SDK that the table does not know: Vertex will say
  counts = N1_GPU_COUNTS.get(machine_type, {}).get(accelerator_type)
  if counts is None:
    holders = sorted(machine for machine, gpus in N1_GPU_COUNTS.items()
                     if accelerator_type in gpus)
    raise ValueError(f"{accelerator_type} runs on N1 machine types ({', '.join(holders)}), "
                     f"not on '{machine_type}'")
  if accelerator_count not in counts:
    raise ValueError(f"'{machine_type}' holds {' or '.join(map(str, counts))} "
                     f'{accelerator_type}, not {accelerator_count}')


def _check_sdk_name(accelerator_type: str, hardware: str) -> None:
  """The name must be one of the installed Vertex SDK's AcceleratorType values."""
  from google.cloud.aiplatform_v1.types.accelerator_type import AcceleratorType

  family = 'TPU_' if hardware == 'tpu' else 'NVIDIA_'
  choices = [name for name in AcceleratorType.__members__ if name.startswith(family)]
  if accelerator_type not in choices:
    raise ValueError(f"accelerator_type '{accelerator_type}' is not a {hardware.upper()} type "
                     f'Vertex AI knows; use one of {choices}')
