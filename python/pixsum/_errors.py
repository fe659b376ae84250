"""pixsum._errors - the exception hierarchy that C status codes map to.

Every failure of the C library (and every argument the binding itself rejects)
raises a subclass of :class:`pixsum.Error`. Each class matches one status code
of ``include/pixsum.h`` and also derives from the built-in exception a Python
user would expect (``ValueError`` for a bad shape, ``TypeError`` for an
unsupported dtype, ``MemoryError`` for a failed allocation, ...), so generic
``except ValueError`` code keeps working.

Attributes of every instance:
    status  the C status code (int, values pinned by the C API)
    detail  the library's detail text for the failing call ("" if none)
"""

import builtins


class Error(Exception):
    """Base class of every pixsum error.

    ``status`` is the C status code, ``detail`` the library's explanation of the
    failing call (for example ``"u32 output can overflow: ..."``)."""

    status = 0

    def __init__(self, message, status=None, detail=""):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.detail = detail


class NullError(Error, ValueError):
    """A required buffer was missing (PIXSUM_ERR_NULL)."""
    status = 1


class InvalidArgumentError(Error, ValueError):
    """A value is out of its documented range (PIXSUM_ERR_INVALID_ARG)."""
    status = 2


class BadShapeError(Error, ValueError):
    """Zero size, or shapes that do not match (PIXSUM_ERR_BAD_SHAPE)."""
    status = 3


class BadStrideError(Error, ValueError):
    """A memory layout the library cannot read in place (PIXSUM_ERR_BAD_STRIDE)."""
    status = 4


class BadTypeError(Error, TypeError):
    """Pixel type or type pair not supported (PIXSUM_ERR_BAD_TYPE)."""
    status = 5


class OverflowError(Error, builtins.OverflowError):
    """The requested output type could overflow (PIXSUM_ERR_OVERFLOW).

    Pick a wider ``dtype`` or pass ``wrap=True`` for modular integer tables
    (every box sum below the type's range stays exact)."""
    status = 6


class AliasingError(Error, ValueError):
    """Input and output memory overlap (PIXSUM_ERR_ALIASING)."""
    status = 7


class UnknownMethodError(Error, ValueError):
    """No method of that name (PIXSUM_ERR_UNKNOWN_METHOD); see pixsum.methods()."""
    status = 8


class UnsupportedError(Error, ValueError):
    """The chosen method cannot do this operation/type/shape (PIXSUM_ERR_UNSUPPORTED)."""
    status = 9


class NoMemoryError(Error, MemoryError):
    """An allocation failed (PIXSUM_ERR_NO_MEMORY)."""
    status = 10


class UnavailableError(Error, RuntimeError):
    """Backend not built, or no device/ISA at run time (PIXSUM_ERR_UNAVAILABLE)."""
    status = 11


class OutOfRangeError(Error, IndexError):
    """A box or rectangle lies outside the table (PIXSUM_ERR_OUT_OF_RANGE)."""
    status = 12


class TooLargeError(Error, ValueError):
    """Memory cost above the allowed limit (PIXSUM_ERR_TOO_LARGE)."""
    status = 13


class CudaError(Error, RuntimeError):
    """A CUDA call failed; ``detail`` holds CUDA's text (PIXSUM_ERR_CUDA)."""
    status = 14


class GLError(Error, RuntimeError):
    """An OpenGL/EGL call failed (PIXSUM_ERR_GL)."""
    status = 15


class MPIError(Error, RuntimeError):
    """An MPI call failed (PIXSUM_ERR_MPI)."""
    status = 16


class IOError(Error, builtins.OSError):
    """Reading or writing a file failed (PIXSUM_ERR_IO)."""
    status = 17


class InternalError(Error, RuntimeError):
    """A bug in pixsum (PIXSUM_ERR_INTERNAL); please report it."""
    status = 18


#: Exception class per status code (index = status; index 0 is the base class).
BY_STATUS = (Error, NullError, InvalidArgumentError, BadShapeError, BadStrideError,
             BadTypeError, OverflowError, AliasingError, UnknownMethodError,
             UnsupportedError, NoMemoryError, UnavailableError, OutOfRangeError,
             TooLargeError, CudaError, GLError, MPIError, IOError, InternalError)

#: Names of the classes that would hide a builtin after ``from pixsum import *``
#: (``OverflowError``, ``IOError``): they stay attributes of the package
#: (``pixsum.OverflowError``) but are left out of ``__all__``; the aliases
#: below are exported instead. Each still derives from the builtin it names.
SHADOWING = tuple(cls.__name__ for cls in BY_STATUS if hasattr(builtins, cls.__name__))

#: Non-shadowing names of those classes, exported by ``import *``.
PixsumOverflowError = OverflowError
PixsumIOError = IOError

__all__ = ([cls.__name__ for cls in BY_STATUS if cls.__name__ not in SHADOWING] +
           ["PixsumOverflowError", "PixsumIOError", "BY_STATUS"])
