"""The windowing report: counts written, and errors when nothing usable is left."""

import json

import pytest

from components.windowing import write_window_report
from schema.datasets import SYNTHETIC

SPEC = SYNTHETIC.with_window(encoder_steps=24, horizon=6)


def test_report_lists_windows_per_split_and_skips(tmp_path):
  path = tmp_path / 'report.json'
  write_window_report({'series': 3, 'rows': 90, 'windows_train': 40, 'windows_eval': 5,
                       'windows_skipped_gap': 2, 'series_too_short': 1,
                       'rows_in_short_series': 4}, str(path), ['train', 'eval'], SPEC)
  report = json.loads(path.read_text())
  assert report['windows'] == {'train': 40, 'eval': 5}
  assert report['windows_skipped_gap'] == 2
  assert report['rows_in_short_series'] == 4


def test_every_series_too_short_is_an_error(tmp_path):
  with pytest.raises(ValueError, match=r'every series is shorter than one window: the longest '
                     r'spans 5 steps, a window 24 history \+ 6 forecast steps of the hourly '
                     'grid'):
    write_window_report({'series': 2, 'rows': 8, 'series_too_short': 2,
                         'rows_in_short_series': 8, 'longest_series_steps': 5},
                        str(tmp_path / 'r.json'), ['train'], SPEC)


def test_a_training_split_without_windows_compares_its_span_with_the_whole_window(tmp_path):
  with pytest.raises(ValueError, match=r"no windows in splits \['train'\] \(the longest train "
                     r'period of a series spans 20 steps; a training window needs 24 history '
                     r'\+ 6 forecast steps of the hourly grid\)'):
    write_window_report({'series': 1, 'rows': 50, 'windows_eval': 3, 'longest_train_steps': 20},
                        str(tmp_path / 'r.json'), ['train', 'eval'], SPEC)


def test_a_split_without_windows_is_an_error(tmp_path):
  with pytest.raises(ValueError, match=r"no windows in splits \['eval'\] \(the longest eval "
                     r'period of a series spans 4 steps; a window needs its 6 forecast steps '
                     r'in it, from a step divisible by 6\).*shorten the history or the '
                     r'horizon\.$'):
    write_window_report({'series': 1, 'rows': 50, 'windows_train': 10,
                         'windows_skipped_crossing_split': 3, 'longest_eval_steps': 4},
                        str(tmp_path / 'r.json'), ['train', 'eval'], SPEC)
  # Windows lost to gaps point at the spec's frequency too (daily data read as hourly).
  with pytest.raises(ValueError, match=r"8607 windows were skipped for gaps in the series: if "
                     r"the data has none, check that the spec's frequency is the data's time "
                     'step'):
    write_window_report({'series': 3, 'rows': 450, 'windows_skipped_gap': 8607},
                        str(tmp_path / 'r.json'), ['train', 'eval'], SPEC)
