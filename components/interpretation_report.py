"""A TFX component that writes an interpretation report of the trained model.

It runs the Trainer's model over the windows of one split of the Windowing output
(`trainer_module.interpretation`) and writes variable importance, attention and forecast
figures with `index.html` and `report.json` (`serving.report_writer`) into an
`InterpretationReport` artifact.
"""

import os

from tfx import types
from tfx import v1 as tfx
from tfx.types import artifact_utils, standard_artifacts
from tfx.utils import path_utils

from serving import report_writer
from trainer_module import interpretation


class InterpretationReport(types.Artifact):
  """A directory with `index.html`, `report.json` and the report's PNG figures."""
  # '<namespace>.<Type>': the form KubeflowV2DagRunner requires of custom artifact types.
  TYPE_NAME = 'tft.InterpretationReport'


@tfx.dsl.components.component
def InterpretationReportGen(  # pylint: disable=invalid-name
    model: tfx.dsl.components.InputArtifact[standard_artifacts.Model],
    examples: tfx.dsl.components.InputArtifact[standard_artifacts.Examples],
    report: tfx.dsl.components.OutputArtifact[InterpretationReport],
    split: tfx.dsl.components.Parameter[str] = 'eval',
    max_windows: tfx.dsl.components.Parameter[int] = 2000,
    plotted_series: tfx.dsl.components.Parameter[int] = 4,
) -> None:
  """Writes the report of `model` on the first `max_windows` windows of `split`.

  Raises:
    ValueError: `examples` has no such split, or it has no windows.
  """
  splits = artifact_utils.decode_split_names(examples.split_names)
  if split not in splits:
    raise ValueError(f"the windows artifact has no split '{split}' (it has {splits}); "
                     'set split to one of them')
  model_dir = path_utils.serving_model_path(model.uri, path_utils.is_old_model_artifact(model))
  windows_pattern = os.path.join(examples.uri, f'Split-{split}', '*')
  windows = interpretation.read_windows([windows_pattern], max_windows)
  report_writer.write_report(
      interpretation.interpret(model_dir, windows), report.uri,
      title=f'Model interpretation on the {split} windows',
      sources={'model': model_dir, 'windows': windows_pattern},
      series_count=plotted_series)
