"""Exception classes of coiter (docs/reference.md, "Errors").

Every error coiter raises on bad input derives from :class:`CoiterError` and from the
built-in class a NumPy/SciPy user would expect (``ValueError``, ``TypeError``,
``RuntimeError``), so existing ``except ValueError`` handlers keep working.
"""


class CoiterError(Exception):
    """Base class of every coiter error."""


class FormatError(CoiterError, ValueError):
    """An unknown or malformed format, or data that does not fit a format."""


class ShapeError(CoiterError, ValueError):
    """Shapes or coordinates that disagree with each other or with the data."""


class ScheduleError(CoiterError, ValueError):
    """A scheduling command whose precondition fails."""


class SignatureError(CoiterError, TypeError):
    """A kernel called with tensors that do not match its compiled signature."""


class CompileError(CoiterError, RuntimeError):
    """Code generation or JIT compilation failed."""


class DeviceError(CoiterError, RuntimeError):
    """A GPU, its driver or its libraries could not do what was asked (no device, NVRTC
    missing, device memory exhausted, a failed launch)."""


class OutOfRange(ShapeError, IndexError):
    """An index outside a mode's extent: an IndexError as NumPy raises (so iteration by
    ``T[k]`` stops), and a ShapeError as coiter's element reads always raised."""


class ParseError(CoiterError, ValueError):
    """A malformed expression string or file.

    ``column`` (expression strings) or ``line`` (files) locate the error when known.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.path = path
