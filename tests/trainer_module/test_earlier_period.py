"""trainer_module.earlier_period: the period before the eval period, read from the windows."""

import numpy as np
import pytest
import tensorflow as tf

from schema.features import SERIES_KEY
from schema.window_layout import FORECAST_START, WINDOW_MASK, segment_feature_spec
from trainer_module import earlier_period, window_inputs

HOUR = 3600


def _eval_starts(tiny):
  parsed = tf.io.parse_example(tf.constant(tiny.eval_windows), {
      SERIES_KEY: tf.io.FixedLenFeature([1], tf.string),
      FORECAST_START: tf.io.FixedLenFeature([1], tf.int64)})
  return parsed[SERIES_KEY].numpy()[:, 0], parsed[FORECAST_START].numpy()[:, 0]


def _training_windows(tiny):
  """(series key, forecast start) of every training window of the tiny segments."""
  parsing = {k: v for k, v in segment_feature_spec(tiny.spec).items()
             if k in (SERIES_KEY, WINDOW_MASK, FORECAST_START)}
  kept = []
  for batch in window_inputs.read_records(tiny.train_files).batch(256):
    parsed = {k: v.numpy() for k, v in tf.io.parse_example(batch, parsing).items()}
    for key, mask, starts in zip(parsed[SERIES_KEY][:, 0], parsed[WINDOW_MASK],
                                 parsed[FORECAST_START]):
      kept += [(key, int(start)) for start in starts[mask == 1]]
  return kept


def test_the_earlier_period_is_as_long_as_the_eval_period_just_before_it(tiny):
  period = earlier_period.of_eval_windows(tiny.eval_files, tiny.spec)
  series, starts = _eval_starts(tiny)
  horizon = tiny.spec.horizon * HOUR
  for key in set(series):
    own = np.sort(starts[series == key])
    forecasts = sorted(int(text.split(b'@')[1]) for text in period.forecasts
                       if text.split(b'@')[0] == key)
    # As many windows as the eval period holds, at its stride, ending where it begins.
    assert len(forecasts) == len(own)
    assert np.diff(forecasts).tolist() == np.diff(own).tolist()
    assert forecasts[-1] + horizon == own[0]
    # The copy's windows end before the earlier period's first forecast.
    assert period.train_until[period.series.index(key)] + horizon == forecasts[0]


def test_the_filters_keep_the_windows_of_the_period_and_those_before_it(tiny):
  period = earlier_period.of_eval_windows(tiny.eval_files, tiny.spec)
  windows = _training_windows(tiny)
  first = {key: min(int(t.split(b'@')[1]) for t in period.forecasts if t.startswith(key + b'@'))
           for key in period.series}
  in_period = [w for w in windows if w[0] + b'@' + str(w[1]).encode() in period.forecasts]
  before = [w for w in windows if w[1] + tiny.spec.horizon * HOUR <= first[w[0]]]
  assert in_period and before and len(before) < len(windows)

  assert earlier_period.count(tiny.train_files, tiny.spec, period.windows(),
                              period.training_windows()) == (len(in_period), len(before))
  # The reader keeps the same windows: their actuals are those of the period's windows.
  read = np.concatenate([label.numpy() for _, label in window_inputs.windows_in_order(
      tiny.train_files, tiny.spec, segments=True, only=period.windows())])
  assert read.shape == (len(in_period), tiny.spec.horizon)


def test_no_eval_window_means_no_earlier_period(tiny, tmp_path):
  empty = tmp_path / 'empty.gz'
  with tf.io.TFRecordWriter(str(empty), options='GZIP'):
    pass
  assert earlier_period.of_eval_windows([str(empty)], tiny.spec) is None


@pytest.mark.parametrize('offset', [0, 5 * HOUR])
def test_forecast_starts_keep_their_distance_from_the_grid(tiny, tmp_path, offset):
  """Windows whose starts sit off the UTC grid's steps (a time zone's offset) are still
  found: the earlier period's starts carry the same offset."""
  spec = tiny.spec
  key = b'station_a'
  starts = [1_000_000 * 3600 + offset + step * spec.horizon * HOUR for step in range(3)]
  path = tmp_path / 'eval.gz'
  with tf.io.TFRecordWriter(str(path), options='GZIP') as writer:
    for start in starts:
      writer.write(tf.train.Example(features=tf.train.Features(feature={
          SERIES_KEY: tf.train.Feature(bytes_list=tf.train.BytesList(value=[key])),
          FORECAST_START: tf.train.Feature(int64_list=tf.train.Int64List(value=[start]))})
      ).SerializeToString())
  period = earlier_period.of_eval_windows([str(path)], spec)
  length = 3 * spec.horizon * HOUR
  assert period.forecasts == tuple(key + b'@' + str(start - length).encode()
                                   for start in starts)
