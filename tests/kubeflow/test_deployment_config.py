"""The deployment config and the cron forms: loading, overrides and the errors they give."""

import json

import pytest

from kubeflow import cli, deployment
from kubeflow.cron import Cron

BASE = {
    'project': 'p', 'region': 'europe-west4', 'pipeline_root': 'gs://b/root',
    'data_root': 'gs://b/data', 'image': 'europe-west4-docker.pkg.dev/p/r/tft:1',
}


def write(tmp_path, values, name='deploy.yaml'):
  path = tmp_path / name
  path.write_text(json.dumps(values) if name.endswith('.json') else _yaml(values))
  return str(path)


def _yaml(values):
  import yaml
  return yaml.safe_dump(values)


def test_yaml_file_with_sections_loads_into_typed_config(tmp_path):
  path = write(tmp_path, {**BASE, 'dataset': 'etth1', 'trainer_image': 'tpu-img', 'training': {
      'hardware': 'tpu', 'machine_type': 'cloud-tpu', 'accelerator_type': 'TPU_V3',
      'accelerator_count': 8}, 'dataflow': {'max_num_workers': 8},
                          'endpoint': {'name': 'tft'},
                          'training_options': {'steps_per_execution': 64}})
  config = deployment.load(path)
  assert config.training_options == {'steps_per_execution': 64}
  assert config.training_image == 'tpu-img' and config.image == BASE['image']
  assert config.training == deployment.TrainingHardware('tpu', 'cloud-tpu', 'TPU_V3', 8)
  assert config.training.machine_spec() == {
      'machine_type': 'cloud-tpu', 'accelerator_type': 'TPU_V3', 'accelerator_count': 8}
  assert config.dataflow.max_num_workers == 8
  assert config.endpoint.name == 'tft'
  assert config.name == 'tft-etth1'
  assert config.schema_path == '/pipeline/schema/schemas/etth1.pbtxt'
  with pytest.raises(Exception):
    config.project = 'other'  # frozen


def test_json_file_loads_too(tmp_path):
  assert deployment.load(write(tmp_path, BASE, 'deploy.json')).project == 'p'


def test_overrides_win_over_the_file_and_merge_into_sections(tmp_path):
  path = write(tmp_path, {**BASE, 'trainer_image': 'gpu-img',
                          'training': {'hardware': 'gpu', 'machine_type': 'n1-standard-8',
                                               'accelerator_type': 'NVIDIA_TESLA_T4',
                                               'accelerator_count': 1}})
  config = deployment.load(path, {'region': 'us-central1', 'training.accelerator_count': 2,
                                  'project': None})
  assert config.region == 'us-central1'
  assert config.project == 'p'  # None does not override
  assert config.training.accelerator_count == 2
  assert config.training.accelerator_type == 'NVIDIA_TESLA_T4'


def test_tpu_v5e_machine_spec_carries_the_topology():
  hardware = deployment.TrainingHardware('tpu', 'ct5lp-hightpu-4t', tpu_topology='2x2')
  assert hardware.machine_spec() == {'machine_type': 'ct5lp-hightpu-4t', 'tpu_topology': '2x2'}


