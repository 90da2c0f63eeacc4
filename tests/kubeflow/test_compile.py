"""The compiled pipeline JSON: every component, the image, the Trainer's Vertex AI job
per hardware kind with its loop settings, the Pusher, Beam arguments, and a strict KFP
PipelineSpec parse.

The deployments and their compiled JSON come from conftest (one compile per session).
"""

import json

import pytest
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from kubeflow import cli, runner
from kubeflow import deployment as deployment_lib
from kubeflow.deployment import DeploymentConfigError
from schema.monitoring_policy import Monitoring
from tests.kubeflow.conftest import (GPU_TRAINER_IMAGE, IMAGE, PROJECT, REGION,
                                     TPU_TRAINER_IMAGE, make_deployment)

VERTEX_TRAINER = 'components.step_budget_trainer.VertexExecutor'
LOCAL_TRAINER = 'components.step_budget_trainer.Executor'
# What the training CustomJob runs, sent the budget by VertexExecutor.
TFX_TRAINER = 'tfx.components.trainer.executor.GenericExecutor'
VERTEX_PUSHER = 'components.vertex_pusher.Executor'


def task_parameter(job, task, name):
  """A task's constant parameter, or the pipeline parameter's compiled value it reads."""
  value = job['pipelineSpec']['root']['dag']['tasks'][task]['inputs']['parameters'][name]
  if 'componentInputParameter' in value:
    value = job['runtimeConfig']['parameters'][value['componentInputParameter']]
    return value.get('stringValue', value.get('intValue'))
  return value['runtimeValue']['constantValue']['stringValue']


def custom_config(job, task):
  return json.loads(task_parameter(job, task, 'custom_config'))


def executor(job, task):
  executors = job['pipelineSpec']['deploymentSpec']['executors']
  return executors[f'{task}_executor']['container']


def executor_class(job, task):
  args = executor(job, task)['args']
  return args[args.index('--executor_class_path') + 1]


@pytest.mark.parametrize('name', ['tpu', 'tpu_v5e', 'gpu', 'cpu', 'in_step'])
def test_pipeline_spec_parses_strictly_into_the_kfp_proto(compiled, name):
  _, job = compiled[name]
  spec = json_format.ParseDict(job['pipelineSpec'], pipeline_spec_pb2.PipelineSpec(),
                               ignore_unknown_fields=False)
  assert spec.pipeline_info.name == 'tft-synthetic'
  assert spec.sdk_version == 'tfx-1.16.0'
  # The whole job too: KubeflowV2DagRunner writes a PipelineJob message.
  json_format.ParseDict(job, pipeline_spec_pb2.PipelineJob(), ignore_unknown_fields=False)


def test_every_component_of_create_pipeline_is_a_task(compiled, deployments):
  from pipeline.pipeline import create_pipeline

  _, job = compiled['tpu']
  nodes = create_pipeline(runner.make_pipeline_config(deployments['tpu'])).components
  node_ids = {node.id for node in nodes}
  tasks = set(job['pipelineSpec']['root']['dag']['tasks'])
  # KubeflowV2DagRunner splits the latest-blessed-model Resolver into two resolver steps.
  resolver = 'latest_blessed_model_resolver'
  assert resolver in node_ids
  expected = (node_ids - {resolver}) | {f'{resolver}-model-resolver',
                                        f'{resolver}-model-blessing-resolver'}
  assert tasks == expected
  assert {'TimeSeriesExampleGen', 'Transform', 'Windowing', 'Trainer', 'Evaluator',
          'Pusher', 'AnomalyGate', 'GbmBaseline'} <= tasks
  assert set(job['pipelineSpec']['components']) == tasks


def test_the_gradient_boosted_baseline_fits_the_models_quantiles_and_calibrates_as_it(compiled):
  _, job = compiled['tpu']
  assert json.loads(task_parameter(job, 'GbmBaseline', 'quantiles')) == [0.1, 0.5, 0.9]
  parameters = job['pipelineSpec']['root']['dag']['tasks']['GbmBaseline']['inputs']['parameters']
  # A bool parameter compiles to an integer; the component reads it as a truth value.
  assert parameters['calibrate_intervals']['runtimeValue']['constantValue'] == {'intValue': '1'}


