"""`tft-pipeline`: the one pipeline definition, its local runner, `init` and `backtest`."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
