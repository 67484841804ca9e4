"""The GPU target (docs/reference.md, "Targets"), ``ct.cuda``: whether a GPU is usable, and GPU
tensors' data as CuPy objects. Finding NVIDIA's libraries is cuda_libraries.py."""

from typing import Any

from . import _core
from .cuda_libraries import prepare
from .formats import as_format
from .tensor import Tensor


def status() -> dict[str, Any]:
    """A dict saying whether a GPU and NVRTC are usable: ``available`` (a GPU and its driver),
    ``problem`` (why not), ``name``, ``arch`` (``"sm_90"``), ``multiprocessors``, ``memory``
    (bytes) and ``driver_version`` of the GPU when there is one, ``nvrtc`` (its version, or
    None) and ``nvrtc_problem``."""
    prepare()
    return dict(_core.cuda_status())


def is_available() -> bool:
    """Whether ``target="cuda"`` kernels can run here (a GPU, its driver and NVRTC)."""
    s = status()
    return bool(s["available"] and s["nvrtc"])


def to_cupy(tensor: Tensor) -> Any:
    """A GPU tensor's data as CuPy objects that share its GPU memory (no copy): a
    ``cupy.ndarray`` for an all-dense row-major tensor, a ``cupyx.scipy.sparse`` CSR, CSC or
    COO matrix for a CSR, CSC or COO one. The CuPy objects keep the tensor's memory alive; the
    tensor must not be changed through them (coiter treats a tensor's arrays as immutable).
    ``ct.asarray`` takes CuPy objects back without copying."""
    import cupy

    if tensor.device != "cuda":
        raise ValueError("to_cupy: the tensor is on the CPU; call to('cuda') first")
    storage = tensor._storage
    arrays = _core.device_addresses(storage)

    def view(array: tuple[int, int, str], shape: tuple[int, ...] | None = None) -> Any:
        address, length, dtype = array
        dtype = cupy.dtype(dtype)
        memory = cupy.cuda.UnownedMemory(address, length * dtype.itemsize, storage)
        return cupy.ndarray(
            (length,) if shape is None else shape, dtype, cupy.cuda.MemoryPointer(memory, 0)
        )

    levels = [level.name for level in tensor.format.levels]
    if all(name == "dense" for name in levels) and tuple(tensor.format.mode_order) == tuple(
        range(tensor.ndim)
    ):
        return view(arrays["values"], tuple(tensor.shape))
    if tensor.format == as_format("coo", 2) and tensor.ndim == 2:
        import cupyx.scipy.sparse as cpsp

        rows, cols = arrays["levels"][0]["crd"], arrays["levels"][1]["crd"]
        return cpsp.coo_matrix(
            (view(arrays["values"]), (view(rows), view(cols))), shape=tuple(tensor.shape)
        )
    if levels == ["dense", "compressed"] and tensor.ndim == 2:
        import cupyx.scipy.sparse as cpsp

        compressed = arrays["levels"][1]
        cls = cpsp.csr_matrix if tuple(tensor.format.mode_order) == (0, 1) else cpsp.csc_matrix
        return cls(
            (view(arrays["values"]), view(compressed["crd"]), view(compressed["pos"])),
            shape=tuple(tensor.shape),
        )
    raise ValueError(
        f"to_cupy: no CuPy type holds a {tensor.format} tensor (dense, CSR, CSC and COO do)"
    )
