"""The persistent tuning database: what ``ct.autoschedule`` found, kept across processes.

An SQLite file (Python's ``sqlite3``) in coiter's cache directory, beside the disk kernel cache
(``COITER_CACHE_DIR``, else ``$XDG_CACHE_HOME/coiter``, else ``~/.cache/coiter``: the directory
``ct.cache_info()["disk_directory"]`` names). Rows are keyed by the kernel's *signature* (the
statement, every tensor's format and dtype, the engine, the thread count and the coiter version:
what makes a timing comparable) and a *bucket* of input statistics (each operand's extents,
nonzeros and row lengths, on a log2 scale, and how skewed its rows are), so inputs of a similar
size and shape share a tuning and a second process with such inputs tunes nothing.

Several processes may tune at once: the file is in WAL mode (readers never wait for a writer)
with a busy timeout, and each write is one transaction (``INSERT OR REPLACE``: the last tuning
of a key wins, and every tuning is a complete row). Without a cache directory (the disk cache
is off) the database lives in memory, for this process only.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..auto_keys import forget_auto_keys
from ..auto_statistics import StatisticsRead, StorageStatistics
from ..cache_directory import directory_setting
from ..tensor import Tensor
from .candidates import Problem
from .pipeline import stages_of

FILE_NAME = "tuning.sqlite3"
# A bucket text's row skew (bucket_of): ",even", ",skewed" or ",heavy" after the mean row.
_SKEW = re.compile(r",(even|skewed|heavy)\b")
# Bumped when the search or the bucket changes what a stored row means (2: a schedule may be
# a pipeline_text, a frontier member of two kernels; 3: a schedule other than the default
# beat it in interleaved calls, each converting the operands as the replay does: rows of
# earlier searches may be slower than the default).
SCHEMA_VERSION = 3
_BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tuned (
    signature TEXT NOT NULL,
    bucket TEXT NOT NULL,
    schedule TEXT NOT NULL,
    conversions TEXT NOT NULL,
    seconds REAL NOT NULL,
    default_seconds REAL NOT NULL,
    tuning_seconds REAL NOT NULL,
    statistics TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (signature, bucket)
)
"""


@dataclass(frozen=True)
class Entry:
    """A stored tuning: the schedule, the operands to convert first (name -> format text),
    its time and the default's on the inputs it was tuned on, and how long tuning took."""

    signature: str
    bucket: str
    schedule: str
    conversions: dict[str, str]
    seconds: float
    default_seconds: float
    tuning_seconds: float
    statistics: dict[str, Any]


def operand_statistics(operands: Mapping[str, Tensor]) -> dict[str, dict[str, Any]]:
    """Per operand (by name, sorted), its :func:`tensor_statistics`."""
    return {name: tensor_statistics(operands[name]) for name in sorted(operands)}


# How much of a sparse tensor's rows schedule="auto" reads to key a choice (tensor_bucket):
# its extents and nonzeros only (O(1)), also the mean row length (O(1), read from the index
# arrays), also the row skew (the maximum row length: O(rows)).
EXTENTS, ROW_MEAN, ROW_SKEW = 0, 1, 2


def tensor_statistics(tensor: Tensor) -> dict[str, Any]:
    """A tensor's shape, nonzeros and, when it is sparse with a compressed level below another
    (CSR's rows, CSF's fibers), the mean and maximum length of that level's segments (the
    maximum reads every segment: O(rows)).

    Remembered on the tensor for the storage read (``Tensor._statistics``): schedule="auto"
    reads them on every call, and a tensor's storage is replaced, never restructured in
    place, when a definition is recomputed or a kernel writes it with ``out=``
    (``Tensor._set_storage``), so a changed tensor is read again. (Writing into the NumPy
    views of its index arrays is not seen; it could only make the schedule chosen a worse
    one, never change a result.)"""
    return _remembered(tensor, ROW_SKEW).read.values


def tensor_bucket(tensor: Tensor, depth: int = ROW_SKEW) -> tuple[Any, ...]:
    """The tensor's part of :func:`bucket_key` (without its name) down to ``depth`` (EXTENTS,
    ROW_MEAN or ROW_SKEW), remembered with its statistics: what ``schedule="auto"`` keys its
    choices on, every call. A SciPy or NumPy operand is wrapped anew by each call, so this is
    the cost of its statistics on every call (only ROW_SKEW reads every row), unless
    ``auto_keys.py`` kept them for the array it wraps (``auto_keys.auto_input_key``)."""
    remembered = tensor._statistics
    # (_remembered's check inline, a few function calls less on every call: a tensor whose
    # definition is pending holds a placeholder in _data, never a storage read.)
    if (
        remembered is None
        or remembered.storage is not tensor._data
        or remembered.read.depth < depth
    ):
        remembered = _remembered(tensor, depth)
    part = remembered.read.parts[depth]
    assert part is not None  # (_remembered read down to depth)
    return part


