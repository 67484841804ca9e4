"""coiter's own ``.npz`` files: any tensor in any format, saved exactly (level arrays,
values, index width, format), loaded without pickle."""

import os
import re
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .. import _core, formats
from ..conversion import asarray
from ..dtypes import value_dtype
from ..errors import FormatError, ParseError, ShapeError
from ..formats import Format, FormatLike, LevelType, as_format, bcsr
from ..progress import SMALL_FILE_BYTES, progress
from ..tensor import Tensor
from .casting import _cast_values

_NPZ_MAGIC = "coiter.npz_version"
_NPZ_VERSION = 1
# The level properties a user can configure; the others follow from these and the type.
_CONFIGURABLE = ("full", "ordered", "unique", "compact")
_LEVEL_TYPES = {
    level.name: level
    for level in (
        formats.dense,
        formats.compressed,
        formats.singleton,
        formats.hashed,
        formats.range,
        formats.offset,
    )
}


def save(path: str | os.PathLike[str], tensor: Any, *, compressed: bool = True) -> None:
    """Save a tensor to a coiter ``.npz`` file, exactly.

    Every level array and parameter, the values, the shape, the index width and the
    format (including configured level properties) are stored, so :func:`load` rebuilds
    an identical tensor. The file is written at ``path`` as given (no ``.npz`` is
    appended).

    Parameters
    ----------
    path : str or os.PathLike
    tensor : Tensor or array_like
    compressed : bool
        Deflate the arrays (default, as :func:`scipy.sparse.save_npz`).
    """
    tensor = tensor if isinstance(tensor, Tensor) else asarray(tensor)
    description = _describe_format(tensor.format)
    if _format_from_description(description) != tensor.format:
        raise FormatError(f"format {tensor.format!r} cannot be described in a .npz file")
    entries = {
        _NPZ_MAGIC: np.array(_NPZ_VERSION),
        "coiter.version": np.array(_core.__version__),
        "shape": np.array(tensor.shape, dtype=np.int64),
        "index_dtype": np.array(tensor.index_dtype.name),
        "values": tensor.values,
        **description,
    }
    for k, level in enumerate(tensor.levels):
        for name, array in level.arrays.items():
            entries[f"level{k}.array.{name}"] = array
        for name, value in level.parameters.items():
            entries[f"level{k}.param.{name}"] = np.array(value, dtype=np.int64)
    writer = np.savez_compressed if compressed else np.savez
    size = sum(array.nbytes for array in entries.values())
    name = os.path.basename(os.fspath(path))
    # Through a file object: given a name, NumPy would append ".npz" to it.
    with (
        progress(size, f"writing {name}", "B", small=size < SMALL_FILE_BYTES) as bar,
        open(os.fspath(path), "wb") as stream,
    ):
        writer(stream, **entries)
        bar.update(size)


def load(path: str | os.PathLike[str]) -> Tensor:
    """Load a tensor written by :func:`save` (any extension), exactly as it was saved.

    Raises
    ------
    ParseError
        The file is not a coiter ``.npz`` file or is incomplete.
    FormatError
        The saved arrays do not form a valid tensor of the saved format.
    """
    path = os.fspath(path)
    # Opened here, so that a missing or unreadable file raises its usual OSError; every
    # error after this point comes from the file's contents.
    size = os.path.getsize(path)
    name = os.path.basename(path)
    with (
        progress(size, f"reading {name}", "B", small=size < SMALL_FILE_BYTES) as bar,
        open(path, "rb") as stream,
    ):
        try:
            archive = np.load(stream, allow_pickle=False)
        except _DAMAGED as error:
            raise ParseError(
                f"{path} is not a coiter .npz file ({type(error).__name__}: {error})", path=path
            ) from error
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ParseError(
                f"{path} holds a single NumPy array (.npy), not a coiter .npz file", path=path
            )
        with archive:
            pieces = _npz_pieces(_CheckedArchive(archive, path), path)
        bar.update(size)
    try:
        return Tensor._from_level_arrays(*pieces)
    except (FormatError, ShapeError) as error:
        raise type(error)(f"{path}: {error}") from error


# What a damaged zip archive or .npy member raises while being read: zipfile's and zlib's
# errors, a truncated stream (EOFError), a seek to a bad offset (OSError), an unsupported
# compression method (NotImplementedError), an "encrypted" flag (RuntimeError), bad .npy
# header fields (ValueError, SyntaxError, tokenize.TokenError, struct.error).
_DAMAGED = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    SyntaxError,
    tokenize.TokenError,
    struct.error,
    OverflowError,
)
# The most a deflate stream can expand (RFC 1951: at most 258 bytes from about 2 bits).
_DEFLATE_RATIO = 1032


