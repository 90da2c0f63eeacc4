"""The data contract every layer reads: the dataset spec and its file, time grids and
splits, window layouts and the model's settings."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
