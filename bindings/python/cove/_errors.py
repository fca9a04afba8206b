"""Cove's exception classes, one per family of status codes of the C API, each also the
built-in exception a Python program catches for that kind of failure (an unknown attribute is
an AttributeError, a bad argument a ValueError, a file that cannot be opened an OSError), and
the statuses by name."""
from __future__ import annotations

import enum
import errno as _errno
import os
from typing import Dict, Optional, Type


class Status(enum.IntEnum):
    """The C API's status codes (``cove_status_t``), by name: ``Error.status`` is one."""

    OK = 0
    INVALID_ARGUMENT = 1
    WRONG_TYPE = 2
    NOT_FOUND = 3
    OUT_OF_RANGE = 4
    NOT_IN_WRITE = 5
    ALREADY_IN_WRITE = 6
    IN_WRITE = 7
    INVALIDATED = 8
    FROZEN = 9
    READ_ONLY = 10
    CLOSED = 11
    SCHEMA = 12
    MIGRATION_REQUIRED = 13
    DUPLICATE_KEY = 14
    QUERY_SYNTAX = 15
    IO = 16
    NO_SPACE = 17
    CORRUPT = 18
    LOCKED = 19
    TOO_MANY_VERSIONS = 20
    CALLBACK = 21
    FORMAT = 22
    INTERNAL = 23
    WRONG_THREAD = 24
    DECRYPTION = 25
    SYNC = 26


class Error(Exception):
    """Every error Cove raises. ``code`` is the C API's status number, ``message`` its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        # A status given by name is kept as its number, as the library's own statuses are.
        self.code = int(code) if isinstance(code, Status) else code
        self.message = message

    @property
    def status(self) -> Status:
        """The status code by name."""
        try:
            return Status(self.code)
        except ValueError:
            return Status.INTERNAL

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(Error, ValueError):
    """A bad argument: an unknown name, a wrong kind of handle, invalid text. Also a
    ValueError."""


class WrongTypeError(Error, TypeError):
    """A value of the wrong type for a property or an operation."""


class NotFoundError(Error, LookupError, AttributeError):
    """A named class, property or object does not exist. Also a LookupError, and an
    AttributeError, so that ``hasattr(obj, "x")`` and ``getattr(obj, "x", None)`` answer for a
    property the class does not have."""


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


class QueryError(Error):
    """A query that cannot run: its text does not parse (QuerySyntaxError), or it names a
    property the class lacks, compares values of types that do not compare, or misuses an
    operator (InvalidQueryError)."""


class QuerySyntaxError(QueryError):
    """Query text that does not parse."""


class InvalidQueryError(QueryError, InvalidArgumentError):
    """A query that parses but does not mean anything for its class: an unknown property, a
    type mismatch, a misused operator. Also an InvalidArgumentError."""


class StorageError(Error):
    """The file: I/O failure, no space, damaged or not a Cove file, locked, or from a newer Cove.
    Each has a class of its own below."""


class StorageIOError(StorageError, OSError):
    """The file could not be opened, read or written. Also an OSError, with ``errno``,
    ``strerror`` and ``filename`` when the system said why."""

    def __init__(self, code: int, message: str) -> None:
        Error.__init__(self, code, message)
        number = _errno_in(message)
        self.errno = number
        self.strerror = os.strerror(number) if number is not None else None
        self.filename = _quoted_path(message)


class NoSpaceError(StorageIOError):
    """The disk (or the quota) is full."""


class CorruptError(StorageError):
    """The file is damaged, or not a Cove file."""


class LockedError(StorageError):
    """The write lock was not free within the timeout."""


class FormatError(StorageError):
    """The file was written by a newer Cove."""


class DecryptionError(StorageError):
    """An encrypted file opened without its key or with another one, or a plain file opened
    with ``encryption_key``."""


class TooManyVersionsError(Error):
    """More versions are pinned than ``max_active_versions`` allows."""


class CallbackError(Error):
    """A callback failed."""


class InternalError(Error):
    """A broken invariant inside Cove."""


class WrongThreadError(Error):
    """A live realm, or an object or results of it, used by a thread while another thread has
    the realm in a write (``with realm.write():``). A realm moves between threads while it is not
    writing; frozen ones are free for any thread at any time."""


class SyncError(Error):
    """Sync: the server refused the session (a token it does not accept, a file bound to
    another user), a wait for an upload or a download timed out, or the realm does not sync."""


# The statuses of include/cove.h and the class each raises.
_BY_CODE: Dict[int, Type[Error]] = {
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.WRONG_TYPE: WrongTypeError,
    Status.NOT_FOUND: NotFoundError,
    Status.OUT_OF_RANGE: OutOfRangeError,
    Status.NOT_IN_WRITE: TransactionError,
    Status.ALREADY_IN_WRITE: TransactionError,
    Status.IN_WRITE: TransactionError,
    Status.INVALIDATED: InvalidatedError,
    Status.FROZEN: FrozenError,
    Status.READ_ONLY: ReadOnlyError,
    Status.CLOSED: ClosedError,
    Status.SCHEMA: SchemaError,
    Status.MIGRATION_REQUIRED: MigrationRequiredError,
    Status.DUPLICATE_KEY: DuplicateKeyError,
    Status.QUERY_SYNTAX: QuerySyntaxError,
    Status.IO: StorageIOError,
    Status.NO_SPACE: NoSpaceError,
    Status.CORRUPT: CorruptError,
    Status.LOCKED: LockedError,
    Status.TOO_MANY_VERSIONS: TooManyVersionsError,
    Status.CALLBACK: CallbackError,
    Status.FORMAT: FormatError,
    Status.INTERNAL: InternalError,
    Status.WRONG_THREAD: WrongThreadError,
    Status.DECRYPTION: DecryptionError,
    Status.SYNC: SyncError,
}

# The statuses that a call making or running a query answers for a query that means nothing
# for its class: InvalidQueryError.
_QUERY_MEANING = (Status.INVALID_ARGUMENT, Status.WRONG_TYPE, Status.NOT_FOUND)

# The system's texts of errno values ("No such file or directory"), to find the errno a
# message of the library names.
_ERRNO_BY_TEXT: Dict[str, int] = {os.strerror(n): n for n in sorted(_errno.errorcode, reverse=True)}


def _errno_in(message: str) -> Optional[int]:
    """The errno whose text ends `message` (the library writes "what: text")."""
    for text, number in _ERRNO_BY_TEXT.items():
        if message.endswith(": " + text):
            return number
    return None


def _quoted_path(message: str) -> Optional[str]:
    """The path a message names in quotes ("cannot open '/a/b.cove': ..."), if any."""
    start = message.find("'")
    end = message.find("'", start + 1)
    return message[start + 1:end] if 0 <= start < end else None


def _without_function(message: str) -> str:
    """The message without the C function's name in front of it ("cove_set_insert: ..."):
    a Python program never called that name."""
    if message.startswith("cove_"):
        head, sep, rest = message.partition(": ")
        if sep and " " not in head:
            return rest
    return message


def error_for(code: int, message: str, *, query: bool = False) -> Error:
    """The exception for a status code and its message; with `query`, the call made or ran a
    query, and a bad argument is the query's error (InvalidQueryError)."""
    message = _without_function(message)
    if query and code in _QUERY_MEANING:
        return InvalidQueryError(code, message)
    return _BY_CODE.get(code, InternalError)(code, message)
