"""TFMA metrics of a quantile forecast: pinball loss, q-risk, interval coverage, per step.

The model's outputs are one [H] forecast per quantile ('p10', 'p50', 'p90', see
`trainer_module.export.quantile_key`) and the label is the window's [H] actuals, all in
original units. For each slice, over every (window, step) pair:

- `quantile_loss_pXX`: mean pinball loss max(q (y - f), (q - 1) (y - f)) at quantile q;
- `q_risk_pXX`: the normalized quantile loss of the TFT paper,
  2 sum(pinball) / sum(|y|);
- `coverage_pLO_pHI`: share of actuals inside [f_lo, f_hi] for the lowest and highest
  quantiles (P10-P90 by default);
- `mean_absolute_error_by_step`: the median forecast's MAE at each horizon step, [H].

The served quantiles are in order (`trainer_module.export.in_order_from_median`); how
often the model's or the calibrated ones were not is in the Trainer's calibration report.

`NaiveComparison` scores the naive forecasts that the model's Evaluator signature
returns beside its own (`trainer_module.naive_forecasts`) on the same windows:
- `naive_mae_<name>`: the MAE of each naive forecast ('naive_mae_repeat_last',
  'naive_mae_seasonal_24', ...);
- `mae_vs_best_naive`: the median forecast's MAE over the lowest of them; below 1 the
  model beats every naive forecast. The blessing rule bounds it.

Used from the EvalConfig by name: MetricConfig(class_name='QuantileForecastMetrics',
module='evaluation.metrics', config='{"quantiles": [0.1, 0.5, 0.9]}').
"""

import dataclasses
import math
from typing import Dict, List, Optional, Sequence

import apache_beam as beam
import numpy as np
from tensorflow_model_analysis.metrics import metric_types
from tensorflow_model_analysis.proto import config_pb2

from trainer_module.export import quantile_key
from trainer_module.naive_forecasts import OUTPUT_PREFIX as NAIVE_PREFIX

NAME = 'quantile_forecast'
MAE_VS_BEST_NAIVE = 'mae_vs_best_naive'  # also the NaiveComparison metric's name, so a
# MetricConfig threshold on it bounds this key
NAIVE_MAE_PREFIX = 'naive_mae_'
MAE_BY_STEP = 'mean_absolute_error_by_step'


def quantile_loss_name(quantile: float) -> str:
  return f'quantile_loss_{quantile_key(quantile)}'


def q_risk_name(quantile: float) -> str:
  return f'q_risk_{quantile_key(quantile)}'


def q_risk(forecasts: np.ndarray, actual: np.ndarray, quantile: float) -> float:
  """2 sum(pinball loss at `quantile`) / sum(|actual|) of forecasts and actuals in NumPy,
  as `QuantileForecastMetrics` computes it in TFMA; NaN when every actual is 0."""
  actual = np.asarray(actual, np.float64)
  error = actual - np.asarray(forecasts, np.float64)
  pinball = np.maximum(quantile * error, (quantile - 1.0) * error)
  total = np.abs(actual).sum()
  return float(2.0 * pinball.sum() / total) if total > 0 else math.nan


def coverage_name(quantiles: Sequence[float]) -> str:
  return f'coverage_{quantile_key(min(quantiles))}_{quantile_key(max(quantiles))}'


class QuantileForecastMetrics(metric_types.Metric):
  """All the quantile metrics of the module docstring, from one pass over the windows."""

  def __init__(self, quantiles: Sequence[float] = (0.1, 0.5, 0.9), name: str = NAME):
    quantiles = sorted(float(q) for q in quantiles)
    if len(quantiles) < 2 or 0.5 not in quantiles:
      raise ValueError(f'QuantileForecastMetrics needs at least two quantiles including '
                       f'0.5, got {quantiles}')
    super().__init__(_computations, quantiles=quantiles, name=name)


metric_types.register_metric(QuantileForecastMetrics)


