"""Fixtures of the Kubeflow / Vertex AI tests: deployment configs, one compile per
session, loopback-only HTTP stand-ins for the Vertex AI and Kubeflow Pipelines APIs,
a guard that fails a test reaching anything but loopback, and a tighter time limit."""

import http.server
import json
import os
import socket
import threading
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from kubeflow import deployment

PROJECT = 'test-project'
REGION = 'europe-west4'
IMAGE = 'europe-west4-docker.pkg.dev/test-project/tft/tft-components:test'
TPU_TRAINER_IMAGE = 'europe-west4-docker.pkg.dev/test-project/tft/tft-trainer-tpu:test'
GPU_TRAINER_IMAGE = 'europe-west4-docker.pkg.dev/test-project/tft/tft-trainer-gpu:test'
PIPELINE_ROOT = 'gs://test-bucket/tft/root'
DATA_ROOT = 'gs://test-bucket/tft/data'
TEST_TIME_LIMIT_S = 240  # pytest-timeout's limit for these tests; the suite's is in pytest.ini
_LOOPBACK = ('127.0.0.1', 'localhost', '::1')


def make_deployment(**changes) -> deployment.DeploymentConfig:
  values = dict(project=PROJECT, region=REGION, pipeline_root=PIPELINE_ROOT,
                data_root=DATA_ROOT, image=IMAGE)
  values.update(changes)
  return deployment.from_dict(values)


TPU_V3 = deployment.TrainingHardware('tpu', 'cloud-tpu', 'TPU_V3', 8)
TPU_V5E = deployment.TrainingHardware('tpu', 'ct5lp-hightpu-4t', tpu_topology='2x2')
GPU_T4 = deployment.TrainingHardware('gpu', 'n1-standard-8', 'NVIDIA_TESLA_T4', 1)
CPU = deployment.TrainingHardware('cpu', 'n1-standard-16')

DEPLOYMENTS = {
    # TPU training, Dataflow and a Vertex endpoint: every cloud option at once.
    'tpu': make_deployment(training=TPU_V3, trainer_image=TPU_TRAINER_IMAGE,
                           dataflow=deployment.Dataflow(),
                           endpoint=deployment.Endpoint(name='tft-endpoint'),
                           service_account='runner@test-project.iam.gserviceaccount.com',
                           training_options={'steps_per_execution': 64, 'seed': 7}),
    'tpu_v5e': make_deployment(training=TPU_V5E, trainer_image=TPU_TRAINER_IMAGE),
    'gpu': make_deployment(training=GPU_T4, trainer_image=GPU_TRAINER_IMAGE),
    'cpu': make_deployment(training=CPU),
    'in_step': make_deployment(),
}


@pytest.fixture(scope='session')
def deployments() -> Dict[str, deployment.DeploymentConfig]:
  return DEPLOYMENTS


@pytest.fixture(scope='session')
def compiled(tmp_path_factory) -> Dict[str, Tuple[str, Dict[str, Any]]]:
  """Each of DEPLOYMENTS compiled once: name -> (JSON path, JSON as loaded from the file)."""
  from kubeflow import runner

  directory = tmp_path_factory.mktemp('compiled')
  result = {}
  for name, config in DEPLOYMENTS.items():
    path = str(directory / f'{name}.json')
    runner.compile_pipeline(config, path)
    with open(path) as f:
      result[name] = (path, json.load(f))
  return result


def pytest_collection_modifyitems(items):
  here = os.path.dirname(__file__)
  for item in items:
    if str(item.path).startswith(here):
      item.add_marker(pytest.mark.timeout(TEST_TIME_LIMIT_S))


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
  """Fails the test on a connection or name lookup beyond loopback.

  Python-level sockets only (gRPC's C core resolves and connects on its own). Attempts
  are refused and also recorded, so one swallowed by a library's broad `except` still
  fails the test.
  """
  real_connect = socket.socket.connect
  real_getaddrinfo = socket.getaddrinfo
  attempts = []

  def refuse(what):
    attempts.append(what)
    raise ConnectionRefusedError(f'test tried to reach {what}: only loopback is allowed')

  def connect(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
      refuse(address)
    return real_connect(sock, address)

  def getaddrinfo(host, *args, **kwargs):
    if host not in _LOOPBACK and host is not None:
      refuse(host)
    return real_getaddrinfo(host, *args, **kwargs)

  monkeypatch.setattr(socket.socket, 'connect', connect)
  monkeypatch.setattr(socket, 'getaddrinfo', getaddrinfo)
  for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY'):
    monkeypatch.delenv(name, raising=False)
  yield
  assert not attempts, f'the test tried to leave loopback: {attempts}'


class Request:
  """One request a stand-in received."""

  def __init__(self, method: str, url: str, body: bytes):
    parsed = urllib.parse.urlsplit(url)
    self.method = method
    self.path = parsed.path
    self.query = dict(urllib.parse.parse_qsl(parsed.query))
    self.body = json.loads(body) if body else None

  def __repr__(self):
    return f'{self.method} {self.path} {self.query}'


Route = Callable[[Request], Optional[Tuple[int, Any]]]


class StandIn:
  """An HTTP server on 127.0.0.1 that records requests and answers with `route`.

  `route(request)` returns (status, JSON body), or None for 404.
  """

  def __init__(self, route: Route):
    self.requests: List[Request] = []
    stand_in = self

    class Handler(http.server.BaseHTTPRequestHandler):
      protocol_version = 'HTTP/1.1'

      def _answer(self):
        length = int(self.headers.get('Content-Length') or 0)
        request = Request(self.command, self.path, self.rfile.read(length))
        stand_in.requests.append(request)
        answer = route(request)
        status, body = answer if answer is not None else (404, {'error': {
            'code': 404, 'message': f'stand-in has no route for {request}',
            'status': 'NOT_FOUND'}})
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

      do_GET = do_POST = do_DELETE = do_PATCH = _answer

      def log_message(self, *args):  # keep test output clean
        pass

    self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    self._server.timeout = 5
    self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

  @property
  def url(self) -> str:
    return f'http://127.0.0.1:{self._server.server_address[1]}'

  def start(self) -> 'StandIn':
    self._thread.start()
    return self

  def stop(self) -> None:
    self._server.shutdown()
    self._server.server_close()
    self._thread.join(timeout=10)

  def find(self, method: str, path_suffix: str) -> List[Request]:
    return [r for r in self.requests if r.method == method and r.path.endswith(path_suffix)]


@pytest.fixture
def stand_in():
  """Starts stand-ins built with `stand_in(route)`; stops them after the test."""
  servers = []

  def start(route: Route) -> StandIn:
    server = StandIn(route).start()
    servers.append(server)
    return server

  yield start
  for server in servers:
    server.stop()
