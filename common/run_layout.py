"""Where local runs write: `<output>/<data set name>/` holds the run's data, metadata,
artifacts, published models and last summary. Read by the runner and by the tools that
find a run's model (`tft-predict`, `tft-report`); on Vertex AI the published models go
under the pipeline root instead (`kubeflow.deployment`)."""

DEFAULT_OUTPUT = 'runs'
GENERATED_DATASET = 'synthetic'  # the built-in data set whose data `make run` generates
SERVING_MODEL_DIR = 'serving_model'  # the published models, one directory per version
FORECAST_LEDGER_DIR = 'forecast_ledger'  # beside them: forecasts kept and scored
RUN_SUMMARY_FILE = 'run_summary.txt'  # the last run's summary
METADATA_FILE = 'metadata.sqlite'  # the ML Metadata store of the data set's runs
BACKTEST_DIR = 'backtest'  # `tft-pipeline backtest`'s origins, forecasts and report
