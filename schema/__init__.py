from common import cpu_kernels

cpu_kernels.prefer_onednn()
