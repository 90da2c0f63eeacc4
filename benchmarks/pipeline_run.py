"""One run of the product's pipeline for a benchmark, and what it produced.

Each run gets a fresh directory (pipeline root, SQLite metadata store, a link to its
data), so nothing is cached or warm-started from an earlier run, and a fresh process
(`benchmarks.child`), so its peak memory is its own. After the run the process reads each
component's wall time from the metadata store and scores the Trainer's model, blessed or
not, on every window of one split through its `transformed_windows` signature.
"""

import dataclasses
import glob
import json
import os
import shutil
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf
from tfx import v1 as tfx
from tfx.utils import path_utils

from benchmarks import child
from schema.window_report import WINDOW_REPORT_FILE
# The product's reading of a split's windows, kept under these names for the benchmarks.
from evaluation.window_forecasts import ScoredWindows, score_windows, split_files
from pipeline import progress, run_summary
from pipeline.config import PipelineConfig
from pipeline.local_runner import BEAM_ARGS
from pipeline.pipeline import create_pipeline
from schema.time_split import TEST_SPLIT
from trainer_module import training_plan

MAE = 'mean_absolute_error'  # the Evaluator's name of the median's MAE


@dataclasses.dataclass
class RunResult:
  """What one pipeline run did.

  Attributes:
    seconds: wall time of the whole run (LocalDagRunner.run).
    components: wall time of each component, in seconds, from the metadata store.
    peak_rss_mib: peak resident memory of the run's process: every component, then
      the scoring.
    window_counts: windows per split, from the Windowing report.
    validation_losses: the Trainer's validation loss after each epoch it ran, one list
      per TFT it trained (one, or each ensemble member's).
    blessed: whether the Evaluator blessed the model.
    eval_metrics: the Evaluator's overall metrics of the eval split (original units),
      the naive forecasts' MAEs among them.
    scored: the scored split, if one was asked for.
    gbm_baseline: what the run's GbmBaseline wrote (`evaluation.gbm_baseline.compare`).
    test_metrics: the Evaluator's overall metrics of the test split (original units), when
      the split holds one out: the product's own held-out figures.
  """
  seconds: float
  components: Dict[str, float]
  peak_rss_mib: float
  window_counts: Dict[str, int]
  validation_losses: List[List[float]]
  blessed: Optional[bool]
  eval_metrics: Dict[str, float]
  scored: Optional[ScoredWindows]
  gbm_baseline: Optional[Dict[str, Any]] = None
  test_metrics: Dict[str, float] = dataclasses.field(default_factory=dict)

  def training(self, config: PipelineConfig) -> Dict[str, Any]:
    """The training budget of `config` and how much of it this run used: the epochs run
    and the best one at the top level for one TFT, under 'members' for an ensemble."""
    model = config.model_config
    steps_per_epoch = training_plan.steps_per_epoch(config.train_steps, model.max_epochs)
    used = [{'epochs_run': len(losses), 'steps_run': steps_per_epoch * len(losses),
             'best_epoch': int(np.argmin(losses)) + 1 if losses else 0,
             'best_validation_loss': float(min(losses)) if losses else None}
            for losses in self.validation_losses]
    budget = {'max_steps': steps_per_epoch * model.max_epochs,
              'batch_size': model.batch_size, 'max_epochs': model.max_epochs,
              'trainer_seconds': round(self.components.get('Trainer', 0.0), 1)}
    return {**budget, **used[0]} if len(used) == 1 else {**budget, 'members': used}

  def summary(self) -> dict:
    """The run's JSON-ready figures, without the windows."""
    return {'seconds': round(self.seconds, 1),
            'components': {name: round(s, 1) for name, s in self.components.items()},
            'peak_rss_mib': self.peak_rss_mib, 'window_counts': self.window_counts,
            'blessed': self.blessed, 'eval_metrics': self.eval_metrics,
            'test_metrics': self.test_metrics, 'gbm_baseline': self.gbm_baseline}

  def product_test_mae(self, numpy_mae: float, scale: float = 1.0) -> float:
    """The Evaluator's test MAE (divided by `scale`), checked against the benchmark's
    NumPy one on the same windows.

    Raises:
      RuntimeError: the run has no test figures, or they differ from NumPy's.
    """
    if MAE not in self.test_metrics:
      raise RuntimeError('the run holds no test figures of the Evaluator: give its split '
                         'a test_start')
    product = self.test_metrics[MAE] / scale
    if not np.isclose(product, numpy_mae, rtol=1e-4):
      raise RuntimeError(f"the Evaluator's test MAE {product} is not NumPy's {numpy_mae} on "
                         'the same windows')
    return product


