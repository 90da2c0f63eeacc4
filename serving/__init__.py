"""The serving client: forecasts and reports from a published model (`tft-predict`,
`tft-report`), and finding that model."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