class _CheckedArchive:
    """The entries of an open NpzFile, each read only after checking that its .npy header
    describes the data the archive holds: a damaged or malicious file must not make NumPy
    allocate the terabytes a header may declare before it finds out the data is not there."""

    def __init__(self, archive: np.lib.npyio.NpzFile, path: str) -> None:
        self.archive, self.path = archive, path
        self.files = archive.files

    def __contains__(self, key: str) -> bool:
        return key in self.files

    def __getitem__(self, key: str) -> NDArray[Any]:
        if key not in self.files:
            raise KeyError(key)
        try:
            self._check_size(key)
            return self.archive[key]
        except ParseError:
            raise  # already names the file and the entry (and is a ValueError, see below)
        except _DAMAGED as error:
            raise ParseError(
                f"{self.path}: entry {key!r} of the .npz file is damaged "
                f"({type(error).__name__}: {error})",
                path=self.path,
            ) from error

    def _check_size(self, key: str) -> None:
        # (NumPy types the zip as None too, for a closed archive; load reads an open one)
        archive = cast(zipfile.ZipFile, self.archive.zip)
        info = archive.getinfo(key + ".npy")
        most = (
            info.compress_size * (_DEFLATE_RATIO if info.compress_type != zipfile.ZIP_STORED else 1)
            + 64
        )
        if info.file_size > most:
            raise ParseError(
                f"{self.path}: entry {key!r} claims {info.file_size} bytes but "
                f"holds {info.compress_size} compressed bytes",
                path=self.path,
            )
        with archive.open(info) as member:
            version = np.lib.format.read_magic(member)
            if version not in ((1, 0), (2, 0), (3, 0)):
                raise ParseError(
                    f"{self.path}: entry {key!r} has .npy version {version}", path=self.path
                )
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read_header(member)
            header_end = member.tell()
        count = 1
        for extent in shape:
            count *= extent
        if dtype.hasobject:
            raise ParseError(
                f"{self.path}: entry {key!r} holds Python objects (pickles), "
                "which coiter never loads",
                path=self.path,
            )
        if count * dtype.itemsize != info.file_size - header_end:
            raise ParseError(
                f"{self.path}: entry {key!r} declares shape {shape} of "
                f"{dtype} ({count * dtype.itemsize} bytes) but holds "
                f"{info.file_size - header_end} bytes of data",
                path=self.path,
            )


def _describe_format(fmt: Format) -> dict[str, NDArray[Any]]:
    """The format as plain arrays: named formats by name, others level by level."""
    levels = fmt.levels
    return {
        "format.text": np.array(str(fmt)),  # for people inspecting the file
        "format.name": np.array(fmt.name or ""),
        "format.order": np.array(fmt.order, dtype=np.int64),
        "format.block_shape": np.array(fmt.block_shape or (), dtype=np.int64),
        "format.mode_order": np.array(fmt.mode_order, dtype=np.int64),
        "format.level_types": np.array([level.name for level in levels], dtype=np.str_),
        "format.level_properties": np.array(
            [[level.properties[p] for p in _CONFIGURABLE] for level in levels], dtype=bool
        ).reshape(len(levels), len(_CONFIGURABLE)),
        "format.level_buckets": np.array([level.buckets or 0 for level in levels], dtype=np.int64),
    }


def _format_from_description(description: Mapping[str, NDArray[Any]]) -> Format:
    """Rebuild the Format that :func:`_describe_format` described."""
    name = str(description["format.name"])
    order = int(description["format.order"])
    if name == "bcsr":
        return bcsr(tuple(int(b) for b in description["format.block_shape"]))
    if name:
        return as_format(name, order)
    levels = [
        _level_type(str(kind), properties, int(buckets))
        for kind, properties, buckets in zip(
            description["format.level_types"],
            description["format.level_properties"],
            description["format.level_buckets"],
        )
    ]
    return Format(levels, mode_order=[int(m) for m in description["format.mode_order"]])


