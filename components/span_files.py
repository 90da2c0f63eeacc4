"""The newest spans of an input pattern, listed from the files themselves.

Retraining on the newest N spans reads their files in one ExampleGen run: the spans are
found by listing the input directory (`tf.io.gfile`, so gs:// works), not by asking the
metadata store, so the same code runs under LocalDagRunner and on Vertex AI, whose
compiled pipelines cannot resolve a rolling range of earlier ExampleGen outputs.
Patterns hold the span as `{SPAN}` or zero-padded as `{SPAN:4}`; TFX's `{VERSION}` and
date specs are not read across spans.
"""

import os
import re
from typing import List, Tuple

_SPAN = re.compile(r'\{SPAN(?::(\d+))?\}')
_UNSUPPORTED = re.compile(r'\{(VERSION|YYYY|MM|DD)(:\d+)?\}')
_TFX_SPEC = re.compile(r'\{[A-Z]+(:\d+)?\}')


def check_pattern(pattern: str) -> None:
  """Raises ValueError unless `pattern` names its span as this module reads it."""
  if not _SPAN.search(pattern):
    raise ValueError(f"training on several spans needs {{SPAN}} in the input pattern, got "
                     f"'{pattern}' (e.g. 'span-{{SPAN}}/*.csv')")
  unsupported = _UNSUPPORTED.search(pattern)
  if unsupported:
    raise ValueError(f"training on several spans reads patterns with {{SPAN}} only; "
                     f"'{pattern}' also has {unsupported.group(0)}")


def as_glob(pattern: str) -> str:
  """`pattern` with TFX's {SPAN}, {VERSION} and date specs, each a number, as '*'."""
  return _TFX_SPEC.sub('*', pattern)


def with_span(pattern: str, span: int) -> str:
  """`pattern` with its span spec replaced by `span` (zero-padded to the spec's width)."""
  return _SPAN.sub(lambda spec: str(span).zfill(int(spec.group(1) or 0)), pattern)


def newest_spans(input_base: str, pattern: str, newest: int, count: int) -> List[Tuple[int, str]]:
  """(span, file pattern) of the newest `count` spans up to `newest` that have files,
  oldest first.

  Raises:
    ValueError: the pattern's span spec is not one this module reads.
  """
  chosen = [span for span in spans_in(input_base, pattern) if span <= newest][-count:]
  return [(span, with_span(pattern, span)) for span in chosen]


def spans_in(input_base: str, pattern: str) -> List[int]:
  """The spans that have files matching `pattern` under `input_base`, in order.

  Raises:
    ValueError: the pattern's span spec is not one this module reads.
  """
  import tensorflow as tf  # here: the deployment checks use check_pattern without TF

  check_pattern(pattern)
  full = os.path.join(input_base, pattern)
  glob_pattern = _SPAN.sub('*', full)
  regex_parts = [re.escape(part) for part in _SPAN.split(full)[::2]]
  regex = re.compile(r'(\d+)'.join(
      part.replace(r'\*', '[^/]*').replace(r'\?', '[^/]') for part in regex_parts) + '$')
  spans = set()
  for path in tf.io.gfile.glob(glob_pattern):
    match = regex.match(path)
    if match and len(set(match.groups())) == 1:  # one span, however often it is named
      spans.add(int(match.group(1)))
  return sorted(spans)
