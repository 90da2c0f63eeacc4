"""Benchmarks: accuracy on reference data and speed; `python -m benchmarks.run_all`."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