def _remembered(tensor: Tensor, depth: int) -> StorageStatistics:
    """The tensor's statistics down to ``depth``, read once per storage (and again when a
    deeper part is asked for)."""
    storage = tensor._storage
    remembered = tensor._statistics
    if remembered is not None and remembered.storage is storage and remembered.read.depth >= depth:
        return remembered
    shape, nnz = tensor.shape, int(storage.nnz)
    stats: dict[str, Any] = {"shape": list(shape), "nnz": nnz}
    mean = longest = None
    if depth >= ROW_MEAN:
        # (The storage's arrays, not tensor.levels, which wraps each level in Python; a
        # dense level has none.)
        for arrays in storage.level_arrays[1:]:
            pos = arrays.get("pos")
            if pos is not None and len(pos) > 1:
                mean = stats["mean_row"] = float(pos[-1] - pos[0]) / (len(pos) - 1)
                if depth >= ROW_SKEW:
                    longest = stats["max_row"] = int(np.diff(pos).max())
                break
    parts = (
        _part(shape, nnz, None, None),
        _part(shape, nnz, mean, None) if depth >= ROW_MEAN else None,
        _part(shape, nnz, mean, longest) if depth >= ROW_SKEW else None,
    )
    remembered = tensor._statistics = StorageStatistics(
        storage, StatisticsRead(stats, depth, parts)
    )
    return remembered


def _log2(value: float) -> int:
    return round(math.log2(value)) if value >= 1 else 0


def bucket_key(statistics: Mapping[str, Mapping[str, Any]]) -> tuple[Any, ...]:
    """The bucket of some statistics: per operand, its extents, nonzeros and mean row length
    rounded to powers of two, and the row skew (max / mean): 0 even (< 4), 1 skewed (< 32), 2
    heavy (left out for statistics read without ``rows``)."""
    return tuple((name, *_bucket_part(stats)) for name, stats in sorted(statistics.items()))


def _bucket_part(stats: Mapping[str, Any]) -> tuple[Any, ...]:
    return _part(tuple(stats["shape"]), stats["nnz"], stats.get("mean_row"), stats.get("max_row"))


# _part's inputs kept (operands of the same sizes repeat; a fresh SciPy or NumPy operand of
# each schedule="auto" call is read again, its bucket then costs a lookup).
_PARTS_KEPT = 1024


@functools.lru_cache(maxsize=_PARTS_KEPT)
def _part(
    shape: tuple[int, ...], nnz: int, mean_row: float | None, max_row: int | None
) -> tuple[Any, ...]:
    part: tuple[Any, ...] = (tuple(_log2(n) for n in shape), _log2(nnz))
    if mean_row is not None:
        mean = max(mean_row, 1e-9)
        part += (_log2(mean),)
        if max_row is not None:
            skew = max_row / mean
            part += (0 if skew < 4 else 1 if skew < 32 else 2,)
    return part


def bucket_of(statistics: Mapping[str, Mapping[str, Any]]) -> str:
    """:func:`bucket_key` as the database's text: ``A:14x14,nnz17,row3,even;x:14,nnz14``."""
    texts = []
    for name, shape, nnz, *rows in bucket_key(statistics):
        text = f"{name}:" + "x".join(map(str, shape)) + f",nnz{nnz}"
        if rows:
            text += f",row{rows[0]}," + ("even", "skewed", "heavy")[rows[1]]
        texts.append(text)
    return ";".join(texts)


def distance(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]) -> float:
    """How far apart two inputs' statistics are: the sum of |log2 ratio| of their extents,
    nonzeros and mean row lengths (infinite when the operands differ in name or order)."""
    if a.keys() != b.keys():
        return math.inf
    total = 0.0
    for name in a:
        x, y = a[name], b[name]
        if len(x["shape"]) != len(y["shape"]):
            return math.inf
        pairs = list(zip(x["shape"], y["shape"])) + [(x["nnz"], y["nnz"])]
        if "mean_row" in x and "mean_row" in y:
            pairs.append((x["mean_row"], y["mean_row"]))
        total += sum(abs(math.log2(max(p, 1) / max(q, 1))) for p, q in pairs)
    return total


def signature(problem: Problem, engine: str, threads: int) -> str:
    """What makes two tunings comparable, as canonical JSON text."""
    return json.dumps(
        {
            "statement": str(problem.parsed[0]),
            "formats": {n: str(f) for n, f in sorted(problem.formats.items())},
            "dtypes": {n: d.name for n, d in sorted(problem.dtypes.items())},
            "engine": engine,
            "threads": threads,
            "coiter": _core.__version__,
            "schema": SCHEMA_VERSION,
        },
        sort_keys=True,
    )


