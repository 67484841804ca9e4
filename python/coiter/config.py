"""Global settings (``ct.config``)."""


class _Config:
    """Global settings (``ct.config``)."""

    max_dense_bytes: int = 4 << 30


config = _Config()
