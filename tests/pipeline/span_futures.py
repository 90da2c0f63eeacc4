"""The future file a span of the default data is forecast with, for the retraining tests."""

import pandas as pd


def span_future(rows: pd.DataFrame, start: pd.Timestamp, horizon: int) -> pd.DataFrame:
  """The future file of a span ending at `start`: the known price over the `horizon`
  hours after it, the load and temperature empty."""
  times = pd.to_datetime(rows['timestamp'])
  future = rows[(times >= start) & (times < start + pd.Timedelta(hours=horizon))].copy()
  future[['load', 'temperature']] = ''
  return future
