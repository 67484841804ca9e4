#!/usr/bin/env bash
# Set up (idempotent, see scripts/setup.sh), then run the demo (examples/demo.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
echo "[demo] python examples/demo.py"
exec "$ROOT/.venv/bin/python" examples/demo.py "$@"