@pytest.mark.parametrize('values, message', [
    ({**BASE, 'project': ''}, 'project is missing'),
    ({k: v for k, v in BASE.items() if k != 'region'}, 'region is missing'),
    ({**BASE, 'pipeline_root': '/tmp/root'}, 'pipeline_root \'/tmp/root\' must be a gs:// URI'),
    ({**BASE, 'data_root': 's3://b/data'}, "data_root 's3://b/data' must be a gs:// URI"),
    ({**BASE, 'serving_model_dir': 'models/'}, 'serving_model_dir'),
    ({**BASE, 'schema_file': 'my.schema.pbtxt'},
     "schema_file 'my.schema.pbtxt' must be a gs:// URI, or a path in the image (under "
     "/pipeline/), on Vertex AI"),
    ({**BASE, 'platform': 'kubeflow'}, 'needs kfp_host'),
    ({**BASE, 'platform': 'airflow'}, "platform: Input should be 'vertex' or 'kubeflow', got 'airflow'"),
    ({**BASE, 'dataset': 'weather'}, "dataset 'weather' is unknown"),
    ({**BASE, 'colour': 'blue'}, "unknown field 'colour'; known: ['project', "),
    ({**BASE, 'dataflow': {'max_workers': 2}},
     "unknown field 'dataflow.max_workers' (did you mean 'max_num_workers'?)"),
    ({**BASE, 'training': {'hardware': 'fpga', 'machine_type': 'x'}},
     "training.hardware: Input should be 'tpu', 'gpu' or 'cpu', got 'fpga'"),
    ({**BASE, 'training': {'hardware': 'tpu'}}, 'training.machine_type is missing'),
    ({**BASE, 'training': {'hardware': 'gpu', 'machine_type': 'n1-standard-8',
                           'accelerator_type': 'NVIDIA_TESLA_T4', 'accelerator_count': '1'}},
     "training.accelerator_count: Input should be a valid integer, got '1'"),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'cloud-tpu'}},
     "machine_type 'cloud-tpu' needs accelerator_type"),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'ct5lp-hightpu-4t'}},
     'needs tpu_topology'),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'ct5lp-hightpu-4t',
                           'tpu_topology': 'big'}}, "'big' is not of the form"),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'cloud-tpu',
                           'accelerator_type': 'TPU_V4', 'accelerator_count': 8}},
     "machine_type 'cloud-tpu' runs TPU_V2 or TPU_V3, not TPU_V4; for TPU v5e use"),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'cloud-tpu',
                           'accelerator_type': 'NVIDIA_TESLA_T4', 'accelerator_count': 8}},
     "runs TPU_V2 or TPU_V3, not NVIDIA_TESLA_T4"),
    ({**BASE, 'training': {'hardware': 'gpu', 'machine_type': 'n1-standard-8',
                           'accelerator_type': 'NVIDIA_TESLA_T4'}}, 'accelerator_count >= 1'),
    ({**BASE, 'training': {'hardware': 'cpu', 'machine_type': 'n1-standard-8',
                           'accelerator_type': 'NVIDIA_TESLA_T4', 'accelerator_count': 1}},
     "'cpu' takes no accelerator"),
    ({**BASE, 'training': 'tpu'}, "training: Input should be a dictionary"),
    ({**BASE, 'training': {'hardware': 'tpu', 'machine_type': 'cloud-tpu',
                           'accelerator_type': 'TPU_V3', 'accelerator_count': 8}},
     'training on tpu needs trainer_image: the image built from '
     'kubeflow/Dockerfile.trainer-tpu'),
    ({**BASE, 'trainer_image': 'img'}, 'set training (the machine) too'),
    ({**BASE, 'trainer_image': 'img',
      'training': {'hardware': 'tpu', 'machine_type': 'cloud-tpu', 'accelerator_type': 'TPU_V3',
                   'accelerator_count': 8, 'replicas': 2}},
     "training.replicas is 2, but TPU training runs on one host; use a larger TPU"),
    ({**BASE, 'trainer_image': 'img',
      'training': {'hardware': 'cpu', 'machine_type': 'n1-standard-8', 'replicas': 0}},
     'replicas: Input should be greater than or equal to 1'),
    ({**BASE, 'platform': 'kubeflow', 'kfp_host': 'http://h',
      'pipeline_root': 'minio://b/root', 'dataflow': {}}, 'Dataflow needs a gs:// temp_location'),
    ({**BASE, 'train_steps': 0}, 'train_steps: Input should be greater than or equal to 1, got 0'),
    ({**BASE, 'train_steps': True}, 'train_steps: Input should be a valid integer, got True'),
    ({**BASE, 'infer_schema': 'yes'}, "infer_schema: Input should be a valid boolean, got 'yes'"),
    ({**BASE, 'training_options': [64]}, 'training_options: Input should be a valid dictionary'),
    ({**BASE, 'training_options': {'steps_per_execution': 0}}, 'training_options in the deployment'),
    ({**BASE, 'pipeline_name': 'Shop_Sales'}, "pipeline_name 'Shop_Sales' is not a name the "
     "pipeline compilers accept: lowercase letters, digits and hyphens, starting with a letter "
     "or digit, at most 128; e.g. 'shop-sales'"),
])
def test_invalid_configs_name_the_problem(values, message):
  with pytest.raises(deployment.DeploymentConfigError) as error:
    deployment.from_dict(values)
  assert message in str(error.value)


def test_kubeflow_platform_accepts_other_storage():
  config = deployment.from_dict({**BASE, 'platform': 'kubeflow', 'kfp_host': 'http://kfp:8888',
                                 'pipeline_root': 'minio://mlpipeline/root'})
  assert config.pipeline_root == 'minio://mlpipeline/root'


