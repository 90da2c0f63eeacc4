"""The interpretation report: its numbers against the model in memory, its files, its
TFX component (run through its executor, compiled for Vertex) and `tft-report`."""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from matplotlib import image
from tfx import v1 as tfx
from tfx.types import artifact_utils, standard_artifacts

from serving import report_writer
from components.interpretation_report import InterpretationReport, InterpretationReportGen
from schema.selection_variables import selection_variables
from schema.window_layout import TARGET_FUTURE
from serving import report
from tests.fixtures.exported_model import MODEL_CONFIG
from trainer_module import export, interpretation, train, window_inputs
from trainer_module.tft import model as tft_model
from trainer_module.tft.ensemble import TFTEnsemble
from trainer_module.tft.model import build_tft_model

pytestmark = pytest.mark.slow(seconds=30)  # runs a pipeline or trains a model

FIGURES = (report_writer.IMPORTANCE_PNG, report_writer.ATTENTION_PNG, 'forecast_1.png',
           'forecast_2.png')


@pytest.fixture(scope='module')
def interpreted(tiny, exported):
  return interpretation.interpret(exported.model_dir, tiny.eval_windows)


def _in_memory(model, windows, spec):
  inputs, label = window_inputs.parse_windows(tf.constant(windows), spec)
  outputs = model(inputs, training=False)
  return {key: value.numpy() for key, value in outputs.items()}, label.numpy()


def test_importance_and_attention_are_the_models_means(tiny, exported, interpreted):
  outputs, label = _in_memory(exported.model, tiny.eval_windows, tiny.spec)
  expected = {'static': outputs[tft_model.STATIC_WEIGHTS].mean(axis=0),
              'history': outputs[tft_model.HISTORY_WEIGHTS].mean(axis=(0, 1)),
              'future': outputs[tft_model.FUTURE_WEIGHTS].mean(axis=(0, 1))}

  for group, names in selection_variables(tiny.spec).items():
    assert list(interpreted.importance[group]) == list(names)
    weights = np.array(list(interpreted.importance[group].values()))
    np.testing.assert_allclose(weights, expected[group], rtol=1e-4, atol=1e-6)
    assert weights.sum() == pytest.approx(1.0, abs=1e-5)
  np.testing.assert_allclose(interpreted.attention, outputs[tft_model.ATTENTION].mean(axis=0),
                             rtol=1e-4, atol=1e-6)
  np.testing.assert_allclose(interpreted.forecasts['p50'],
                             outputs[tft_model.QUANTILES][:, :, 1], rtol=1e-4, atol=1e-4)
  np.testing.assert_array_equal(interpreted.target_future, label)
  assert list(interpreted.forecasts) == ['p10', 'p50', 'p90']


def test_an_ensemble_with_the_seasonal_lag_names_its_future_input(tiny, tmp_path):
  transform_output = tft.TFTransformOutput(tiny.transform_dir)
  layout = window_inputs.input_layout(tiny.spec, transform_output)
  config = dataclasses.replace(train.model_config_from(MODEL_CONFIG), seasonal_lag=4)
  model = TFTEnsemble([build_tft_model(layout, config, name=f'member_{index}')
                       for index in range(2)])
  model_dir = str(tmp_path / 'model')
  export.save_model(model, layout, tiny.spec, config.quantiles, transform_output, model_dir)

  interpreted = interpretation.interpret(model_dir, tiny.eval_windows)

  future = interpreted.importance['future']
  known = selection_variables(tiny.spec)['future']
  assert list(future) == [*known, f'{tiny.spec.target_column} (4 steps before)']
  outputs, _ = _in_memory(model, tiny.eval_windows, tiny.spec)
  np.testing.assert_allclose(list(future.values()),
                             outputs[tft_model.FUTURE_WEIGHTS].mean(axis=(0, 1)),
                             rtol=1e-4, atol=1e-6)


def test_attention_rows_sum_to_one_over_the_steps_up_to_each_horizon_step(tiny, interpreted):
  encoder, horizon = tiny.spec.encoder_steps, tiny.spec.horizon
  attention = interpreted.attention

  assert attention.shape == (horizon, encoder + horizon)
  np.testing.assert_allclose(attention.sum(axis=1), 1.0, atol=1e-5)
  for step in range(horizon):
    assert attention[step, encoder + step + 1:] == pytest.approx(0.0, abs=1e-6)


