"""The TFX components of the pipeline and the libraries only they use.

Components, in pipeline order: `time_series_example_gen`, `anomaly_gate`, `windowing`,
`gbm_baseline`, `step_budget_trainer`, `scoped_evaluator`, `versioned_pusher` and
`vertex_pusher`, `interpretation_report`, `forecast_gen`, `backtest_scoring`. The other
modules are their libraries, named for what they hold: `input_rows`, `csv_chunks`,
`record_chunks`, `span_files` and `split_report` (ExampleGen's rows and report),
`window_builder` and `window_files` (Windowing's windows), `baseline_check` (which last
blessed model the Evaluator can compare), `delivered_forecasts` (ForecastGen's forecasts).
"""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
