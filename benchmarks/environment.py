"""What every benchmark records about the machine and the build it measured, and how it
writes its results."""

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy

import coiter as ct


def environment(**extra):
    """Versions, CPU and load of this run, plus ``extra`` entries."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "coiter": ct.__version__,
        "machine": platform.machine(),
        "processor": cpu_model(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_at_end": os.getloadavg(),
        **extra,
    }


def build_info():
    """Which build was measured: the commit of the checkout coiter is imported from (it is
    installed in editable mode, possibly from another worktree than these benchmarks),
    whether its src/ or python/ had local changes, when the compiled core was built, and
    the commit of the benchmark code."""
    root = Path(ct.__file__).resolve().parents[2]  # <root>/python/coiter/__init__.py
    info = {"core_module": getattr(ct._core, "__file__", None), "checkout": str(root)}
    try:
        info["core_built"] = time.strftime(
            "%Y-%m-%dT%H:%M:%S%z", time.localtime(os.path.getmtime(info["core_module"]))
        )
    except (OSError, TypeError):
        pass
    try:

        def git(*args):
            return subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, check=True
            ).stdout.strip()

        info["commit"] = git("rev-parse", "HEAD")
        info["local_changes"] = bool(git("status", "--porcelain", "--", "src", "python"))
        info["benchmarks_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def script_environment(argv=None, **extra):
    """environment() of a benchmark script run with ``argv`` (None: this process's): the build,
    pydata/sparse's version (a peer of several scripts), the command line and the date."""
    try:
        import sparse

        sparse_version = sparse.__version__
    except ImportError:
        sparse_version = "not installed"
    return environment(
        build=build_info(),
        sparse=sparse_version,
        arguments=" ".join(argv if argv is not None else sys.argv[1:]),
        date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **extra,
    )


def write_script_results(output, rows, env, markdown):
    """A script's rows and environment as ``output``.json, and ``markdown(rows, env)`` as
    ``output``.md."""
    out = Path(output)
    write_results(out.with_suffix(".json"), {"environment": env, "rows": rows})
    out.with_suffix(".md").write_text(markdown(rows, env))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def write_results(path, result):
    """Write ``result`` as JSON to ``path`` atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(path)
