#!/usr/bin/env bash
# Set up (idempotent, see scripts/setup.sh), then run the test suite.
# Extra arguments go to pytest:  bash scripts/test.sh -m slow   |   bash scripts/test.sh -k formats -x
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
echo "[test] python -m pytest -q $*"
exec "$ROOT/.venv/bin/python" -m pytest -q "$@"
