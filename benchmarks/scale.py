"""Cost as the data grows: the default generator at several multiples of its rows.

Each scale is a fresh pipeline run (`benchmarks.pipeline_run`, its own process) on the
default data set with more series and more days and a short training (`--train-steps`),
and reports per component its wall time and rows per second (rows of the CSV over the
component's time), the peak resident memory of the run's process, and the bytes of each
component's artifacts against the CSV's. Each scale runs with the Beam components in
process (the local default) and in Beam's multi-process DirectRunner with two workers
(`tft-pipeline --beam-workers 2`, the mode Vertex AI runs), one after the other.

  .venv/bin/python -m benchmarks.scale                  # 1x, 10x, 30x: results/scale.json
  .venv/bin/python -m benchmarks.scale --scales 1 10    # a subset
  .venv/bin/python -m benchmarks.scale --beam-workers 1 --output /tmp/scale.json
"""

import argparse
import datetime
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from benchmarks import host, pipeline_run, readme_tables, report, speed
from pipeline import local_runner

RESULTS = os.path.join(readme_tables.RESULTS_DIR, 'scale.json')
# Multiples of the default rows (12 series x 100 days of hours): (series, days).
SCALES = {1: (12, 100), 10: (60, 200), 30: (120, 300)}
TRAIN_STEPS = 20
# Beam worker processes: 1 is the in-process runner, more the multi-process one.
BEAM_WORKERS = (1, 2)


def directory_bytes(path: str) -> int:
  """Bytes of every file under `path` (0 if it does not exist)."""
  return sum(os.path.getsize(os.path.join(root, name))
             for root, _, names in os.walk(path) for name in names)


def run_scale(scale: int, train_steps: int, work_dir: str, beam_workers: int = 1
              ) -> Dict[str, Any]:
  """One pipeline run at `scale` times the default rows, its Beam components in process
  (`beam_workers` 1) or in that many worker processes; JSON-ready figures."""
  series, days = SCALES[scale]
  config, rows = speed.default_data_run(
      series, days, train_steps, os.path.join(work_dir, f'{scale}x-{beam_workers}'))
  workers = beam_workers if beam_workers > 1 else None  # None: the in-process runner
  beam_args = local_runner.beam_args(workers)
  result = pipeline_run.run(config, beam_args=beam_args)
  csv_bytes = os.path.getsize(os.path.join(config.data_root, config.input_pattern))
  components = {name: {'seconds': round(result.components.get(name, 0.0), 1),
                       'artifact_bytes': directory_bytes(
                           os.path.join(config.pipeline_root, name))}
                for name in report.SCALE_DATA_COMPONENTS + report.SCALE_MODEL_COMPONENTS}
  for figures in components.values():
    figures['rows_per_second'] = round(rows / figures['seconds']) if figures['seconds'] else None
  print(f'  {scale}x ({rows:,} rows), '
        f'{local_runner.describe_beam(workers)}: {result.seconds:.0f} s, peak RSS '
        f'{result.peak_rss_mib:.0f} MiB; ' + ', '.join(
            f'{name} {figures["seconds"]:.0f} s' for name, figures in components.items()),
        flush=True)
  return {'scale': scale, 'beam_workers': beam_workers, 'beam_args': beam_args,
          'series': series, 'days': days, 'rows': rows, 'csv_bytes': csv_bytes, 'train_steps': train_steps, 'components': components,
          'window_counts': result.window_counts, 'seconds': round(result.seconds, 1),
          'peak_rss_mib': result.peak_rss_mib}


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--scales', type=int, nargs='+', choices=sorted(SCALES),
                      default=sorted(SCALES))
  parser.add_argument('--train-steps', type=int, default=TRAIN_STEPS)
  parser.add_argument('--work-dir', default=os.path.join(readme_tables.PROJECT_ROOT, 'runs',
                                                         'benchmarks', 'scale'))
  parser.add_argument('--output', default=RESULTS)
  parser.add_argument('--beam-workers', type=int, nargs='+', default=list(BEAM_WORKERS),
                      help="Beam worker processes of each scale's runs: 1 runs the Beam "
                      "components in process, more in Beam's multi-process DirectRunner "
                      '(default: %(default)s)')
  args = parser.parse_args(argv)
  if min(args.beam_workers) < 1:
    parser.error(f'--beam-workers takes 1 (in process) or more, got {args.beam_workers}')
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # for the child processes
  runs = [run_scale(scale, args.train_steps, args.work_dir, workers)
          for scale in args.scales for workers in args.beam_workers]
  readme_tables.write_results(args.output, {
      'measured': datetime.date.today().isoformat(), 'host': host.description(),
      'runs': runs})
  return 0


if __name__ == '__main__':
  sys.exit(main())
