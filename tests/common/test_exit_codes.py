"""Which errors are the user's input: raised in process, or passed on as a Beam worker's
traceback text by the multi-process runner."""

from common import exit_codes
from components import anomaly_gate


def test_an_input_error_raised_here_or_in_a_worker_process_is_told_from_a_failure():
  message = "data.csv, line 42: column 'load' holds 'x', which is not a number"
  assert exit_codes.input_error_message(exit_codes.InputError(message)) == message
  assert exit_codes.input_error_message(anomaly_gate.DataAnomaliesError(message)) == message
  worker = ('Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
            f"common.exit_codes.InputError: {message} [while running 'Read']\n")
  assert exit_codes.input_error_message(RuntimeError(worker)) == (
      f"{message} [while running 'Read']")
  subclass = worker.replace('common.exit_codes.InputError',
                            'components.anomaly_gate.DataAnomaliesError')
  assert exit_codes.input_error_message(RuntimeError(subclass)) is not None
  # Other errors, named or not, in process or from a worker, are the run's failures.
  for failure in (ValueError(message), RuntimeError(worker.replace(
      'common.exit_codes.InputError', 'builtins.ValueError')), RuntimeError(worker.replace(
          'common.exit_codes.InputError', 'no_such_module.InputError')), OSError('disk full')):
    assert exit_codes.input_error_message(failure) is None
