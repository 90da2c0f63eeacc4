"""The TFX components of the pipeline and the libraries only they use."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
