"""How the Evaluator scores a model: the forecast metrics and the eval config with the
blessing rule."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
