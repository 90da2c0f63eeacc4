"""What an Evaluator output says of the models it scored: their metrics per slice.

The Evaluator's slices (`evaluation.eval_config`) are the windows of each split and of
each split and series; the candidate is the run's model, the baseline the last blessed.
"""

from typing import Dict, List, Optional, Tuple, Union

import tensorflow_model_analysis as tfma

from evaluation.eval_config import BASELINE, CANDIDATE, split_slice
from schema.time_split import EVAL_SPLIT, TEST_SPLIT


def split_metrics(evaluation_uri: str, baseline: bool = False
                  ) -> Dict[str, Dict[str, Union[float, List[float]]]]:
  """The candidate model's (or with `baseline`, the last blessed model's) metrics on the
  windows of each split an Evaluator scored."""
  by_slice = _model_metrics(evaluation_uri, (BASELINE,) if baseline else ('', CANDIDATE))
  return {split: by_slice[split_slice(split)] for split in (EVAL_SPLIT, TEST_SPLIT)
          if split_slice(split) in by_slice}


def candidate_metrics(evaluation_uri: str
                      ) -> Dict[Tuple, Dict[str, Union[float, List[float]]]]:
  """The candidate model's metrics per slice, keyed by (column, value) pairs in column
  order: a split's windows are (('window_split', 'test'),), a split's windows of one
  series (('series_key_xf', 'A'), ('window_split', 'test')). Array metrics (per horizon
  step) are lists."""
  return _model_metrics(evaluation_uri, ('', CANDIDATE))


def baseline_mae(evaluation_uri: str, judged: str) -> Optional[float]:
  """The last blessed model's MAE on the `judged` split's windows, if the Evaluator scored
  it."""
  return _model_metrics(evaluation_uri, (BASELINE,)).get(split_slice(judged), {}).get(
      'mean_absolute_error')


def _model_metrics(evaluation_uri: str, model_names: Tuple[str, ...]
                   ) -> Dict[Tuple, Dict[str, Union[float, List[float]]]]:
  """The metrics per slice of the model named one of `model_names`, as
  `candidate_metrics` gives them."""
  result = {}
  for metrics_for_slice in tfma.load_metrics(evaluation_uri):
    slice_key = tuple(sorted((s.column, _slice_value(s))
                             for s in metrics_for_slice.slice_key.single_slice_keys))
    values = {item.key.name: _metric_value(item.value)
              for item in metrics_for_slice.metric_keys_and_values
              if not item.key.is_diff and item.key.model_name in model_names}
    if values:
      result.setdefault(slice_key, {}).update(values)
  return result


def _slice_value(single_slice_key) -> Union[str, int, float]:
  kind = single_slice_key.WhichOneof('kind')
  value = getattr(single_slice_key, kind)
  return value.decode() if isinstance(value, bytes) else value


def _metric_value(value) -> Union[float, List[float]]:
  if value.HasField('array_value'):
    array = value.array_value
    return [float(v) for v in (array.float64_values or array.float32_values or
                               array.int64_values or array.int32_values)]
  return value.double_value.value
