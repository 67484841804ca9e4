"""A new Python process, as a script that runs once starts: nothing imported, nothing
compiled in memory, only what is on disk. It imports the benchmarks from this checkout and
reports one JSON object on its last line of output."""

import json
import os
import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def run_json(arguments, env=None):
    """The JSON object a ``python <arguments>`` process prints last; ``env``: variables to
    set on top of this process's. Raises ``subprocess.CalledProcessError`` (with its
    standard error) when the process fails."""
    path = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, *arguments],
        env={**os.environ, **(env or {}), "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])
