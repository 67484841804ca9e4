"""Global settings (``ct.config``)."""


class _Config:
    """Global settings, ``ct.config``; change them by assignment.

    Attributes
    ----------
    max_dense_bytes : int
        The largest dense result coiter computes without being asked explicitly, in bytes
        (default 4 GiB): an inferred dense result of :func:`coiter.evaluate`, a densifying
        array operator (``A + 1``, ``np.asarray(A)``) or conversion beyond it raises
        :class:`coiter.ShapeError` before anything is allocated. ``T.to_numpy()`` and
        ``out_format="dense"`` are not limited.
    frontier_seconds : float or None
        The longest a call without a schedule spends building a statement's asymptotic
        frontier, the autoscheduler's candidates (default 1 second; None: no bound). Past it
        the frontier of the candidates ranked so far is used, logged at INFO. A frontier is
        built once per machine: it is kept in the disk cache (docs/autoscheduling.md).
        ``schedule="auto"`` given explicitly builds the whole frontier; ``ct.autoschedule``
        builds it within this bound too.
    """

    max_dense_bytes: int = 4 << 30
    frontier_seconds: float | None = 1.0
    # Progress bars of long operations (coiter.progress): None draws them where someone watches
    # (a terminal or a notebook) once an operation has run for a second, True always, False never.
    progress: bool | None = None


config = _Config()
