"""The compiled binding and the status check every call goes through."""
from __future__ import annotations

from typing import Any

from ._cove_ffi import ffi, lib  # type: ignore[import-not-found]
from ._errors import error_for

__all__ = ["ffi", "lib", "check", "release_handle"]


def check(status: int) -> None:
    """Raises the exception of a failed call, with the library's message."""
    if status != 0:
        message = ffi.string(lib.cove_last_error_message()).decode("utf-8", "replace")
        raise error_for(status, message)


def release_handle(handle: Any) -> None:
    lib.cove_release(handle)