@pytest.mark.parametrize('hardware, machine, accelerator, count, topology', [
    ('tpu', 'cloud-tpu', 'TPU_V2', 8, None),
    ('tpu', 'cloud-tpu', 'TPU_V3', 8, None),
    ('tpu', 'ct5lp-hightpu-1t', None, 0, '1x1'),
    ('tpu', 'ct5lp-hightpu-4t', None, 0, '2x2'),
    ('tpu', 'ct5lp-hightpu-8t', None, 0, '2x4'),
    ('gpu', 'a2-highgpu-2g', 'NVIDIA_TESLA_A100', 2, None),
    ('gpu', 'g2-standard-24', 'NVIDIA_L4', 2, None),
    ('gpu', 'n1-standard-8', 'NVIDIA_TESLA_T4', 4, None),
    ('gpu', 'n1-standard-4', 'NVIDIA_TESLA_V100', 8, None),
    ('gpu', 'n1-standard-32', 'NVIDIA_TESLA_P4', 2, None),
])
def test_machines_vertex_runs_and_the_trainer_drives_are_accepted(hardware, machine,
                                                                  accelerator, count,
                                                                  topology):
  spec = deployment.TrainingHardware(hardware, machine, accelerator, count, topology)
  assert spec.machine_spec()['machine_type'] == machine


@pytest.mark.parametrize('hardware, machine, accelerator, count, topology, message', [
    ('tpu', 'cloud-tpu', 'TPU_V3', 32, None,
     '32 TPU_V3 cores is not one TPU host: the Trainer drives the TPU attached to its own '
     'VM; use accelerator_count 8 (v3-8)'),
    ('tpu', 'cloud-tpu', 'TPU_V5_LITEPOD', 8, None,
     "runs TPU_V2 or TPU_V3, not TPU_V5_LITEPOD; for TPU v5e use 'ct5lp-hightpu-1t' with "
     "'1x1'"),
    ('tpu', 'cloud-tpu', 'TPU_V3', 8, '2x2', 'takes no tpu_topology'),
    ('tpu', 'ct5lp-hightpu-4t', None, 0, '4x4',
     "tpu_topology '4x4' on 'ct5lp-hightpu-4t' spans several VMs"),
    ('tpu', 'ct5lp-hightpu-4t', 'TPU_V5_LITEPOD', 4, '2x2',
     'takes no accelerator_type or accelerator_count'),
    ('tpu', 'ct6e-standard-4t', None, 0, '2x2', 'takes no TensorFlow training on Vertex AI'),
    ('tpu', 'ct5p-hightpu-4t', None, 0, '2x2x1', 'is not one the Trainer can drive'),
    ('gpu', 'n1-standard-8', 'NVIDIA_TESLA_A100', 1, None,
     "1 NVIDIA_TESLA_A100 on 'n1-standard-8' is not a machine Vertex AI runs: that GPU comes "
     'in fixed numbers with its machine type: a2-highgpu-1g (1), a2-highgpu-2g (2)'),
    ('gpu', 'a3-highgpu-1g', 'NVIDIA_H100_80GB', 8, None, 'a3-highgpu-8g (8)'),
    ('gpu', 'n1-standard-8', 'NVIDIA_TESLA_T4', 8, None,
     "'n1-standard-8' holds 1 or 2 or 4 NVIDIA_TESLA_T4, not 8"),
    ('gpu', 'n1-standard-32', 'NVIDIA_TESLA_V100', 1, None,
     "'n1-standard-32' holds 4 or 8 NVIDIA_TESLA_V100, not 1"),
    ('gpu', 'e2-standard-8', 'NVIDIA_TESLA_T4', 1, None,
     "NVIDIA_TESLA_T4 runs on N1 machine types (n1-highcpu-16, "),
])
def test_machines_vertex_refuses_are_rejected_with_what_works(hardware, machine, accelerator,
                                                              count, topology, message):
  values = {'hardware': hardware, 'machine_type': machine, 'accelerator_type': accelerator,
            'accelerator_count': count, 'tpu_topology': topology}
  with pytest.raises(deployment.DeploymentConfigError) as error:
    deployment.from_dict({**BASE, 'training': values, 'trainer_image': 'img'})
  assert message in str(error.value)


def test_beam_args_run_on_dataflow_with_the_pipeline_image_only_when_asked():
  in_container = deployment.from_dict(BASE)
  assert in_container.beam_pipeline_args() == [
      '--direct_running_mode=multi_processing', '--direct_num_workers=0',
      '--setup_file=/pipeline/setup.py']
  on_dataflow = deployment.from_dict({**BASE, 'service_account': 'sa@p.iam.gserviceaccount.com',
                                      'dataflow': {'machine_type': 'n2-standard-4'}})
  assert on_dataflow.beam_pipeline_args() == [
      '--runner=DataflowRunner', '--project=p', '--region=europe-west4',
      '--temp_location=gs://b/root/beam', '--machine_type=n2-standard-4',
      '--max_num_workers=4', f'--sdk_container_image={BASE["image"]}',
      '--service_account_email=sa@p.iam.gserviceaccount.com']


