"""Speed and memory: training throughput, and the local pipeline on the default data.

Throughput is `benchmarks/tft_throughput.py`'s measurement (training steps on one
synthetic batch, after warm-up, without XLA), each model in a process of its own that
does nothing else, so its peak resident memory is the training step's: TensorFlow's
runtime, the model, its optimizer state and the step's activations. The pipeline's
wall time on the generated default data (what `make run` trains) is read per component
from the metadata store; the accuracy benchmarks record the same for ETTh1 and Stallion.
"""

import dataclasses
import os
from typing import Any, Dict, Optional, Tuple

from benchmarks import child, etth1, pipeline_run
from benchmarks.tft_throughput import ELECTRICITY_LAYOUT, measure
from pipeline import default_data
from pipeline.config import PipelineConfig, default_strides
from schema.dataset_spec import DatasetSpec
from schema.datasets import curated_schema_path, get_dataset
from schema import hparams
from trainer_module.tft.inputs import InputLayout
from trainer_module.window_inputs import input_layout


@dataclasses.dataclass(frozen=True)
class Plan:
  """What to measure.

  Attributes:
    models: name -> (layout, config) of each throughput measurement.
    steps: timed training steps per model.
    warmup: untimed steps first (tracing included).
    synthetic: (series, days, train_steps) of the default-data pipeline run; None skips it.
  """
  models: Dict[str, Tuple[InputLayout, hparams.TFTConfig]]
  steps: int
  warmup: int
  synthetic: Optional[Tuple[int, int, int]]


class _OneSeries:
  """Stands in for a Transform output: one series key, one out-of-vocabulary bucket."""

  def vocabulary_size_by_name(self, name: str) -> int:
    del name
    return 1


def etth1_model(plan: etth1.Plan, setting: str, lookback: int, horizon: int
                ) -> Tuple[InputLayout, hparams.TFTConfig]:
  """The layout and hyperparameters the ETTh1 benchmark trains for one configuration."""
  spec: DatasetSpec = get_dataset(etth1.SETTINGS[setting]).spec.with_window(lookback, horizon)
  config = dataclasses.replace(hparams.from_name('local'),
                               **etth1.model_overrides(plan, setting))
  return input_layout(spec, _OneSeries()), config


FULL = Plan(models={'electricity preset (paper size), E168 H24':
                    (ELECTRICITY_LAYOUT, hparams.from_name('electricity')),
                    'ETTh1 benchmark model, univariate E336 H96':
                    etth1_model(etth1.FULL, 'univariate', 336, 96)},
            steps=30, warmup=3, synthetic=(12, 100, PipelineConfig.train_steps))

QUICK = Plan(models={'ETTh1 quick model, univariate E48 H12':
                     etth1_model(etth1.QUICK, 'univariate', 48, 12)},
             steps=2, warmup=1, synthetic=None)


def run(plan: Plan, work_dir: str) -> Dict[str, Any]:
  """Measures every model of `plan` and the default-data pipeline; JSON-ready results."""
  throughput = {}
  for name, (layout, config) in plan.models.items():
    log = os.path.join(work_dir, 'throughput', f'{len(throughput)}.log')
    figures, peak_rss = child.call(measure, layout, config, plan.steps, plan.warmup,
                                   log_path=log)
    throughput[name] = {**figures, 'hidden_size': config.hidden_size,
                        'batch_size': config.batch_size, 'encoder_steps': layout.encoder_steps,
                        'horizon': layout.horizon, 'peak_rss_mib': peak_rss}
    print(f'  throughput, {name}: {figures["windows_per_second"]} windows/s, peak RSS '
          f'{peak_rss:.0f} MiB', flush=True)
  result = {'benchmark': 'speed', 'throughput': throughput}
  if plan.synthetic:
    result['synthetic_pipeline'] = _synthetic_pipeline(*plan.synthetic, work_dir)
  return result


def _synthetic_pipeline(series: int, days: int, train_steps: int,
                        work_dir: str) -> Dict[str, Any]:
  """The default data set and settings of `make run`, timed per component."""
  config, rows = default_data_run(series, days, train_steps, work_dir)
  result = pipeline_run.run(config)
  print(f'  synthetic pipeline ({rows} rows): {result.seconds:.0f} s', flush=True)
  return {'rows': rows, 'series': series, 'days': days, 'train_steps': train_steps,
          **result.summary()}


def default_data_run(series: int, days: int, train_steps: int, work_dir: str
                     ) -> Tuple[PipelineConfig, int]:
  """Generates the default data set at `series` x `days` under `work_dir` and returns the
  config of a fresh run on it with `make run`'s settings, and its rows."""
  dataset = get_dataset('synthetic')
  data_file = os.path.join(work_dir, 'data', 'synthetic.csv')
  rows = default_data.generate(data_file, num_series=series, days=days)
  config = pipeline_run.new_config(
      os.path.join(work_dir, 'synthetic'), data_file, dataset=dataset.spec,
      time_split=dataset.split, blessing=dataset.blessing,
      strides=default_strides(dataset.spec, dataset.split), train_steps=train_steps,
      schema_file=curated_schema_path('synthetic'))
  return config, rows