def _level_type(kind: str, properties: NDArray[np.bool_], buckets: int) -> LevelType:
    base = _LEVEL_TYPES.get(kind)
    if base is None:
        raise FormatError(f"unknown level type {kind!r}")
    # Only properties that differ from the type's defaults: the others may not be
    # configurable, and configuring them would raise.
    changes: dict[str, Any] = {
        p: bool(v) for p, v in zip(_CONFIGURABLE, properties) if bool(v) != base.properties[p]
    }
    if buckets:
        changes["buckets"] = buckets
    return base(**changes) if changes else base


def _npz_pieces(
    archive: _CheckedArchive, path: str
) -> tuple[
    Format, NDArray[Any], str, list[dict[str, NDArray[Any]]], list[dict[str, int]], NDArray[Any]
]:
    """The arguments of Tensor._from_level_arrays, read from an open coiter archive."""
    if _NPZ_MAGIC not in archive.files:
        raise ParseError(
            f"{path} is not a coiter .npz file (it has no {_NPZ_MAGIC!r} entry); "
            "SciPy sparse .npz files load with scipy.sparse.load_npz and "
            "coiter.asarray",
            path=path,
        )
    try:
        version = archive[_NPZ_MAGIC]
        if version.dtype.kind not in "iu" or version.ndim != 0 or version > _NPZ_VERSION:
            raise ParseError(
                f"{path}: unsupported coiter .npz file version {version} (this "
                f"coiter reads up to version {_NPZ_VERSION})",
                path=path,
            )
        index_dtype = str(archive["index_dtype"])
        if index_dtype not in ("int32", "int64"):
            raise ParseError(
                f"{path}: index dtype {index_dtype!r} is neither int32 nor int64", path=path
            )
        description = {key: archive[key] for key in archive.files if key.startswith("format.")}
        fmt = _format_from_description(description)
        levels = len(description["format.level_types"])
        arrays: list[dict[str, NDArray[Any]]] = [{} for _ in range(levels)]
        parameters: list[dict[str, int]] = [{} for _ in range(levels)]
        for key in archive.files:
            if key.startswith("level"):
                _store_level_entry(key, archive[key], arrays, parameters, path)
        shape, values = archive["shape"], archive["values"]
        if shape.ndim != 1 or shape.dtype.kind not in "iu":
            raise ParseError(
                f"{path}: the shape entry is a {shape.dtype} array of shape "
                f"{shape.shape}, not a list of integers",
                path=path,
            )
        if values.ndim != 1:
            raise ParseError(
                f"{path}: the values entry has {values.ndim} dimensions, not 1", path=path
            )
        value_dtype(values.dtype, f"{path}: values")  # TypeError for an unsupported dtype
        return fmt, shape, index_dtype, arrays, parameters, values
    except ParseError:
        raise  # already precise; must not be re-wrapped as a generic ValueError below
    except KeyError as error:
        raise ParseError(
            f"{path}: incomplete coiter .npz file, missing {error}", path=path
        ) from error
    except (ValueError, TypeError) as error:  # object arrays, non-numeric entries
        raise ParseError(f"{path}: malformed coiter .npz file ({error})", path=path) from error


def _store_level_entry(
    key: str,
    value: NDArray[Any],
    arrays: list[dict[str, NDArray[Any]]],
    parameters: list[dict[str, int]],
    path: str,
) -> None:
    """File the entry ``level<k>.array.<name>`` or ``level<k>.param.<name>``."""
    match = re.fullmatch(r"level(\d+)\.(array|param)\.(\w+)", key)
    if match is None or int(match.group(1)) >= len(arrays):
        raise ParseError(f"{path}: unexpected entry {key!r} in a coiter .npz file", path=path)
    level, kind, name = int(match.group(1)), match.group(2), match.group(3)
    if kind == "array":
        arrays[level][name] = value
    else:
        parameters[level][name] = int(value)


def _read_npz(
    path: str, format: FormatLike | None, shape: tuple[int, ...] | None, dtype: np.dtype[Any] | None
) -> Tensor:
    tensor = load(path)
    if shape is not None and shape != tensor.shape:
        raise ShapeError(f"{path} holds a tensor of shape {tensor.shape}, not shape={shape}")
    if dtype is not None and dtype != tensor.dtype:
        levels = tensor.levels
        tensor = Tensor._from_level_arrays(
            tensor.format,
            tensor.shape,
            tensor.index_dtype,
            [lv.arrays for lv in levels],
            [lv.parameters for lv in levels],
            _cast_values(tensor.values, dtype, path),
        )
    return tensor if format is None else tensor.asformat(format)
