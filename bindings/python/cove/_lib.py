"""The compiled binding, the status check every call goes through, and the string arguments
the calls take."""
from __future__ import annotations

from typing import Any

from ._cove_ffi import ffi, lib  # type: ignore[import-not-found]
from ._errors import InvalidArgumentError, Status, WrongTypeError, error_for

__all__ = ["ffi", "lib", "check", "owned", "release_handle", "c_string"]

# Bound once: every call's status is compared with it, and looking a member up on the enum
# costs more than the comparison.
_OK = Status.OK


def check(status: int, *, query: bool = False) -> None:
    """Raises the exception of a failed call, with the library's message. With ``query`` (a
    call that makes or runs a query), a bad argument is the query's error (InvalidQueryError,
    a QueryError)."""
    if status != _OK:
        message = ffi.string(lib.cove_last_error_message()).decode("utf-8", "replace")
        raise error_for(status, message, query=query)


def owned(handle: Any) -> Any:
    """A handle the caller owns (+1), released when the last reference to the returned cdata
    goes (cffi's destructor). For handles no Python callback hangs on and nobody releases
    early; a realm, a notification token and sectioned results keep a `weakref.finalize`: they
    are released on demand, or (sectioned results with a key function) call back into Python
    when released, which must not wait for the interpreter's teardown."""
    return ffi.gc(handle, lib.cove_release)


def release_handle(handle: Any) -> None:
    lib.cove_release(handle)


def c_string(value: Any, what: str) -> bytes:
    """A NUL-terminated string argument: the library would read only up to an embedded NUL."""
    if not isinstance(value, str):
        raise WrongTypeError(Status.WRONG_TYPE, f"{what} is a str, got {type(value).__name__}")
    data = value.encode("utf-8", "surrogatepass")
    if b"\0" in data:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{what} {value!r} holds a NUL character")
    return data
