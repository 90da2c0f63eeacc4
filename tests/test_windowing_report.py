"""The windowing report: counts written, and errors when nothing usable is left."""

import json

import pytest

from components.windowing import write_window_report


def test_report_lists_windows_per_split_and_skips(tmp_path):
  path = tmp_path / 'report.json'
  write_window_report({'series': 3, 'rows': 90, 'windows_train': 40, 'windows_eval': 5,
                       'windows_skipped_gap': 2, 'series_too_short': 1,
                       'rows_in_short_series': 4}, str(path), ['train', 'eval'])
  report = json.loads(path.read_text())
  assert report['windows'] == {'train': 40, 'eval': 5}
  assert report['windows_skipped_gap'] == 2
  assert report['rows_in_short_series'] == 4


def test_every_series_too_short_is_an_error(tmp_path):
  with pytest.raises(ValueError, match='every series is shorter than one window'):
    write_window_report({'series': 2, 'rows': 8, 'series_too_short': 2,
                         'rows_in_short_series': 8}, str(tmp_path / 'r.json'), ['train'])


def test_a_split_without_windows_is_an_error(tmp_path):
  with pytest.raises(ValueError, match=r"no windows in splits \['eval'\].*shorten the history "
                     r'or the horizon\.$'):
    write_window_report({'series': 1, 'rows': 50, 'windows_train': 10,
                         'windows_skipped_crossing_split': 3}, str(tmp_path / 'r.json'),
                        ['train', 'eval'])
  # Windows lost to gaps point at the spec's frequency too (daily data read as hourly).
  with pytest.raises(ValueError, match=r"8607 windows were skipped for gaps in the series: if "
                     r"the data has none, check that the spec's frequency is the data's time "
                     'step'):
    write_window_report({'series': 3, 'rows': 450, 'windows_skipped_gap': 8607},
                        str(tmp_path / 'r.json'), ['train', 'eval'])
