"""The memory-bandwidth limit: a STREAM triad (``a[i] = b[i] + s * c[i]``) in C with OpenMP,
built with the system C compiler and run in this process.

NumPy cannot run the triad in one pass (``b + s * c`` makes a temporary and moves 5 arrays
instead of 3), so the probe is C. As in STREAM, each array is at least four times the last
level cache, the arrays are first touched by the threads that use them, bandwidth counts
24 bytes per element (two reads, one write; the write-allocate read is not counted, the
same convention as the SpMV byte count), and the best of the repetitions is the limit (the
median is recorded too).
"""

import ctypes
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np

TRIAD_C = r"""
#include <omp.h>
/* Returns 0; times[r] = seconds of repetition r. */
int triad(double *a, double *b, double *c, long n, int threads, int reps, double *times) {
    const double s = 3.0;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 0.0; b[i] = 1.0; c[i] = 2.0; }
    for (int r = 0; r < reps; r++) {
        double start = omp_get_wtime();
        #pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        times[r] = omp_get_wtime() - start;
    }
    return 0;
}
"""


def last_level_cache_bytes():
    """The largest cache of CPU 0 (sysfs), or 32 MiB when it cannot be read."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        sizes.append(int(text.rstrip("KMG")) * unit)
    return max(sizes, default=32 << 20)


def _build(directory):
    source, library = Path(directory, "triad.c"), Path(directory, "triad.so")
    source.write_text(TRIAD_C)
    compiler = os.environ.get("CC", "cc")
    subprocess.run(
        [
            compiler,
            "-O3",
            "-march=native",
            "-fopenmp",
            "-shared",
            "-fPIC",
            str(source),
            "-o",
            str(library),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return ctypes.CDLL(str(library))


def probe(thread_counts, repetitions=10, elements=None):
    """STREAM triad bandwidth for each thread count.

    Returns {"method", "elements", "array_bytes", "by_threads": {threads: {"best_gbs",
    "median_gbs", "runs_s"}}} or {"error": why} when the probe cannot be built."""
    elements = elements or max(4 * last_level_cache_bytes() // 8, 2_000_000)
    with tempfile.TemporaryDirectory(prefix="coiter-stream-") as directory:
        try:
            library = _build(directory)
        except (OSError, subprocess.CalledProcessError) as error:
            detail = getattr(error, "stderr", "") or ""
            return {"error": f"could not build the triad probe: {error} {detail}".strip()}
        a, b, c = (np.empty(elements) for _ in range(3))
        times = np.zeros(repetitions)
        pointer = ctypes.POINTER(ctypes.c_double)
        library.triad.argtypes = [
            pointer,
            pointer,
            pointer,
            ctypes.c_long,
            ctypes.c_int,
            ctypes.c_int,
            pointer,
        ]
        by_threads = {}
        for threads in thread_counts:
            library.triad(
                *(x.ctypes.data_as(pointer) for x in (a, b, c)),
                elements,
                threads,
                repetitions,
                times.ctypes.data_as(pointer),
            )
            if not np.all(a == 7.0):
                return {"error": "the triad probe computed a wrong result"}
            runs = times.tolist()[1:]  # the first repetition warms up
            n_bytes = 24 * elements
            by_threads[threads] = {
                "best_gbs": n_bytes / min(runs) / 1e9,
                "median_gbs": n_bytes / statistics.median(runs) / 1e9,
                "runs_s": runs,
            }
    return {
        "method": "STREAM triad a = b + 3 c, C with OpenMP, -O3 -march=native",
        "last_level_cache_bytes": last_level_cache_bytes(),
        "elements": elements,
        "array_bytes": 8 * elements,
        "bytes_per_element": 24,
        "by_threads": by_threads,
    }