def _enter_wal_mode(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL mode, waiting for other processes as the busy timeout allows.

    Changing the journal mode takes an exclusive lock, and SQLite answers "database is
    locked" at once, without calling the busy handler, when another connection holds a
    shared lock at that moment (as a second process that opens a new file at the same
    time does): retry until the busy timeout has passed."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


class TuningDatabase:
    """The database of one process: one connection, reopened in a forked child."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = -1
        self._path: str | None = None
        # Bumped by every change this process makes (InstantChoice forgets its choices).
        self.generation = 0

    @property
    def path(self) -> str | None:
        """The database file, or None when it lives in memory (no cache directory)."""
        directory = _core.cache_info().get("disk_directory")
        return os.path.join(directory, FILE_NAME) if directory else None

    def state(self) -> tuple[int, tuple[str | None, ...]]:
        """What a choice remembered from the database depends on: this process's changes
        (generation) and the setting that chooses the cache directory (another directory is
        another database; cache_directory.py). Read on every call of ``schedule="auto"``, so
        it asks the environment (under 2 µs), not the core for the directory (7 µs)."""
        return self.generation, directory_setting()

    def _nothing_stored(self) -> bool:
        """Whether there is no database to read yet: not connected in this process, and no
        file (or none in memory). Reading then opens nothing, so that schedule="auto" in a
        process that never tuned costs no SQLite connection and leaves no file behind."""
        path = self.path
        if self._connection is not None and self._pid == os.getpid() and path == self._path:
            return False
        return path is None or not os.path.exists(path)

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        if self._connection is not None and self._pid == os.getpid() and path == self._path:
            return self._connection
        if path is not None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        connection = sqlite3.connect(
            path or ":memory:",
            timeout=_BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,  # transactions are explicit (BEGIN IMMEDIATE ... COMMIT)
            check_same_thread=False,
        )
        connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        if path is not None:
            _enter_wal_mode(connection)
        connection.execute(_SCHEMA)
        self._connection, self._pid, self._path = connection, os.getpid(), path
        return connection

    def store(self, entry: Entry) -> None:
        with self._lock:
            self.generation += 1
            forget_auto_keys()  # (keyed by what the statements' tunings read)
            connection = self._connect()
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(
                    "INSERT OR REPLACE INTO tuned VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.signature,
                        entry.bucket,
                        entry.schedule,
                        json.dumps(entry.conversions, sort_keys=True),
                        entry.seconds,
                        entry.default_seconds,
                        entry.tuning_seconds,
                        json.dumps(entry.statistics, sort_keys=True),
                        time.time(),
                    ),
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def lookup(self, signature: str, bucket: str) -> Entry | None:
        """The entry of exactly this signature and bucket."""
        rows = self._select("WHERE signature = ? AND bucket = ?", (signature, bucket))
        return rows[0] if rows else None

    def nearest(
        self,
        signature: str,
        statistics: Mapping[str, Mapping[str, Any]] | None,
        *,
        without_conversions: bool = False,
    ) -> Entry | None:
        """The entry of ``signature`` whose inputs are closest to ``statistics`` (None: the
        most recent), optionally only among those that are one kernel on the given formats
        (no operand converted, no pipeline of kernels)."""
        rows = self._select("WHERE signature = ? ORDER BY created DESC", (signature,))
        if without_conversions:
            rows = [e for e in rows if not e.conversions and stages_of(e.schedule) is None]
        if not rows:
            return None
        if statistics is None:
            return rows[0]
        return min(rows, key=lambda e: distance(e.statistics, statistics))

    def entries(self) -> list[Entry]:
        return self._select("ORDER BY created", ())

    def statements(self) -> dict[str, int]:
        """The statements (as their signatures print them) that have a stored tuning, each
        with how much of the inputs' rows tells its tunings apart: ROW_SKEW when two of a
        signature's buckets differ in the rows' skew only (the lookup of an exact bucket
        then needs it), else ROW_MEAN (the nearest tuning's distance reads the mean)."""
        if self._nothing_stored():
            return {}
        with self._lock:
            rows = self._connect().execute("SELECT signature, bucket FROM tuned").fetchall()
        found: dict[str, int] = {}
        seen: set[tuple[str, str]] = set()
        for signature_text, bucket in rows:
            statement = json.loads(signature_text)["statement"]
            unskewed = (signature_text, _SKEW.sub("", bucket))
            skew_only = unskewed in seen
            seen.add(unskewed)
            found[statement] = max(found.get(statement, ROW_MEAN), ROW_SKEW if skew_only else 0)
        return found

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        with self._lock:
            self.generation += 1
            forget_auto_keys()  # (keyed by what the statements' tunings read)
            connection = self._connect()
            return connection.execute("DELETE FROM tuned").rowcount

    def _select(self, where: str, args: tuple[Any, ...]) -> list[Entry]:
        if self._nothing_stored():
            return []
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    "SELECT signature, bucket, schedule, conversions, seconds, default_seconds, "
                    f"tuning_seconds, statistics FROM tuned {where}",
                    args,
                )
                .fetchall()
            )
        return [
            Entry(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], r[6], json.loads(r[7]))
            for r in rows
        ]


database = TuningDatabase()