def test_report_writes_figures_numbers_and_a_page(tiny, interpreted, tmp_path):
  written = report_writer.write_report(interpreted, str(tmp_path), title='tiny',
                                       sources={'model': 'm'}, series_count=2)

  for name in FIGURES:
    pixels = image.imread(str(tmp_path / name))
    assert pixels.ndim == 3 and min(pixels.shape[:2]) > 100, name
    assert pixels.std() > 0.01, f'{name} is blank'
  on_disk = json.loads((tmp_path / report_writer.REPORT_JSON).read_text())
  assert on_disk == json.loads(json.dumps(written))
  assert on_disk['windows'] == len(tiny.eval_windows) and on_disk['series'] == 2
  for group, weights in on_disk['variable_importance'].items():
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-5), group
  np.testing.assert_allclose(np.sum(on_disk['attention']['by_horizon_step'], axis=1), 1.0,
                             atol=1e-5)
  assert on_disk['attention']['step_offsets'][0] == -tiny.spec.encoder_steps
  assert [plot['series'] for plot in on_disk['forecast_plots']] == ['station_00', 'station_01']
  page = (tmp_path / report_writer.INDEX_HTML).read_text()
  for name in FIGURES:
    assert f'src="{name}"' in page
  for name in interpreted.importance['history']:
    assert f'<td>{name}</td>' in page


def _artifacts(tiny, exported, report_dir):
  model = standard_artifacts.Model()
  model.uri = exported.artifact_dir
  examples = standard_artifacts.Examples()
  examples.uri = os.path.dirname(os.path.dirname(tiny.eval_files[0]))  # .../Split-eval/*
  examples.split_names = artifact_utils.encode_split_names(['train', 'eval'])
  output = InterpretationReport()
  output.uri = report_dir
  os.makedirs(report_dir)
  return {'model': [model], 'examples': [examples]}, {'report': [output]}


def test_component_writes_the_report_into_its_artifact(tiny, exported, tmp_path):
  inputs, outputs = _artifacts(tiny, exported, str(tmp_path / 'report'))
  executor = InterpretationReportGen.EXECUTOR_SPEC.executor_class()

  executor.Do(inputs, outputs, {'split': 'eval', 'max_windows': 3, 'plotted_series': 1})

  written = json.loads((tmp_path / 'report' / report_writer.REPORT_JSON).read_text())
  assert written['windows'] == 3
  assert [plot['figure'] for plot in written['forecast_plots']] == ['forecast_1.png']
  assert written['sources']['model'] == exported.model_dir
  assert (tmp_path / 'report' / report_writer.INDEX_HTML).exists()
  with pytest.raises(ValueError, match="no split 'test'"):
    executor.Do(inputs, outputs, {'split': 'test', 'max_windows': 3, 'plotted_series': 1})


def test_report_command(tiny, exported, tmp_path, capsys):
  output = tmp_path / 'report'

  assert report.main(['--model-dir', exported.serving_dir, '--windows', *tiny.eval_files,
                      '--output-dir', str(output), '--series', '1']) == 0
  assert 'wrote' in capsys.readouterr().out
  written = json.loads((output / report_writer.REPORT_JSON).read_text())
  assert written['sources']['model'] == exported.version_dir
  assert written['windows'] == len(tiny.eval_windows)
  assert report.main(['--model-dir', exported.serving_dir, '--windows',
                      str(tmp_path / 'none' / '*'), '--output-dir', str(output)]) == 2
  assert 'no window files match' in capsys.readouterr().err
  # Windows of another horizon (another run's): named, not a parsing traceback.
  example = tf.train.Example.FromString(tiny.eval_windows[0])
  del example.features.feature[TARGET_FUTURE].float_list.value[-1]
  other = tmp_path / 'other.tfrecord.gz'
  with tf.io.TFRecordWriter(str(other), options='GZIP') as writer:
    writer.write(example.SerializeToString())
  assert report.main(['--model-dir', exported.serving_dir, '--windows', str(other),
                      '--output-dir', str(output)]) == 2
  spec = tiny.spec
  assert (f'the windows hold {spec.encoder_steps} history and {spec.horizon - 1} forecast '
          f'steps; the model in {exported.version_dir} reads {spec.encoder_steps} and '
          f'{spec.horizon}') in capsys.readouterr().err



def test_component_compiles_for_vertex(tmp_path):
  model = tfx.dsl.Importer(source_uri='gs://bucket/model',
                           artifact_type=standard_artifacts.Model).with_id('model')
  windows = tfx.dsl.Importer(source_uri='gs://bucket/windows',
                             artifact_type=standard_artifacts.Examples).with_id('windows')
  component = InterpretationReportGen(model=model.outputs['result'],
                                      examples=windows.outputs['result'])
  output = tmp_path / 'pipeline.json'
  tfx.orchestration.experimental.KubeflowV2DagRunner(
      config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(default_image='image'),
      output_filename=str(output)).run(tfx.dsl.Pipeline(
          pipeline_name='report', pipeline_root='gs://bucket/root',
          components=[model, windows, component]))

  spec = json.loads(output.read_text())['pipelineSpec']['components']
  schema = spec['InterpretationReportGen']['outputDefinitions']['artifacts']['report']
  assert schema['artifactType']['instanceSchema'].startswith(
      f'title: {InterpretationReport.TYPE_NAME}')
