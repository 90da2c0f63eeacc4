"""A TFX component that writes the forecasts a run delivers (`components.delivered_forecasts`).

It forecasts with the model the run publishes: the Trainer's model when the Evaluator
blessed it, else the last blessed model; when there is none yet, with the Trainer's
model, and the report says that it is not blessed. The report also records what the
forecasts are expected to score (that model's figures on the Evaluator's judged windows,
held out when the split has a test period), which later runs score them against
(`components.forecast_scoring`), and each output names the pipeline that made it (the
custom property `forecasts_of`), so that a later run's query finds its own pipeline's
forecasts only (on Vertex AI a custom artifact type is compiled into the query as any
`tfx.Artifact`: the key is the forecasts' own).
"""

import logging
import os
from typing import Dict, Mapping, Optional

import tensorflow as tf
from tfx import types
from tfx import v1 as tfx
from tfx.types import artifact_utils, standard_artifacts
from tfx.utils import path_utils

from components import delivered_forecasts
from components import input_rows
from components import split_report
from evaluation import results
from schema.dataset_spec import DatasetSpec, Role
from serving import csv_rows
from trainer_module import export


FORECASTS_OF_KEY = 'forecasts_of'  # the pipeline whose forecasts an output holds


def forecasts_query_scope(pipeline_name: str) -> str:
  """The filter term that keeps a Vertex metadata query to `pipeline_name`'s forecasts."""
  return f'metadata.{FORECASTS_OF_KEY}.string_value="{pipeline_name}"'


class Forecasts(types.Artifact):
  """A directory with `forecasts.csv`, `forecasts.parquet`, `naive_forecasts.parquet`,
  `not_forecast.csv` and `forecast_report.json`."""
  # '<namespace>.<Type>': the form KubeflowV2DagRunner requires of custom artifact types.
  TYPE_NAME = 'tft.Forecasts'


def times_as_written_or_utc(examples_uri: str, spec: DatasetSpec,
                             instants: Mapping[str, int]) -> Dict[str, str]:
  """How the files ExampleGen read write each series' time at `instants`, for the UTC
  offset the examples do not keep; {} (UTC) when those files cannot be read again."""
  try:
    return input_rows.times_as_written(split_report.files_read(examples_uri), spec, instants)
  except Exception as error:  # pylint: disable=broad-except
    logging.warning('Forecasts: the data files could not be read again for the UTC offset '
                    'of their times (%s); the forecast times are written in UTC.', error)
    return {}


def _model_dir(model: types.Artifact) -> str:
  return path_utils.serving_model_path(model.uri, path_utils.is_old_model_artifact(model))


EXPECTED_FIGURES = ('mean_absolute_error', 'coverage_p10_p90')


def expectation(evaluation_uri: str, judged: str, baseline: bool) -> Dict[str, object]:
  """What the forecasting model scored on the `judged` windows of the run's Evaluator (the
  last blessed model's figures with `baseline`): {'split', 'mean_absolute_error',
  'coverage_p10_p90'}, None where it was not scored."""
  figures = results.split_metrics(evaluation_uri, baseline=baseline).get(judged, {})
  return {'split': judged, **{name: figures.get(name) for name in EXPECTED_FIGURES}}


@tfx.dsl.components.component
def ForecastGen(  # pylint: disable=invalid-name
    model: tfx.dsl.components.InputArtifact[standard_artifacts.Model],
    model_blessing: tfx.dsl.components.InputArtifact[standard_artifacts.ModelBlessing],
    examples: tfx.dsl.components.InputArtifact[standard_artifacts.Examples],
    forecasts: tfx.dsl.components.OutputArtifact[Forecasts],
    baseline_model: tfx.dsl.components.InputArtifact[standard_artifacts.Model] = None,
    evaluation: tfx.dsl.components.InputArtifact[standard_artifacts.ModelEvaluation] = None,
    future_file: tfx.dsl.components.Parameter[str] = '',
    ends_apart: tfx.dsl.components.Parameter[bool] = False,
    judged_split: tfx.dsl.components.Parameter[str] = 'test',
    pipeline_name: tfx.dsl.components.Parameter[str] = '',
) -> None:
  """Forecasts every series of `examples` (all splits) H steps past its last row.

  Args:
    future_file: a CSV of the known columns over the horizon (`tft-predict`'s horizon
      rows); '' when the spec declares no known columns.
    ends_apart: the series end at different times by design (the split's periods are
      placed from each series' last row): each is forecast from its own end, none is
      left out for ending before the others (`delivered_forecasts.make_forecasts`).
    judged_split: the split whose windows the Evaluator judged on (`evaluation`'s figures
      there are the forecasts' expectation).
    pipeline_name: written on the output, for the query that finds it again.
  """
  blessed = bool(model_blessing.get_int_custom_property('blessed'))
  chosen: Optional[types.Artifact] = model if blessed or baseline_model is None else (
      baseline_model)
  model_dir = _model_dir(chosen)
  spec = export.read_dataset_spec(model_dir)
  files = []
  for split in artifact_utils.decode_split_names(examples.split_names):
    files += tf.io.gfile.glob(os.path.join(examples.uri, f'Split-{split}', '*'))
  series = delivered_forecasts.series_from_examples(files, spec, keep=spec.encoder_steps)
  # The future file's rows give the times when there are known columns; else the data's
  # own notation does.
  if not spec.columns_with(Role.KNOWN):
    series = delivered_forecasts.with_last_times_as_written(series, times_as_written_or_utc(
        examples.uri, spec, delivered_forecasts.last_instants(series, spec)), spec)
  future = csv_rows.read_series(future_file, spec, future=True) if future_file else {}
  result = delivered_forecasts.make_forecasts(model_dir, series, future, spec, future_file,
                                      ends_apart=ends_apart)
  delivered_forecasts.write_forecasts(result, spec, forecasts.uri, report={
      'model': model_dir, 'model_blessed': blessed or chosen is not model,
      'future_file': future_file or None, 'calendar_time_zone': spec.time_zone or 'UTC',
      'expected': expectation(evaluation.uri, judged_split, baseline=chosen is not model)
                  if evaluation is not None else None})
  forecasts.set_string_custom_property(FORECASTS_OF_KEY, pipeline_name)