def _computations(quantiles: List[float], name: str = NAME,
                  eval_config: Optional[config_pb2.EvalConfig] = None,
                  model_names: Optional[List[str]] = None
                  ) -> metric_types.MetricComputations:
  return _per_model(metric_names(quantiles), model_names,
                    lambda model_name, keys: _Combiner(quantiles, model_name, eval_config,
                                                       keys))


def _per_model(names: Sequence[str], model_names: Optional[List[str]], combiner
               ) -> metric_types.MetricComputations:
  """One computation per model of the metrics `names`, by `combiner(model_name, keys)`."""
  computations = []
  for model_name in model_names or ['']:
    keys = {name: metric_types.MetricKey(name=name, model_name=model_name) for name in names}
    computations.append(metric_types.MetricComputation(
        keys=list(keys.values()), preprocessors=None, combiner=combiner(model_name, keys)))
  return computations


def metric_names(quantiles: Sequence[float]) -> List[str]:
  """Every metric name the computation returns, in a stable order."""
  return ([quantile_loss_name(q) for q in quantiles] + [q_risk_name(q) for q in quantiles] +
          [coverage_name(quantiles), MAE_BY_STEP])


@dataclasses.dataclass
class _Sums:
  """Running sums over (window, step) pairs; arrays are allocated on the first window."""
  windows: int = 0
  abs_actual: float = 0.0
  covered: float = 0.0
  pinball: Optional[np.ndarray] = None       # [Q]
  abs_error_by_step: Optional[np.ndarray] = None  # [H]

  @property
  def count(self) -> int:
    """(window, step) pairs."""
    return self.windows * len(self.abs_error_by_step)


class _Combiner(beam.CombineFn):
  """Accumulates `_Sums` from each window's predictions and label."""

  def __init__(self, quantiles: List[float], model_name: str,
               eval_config: Optional[config_pb2.EvalConfig],
               keys: Dict[str, metric_types.MetricKey]):
    self._quantiles = np.asarray(quantiles)
    self._model_name = model_name
    self._eval_config = eval_config
    self._keys = keys

  def create_accumulator(self) -> _Sums:
    return _Sums()

  def add_input(self, sums: _Sums, element: metric_types.StandardMetricInputs) -> _Sums:
    model_name = self._model_name or None
    predictions = element.get_predictions(model_name=model_name)
    label = np.asarray(element.get_labels(model_name=model_name), np.float64).reshape(-1)
    forecasts = np.stack([np.asarray(predictions[quantile_key(q)], np.float64).reshape(-1)
                          for q in self._quantiles])  # [Q, H]
    if forecasts.shape[1] != label.shape[0]:
      raise ValueError(f'the forecast has {forecasts.shape[1]} steps but the label has '
                       f'{label.shape[0]}: the ModelSpec label_key must be the window '
                       'horizon actuals')
    error = label[None, :] - forecasts
    pinball = np.maximum(self._quantiles[:, None] * error,
                         (self._quantiles[:, None] - 1.0) * error)
    median = forecasts[int(np.flatnonzero(self._quantiles == 0.5)[0])]
    if sums.pinball is None:
      sums.pinball = np.zeros(len(self._quantiles))
      sums.abs_error_by_step = np.zeros(label.shape[0])
    sums.pinball += pinball.sum(axis=1)
    sums.abs_error_by_step += np.abs(label - median)
    sums.windows += 1
    sums.abs_actual += np.abs(label).sum()
    sums.covered += np.sum((label >= forecasts[0]) & (label <= forecasts[-1]))
    return sums

  def merge_accumulators(self, accumulators) -> _Sums:
    merged = _Sums()
    for sums in accumulators:
      if sums.pinball is None:
        continue
      if merged.pinball is None:
        merged.pinball = np.zeros_like(sums.pinball)
        merged.abs_error_by_step = np.zeros_like(sums.abs_error_by_step)
      merged.pinball += sums.pinball
      merged.abs_error_by_step += sums.abs_error_by_step
      for field in ('windows', 'abs_actual', 'covered'):
        setattr(merged, field, getattr(merged, field) + getattr(sums, field))
    return merged

  def extract_output(self, sums: _Sums) -> Dict[metric_types.MetricKey, object]:
    if sums.pinball is None:
      return {key: float('nan') for key in self._keys.values()}
    output = {}
    for q, pinball in zip(self._quantiles, sums.pinball):
      output[self._keys[quantile_loss_name(q)]] = pinball / sums.count
      output[self._keys[q_risk_name(q)]] = (2.0 * pinball / sums.abs_actual
                                           if sums.abs_actual else float('nan'))
    output[self._keys[coverage_name(self._quantiles)]] = sums.covered / sums.count
    output[self._keys[MAE_BY_STEP]] = sums.abs_error_by_step / sums.windows
    return output


