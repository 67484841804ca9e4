"""Which cache directory this process uses: the disk kernel cache's, which also holds the
tuning database and the stored frontiers (``COITER_CACHE_DIR``, else ``$XDG_CACHE_HOME/coiter``,
else ``~/.cache/coiter``: the core reads them on every use, src/jit/disk_cache.cpp,
``defaultDirectory``)."""

from __future__ import annotations

import os


def directory_setting() -> tuple[str | None, ...]:
    """The environment variables that choose the cache directory, in the core's order of
    precedence (the first set and not empty wins): equal settings name the same directory, so
    the same tuning database. What is remembered from a database is remembered with this,
    read on every call of ``ct.evaluate`` (0.3-2 µs), where the directory itself
    (``ct.cache_info()["disk_directory"]``) costs the core's creating and checking it (7 µs)."""
    environ = os.environ
    chosen = environ.get("COITER_CACHE_DIR")
    if chosen:
        return (chosen,)
    return (chosen, environ.get("XDG_CACHE_HOME"), environ.get("HOME"))
