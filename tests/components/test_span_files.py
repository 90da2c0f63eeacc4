"""Listing the newest spans of an input pattern from the files."""

import pytest

from components import span_files


def _touch(root, *paths):
  for path in paths:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text('x')


def test_the_newest_spans_with_files_up_to_the_current_one_oldest_first(tmp_path):
  _touch(tmp_path, 'span-1/a.csv', 'span-2/a.csv', 'span-4/a.csv', 'span-10/b.csv',
         'span-12/a.csv', 'span-3/notes.txt')
  assert span_files.newest_spans(str(tmp_path), 'span-{SPAN}/*.csv', 10, 3) == [
      (2, 'span-2/*.csv'), (4, 'span-4/*.csv'), (10, 'span-10/*.csv')]
  assert span_files.newest_spans(str(tmp_path), 'span-{SPAN}/*.csv', 1, 3) == [
      (1, 'span-1/*.csv')]


def test_zero_padded_spans_and_a_span_named_twice(tmp_path):
  _touch(tmp_path, 'day-007/load-007.csv', 'day-008/load-008.csv', 'day-009/load-001.csv')
  assert span_files.newest_spans(str(tmp_path), 'day-{SPAN:3}/load-{SPAN:3}.csv', 9, 5) == [
      (7, 'day-007/load-007.csv'), (8, 'day-008/load-008.csv')]


@pytest.mark.parametrize('pattern, message', [
    ('rows/*.csv', "needs {SPAN} in the input pattern, got 'rows/*.csv'"),
    ('span-{SPAN}/v{VERSION}/*.csv', 'also has {VERSION}'),
])
def test_patterns_it_cannot_read_across_spans_are_refused(pattern, message):
  with pytest.raises(ValueError) as error:
    span_files.check_pattern(pattern)
  assert message in str(error.value)
