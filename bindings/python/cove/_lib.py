"""The compiled binding and the status check every call goes through."""
from __future__ import annotations

from typing import Any

from ._cove_ffi import ffi, lib  # type: ignore[import-not-found]
from ._errors import error_for

__all__ = ["ffi", "lib", "check", "owned", "release_handle"]


def check(status: int, *, query: bool = False) -> None:
    """Raises the exception of a failed call, with the library's message. With ``query`` (a
    call that makes or runs a query), a bad argument is the query's error (InvalidQueryError,
    a QueryError)."""
    if status != 0:
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