@pytest.mark.parametrize('name', ['tpu', 'gpu', 'in_step'])
def test_every_container_runs_the_configured_image(compiled, name):
  _, job = compiled[name]
  executors = job['pipelineSpec']['deploymentSpec']['executors']
  containers = [spec['container'] for spec in executors.values() if 'container' in spec]
  assert len(containers) == 16  # every component but the resolvers, the Refit among them
  assert {container['image'] for container in containers} == {IMAGE}


def test_runtime_config_and_names_are_as_configured(compiled):
  _, job = compiled['tpu']
  assert job['runtimeConfig'] == {
      'gcsOutputDirectory': 'gs://test-bucket/tft/root',
      'parameters': {'data_root': {'stringValue': 'gs://test-bucket/tft/data'},
                     'train_steps': {'intValue': '1000'}}}
  assert job['displayName'] == 'tft-synthetic'
  assert task_parameter(job, 'TimeSeriesExampleGen', 'input_base') == 'gs://test-bucket/tft/data'
  assert task_parameter(job, 'ImportSchemaGen', 'schema_file') == (
      '/pipeline/schema/schemas/synthetic.pbtxt')


def test_tpu_trainer_is_a_vertex_job_on_a_tpu_v3_8_with_tpu_strategy(compiled):
  _, job = compiled['tpu']
  assert executor_class(job, 'Trainer') == VERTEX_TRAINER
  config = custom_config(job, 'Trainer')
  assert config['distribution'] == 'tpu'
  assert config['ai_platform_enable_vertex'] is True
  assert config['ai_platform_vertex_region'] == REGION
  assert config['ai_platform_training_args'] == {
      'project': PROJECT,
      'job_spec': {
          'service_account': 'runner@test-project.iam.gserviceaccount.com',
          'worker_pool_specs': [{
              'machine_spec': {'machine_type': 'cloud-tpu', 'accelerator_type': 'TPU_V3',
                               'accelerator_count': 8},
              'replica_count': 1,
              'container_spec': {'image_uri': TPU_TRAINER_IMAGE},
          }]}}
  # What run_fn reads is still there.
  assert json.loads(config['dataset_spec'])['name'] == 'synthetic'
  assert config['model_config'] == {'preset': 'local', 'overrides': {}}
  assert config['training'] == {'steps_per_execution': 64, 'seed': 7}


def test_tpu_v5e_gpu_and_cpu_trainers_differ_accordingly(compiled):
  machines, distributions, images = {}, {}, {}
  for name in ('tpu_v5e', 'gpu', 'cpu'):
    config = custom_config(compiled[name][1], 'Trainer')
    pool, = config['ai_platform_training_args']['job_spec']['worker_pool_specs']
    machines[name] = pool['machine_spec']
    distributions[name] = config['distribution']
    images[name] = pool['container_spec']['image_uri']
    assert executor_class(compiled[name][1], 'Trainer') == VERTEX_TRAINER
  assert machines == {
      'tpu_v5e': {'machine_type': 'ct5lp-hightpu-4t', 'tpu_topology': '2x2'},
      'gpu': {'machine_type': 'n1-standard-8', 'accelerator_type': 'NVIDIA_TESLA_T4',
              'accelerator_count': 1},
      'cpu': {'machine_type': 'n1-standard-16'},
  }
  assert distributions == {'tpu_v5e': 'tpu', 'gpu': 'gpu', 'cpu': 'cpu'}
  # TensorFlow for the hardware; CPU training needs none other than the components'.
  assert images == {'tpu_v5e': TPU_TRAINER_IMAGE, 'gpu': GPU_TRAINER_IMAGE, 'cpu': IMAGE}


def test_without_training_hardware_the_standard_trainer_runs_in_step(compiled):
  _, job = compiled['in_step']
  assert executor_class(job, 'Trainer') == LOCAL_TRAINER
  config = custom_config(job, 'Trainer')
  assert 'distribution' not in config
  assert not any(key.startswith('ai_platform') for key in config)
  assert config['training'] == {}


def test_bad_training_options_fail_when_compiling():
  with pytest.raises(DeploymentConfigError,
                     match=r"training_options in the deployment .*unknown keys \['steps'\]"):
    runner.make_pipeline_config(make_deployment(training_options={'steps': 3}))
  with pytest.raises(DeploymentConfigError, match="'seed' must be an integer >= 0"):
    runner.make_pipeline_config(make_deployment(training_options={'seed': -1}))


