"""`tft-cloud backtest`: one compiled pipeline whose origins are branches of their own,
side by side, each with its own split and Vertex AI training job, and a scoring step
after all of them; compiled offline, with only loopback reachable."""

import json

import numpy as np

from kubeflow import cli
from pipeline import backtest, default_data
from schema import datasets
from schema.time_split import parse_timestamp
from tests.kubeflow.conftest import IMAGE, PROJECT, REGION, TPU_TRAINER_IMAGE
from tests.kubeflow.test_compile import custom_config, executor_class

ORIGINS = 3
BRANCH = {'TimeSeriesExampleGen', 'StatisticsGen', 'ImportSchemaGen', 'ExampleValidator',
          'AnomalyGate', 'Transform', 'Windowing', 'Trainer', 'GbmBaseline', 'Refit'}


def _compiled(tmp_path, capsys):
  default_data.generate(str(tmp_path / 'data' / 'data.csv'), num_series=2, days=40, seed=1)
  deploy = tmp_path / 'deploy.yaml'
  deploy.write_text(
      f'project: {PROJECT}\nregion: {REGION}\nimage: {IMAGE}\n'
      'pipeline_root: gs://test-bucket/tft/root\ndata_root: gs://test-bucket/tft/data\n'
      f'trainer_image: {TPU_TRAINER_IMAGE}\nrefit: true\n'
      'training: {hardware: tpu, machine_type: cloud-tpu, accelerator_type: TPU_V3, '
      'accelerator_count: 8}\n')
  path = tmp_path / 'backtest.json'
  assert cli.main(['backtest', '--config', str(deploy), '--origins', str(ORIGINS),
                   '--local-data', str(tmp_path / 'data'), '--output', str(path)]) == 0
  return json.loads(path.read_text()), capsys.readouterr().out, str(deploy), str(path)


def test_each_origin_is_a_branch_of_its_own_and_the_scoring_waits_for_all(tmp_path, capsys):
  job, out, deploy, path = _compiled(tmp_path, capsys)
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  assert set(tasks) == {f'{node}_origin_{n}' for node in BRANCH
                        for n in range(1, ORIGINS + 1)} | {'BacktestScoring'}
  assert job['pipelineSpec']['pipelineInfo']['name'] == 'tft-synthetic-backtest'
  for name, task in tasks.items():
    if name != 'BacktestScoring':  # no step waits on another origin's
      origin = name.rsplit('_', 1)[-1]
      assert all(d.endswith(f'_origin_{origin}') for d in task.get('dependentTasks', []))
  assert set(tasks['BacktestScoring']['dependentTasks']) == {
      f'{node}_origin_{n}' for node in ('Windowing', 'Trainer', 'GbmBaseline', 'Refit')
      for n in range(1, ORIGINS + 1)}
  assert out.endswith(f'Next: tft-cloud submit --config {deploy} --pipeline {path}\n')


def test_each_origin_trains_before_its_own_split_in_a_vertex_job_of_its_own(tmp_path, capsys):
  job, out, _, _ = _compiled(tmp_path, capsys)
  times = np.array([parse_timestamp(t) for t in
                    np.loadtxt(tmp_path / 'data' / 'data.csv', delimiter=',', skiprows=1,
                               usecols=1, dtype=str)])
  dataset = datasets.get_dataset('synthetic')
  planned = backtest.plan(times, dataset.spec, dataset.split, ORIGINS)
  for origin in planned:
    suffix = f'_origin_{origin.number}'
    packed = custom_config(job, f'TimeSeriesExampleGen{suffix}')['custom_config']  # a Struct
    split = json.loads(packed['value']['time_split'])
    assert (split['eval_start'], split['test_start']) == (origin.split.eval_start,
                                                          origin.split.test_start)
    assert f'  origin {origin.number}:   forecasts from {origin.split.test_start}' in out
    for trainer in ('Trainer', 'Refit'):
      assert executor_class(job, f'{trainer}{suffix}') == (
          'components.step_budget_trainer.VertexExecutor')
      assert custom_config(job, f'{trainer}{suffix}')['training']['warm_start'] is False
    refit_inputs = job['pipelineSpec']['root']['dag']['tasks'][f'Refit{suffix}']['inputs']
    assert refit_inputs['artifacts']['judged_model']['taskOutputArtifact'][
        'producerTask'] == f'Trainer{suffix}'
    assert 'judged_blessing' not in refit_inputs['artifacts']  # refit whatever the future says
  starts = json.loads((job['pipelineSpec']['root']['dag']['tasks'][
      'BacktestScoring']['inputs']['parameters']['origin_starts']['runtimeValue'][
          "constantValue"]["stringValue"]))
  assert starts == {str(o.number): o.split.test_start for o in planned}
