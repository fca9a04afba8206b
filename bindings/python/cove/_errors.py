"""Cove's exception classes, one per family of status codes of the C API."""
from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """Every error Cove raises. ``code`` is the C API's status number, ``message`` its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class InvalidArgumentError(Error):
    """A bad argument: an unknown name, a wrong kind of handle, invalid text."""


class WrongTypeError(Error, TypeError):
    """A value of the wrong type for a property or an operation."""


class NotFoundError(Error):
    """A named class, property or object does not exist."""


class OutOfRangeError(Error, IndexError):
    """An index outside its bounds."""


class TransactionError(Error):
    """A write outside a write transaction, a second write, or a call refused inside one."""


class InvalidatedError(Error):
    """The object or collection was deleted, or the realm invalidated."""


class FrozenError(Error):
    """A frozen handle cannot write, advance or be observed."""


class ReadOnlyError(Error):
    """The realm was opened read-only."""


class ClosedError(Error):
    """The realm is closed (or was closed by an I/O failure)."""


class SchemaError(Error):
    """The schema is invalid or does not match the file."""


class MigrationRequiredError(Error):
    """The file's schema differs and no migration was given."""


class DuplicateKeyError(Error):
    """A primary key that already exists."""


class QuerySyntaxError(Error):
    """Query text that does not parse."""


class StorageError(Error):
    """The file: I/O failure, no space, damaged or not a Cove file, locked, or from a newer Cove."""


class TooManyVersionsError(Error):
    """More versions are pinned than ``max_active_versions`` allows."""


class CallbackError(Error):
    """A callback failed."""


class InternalError(Error):
    """A broken invariant inside Cove."""


# Status numbers of include/cove.h and the class each raises.
_BY_CODE: Dict[int, Type[Error]] = {
    1: InvalidArgumentError,
    2: WrongTypeError,
    3: NotFoundError,
    4: OutOfRangeError,
    5: TransactionError,   # COVE_ERR_NOT_IN_WRITE
    6: TransactionError,   # COVE_ERR_ALREADY_IN_WRITE
    7: TransactionError,   # COVE_ERR_IN_WRITE
    8: InvalidatedError,
    9: FrozenError,
    10: ReadOnlyError,
    11: ClosedError,
    12: SchemaError,
    13: MigrationRequiredError,
    14: DuplicateKeyError,
    15: QuerySyntaxError,
    16: StorageError,      # COVE_ERR_IO
    17: StorageError,      # COVE_ERR_NO_SPACE
    18: StorageError,      # COVE_ERR_CORRUPT
    19: StorageError,      # COVE_ERR_LOCKED
    20: TooManyVersionsError,
    21: CallbackError,
    22: StorageError,      # COVE_ERR_FORMAT
    23: InternalError,
}


def error_for(code: int, message: str) -> Error:
    """The exception for a status code and its message."""
    return _BY_CODE.get(code, InternalError)(code, message)