@pytest.mark.parametrize('name', ['tpu', 'tpu_v5e'])
def test_the_vertex_extension_turns_the_spec_into_a_valid_custom_job(compiled, name):
  """What the Trainer's executor will send, built by TFX and checked by the SDK's proto."""
  from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
  from tfx.extensions.google_cloud_ai_platform import training_clients

  config = custom_config(compiled[name][1], 'Trainer')
  job_args = dict(config['ai_platform_training_args'])
  job_args.pop('project')
  client = training_clients.VertexJobClient.__new__(training_clients.VertexJobClient)
  job = client.create_training_job({}, {}, {'custom_config': json.dumps(config)},
                                   TFX_TRAINER, job_args, None, None)
  proto = custom_job_types.CustomJob(job)  # raises on unknown fields or enum names
  pool, = proto.job_spec.worker_pool_specs
  assert pool.container_spec.image_uri == TPU_TRAINER_IMAGE
  assert list(pool.container_spec.command[:3]) == ['python', '-m', 'tfx.scripts.run_executor']
  expected = custom_config(compiled[name][1], 'Trainer')['ai_platform_training_args'][
      'job_spec']['worker_pool_specs'][0]['machine_spec']
  assert pool.machine_spec.machine_type == expected['machine_type']
  assert pool.machine_spec.accelerator_count == expected.get('accelerator_count', 0)
  assert pool.machine_spec.tpu_topology == expected.get('tpu_topology', '')


def test_pusher_deploys_to_the_vertex_endpoint_only_when_one_is_configured(compiled):
  _, with_endpoint = compiled['tpu']
  assert executor_class(with_endpoint, 'Pusher') == VERTEX_PUSHER
  config = custom_config(with_endpoint, 'Pusher')
  assert config == {'vertex_model_versions': {
      'project': PROJECT, 'region': REGION, 'model_name': 'tft-synthetic',
      'endpoint_name': 'tft-endpoint',
      'serving_image': 'us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest',
      'machine_type': 'n1-standard-4', 'keep_deployed': 1}}
  _, without = compiled['gpu']
  assert executor_class(without, 'Pusher') == \
      'components.versioned_pusher.VersionedPushExecutor'
  destination = json.loads(task_parameter(without, 'Pusher', 'push_destination'))
  assert destination == {'filesystem': {'base_directory': 'gs://test-bucket/tft/root/serving_model'}}


def test_beam_components_run_on_dataflow_only_when_configured(compiled):
  on_dataflow = executor(compiled['tpu'][1], 'Transform')['args']
  for arg in ('--runner=DataflowRunner', f'--project={PROJECT}', f'--region={REGION}',
              '--temp_location=gs://test-bucket/tft/root/beam', f'--sdk_container_image={IMAGE}'):
    assert arg in on_dataflow
  in_container = executor(compiled['gpu'][1], 'Transform')['args']
  assert '--runner=DataflowRunner' not in ' '.join(in_container)
  assert '--direct_running_mode=multi_processing' in in_container


