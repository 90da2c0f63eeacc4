"""The TFX components of the pipeline and the libraries only they use.

Components, in pipeline order: `time_series_example_gen`, `anomaly_gate`, `drift_check`,
`windowing`, `gbm_baseline`, `step_budget_trainer`, `scoped_evaluator`, `versioned_pusher`
and `vertex_pusher`, `interpretation_report`, `forecast_gen`, `forecast_scoring`,
`backtest_scoring`. The other modules are their libraries, named for what they hold:
`input_rows`, `csv_chunks`, `record_chunks`, `span_files` and `split_report` (ExampleGen's
rows and report), `window_builder` and `window_files` (Windowing's windows),
`baseline_check` (which last blessed model the Evaluator can compare),
`delivered_forecasts` (ForecastGen's forecasts), `forecast_ledger` and `ledger_page`
(ForecastScoring's ledger and page).
"""

from common import cpu_kernels

cpu_kernels.prefer_onednn()
