"""A TFX component that scores a compiled backtest's origins and writes its report.

A backtest compiled into one pipeline (`pipeline.pipeline.create_backtest_pipeline`) fits
each origin in a branch of its own; this step, after all of them, scores every origin's
test windows (its TFT, its refit if any, LightGBM and the naive forecasts:
`evaluation.backtest_scores`) and writes what the local backtest writes
(`evaluation.backtest_report`) into a `BacktestReport` artifact. Its inputs are named per
origin (`windows_1`, `model_1`, `gbm_1`, `refit_1`, ...), so its spec class is made for
the number of origins.
"""

import json
import os
from typing import Any, Dict, List, Type

from tfx import types
from tfx.dsl.components.base import base_component, base_executor, executor_spec
from tfx.types import artifact_utils, standard_artifacts
from tfx.types.component_spec import ChannelParameter, ExecutionParameter
from tfx.utils import path_utils

from components.gbm_baseline import FORECASTS_FILE, BaselineEvaluation
from schema.dataset_spec import DatasetSpec

WINDOWS, MODEL, GBM, REFIT = 'windows', 'model', 'gbm', 'refit'  # input names, + _<origin>


class BacktestReport(types.Artifact):
  """A directory with `forecasts.csv`, `forecasts.parquet`, `summary.json`, `index.html`
  and its figures."""
  # '<namespace>.<Type>': the form KubeflowV2DagRunner requires of custom artifact types.
  TYPE_NAME = 'tft.BacktestReport'


def input_name(kind: str, origin: int) -> str:
  return f'{kind}_{origin}'


def spec_class(origins: int) -> Type[types.ComponentSpec]:
  """The component spec of a backtest of `origins` origins."""
  inputs = {}
  for origin in range(1, origins + 1):
    inputs.update({
        input_name(WINDOWS, origin): ChannelParameter(type=standard_artifacts.Examples),
        input_name(MODEL, origin): ChannelParameter(type=standard_artifacts.Model),
        input_name(GBM, origin): ChannelParameter(type=BaselineEvaluation),
        input_name(REFIT, origin): ChannelParameter(type=standard_artifacts.Model,
                                                    optional=True)})
  return type(f'BacktestScoringSpec{origins}', (types.ComponentSpec,), {
      'PARAMETERS': {'dataset_spec': ExecutionParameter(type=str),
                     'quantiles': ExecutionParameter(type=str),  # JSON list
                     'origin_starts': ExecutionParameter(type=str)},  # JSON {origin: time}
      'INPUTS': inputs,
      'OUTPUTS': {'report': ChannelParameter(type=BacktestReport)}})


class Executor(base_executor.BaseExecutor):
  """Scores every origin and writes the report."""

  def Do(self, input_dict: Dict[str, List[types.Artifact]],
         output_dict: Dict[str, List[types.Artifact]],
         exec_properties: Dict[str, Any]) -> None:
    from evaluation import backtest_report, backtest_scores  # matplotlib, pandas

    spec = DatasetSpec.from_json(exec_properties['dataset_spec'])
    quantiles = json.loads(exec_properties['quantiles'])
    starts = {int(origin): start
              for origin, start in json.loads(exec_properties['origin_starts']).items()}
    uri = lambda kind, origin: artifact_utils.get_single_uri(
        input_dict[input_name(kind, origin)])
    frames = []
    for origin in sorted(starts):
      refit = input_dict.get(input_name(REFIT, origin))
      frames.append(backtest_scores.scored_rows(
          origin, uri(WINDOWS, origin), path_utils.serving_model_path(uri(MODEL, origin)),
          os.path.join(uri(GBM, origin), FORECASTS_FILE), spec, quantiles,
          refit_dir=path_utils.serving_model_path(refit[0].uri) if refit else None))
    report = artifact_utils.get_single_instance(output_dict['report'])
    summary = backtest_report.write_all(frames, starts, quantiles, report.uri, spec)
    for line in backtest_scores.verdict(summary):
      print(f'[backtest] {line}')


class _BacktestScoring(base_component.BaseComponent):
  """Scores a compiled backtest's origins; a subclass per number of origins sets its
  SPEC_CLASS (`backtest_scoring`)."""

  SPEC_CLASS = types.ComponentSpec
  EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(Executor)


def backtest_scoring(channels: Dict[str, types.BaseChannel], spec: DatasetSpec,
                     quantiles: List[float],
                     origin_starts: Dict[int, str]) -> base_component.BaseComponent:
  """The scoring step of a compiled backtest.

  Args:
    channels: for each origin n, `windows_n`, `model_n`, `gbm_n` and, with a refit,
      `refit_n`.
    spec: the data set's spec.
    quantiles: the models' quantiles.
    origin_starts: origin number -> its first forecast step, as written.
  """
  origins = len(origin_starts)
  component_class = type(f'BacktestScoring{origins}', (_BacktestScoring,),
                         {'SPEC_CLASS': spec_class(origins), '__module__': __name__})
  return component_class(spec=component_class.SPEC_CLASS(
      dataset_spec=spec.to_json(), quantiles=json.dumps(list(quantiles)),
      origin_starts=json.dumps({str(k): v for k, v in origin_starts.items()}),
      report=types.Channel(type=BacktestReport), **channels)).with_id('BacktestScoring')
