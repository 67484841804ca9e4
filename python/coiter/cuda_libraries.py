"""Where NVIDIA's libraries are (docs/reference.md, "Targets"): coiter loads NVRTC (the CUDA C++
compiler) and the CUDA driver when it first needs them, so it imports and runs its CPU kernels on
machines without CUDA. NVRTC is searched on the system's library path, in the ``nvidia-cuda-nvrtc``
wheel (``pip install coiter[gpu]``), in ``$CUDA_HOME/lib64`` and ``/usr/local/cuda/lib64``;
``COITER_NVRTC_LIBRARY`` names it exactly. :func:`prepare` tells the core where the wheels are.
"""

import importlib.util
import os

from . import _core

_prepared = False


def _wheel_library_directories() -> list[str]:
    """The lib folders of the installed ``nvidia-*`` wheels (CUDA 13 and 12 layouts)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for root in spec.submodule_search_locations:
        for sub in ("cu13/lib", "cuda_nvrtc/lib", "cu12/lib"):
            path = os.path.join(root, sub)
            if os.path.isdir(path):
                dirs.append(path)
    return dirs


def prepare() -> None:
    """Tell the core where the wheels put NVIDIA's libraries (once per process)."""
    global _prepared
    if not _prepared:
        _core.cuda_set_library_directories(_wheel_library_directories())
        _prepared = True
