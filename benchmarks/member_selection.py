"""Would an ensemble do better with its members chosen on the eval windows? For suite runs
of an ensemble (`model: {ensemble_size: 3}`): each member's eval quantile loss and test
MAE, the test MAE of the mean of every member and of the members
`trainer_module.member_selection` keeps on the eval windows.

```bash
.venv/bin/python -m benchmarks.suite --datasets shop --seeds 1 --work-dir /tmp/suite
.venv/bin/python -m benchmarks.member_selection /tmp/suite/shop/seed-1 --output /tmp/selection.json
```

The members' weights come from the exported model's warm-start checkpoint, so the figures
are the run's own members; a median is their mean at or above the spec's forecast floor,
as the export serves it (calibration moves the bands, not the median), so for a run that
served every member's mean `all_test_mae` repeats its test MAE.
"""

import argparse
import json
import os
import sys
from typing import Dict, List, Optional, Sequence

import numpy as np

from benchmarks.calibration_transfer import one_match


def member_forecasts(run_dir: str, split: str):
  """Each member's quantile forecasts [M, N, H, Q] of a split's windows and the actuals
  [N, H], with the model's quantiles and forecast floor."""
  import tensorflow_transform as tft

  from schema.hparams import TFTConfig
  from trainer_module import export, train, warm_start, window_inputs
  from trainer_module.tft.ensemble import TFTEnsemble
  from trainer_module.tft.model import build_tft_model

  model_dir = one_match(os.path.join(run_dir, '**', 'Trainer', 'model', '*', 'Format-Serving'))
  spec = export.read_dataset_spec(model_dir)
  architecture = warm_start.recorded_architecture(model_dir)
  config = TFTConfig(**{key: value for key, value in architecture.items() if key != 'layout'})
  if config.ensemble_size < 2:
    raise SystemExit(f'{run_dir}: its model is one TFT, not an ensemble')
  transform = tft.TFTransformOutput(one_match(os.path.join(run_dir, '**', 'Transform',
                                                       'transform_graph', '*')))
  layout = window_inputs.input_layout(spec, transform)
  members = [build_tft_model(layout, config, name=name) for name in train.member_names(config)]
  warm_start.weights_checkpoint(TFTEnsemble(members)).read(
      warm_start.checkpoint_path(model_dir)).assert_existing_objects_matched()
  files = [os.path.join(one_match(os.path.join(run_dir, '**', 'Windowing', '**',
                                           f'Split-{split}')), '*')]
  forecasts, actual = [[] for _ in members], []
  for inputs, label in window_inputs.windows_in_order(files, spec, segments=False):
    for index, member in enumerate(members):
      forecasts[index].append(member(inputs, training=False)[
          window_inputs.QUANTILES_OUTPUT].numpy())
    actual.append(label.numpy())
  return (np.stack([np.concatenate(member) for member in forecasts]), np.concatenate(actual),
          config.quantiles, spec.forecast_floor)


def selection(run_dir: str) -> Dict[str, object]:
  """The figures of one suite run (a `seed-N` directory) of an ensemble."""
  from trainer_module import member_selection

  eval_forecasts, eval_actual, quantiles, floor = member_forecasts(run_dir, 'eval')
  test_forecasts, test_actual, _, _ = member_forecasts(run_dir, 'test')
  median = list(quantiles).index(0.5)

  def test_mae(members: Sequence[int]) -> float:
    served = test_forecasts[list(members)].mean(axis=0)[..., median]
    if floor is not None:
      served = np.maximum(served, floor)
    return float(np.mean(np.abs(served - test_actual)))

  eval_loss = member_selection.mean_loss(eval_forecasts, eval_actual, quantiles)
  members = range(eval_forecasts.shape[0])
  chosen = member_selection.greedy_selection(eval_loss, len(members))
  return {'members_eval_loss': [round(eval_loss([m]), 5) for m in members],
          'members_test_mae': [round(test_mae([m]), 4) for m in members],
          'all_test_mae': test_mae(members), 'chosen': chosen,
          'chosen_test_mae': test_mae(chosen),
          'best_eval_member_test_mae': test_mae([int(np.argmin(
              [eval_loss([m]) for m in members]))])}


def main(argv: Optional[List[str]] = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
  parser.add_argument('run_dirs', nargs='+', help='seed-N directories of suite runs')
  parser.add_argument('--output', help='write the figures here as JSON')
  args = parser.parse_args(argv)
  figures = {}
  for run_dir in args.run_dirs:
    figures[run_dir] = selection(run_dir)
    print(f'{run_dir}: {json.dumps(figures[run_dir])}', flush=True)
  if args.output:
    with open(args.output, 'w') as f:
      json.dump(figures, f, indent=2)


if __name__ == '__main__':
  main(sys.argv[1:])
