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
    """

    max_dense_bytes: int = 4 << 30
    # Progress bars of long operations (coiter.progress): None draws them where someone watches
    # (a terminal or a notebook) once an operation has run for a second, True always, False never.
    progress: bool | None = None


config = _Config()