def test_bad_files_are_reported(tmp_path):
  with pytest.raises(deployment.DeploymentConfigError, match='cannot read'):
    deployment.load(str(tmp_path / 'missing.yaml'))
  listing = tmp_path / 'list.yaml'
  listing.write_text('- a\n- b\n')
  with pytest.raises(deployment.DeploymentConfigError, match='must hold a mapping'):
    deployment.load(str(listing))


def test_cron_forms_for_vertex_and_kubeflow():
  nightly = Cron.parse('0 3 * * *', time_zone='Europe/Paris')
  assert nightly.vertex() == 'TZ=Europe/Paris 0 3 * * *'
  assert Cron.parse('TZ=Europe/Paris   0 3 * * *') == nightly
  assert Cron.parse('CRON_TZ=Asia/Tokyo 30 2 * * 1-5').vertex() == 'TZ=Asia/Tokyo 30 2 * * 1-5'
  utc = Cron.parse('15 */6 * * MON')
  assert utc.vertex() == '15 */6 * * MON'
  assert utc.kubeflow() == '0 15 */6 * * MON'


@pytest.mark.parametrize('text, zone, message', [
    ('0 3 * *', None, 'has 4 fields'),
    ('0 0 3 * * *', None, 'has 6 fields'),
    ('0 3 * * $', None, "day of week field '$'"),
    ('99 99 * * *', None, "the minute field '99' is not a cron field of values 0-59"),
    ('0 3 * 13 *', None, "the month field '13' is not a cron field of values 1-12"),
    ('0 24 * * *', None, "the hour field '24'"),
    ('0 3 * * *', 'Mars/Olympus', "'Mars/Olympus' is not an IANA time zone"),
    ('TZ=Europe/Paris 0 3 * * *', 'UTC', 'give one'),
])
def test_bad_crons_are_rejected(text, zone, message):
  with pytest.raises(ValueError) as error:
    Cron.parse(text, zone)
  assert message in str(error.value)


def test_kubeflow_cron_refuses_a_time_zone():
  with pytest.raises(ValueError, match='CRON_SCHEDULE_TIMEZONE'):
    Cron.parse('0 3 * * *', 'Europe/Paris').kubeflow()


def test_cli_reports_config_errors_without_a_traceback(capsys):
  assert cli.main(['compile', '--project', 'p', '--region', 'r', '--pipeline-root', 'gs://b',
                   '--data-root', 'gs://b/d', '--image', 'i', '--hardware', 'tpu',
                   '--machine-type', 'ct5lp-hightpu-4t']) == 2
  assert 'needs tpu_topology' in capsys.readouterr().err


def test_cli_help_lists_the_commands(capsys):
  with pytest.raises(SystemExit) as done:
    cli.main(['--help'])
  assert done.value.code == 0
  out = capsys.readouterr().out
  for command in ('compile', 'submit', 'schedule', 'schedules'):
    assert command in out


@pytest.mark.parametrize('dataset, name', [('synthetic', 'tft-synthetic'),
                                           ('etth1_univariate', 'tft-etth1-univariate')])
def test_the_default_pipeline_name_is_one_the_compilers_accept(dataset, name):
  assert deployment.from_dict({**BASE, 'dataset': dataset}).name == name
  assert deployment.default_pipeline_name('Absatz (Stück)') == 'tft-absatz-st-ck'


def test_the_rules_across_fields_are_reported_together():
  with pytest.raises(deployment.DeploymentConfigError) as error:
    deployment.from_dict({**BASE, 'data_root': '/local/data', 'trainer_image': 'img',
                          'training_options': {'steps_per_executon': 32}})
  problems = str(error.value).split('; ')
  assert problems[0] == ('the deployment config: trainer_image is the image of the training '
                         'CustomJob: set training (the machine) too, or leave trainer_image '
                         'out to train in the pipeline step')
  assert problems[1].startswith("training_options in the deployment config: unknown keys "
                                "['steps_per_executon'] in Trainer custom_config['training'] "
                                "('steps_per_executon': did you mean 'steps_per_execution'?)")
  assert any(problem.startswith("data_root '/local/data' must be a gs:// URI")
             for problem in problems)