class NaiveComparison(metric_types.Metric):
  """The naive forecasts' MAEs and the model's MAE relative to the best of them."""

  def __init__(self, naive_names: Sequence[str] = (), name: str = MAE_VS_BEST_NAIVE):
    if not naive_names:
      raise ValueError('NaiveComparison needs the names of the naive forecasts the model '
                       "returns, e.g. ['repeat_last', 'seasonal_24']")
    super().__init__(_naive_computations, naive_names=list(naive_names), name=name)


metric_types.register_metric(NaiveComparison)


def _naive_computations(naive_names: List[str], name: str = MAE_VS_BEST_NAIVE,
                        eval_config: Optional[config_pb2.EvalConfig] = None,
                        model_names: Optional[List[str]] = None
                        ) -> metric_types.MetricComputations:
  return _per_model([name] + [NAIVE_MAE_PREFIX + n for n in naive_names], model_names,
                    lambda model_name, keys: _NaiveCombiner(naive_names, model_name, keys))


class _NaiveCombiner(beam.CombineFn):
  """Sums of absolute errors of the median forecast and of each naive forecast [1 + N]."""

  def __init__(self, naive_names: List[str], model_name: str,
               keys: Dict[str, metric_types.MetricKey]):
    self._names = naive_names
    self._model_name = model_name
    self._keys = keys
    self._ratio_key = next(iter(keys.values()))

  def create_accumulator(self):
    return np.zeros(1 + len(self._names)), 0

  def add_input(self, accumulator, element: metric_types.StandardMetricInputs):
    sums, count = accumulator
    model_name = self._model_name or None
    predictions = element.get_predictions(model_name=model_name)
    label = np.asarray(element.get_labels(model_name=model_name), np.float64).reshape(-1)
    missing = [NAIVE_PREFIX + n for n in self._names if NAIVE_PREFIX + n not in predictions]
    if missing:  # the candidate's Evaluator signature returns them (the baseline is not asked)
      raise ValueError(f'the model scored has no outputs {missing} (it returns '
                       f'{sorted(predictions)}); score it through its Evaluator signature')
    forecasts = [predictions[quantile_key(0.5)]] + [predictions[NAIVE_PREFIX + n]
                                                    for n in self._names]
    errors = [np.abs(label - np.asarray(f, np.float64).reshape(-1)).sum() for f in forecasts]
    return sums + np.array(errors), count + label.size

  def merge_accumulators(self, accumulators):
    sums, count = self.create_accumulator()
    for more, more_count in accumulators:
      sums, count = sums + more, count + more_count
    return sums, count

  def extract_output(self, accumulator) -> Dict[metric_types.MetricKey, float]:
    sums, count = accumulator
    if not count:
      return {key: float('nan') for key in self._keys.values()}
    maes = sums / count
    output = {self._keys[NAIVE_MAE_PREFIX + n]: float(mae)
              for n, mae in zip(self._names, maes[1:])}
    best = float(maes[1:].min())
    output[self._ratio_key] = float(maes[0]) / best if best else float('inf')
    return output
