"""Reading back which training windows the Windowing component's segments hold."""

from typing import List, Sequence, Tuple

import tensorflow as tf

from schema.dataset_spec import DatasetSpec
from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START, WINDOW_MASK, segment_feature_spec


def training_windows(files: Sequence[str], spec: DatasetSpec) -> List[Tuple[bytes, int]]:
  """(series key, forecast start) of each training window, in file then segment order."""
  layout = segment_feature_spec(spec)
  windows = []
  for record in tf.data.TFRecordDataset(list(files), 'GZIP'):
    parsed = tf.io.parse_single_example(
        record, {name: layout[name] for name in (SERIES_KEY, WINDOW_MASK, FORECAST_START)})
    key = parsed[SERIES_KEY].numpy()[0]
    windows.extend((key, int(start)) for start, kept in zip(
        parsed[FORECAST_START].numpy(), parsed[WINDOW_MASK].numpy()) if kept)
  return windows
