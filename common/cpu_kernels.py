"""TensorFlow's oneDNN kernels on every x86-64 CPU, not only the newest.

TensorFlow 2.16 runs its oneDNN CPU kernels by default only on Linux x86 CPUs with AVX-512
VNNI or BF16, AVX-VNNI or AMX; on the others (AVX2 CPUs such as AMD Zen 3) it runs Eigen's
kernels, and there the TFT trained 30-45% faster with oneDNN (benchmarks/pages/speed.md,
"Against pytorch-forecasting").

TensorFlow reads the switch, `TF_ENABLE_ONEDNN_OPTS`, once, when it is first imported, so
every package of the project that can load TensorFlow first calls `prefer_onednn` in its
`__init__`, and the images set it too. A value the user set is kept; a process that
imported TensorFlow before any of the project's packages keeps TensorFlow's default.
"""

import os
import platform

SWITCH = 'TF_ENABLE_ONEDNN_OPTS'
X86_64_MACHINES = ('x86_64', 'amd64')  # platform.machine(), lower-cased


def prefer_onednn() -> None:
  """Asks TensorFlow for its oneDNN kernels on x86-64, unless `SWITCH` is set."""
  if platform.machine().lower() in X86_64_MACHINES:
    os.environ.setdefault(SWITCH, '1')
