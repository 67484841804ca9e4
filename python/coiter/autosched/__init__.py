"""coiter's autoscheduler (docs/autoscheduling.md)."""

from .frontier import frontier

__all__ = ["frontier"]
