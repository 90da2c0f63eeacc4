#!/usr/bin/env bash
# Creates .venv with Python 3.10 and installs the locked dependency set and the project.
# Re-running it when requirements.lock and setup.py are unchanged takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
STAMP="$VENV/.installed"
wanted=$(cat requirements.lock setup.py | sha256sum | cut -d' ' -f1)
if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$wanted" ]]; then
  exit 0
fi

find_python() {
  local candidates=(python3.10) candidate
  if command -v pyenv >/dev/null 2>&1; then
    candidates+=("$(pyenv root)"/versions/3.10*/bin/python3.10)
  fi
  candidates+=("$HOME"/.pyenv/versions/3.10*/bin/python3.10)
  for candidate in "${candidates[@]}"; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

if [[ ! -x "$VENV/bin/python" ]]; then
  if ! PYTHON=$(find_python); then
    echo "error: Python 3.10 is required (TFX 1.16 supports 3.9 and 3.10 only) and none was" >&2
    echo "found on PATH or in pyenv. Install it, e.g. 'pyenv install 3.10' or your" >&2
    echo "distribution's python3.10 and python3.10-venv packages, then re-run." >&2
    exit 1
  fi
  echo "[setup] creating $VENV with $PYTHON"
  "$PYTHON" -m venv "$VENV"
fi

echo "[setup] installing the locked dependency set (a few minutes the first time)"
"$VENV/bin/python" -m pip install --quiet --upgrade pip==24.2
"$VENV/bin/python" -m pip install --quiet -r requirements.lock
"$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation --use-pep517 -e .
echo "$wanted" > "$STAMP"
echo "[setup] done"