def pipeline_root(run_dir: str) -> str:
  """The pipeline root of the run that `new_config` sets up in `run_dir`."""
  return os.path.join(run_dir, 'pipeline_root')


def new_config(run_dir: str, data_file: str, **fields) -> PipelineConfig:
  """A PipelineConfig over a fresh `run_dir` that reads only `data_file`.

  `fields` are the remaining PipelineConfig fields (dataset, time_split, ...).
  """
  if os.path.exists(run_dir):
    shutil.rmtree(run_dir)
  data_root = os.path.join(run_dir, 'data')
  os.makedirs(data_root)
  os.symlink(os.path.abspath(data_file), os.path.join(data_root, os.path.basename(data_file)))
  return PipelineConfig(
      pipeline_name=f'benchmark-{os.path.basename(run_dir)}',
      pipeline_root=pipeline_root(run_dir), data_root=data_root,
      input_pattern=os.path.basename(data_file),
      serving_model_dir=os.path.join(run_dir, 'serving_model'), **fields)


def run(config: PipelineConfig, score_split: Optional[str] = None,
        beam_args: Sequence[str] = BEAM_ARGS) -> RunResult:
  """Runs `config` in a new process (log: `run.log` beside the pipeline root), with the
  local runner's Beam arguments unless told otherwise."""
  log_path = os.path.join(os.path.dirname(config.pipeline_root), 'run.log')
  fields, peak_rss = child.call(_run_here, config, score_split, list(beam_args),
                                log_path=log_path)
  return RunResult(peak_rss_mib=peak_rss, **fields)


def _run_here(config: PipelineConfig, score_split: Optional[str],
              beam_args: List[str]) -> Dict[str, Any]:
  metadata = tfx.orchestration.metadata.sqlite_metadata_connection_config(
      os.path.join(os.path.dirname(config.pipeline_root), 'metadata.sqlite'))
  started = time.monotonic()
  with progress.ComponentProgress(metadata):
    tfx.orchestration.LocalDagRunner().run(create_pipeline(
        config, metadata_connection_config=metadata, beam_pipeline_args=beam_args))
  seconds = time.monotonic() - started
  summary = run_summary.latest_run_summary(metadata, config.pipeline_name)
  scored = None
  if score_split:
    model_dir = path_utils.serving_model_path(summary.model_uri)
    scored = score_windows(model_dir, _split_files(config, score_split),
                    config.model_config.quantiles)
  root = config.pipeline_root
  with open(only_path(root, 'Windowing', 'windows', '*', WINDOW_REPORT_FILE)) as f:
    window_counts = json.load(f)['windows']
  return {'seconds': seconds,
          'components': {c.node_id: c.seconds for c in summary.components},
          'window_counts': window_counts,
          'validation_losses': validation_losses(only_path(root, 'Trainer', 'model_run', '*')),
          'blessed': summary.blessed, 'eval_metrics': summary.eval_metrics or summary.metrics,
          'scored': scored, 'gbm_baseline': summary.gbm_baseline,
          'test_metrics': summary.metrics if summary.judged_split == TEST_SPLIT else {}}


def only_path(pipeline_root: str, *parts: str) -> str:
  """The one path matching `parts` (glob patterns) under a pipeline root.

  Raises:
    SystemExit: none or several match, naming the root and what to pass.
  """
  found = glob.glob(os.path.join(pipeline_root, *parts))
  if len(found) != 1:
    raise SystemExit(f'{pipeline_root} holds {len(found)} {"/".join(parts)}, not one; pass '
                     'the pipeline root of one benchmark run (the .../pipeline_root '
                     'directory it prints)')
  return found[0]


def _split_files(config: PipelineConfig, split: str) -> List[str]:
  return split_files(only_path(config.pipeline_root, 'Windowing', 'windows', '*'), split)


def validation_losses(model_run_dir: str) -> List[List[float]]:
  """The per-epoch validation loss of each TFT from the Trainer's TensorBoard logs: in
  `model_run_dir` for one, in a directory per member for an ensemble."""
  members = sorted(os.path.dirname(path) for path in
                   glob.glob(os.path.join(model_run_dir, '*', 'validation')))
  return [_epoch_losses(os.path.join(log, 'validation'))
          for log in members or [model_run_dir]]


def _epoch_losses(validation_dir: str) -> List[float]:
  losses = []
  for path in sorted(glob.glob(os.path.join(validation_dir, 'events.out.*'))):
    for event in tf.compat.v1.train.summary_iterator(path):
      losses += [float(tf.make_ndarray(value.tensor)) for value in event.summary.value
                 if value.tag == 'epoch_loss']
  return losses
