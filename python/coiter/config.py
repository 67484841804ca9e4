"""Global settings (``ct.config``)."""


class _Config:
    """Global settings (``ct.config``)."""

    max_dense_bytes: int = 4 << 30
    # Progress bars of long operations (coiter.progress): None draws them where someone watches
    # (a terminal or a notebook) once an operation has run for a second, True always, False never.
    progress: bool | None = None


config = _Config()
