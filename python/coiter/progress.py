"""Progress bars for long operations (reading and writing files, packing, benchmark runs).

``progress(total, desc)`` is a context manager giving an object with ``update(n)``. It draws a
tqdm bar (tqdm is optional: ``pip install coiter[progress]``) when ``ct.config.progress`` asks
for one:

* ``None`` (the default, "auto"): only where someone watches, a terminal (stderr is a TTY) or a
  Jupyter kernel, and only once the operation has run for ``AUTO_DELAY_S``, so quick operations
  never print anything; without tqdm installed, silently none.
* ``True``: always, from the start (tqdm must be installed: ImportError otherwise).
* ``False``: never.

A bar stays live while the work runs in C++ with the GIL released (packing a tensor is one call
of the core): a ticker thread redraws the elapsed time while the bar waits for ``update``.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from .config import config

# In auto mode a bar appears only after this many seconds: operations shorter than that stay
# silent (the "over ~1 s").
AUTO_DELAY_S = 1.0
# Files smaller than this are read or written in well under a second: their readers and writers
# pass small=True (coiter.io).
SMALL_FILE_BYTES = 16 << 20
# How often the ticker redraws a bar whose work gives no updates (an opaque C++ call).
_TICK_S = 0.5


class Progress(Protocol):
    """What ``progress`` yields: ``update(n)`` adds ``n`` units of work done, ``advance_to(n)``
    sets the units done (work measured on a clock, such as a time budget); ``note(**fields)``
    shows fields after the bar (the best time so far); ``shown`` says whether a bar is drawn
    (work done only to report progress can be skipped when not); ``write(text)`` prints a line
    to stdout above a drawn bar, which stays whole."""

    shown: bool

    def update(self, n: int = 1) -> None: ...
    def advance_to(self, n: float) -> None: ...
    def note(self, **fields: Any) -> None: ...
    def write(self, text: str) -> None: ...


class _Silent:
    """The progress of an operation nobody is shown."""

    shown = False

    def update(self, n: int = 1) -> None:
        pass

    def advance_to(self, n: float) -> None:
        pass

    def note(self, **fields: Any) -> None:
        pass

    def write(self, text: str) -> None:
        print(text, flush=True)


class _Bar:
    """A drawn tqdm bar."""

    shown = True

    def __init__(self, bar: Any) -> None:
        self._bar = bar

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def advance_to(self, n: float) -> None:
        total = self._bar.total
        self._bar.n = n if total is None else min(n, total)
        self._bar.refresh()

    def note(self, **fields: Any) -> None:
        self._bar.set_postfix(**fields)

    def write(self, text: str) -> None:
        self._bar.write(text, file=sys.stdout)


def _in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (IPython with a kernel app), without importing
    IPython when it is not already loaded."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _watched() -> bool:
    """Whether a person likely sees this process's stderr: a terminal or a notebook."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty is not None and isatty()) or _in_jupyter()


def _bar_class(forced: bool) -> Any:
    """tqdm's bar class for this process: a widget in Jupyter when ipywidgets is installed, else
    text on stderr (which a notebook shows too); None when tqdm is missing in auto mode."""
    try:
        if _in_jupyter() and importlib.util.find_spec("ipywidgets") is not None:
            from tqdm.notebook import tqdm
        else:
            from tqdm import tqdm
    except ImportError:
        if forced:
            raise ImportError(
                "ct.config.progress = True needs tqdm: pip install tqdm (or coiter[progress])"
            ) from None
        return None
    return tqdm


def enabled(show: bool | None = None) -> bool:
    """Whether ``progress`` draws bars now: ``show`` when given, else ``ct.config.progress``
    and where we run."""
    setting = config.progress if show is None else show
    if setting is None:
        return _watched()
    return bool(setting)


@contextmanager
def progress(
    total: float | None,
    desc: str,
    unit: str = "it",
    *,
    small: bool = False,
    show: bool | None = None,
) -> Iterator[Progress]:
    """A progress bar of ``total`` units (None: unknown) described by ``desc``, for the
    duration of the ``with`` block; silent unless ``ct.config.progress`` asks for it (see the
    module's documentation), or ``show`` (a caller's own switch, such as ``ct.autoschedule``'s
    ``progress=``) where it is not None. ``small=True`` says the work is surely quick: then only
    a forced bar is drawn, and a hot path pays no more than this check."""
    forced = (config.progress if show is None else show) is True
    if small and not forced:
        yield _Silent()
        return
    if not enabled(show):
        yield _Silent()
        return
    bar_class = _bar_class(forced)
    if bar_class is None:
        yield _Silent()
        return
    bar = bar_class(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=total is None or total >= 1000,  # 1.2M entries, but 3/7 cases
        delay=0 if forced else AUTO_DELAY_S,
        file=sys.stderr,
        dynamic_ncols=True,
    )
    stop = threading.Event()
    ticker = threading.Thread(target=_tick, args=(bar, stop), daemon=True)
    ticker.start()
    try:
        yield _Bar(bar)
    finally:
        stop.set()
        ticker.join()
        bar.close()


def _tick(bar: Any, stop: threading.Event) -> None:
    """Redraw ``bar`` (its elapsed time) until ``stop``, once its delay has passed."""
    while not stop.wait(_TICK_S):
        if bar.format_dict["elapsed"] >= bar.delay:
            bar.refresh()
