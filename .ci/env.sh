# Sourced by the test and demo commands: makes build/venv with the tools a fresh machine lacks
# (cmake and ninja from PyPI, cffi, pytest, mypy, the wheel builders) and puts it first on PATH.
# Needs only python3 with pip; nothing is installed outside the repository's build/ folder.
set -euo pipefail
COVE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=$COVE_ROOT/build/venv
if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$COVE_ROOT/build"
  # Debian's own python3 needs python3-venv for this; install it when venv is missing.
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$VENV"
  fi
fi
if ! "$VENV/bin/python" -c "import cffi, pytest, setuptools, wheel, cmake, ninja, mypy" 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "cmake>=3.29" ninja "cffi>=1.15" pytest setuptools wheel mypy
fi
export PATH=$VENV/bin:$PATH
export COVE_ROOT
