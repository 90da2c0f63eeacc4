"""The exit codes of every command (`tft-pipeline`, its `init` and `backtest`,
`tft-predict`, `tft-report`), and the error that marks input the user can fix.

| code | meaning |
| --- | --- |
| 0 | done |
| 1 | the run itself failed (a component, the training, the machine) |
| 2 | bad input: a file, a value in it, an option or a spec the user can fix |
| 3 | a partial result: `tft-predict --skip-bad-series` left series out |
"""

DONE = 0
RUN_FAILED = 1
BAD_INPUT = 2
PARTIAL = 3


class InputError(ValueError):
  """Input the user can fix, named in the message with where it is and the fix: the command
  that meets it exits `BAD_INPUT`, whichever component raised it."""
