"""What the Trainer prints of its epochs, and how a component's progress reaches the
command's output."""

import io
import logging

import pytest

from common import progress_log
from trainer_module import epoch_progress


@pytest.fixture(autouse=True)
def _progress_logger_restored():
  root = logging.getLogger(progress_log.ROOT)
  saved = (list(root.handlers), root.level, root.propagate)
  yield
  root.handlers[:], root.level, root.propagate = saved


def _printed(stream: io.StringIO):
  return stream.getvalue().splitlines()


def test_each_epoch_is_one_line_naming_the_lowest_eval_loss_when_it_rose():
  stream = io.StringIO()
  progress_log.print_to(stream)
  callback = epoch_progress.EpochProgress(progress_log.logger('Trainer'), epochs=20)
  for epoch, (loss, eval_loss) in enumerate([(2.0, 1.5), (1.2, 1.25), (1.1, 1.3)]):
    callback.on_epoch_begin(epoch)
    callback.on_epoch_end(epoch, {'loss': loss, 'val_loss': eval_loss,
                                  'quantiles_loss': loss})
  lines = [line.rsplit(', ', 1)[0] for line in _printed(stream)]  # without the time
  assert lines == ['[Trainer] epoch 1/20: loss 2, eval loss 1.5',
                   '[Trainer] epoch 2/20: loss 1.2, eval loss 1.25',
                   '[Trainer] epoch 3/20: loss 1.1, eval loss 1.3 (lowest 1.25, epoch 2)']
  printed = _printed(stream)
  assert printed[0].endswith(' s (the first epoch also builds the training step)')
  assert printed[1].endswith(' s') and 'first epoch' not in printed[1]


def test_an_ensemble_member_is_named_and_a_later_epoch_is_numbered_from_one():
  stream = io.StringIO()
  progress_log.print_to(stream)
  callback = epoch_progress.EpochProgress(progress_log.logger('Trainer'), epochs=5,
                                          member='member 2 of 3')
  callback.on_epoch_begin(3)
  callback.on_epoch_end(3, {'loss': 0.5})  # no eval split
  assert _printed(stream)[0].startswith('[Trainer] member 2 of 3, epoch 4/5: loss 0.5, ')


def test_progress_records_are_printed_once_after_the_hook_and_not_passed_to_root(caplog):
  stream, calls = io.StringIO(), []
  progress_log.print_to(stream, before_each=lambda: calls.append(stream.getvalue()))
  with caplog.at_level(logging.INFO):
    progress_log.logger('GbmBaseline').info('P50: %d rounds', 129)
    progress_log.logger('GbmBaseline').info('second')
  assert _printed(stream) == ['[GbmBaseline] P50: 129 rounds', '[GbmBaseline] second']
  # The hook ran before each record was written (a run's component start comes first).
  assert calls == ['', '[GbmBaseline] P50: 129 rounds\n']
  assert not [r for r in caplog.records if r.name.startswith(progress_log.ROOT)]
  # Called again, the stream and the hook are replaced, not added to.
  other = io.StringIO()
  progress_log.print_to(other)
  progress_log.logger('Trainer').info('once')
  assert (_printed(other), len(calls)) == (['[Trainer] once'], 2)
  assert _printed(stream)[-1] == '[GbmBaseline] second'


def test_a_failing_hook_does_not_fail_the_component_that_logs(capsys):
  stream = io.StringIO()

  def broken():
    raise BrokenPipeError('the run\'s output was closed')

  progress_log.print_to(stream, before_each=broken)
  progress_log.logger('Trainer').info('epoch 1/2')  # raises nothing
  assert _printed(stream) == ['[Trainer] epoch 1/2']
  assert 'BrokenPipeError' in capsys.readouterr().err  # logging's own report of it
