"""Writes the results tables of the READMEs and the benchmark pages, and `results.md`
(every table), from `benchmarks/results/*.json`.

A table in `README.md`, `benchmarks/README.md` or a benchmark's page (`benchmarks/pages/*.md`)
is a block between two comments,

  <!-- table NAME: python -m benchmarks.readme_tables writes it from benchmarks/results -->
  ...
  <!-- end of table -->

and NAME is one of `benchmarks.report.TABLES`. The benchmark scripts rewrite the blocks
after writing their JSON; by hand:

  .venv/bin/python -m benchmarks.readme_tables           # rewrite the blocks and results.md
  .venv/bin/python -m benchmarks.readme_tables --check   # exit 1 if any is out of date
"""

import argparse
import glob
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional

from benchmarks import report

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(PROJECT_ROOT, 'benchmarks', 'results')
READMES = (os.path.join(PROJECT_ROOT, 'README.md'),
           os.path.join(PROJECT_ROOT, 'benchmarks', 'README.md'),
           *sorted(glob.glob(os.path.join(PROJECT_ROOT, 'benchmarks', 'pages', '*.md'))))
REPORT_FILE = 'results.md'  # every table, beside the results
_BLOCK_START = re.compile(r'<!-- table [a-z_0-9]+:')
_BLOCK = re.compile(r'(<!-- table (?P<name>[a-z_0-9]+):[^\n]*-->\n)(?P<body>.*?)'
                    r'(<!-- end of table -->)', re.DOTALL)


def load_results(results_dir: str = RESULTS_DIR) -> report.Results:
  """Every benchmark JSON in `results_dir`, by file stem."""
  results = {}
  for path in sorted(glob.glob(os.path.join(results_dir, '*.json'))):
    with open(path) as f:
      results[os.path.splitext(os.path.basename(path))[0]] = json.load(f)
  return results


def render(text: str, results: report.Results, source: str = 'the text') -> str:
  """`text` with each table block rewritten from `results`.

  Raises:
    ValueError: a block names an unknown table, or its table's results are missing.
  """
  if len(_BLOCK_START.findall(text)) != len(_BLOCK.findall(text)):
    raise ValueError(f'{source}: a "<!-- table NAME: ... -->" line has no '
                     '"<!-- end of table -->" after it')

  def table(match: 're.Match[str]') -> str:
    name = match.group('name')
    if name not in report.TABLES:
      raise ValueError(f'{source}: unknown table {name!r}; known: '
                       f'{", ".join(sorted(report.TABLES))}')
    try:
      lines = report.TABLES[name](results)
    except KeyError as missing:
      raise ValueError(f'{source}: table {name!r} needs results/{missing.args[0]}.json, '
                       'which is missing: run its benchmark first') from None
    return match.group(1) + '\n'.join(lines) + '\n' + match.group(4)

  return _BLOCK.sub(table, text)


def update(paths=READMES, results_dir: str = RESULTS_DIR, check: bool = False) -> List[str]:
  """Rewrites the blocks of `paths` and `results_dir`'s `REPORT_FILE` (or with `check`, only
  compares); returns the paths that were out of date."""
  results = load_results(results_dir)
  stale = []
  report_path = os.path.join(results_dir, REPORT_FILE)
  for path in list(paths) + [report_path]:
    text = ''
    if os.path.exists(path):
      with open(path) as f:
        text = f.read()
    rendered = (report.markdown(results) + '\n' if path == report_path
                else render(text, results, source=os.path.relpath(path, PROJECT_ROOT)))
    if rendered != text:
      stale.append(path)
      if not check:
        with open(path, 'w') as f:
          f.write(rendered)
  return stale


def write_results(results_file: str, result: Dict[str, Any]) -> None:
  """Writes a benchmark's JSON, then the README tables if it went to `benchmarks/results`."""
  with open(results_file, 'w') as f:
    json.dump(result, f, indent=2)
  print(f'[benchmarks] wrote {results_file}', flush=True)
  if os.path.dirname(os.path.abspath(results_file)) == RESULTS_DIR:
    for path in update():
      print(f'[benchmarks] tables rewritten in {os.path.relpath(path, PROJECT_ROOT)}')


def main(argv: Optional[List[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--check', action='store_true',
                      help='only compare: exit 1 if a block differs from the results')
  args = parser.parse_args(argv)
  stale = [os.path.relpath(path, PROJECT_ROOT) for path in update(check=args.check)]
  if args.check and stale:
    print(f'out of date: {", ".join(stale)}; run python -m benchmarks.readme_tables')
    return 1
  print(f'rewrote {", ".join(stale)}' if stale else 'the tables match the results')
  return 0


if __name__ == '__main__':
  sys.exit(main())
