"""Live progress of a local run: which component is running, and how long each took.

A background thread polls the run's ML Metadata store, so the report does not depend on
how the components' libraries configure logging; a component's own progress records
(`common.progress_log`) report the store first, so that they follow the line of the
component's start.
"""

import sys
import threading

from ml_metadata import errors, metadata_store
from ml_metadata.proto import metadata_store_pb2

from common import progress_log
from pipeline.run_summary import node_id

_DONE = {metadata_store_pb2.Execution.COMPLETE: 'done', metadata_store_pb2.Execution.CACHED:
         'cached', metadata_store_pb2.Execution.FAILED: 'FAILED',
         metadata_store_pb2.Execution.CANCELED: 'canceled'}


class ComponentProgress:
  """A context manager printing one line when a component starts and one when it ends."""

  def __init__(self, connection_config: metadata_store_pb2.ConnectionConfig,
               stream=None, interval_seconds: float = 0.5):
    self._config = connection_config
    self._stream = stream if stream is not None else sys.stdout
    self._lock = threading.Lock()  # the poller's thread and the components' report
    self._interval = interval_seconds
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._poll, daemon=True)
    self._reported = {}  # execution id -> 'started' | 'finished'
    self._earlier_runs = set()

  def __enter__(self):
    # Executions of earlier runs in the same store are not reported.
    self._earlier_runs = {e.id for e in self._executions()[1]}
    progress_log.print_to(self._stream, before_each=self._report_once)
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()
    progress_log.print_to(self._stream)
    self._report_once()  # the last transitions

  def _poll(self) -> None:
    while not self._stop.wait(self._interval):
      self._report_once()

  def _executions(self):
    try:
      store = metadata_store.MetadataStore(self._config)
      return store, store.get_executions()
    except errors.MetadataStoreError:  # the store is being created or is busy
      return None, []

  def _report_once(self) -> None:
    with self._lock:
      self._report_executions()

  def _report_executions(self) -> None:
    store, executions = self._executions()
    for execution in sorted(executions, key=lambda e: e.id):
      if execution.id in self._earlier_runs or self._reported.get(execution.id) == 'finished':
        continue
      name = node_id(store, execution)
      if execution.id not in self._reported:
        self._reported[execution.id] = 'started'
        self._print(f'[pipeline] {name} ...')
      if execution.last_known_state in _DONE:
        self._reported[execution.id] = 'finished'
        seconds = (execution.last_update_time_since_epoch -
                   execution.create_time_since_epoch) / 1000
        self._print(f'[pipeline] {name} {_DONE[execution.last_known_state]} in {seconds:.1f} s')

  def _print(self, line: str) -> None:
    # One write: a component's progress line, written from its own thread, cannot split it.
    self._stream.write(line + '\n')
    self._stream.flush()
