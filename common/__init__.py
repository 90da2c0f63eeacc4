"""What every layer of the pipeline uses; it imports none of them."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
