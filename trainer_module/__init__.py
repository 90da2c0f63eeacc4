"""The TFT, its training and export (`train.run_fn`)."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
