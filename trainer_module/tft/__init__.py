"""Temporal Fusion Transformer (Lim et al. 2021) as tf_keras layers.

One module per block of the paper's Figure 2. Shapes use these letters throughout:
  B  batch (windows)
  E  encoder steps (history)
  H  horizon (forecast steps)
  T  E + H, every time step of a window
  V  variables of one input group (Vs static, Vh history, Vf future)
  D  hidden size (the paper's d_model)
  Q  forecast quantiles
  N  flattened leading positions, e.g. B * T

Variable order in the selection weights:
  static:  static categoricals, then static reals
  history: target history, observed reals, known categoricals, known reals
  future:  known categoricals, then known reals, then the seasonal lag (if set)
"""

from trainer_module.tft.inputs import InputLayout
from trainer_module.tft.model import build_tft_model
from trainer_module.tft.model import compile_tft_model
from trainer_module.tft.model import TemporalFusionTransformer