def test_a_deployment_names_a_spec_file_and_compiles_its_data_set(tmp_path, capsys):
  spec_text = (
      'name: shop_sales\nfrequency: W-SUN\nencoder_steps: 12\nhorizon: 4\n'
      'calendar_features: [month_of_year]\n'
      'columns:\n  - {name: shop, role: series_key}\n  - {name: week, role: time}\n'
      '  - {name: sales, role: target}\n  - {name: promo, role: known}\n'
      'split: {eval_start: 0.7, test_start: 0.85}\n'
      'blessing: {max_mae: 10, beat_lightgbm_by: 0.0}\n'
      'schema: gs://test-bucket/tft/shops.schema.pbtxt\n')
  (tmp_path / 'specs').mkdir()
  (tmp_path / 'specs' / 'shops.yaml').write_text(spec_text)
  deployment_file = tmp_path / 'deploy.yaml'
  deployment_file.write_text(
      f'project: {PROJECT}\nregion: {REGION}\nimage: {IMAGE}\n'
      'pipeline_root: gs://test-bucket/tft/root\ndata_root: gs://test-bucket/tft/data\n'
      'spec: specs/shops.yaml\n')  # relative to the deployment file
  path = str(tmp_path / 'shops.json')
  assert cli.main(['compile', '--config', str(deployment_file), '--output', path]) == 0
  with open(path) as f:
    job = json.load(f)

  out, err = capsys.readouterr()
  assert '  data:       gs://test-bucket/tft/data, files \'*\'\n  future:     none\n' in out
  assert "  precision:  float32 (the model's precision 'auto')\n" in out  # trained in the step
  flags = f'--config {deployment_file} --pipeline {path}'
  assert out.endswith(f'Next: tft-cloud submit {flags} for one run, or tft-cloud schedule '
                      f"{flags} --cron '0 3 * * *' for retraining\n")
  # As tft-pipeline warns before a local run: without the known 'promo' ahead, no forecasts.
  assert err == ("warning: the spec declares known columns ['promo'] and no future_file gives "
                 'their values over the horizon: each run trains, judges and publishes a '
                 'model, but forecasts no series\n')
  # The compilers take no '_' in a pipeline name: the data set's name is written with '-'.
  assert job['pipelineSpec']['pipelineInfo']['name'] == 'tft-shop-sales'
  assert task_parameter(job, 'ImportSchemaGen', 'schema_file') == (
      'gs://test-bucket/tft/shops.schema.pbtxt')
  spec = json.loads(custom_config(job, 'Trainer')['dataset_spec'])
  assert (spec['frequency'], spec['horizon']) == ('W-SUN', 4)
  assert [c['name'] for c in spec['columns']] == ['shop', 'week', 'sales', 'promo']
  # The held-out test windows are scored and judged; the LightGBM bar reads GbmBaseline's.
  assert json.loads(task_parameter(job, 'Evaluator', 'example_splits')) == ['eval', 'test']
  rules = json.loads(task_parameter(job, 'Evaluator', 'blessing_rules'))
  assert (rules['judged_split'], rules['blessing']['beat_lightgbm_by']) == ('test', 0.0)
  evaluator_inputs = job['pipelineSpec']['root']['dag']['tasks']['Evaluator']['inputs']
  assert evaluator_inputs['artifacts']['gbm_baseline']['taskOutputArtifact'][
      'producerTask'] == 'GbmBaseline'


def test_compile_says_a_tpu_trainer_computes_in_bfloat16(tmp_path, capsys):
  assert cli.main(['compile', '--project', PROJECT, '--region', REGION, '--pipeline-root',
                   'gs://b/root', '--data-root', 'gs://b/data', '--image', IMAGE,
                   '--trainer-image', TPU_TRAINER_IMAGE, '--hardware', 'tpu', '--machine-type',
                   'cloud-tpu', '--accelerator-type', 'TPU_V3', '--accelerator-count', '8',
                   '--output', str(tmp_path / 'tpu.json')]) == 0
  out = capsys.readouterr().out
  assert "  precision:  mixed_bfloat16 (the model's precision 'auto' on a TPU)\n" in out
  flags = f"--pipeline {tmp_path / 'tpu.json'}"
  assert out.endswith(f'Next: tft-cloud submit {flags} for one run, or tft-cloud schedule '
                      f"{flags} --cron '0 3 * * *' for retraining (with the same deployment "
                      'flags)\n')


def test_compile_warns_of_a_future_file_the_spec_does_not_read():
  future = 'gs://test-bucket/tft/future.csv'
  assert cli.future_file_warnings(
      make_deployment(future_file=future)) == []  # 'synthetic' reads its known price
  [warning] = cli.future_file_warnings(
      make_deployment(dataset='etth1_univariate', future_file=future))
  assert warning.startswith('future_file: the future file is not needed: the spec declares '
                            'no known column') and warning.endswith('leave future_file out')


def test_a_spec_whose_schema_is_on_this_machine_asks_for_a_gs_copy(tmp_path):
  spec_file = tmp_path / 'shops.yaml'
  spec_file.write_text(
      'name: shops\nfrequency: daily\nencoder_steps: 7\nhorizon: 2\n'
      'columns:\n  - {name: day, role: time}\n  - {name: sales, role: target}\n'
      'split: {eval_start: 0.8}\nblessing: {max_mae: 10}\nschema: shops.schema.pbtxt\n')
  with pytest.raises(DeploymentConfigError, match=r'cannot read: copy it to Cloud Storage and '
                     r'set schema_file: gs://'):
    make_deployment(spec=str(spec_file))
  assert make_deployment(spec=str(spec_file), infer_schema=True).schema_path is None
  with pytest.raises(DeploymentConfigError, match='set either dataset'):
    make_deployment(spec=str(spec_file), dataset='etth1')


def _resolver_filters(job):
  executors = job['pipelineSpec']['deploymentSpec']['executors']
  return {name: query['filter'] for name, spec in executors.items() if 'resolver' in spec
          for query in spec['resolver']['outputArtifactQueries'].values()}


