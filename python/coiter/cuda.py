"""The GPU target (API.md §6): whether a GPU is usable, and finding NVIDIA's libraries.

coiter loads NVRTC (the CUDA C++ compiler) and the CUDA driver when it first needs them, so it
imports and runs its CPU kernels on machines without CUDA. NVRTC is searched on the system's
library path, in the ``nvidia-cuda-nvrtc`` wheel (``pip install coiter[gpu]``), in
``$CUDA_HOME/lib64`` and ``/usr/local/cuda/lib64``; ``COITER_NVRTC_LIBRARY`` names it exactly.
"""
import importlib.util
import os

from . import _core

_prepared = False


def _wheel_library_directories():
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


def prepare():
    """Tell the core where the wheels put NVIDIA's libraries (once per process)."""
    global _prepared
    if not _prepared:
        _core.cuda_set_library_directories(_wheel_library_directories())
        _prepared = True


def status():
    """A dict saying whether a GPU and NVRTC are usable: ``available`` (a GPU and its driver),
    ``problem`` (why not), ``name``, ``arch`` (``"sm_90"``), ``multiprocessors``, ``memory``
    (bytes) and ``driver_version`` of the GPU when there is one, ``nvrtc`` (its version, or
    None) and ``nvrtc_problem``."""
    prepare()
    return dict(_core.cuda_status())


def is_available():
    """Whether ``target="cuda"`` kernels can run here (a GPU, its driver and NVRTC)."""
    s = status()
    return bool(s["available"] and s["nvrtc"])


def to_cupy(tensor):
    """A GPU tensor's data as CuPy objects that share its GPU memory (no copy): a
    ``cupy.ndarray`` for an all-dense row-major tensor, a ``cupyx.scipy.sparse`` CSR or CSC
    matrix for a CSR or CSC one. The CuPy objects keep the tensor's memory alive; the tensor
    must not be changed through them (coiter treats a tensor's arrays as immutable)."""
    import cupy
    if tensor.device != "cuda":
        raise ValueError("to_cupy: the tensor is on the CPU; call to('cuda') first")
    storage = tensor._storage
    arrays = _core.device_addresses(storage)

    def view(array, shape=None):
        address, length, dtype = array
        dtype = cupy.dtype(dtype)
        memory = cupy.cuda.UnownedMemory(address, length * dtype.itemsize, storage)
        return cupy.ndarray((length,) if shape is None else shape, dtype, cupy.cuda.MemoryPointer(memory, 0))

    levels = [level.name for level in tensor.format.levels]
    if all(name == "dense" for name in levels) and tuple(tensor.format.mode_order) == tuple(range(tensor.ndim)):
        return view(arrays["values"], tuple(tensor.shape))
    if levels == ["dense", "compressed"] and tensor.ndim == 2:
        import cupyx.scipy.sparse as cpsp
        compressed = arrays["levels"][1]
        cls = cpsp.csr_matrix if tuple(tensor.format.mode_order) == (0, 1) else cpsp.csc_matrix
        return cls((view(arrays["values"]), view(compressed["crd"]), view(compressed["pos"])), shape=tuple(tensor.shape))
    raise ValueError(f"to_cupy: no CuPy type holds a {tensor.format} tensor (dense, CSR and CSC do)")
