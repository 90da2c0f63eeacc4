"""`tft-cloud`: the pipeline compiled for Vertex AI Pipelines (and Kubeflow), submitted and
scheduled."""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