@pytest.mark.parametrize('name', ['tpu', 'in_step'])
def test_the_baseline_query_finds_only_this_pipelines_blessings(compiled, name):
  _, job = compiled[name]
  filters = _resolver_filters(job)
  assert filters['latest_blessed_model_resolver-model-blessing-resolver_executor'] == (
      'schema_title="tfx.ModelBlessing" AND state=LIVE AND metadata.blessed.number_value=1'
      ' AND metadata.pipeline_name.string_value="tft-synthetic"')
  # The model is the one that blessing names, so it follows the scope.
  assert 'current_model_id' in filters['latest_blessed_model_resolver-model-resolver_executor']
  # What the query reads, the Evaluator writes: its executor stamps the pipeline's name.
  assert executor_class(job, 'Evaluator') == 'components.scoped_evaluator.Executor'
  assert task_parameter(job, 'Evaluator', 'pipeline_name') == 'tft-synthetic'
  # The file on disk is the scoped job.
  with open(compiled[name][0]) as f:
    assert json.load(f) == job


def test_another_pipeline_name_scopes_its_own_query(tmp_path):
  job = runner.compile_pipeline(make_deployment(pipeline_name='tft-staging'),
                                str(tmp_path / 'new_dir' / 'staging.json'))
  assert _resolver_filters(job)[
      'latest_blessed_model_resolver-model-blessing-resolver_executor'].endswith(
          ' AND metadata.pipeline_name.string_value="tft-staging"')


def test_the_scoring_finds_only_this_pipelines_earlier_forecasts(compiled):
  _, job = compiled['in_step']
  assert _resolver_filters(job)['latest_forecasts_resolver_executor'] == (
      'schema_title="tfx.Artifact" AND state=LIVE'
      ' AND metadata.forecasts_of.string_value="tft-synthetic"')
  # ForecastGen stamps the name the query reads; ForecastScoring reads the ledger beside
  # the published models on Cloud Storage, and judges by the spec's policy.
  assert task_parameter(job, 'ForecastGen', 'pipeline_name') == 'tft-synthetic'
  assert task_parameter(job, 'ForecastScoring', 'ledger_dir').startswith('gs://')
  assert task_parameter(job, 'ForecastScoring', 'ledger_dir').endswith('/forecast_ledger')
  assert json.loads(task_parameter(job, 'ForecastScoring', 'monitoring')) == (
      Monitoring().to_dict())
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  assert 'ForecastGen' in tasks['ForecastScoring']['dependentTasks']


def test_the_drift_check_runs_before_transform_on_the_judged_rows(compiled):
  _, job = compiled['in_step']
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  assert 'DriftCheck' in tasks['Transform']['dependentTasks']
  assert {'StatisticsGen', 'TimeSeriesExampleGen'} <= set(tasks['DriftCheck']['dependentTasks'])
  assert task_parameter(job, 'DriftCheck', 'newest_split') == 'test'
  assert json.loads(task_parameter(job, 'DriftCheck', 'monitoring')) == Monitoring().to_dict()


def test_scoping_refuses_a_job_without_exactly_one_query_of_each_kind():
  job = {'pipelineSpec': {'deploymentSpec': {'executors': {'x': {'container': {}}}}}}
  with pytest.raises(RuntimeError, match=r"expected one compiled query for 'model_blessing'"):
    runner.scope_resolver_queries(job, 'tft-synthetic')


def test_locally_the_resolver_reads_only_this_pipelines_context(deployments):
  """LocalDagRunner's rule: each resolver's channels are queried in the pipeline's context."""
  from tfx.dsl.compiler import compiler
  from pipeline.pipeline import create_pipeline

  config = runner.make_pipeline_config(deployments['in_step'])
  ir = compiler.Compiler().compile(create_pipeline(config))
  for resolver_id, kinds in (('latest_blessed_model_resolver', {'Model', 'ModelBlessing'}),
                             ('latest_forecasts_resolver', {'tft.Forecasts'})):
    resolver, = [node.pipeline_node for node in ir.nodes
                 if node.pipeline_node.node_info.id == resolver_id]
    channels = {channel.artifact_query.type.name: channel
                for channel_input in resolver.inputs.inputs.values()
                for channel in channel_input.channels}
    assert set(channels) == kinds
    for channel in channels.values():
      assert [(query.type.name, query.name.field_value.string_value)
              for query in channel.context_queries] == [('pipeline', 'tft-synthetic')]


