"""coiter's benchmark suite: coiter side by side with SciPy, pydata/sparse, tensora and MKL,
and against the machine's STREAM-triad bandwidth, in one run (``python -m benchmarks``).

Modules, one concept each:

- ``datasets``: deterministic generators for matrices shaped like the classic SpMV set and
  3-tensors shaped like scaled-down FROSTT tensors; ``.mtx`` files from a folder.
- ``kernels``: what is computed (the index expression, the operands, a dense reference).
- ``peers``: the libraries that compute it, behind one interface (``Peer.prepare``).
- ``checking``: results of all peers compared with each other before anything is timed.
- ``timing``: the one timing helper (warm-up, interleaved repeats, median and spread).
- ``stream``: the STREAM-triad bandwidth probe.
- ``compile_latency`` and ``packing``: coiter's compiler and data-layer measurements.
- ``suite``: runs every kernel on every data set for every peer and thread count.
- ``report``: the Markdown table and the plots; ``environment``: machine, build, JSON output.
"""