def test_locally_a_first_run_finds_no_earlier_forecasts_and_later_runs_the_newest():
  """LatestArtifactStrategy returns None on an empty channel, which fails the node locally."""
  from components.forecast_gen import Forecasts
  from pipeline.pipeline import NewestOrNoneStrategy

  strategy = NewestOrNoneStrategy()
  assert strategy.resolve_artifacts(None, {'forecasts': []}) == {'forecasts': []}
  published = [Forecasts() for _ in range(3)]
  for artifact_id, artifact in zip((4, 9, 7), published):
    artifact.id = artifact_id
  assert [artifact.id for artifact in strategy.resolve_artifacts(
      None, {'forecasts': published})['forecasts']] == [9]


def test_a_vertex_run_can_train_on_the_newest_spans(tmp_path):
  job = runner.compile_pipeline(
      make_deployment(input_pattern='span-{SPAN}/*.csv', train_spans=3),
      str(tmp_path / 'spans.json'))
  input_config = json.loads(task_parameter(job, 'TimeSeriesExampleGen', 'input_config'))
  assert input_config['splits'][0]['pattern'] == 'span-{SPAN}/*.csv'
  custom = json.loads(task_parameter(job, 'TimeSeriesExampleGen', 'custom_config'))
  values = custom['custom_config']['value']  # a packed Struct: numbers are doubles
  assert (values['train_spans'], values['input_pattern']) == (3, 'span-{SPAN}/*.csv')
  with pytest.raises(DeploymentConfigError, match=r'needs \{SPAN\} in the input pattern'):
    make_deployment(train_spans=2)


def test_several_gpu_replicas_run_as_a_chief_pool_and_a_worker_pool():
  """The CustomJob TFX's Vertex extension builds: Vertex sets TF_CONFIG from these pools
  (chief, worker), from which every replica's Trainer builds MultiWorkerMirroredStrategy."""
  from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
  from tfx.extensions.google_cloud_ai_platform import training_clients

  hardware = deployment_lib.TrainingHardware('gpu', 'n1-standard-8', 'NVIDIA_TESLA_T4', 1,
                                             replicas=3)
  config = runner.make_pipeline_config(
      make_deployment(training=hardware, trainer_image=GPU_TRAINER_IMAGE))
  job_args = config.vertex_training.training_args()
  job_args.pop('project')
  client = training_clients.VertexJobClient.__new__(training_clients.VertexJobClient)
  job = client.create_training_job({}, {}, {'custom_config': '{}'}, TFX_TRAINER, job_args,
                                   None, None)
  chief, workers = custom_job_types.CustomJob(job).job_spec.worker_pool_specs
  assert (chief.replica_count, workers.replica_count) == (1, 2)
  for pool in (chief, workers):
    assert pool.machine_spec.accelerator_type.name == 'NVIDIA_TESLA_T4'
    assert pool.container_spec.image_uri == GPU_TRAINER_IMAGE
    assert list(pool.container_spec.command[:3]) == ['python', '-m',
                                                     'tfx.scripts.run_executor']
  assert config.vertex_training.distribution == 'gpu'


def test_the_forecasts_wait_for_the_pusher_so_a_bad_future_file_cannot_stop_publishing(
    compiled):
  _, job = compiled['tpu']
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  assert 'Pusher' in tasks['ForecastGen']['dependentTasks']


def test_the_blessed_model_is_refit_and_the_refit_published_unless_refit_is_off(
    tmp_path, compiled):
  off = runner.compile_pipeline(make_deployment(refit=False), str(tmp_path / 'off.json'))
  assert 'Refit' not in off['pipelineSpec']['root']['dag']['tasks']
  _, job = compiled['tpu']  # refit: the default
  tasks = job['pipelineSpec']['root']['dag']['tasks']
  producer = lambda task, name: tasks[task]['inputs']['artifacts'][name][
      'taskOutputArtifact']['producerTask']
  assert producer('Refit', 'judged_model') == 'Trainer'
  assert producer('Refit', 'judged_blessing') == 'Evaluator'
  assert producer('Pusher', 'model') == producer('ForecastGen', 'model') == 'Refit'
  assert producer('Evaluator', 'model') == 'Trainer'
  assert executor_class(job, 'Refit') == VERTEX_TRAINER
  assert json.loads(task_parameter(job, 'Windowing', 'refit_splits')) == [
      'train', 'eval', 'test']
