"""Sync: ``cove.open(path, schema=..., sync=cove.SyncConfig(url, token))`` uploads what the
file's realms write to a Cove Sync server and downloads what others wrote there, in the
background; ``realm.sync`` is the file's session."""
from __future__ import annotations

import math
import os
import json
import uuid
from typing import TYPE_CHECKING, Any, List, Literal, NamedTuple, Optional, Tuple, Union

from ._errors import InvalidArgumentError, Status, WrongTypeError
from ._lib import c_string, check, ffi, lib

if TYPE_CHECKING:
    from ._realm import Realm

#: Whether a session works: "active" (uploading and downloading, or trying to reach the server),
#: "paused" (``pause()``, or ``starts_connected=False``), "inactive" (stopped for good: the
#: server refused it, and ``last_error`` says why).
SyncState = Literal["active", "paused", "inactive"]

#: Whether a session reaches the server now: "disconnected" (the last request failed, or none
#: was made yet), "connecting" (binding the file to the token's user), "connected" (the server
#: answered the last request).
SyncConnection = Literal["disconnected", "connecting", "connected"]

#: What a file does when it can no longer sync under its client file id (``SyncConfig``).
ClientReset = Literal["recover", "discard", "manual"]

# By the numbers of cove_sync_state_e, cove_sync_connection_e and cove_client_reset_e.
_CLIENT_RESETS: Tuple[ClientReset, ...] = ("recover", "discard", "manual")
_STATES: Tuple[SyncState, ...] = ("active", "paused", "inactive")
_CONNECTIONS: Tuple[SyncConnection, ...] = ("disconnected", "connecting", "connected")

_INT32 = range(-(1 << 31), 1 << 31)


class SyncProgress(NamedTuple):
    """How far a session's uploads and downloads have come (``realm.sync.progress``):
    ``local_version``, the newest local changeset version made (the count of the file's writes
    that synced something); ``uploaded_version``, the newest of them the server holds (equal to
    ``local_version`` once everything is uploaded); ``downloaded_version``, the server version
    the file has downloaded up to; ``server_version``, the newest server version the session
    has heard of."""

    local_version: int
    uploaded_version: int
    downloaded_version: int
    server_version: int


class CompensatingWrite(NamedTuple):
    """A write of this file the server refused and undid (``realm.sync.compensating_writes``):
    the object's ``class_name`` and ``primary_key``, and the server's ``reason`` (the rule, or
    that the object is outside the file's subscriptions). The object comes back to the server's
    state through the next download."""

    class_name: str
    primary_key: Any
    reason: str


def _taken_text(text: Any) -> Optional[str]:
    """A string the library made for the caller (freed here), None for NULL."""
    if text == ffi.NULL:
        return None
    try:
        return str(ffi.string(text).decode("utf-8", "replace"))
    finally:
        lib.cove_free(text)


def _primary_key(key: Any) -> Any:
    """A primary key as the server writes it (an int, a str, {"oid": hex}, {"uuid": text})."""
    if isinstance(key, dict) and len(key) == 1:
        ((tag, value),) = key.items()
        if tag == "oid" and isinstance(value, str):
            from ._values import ObjectId
            return ObjectId(value)
        if tag == "uuid" and isinstance(value, str):
            return uuid.UUID(value)
    return key


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WrongTypeError(Status.WRONG_TYPE, f"{what} is a number of seconds, got {type(value).__name__}")
    return float(value)


def _int32(value: Any, what: str, expected: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongTypeError(Status.WRONG_TYPE, f"{what} is an int, got {type(value).__name__}")
    if value not in _INT32:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{what} {value}: expected {expected}")
    return value


class SyncConfig:
    """The server a synced file syncs with, and who it syncs as: ``cove.open(..., sync=...)``.

    ``url`` is the server's base URL, ``http://`` or ``https://`` and a host; ``token`` the
    bearer token the server gave the user (``cove-sync-server token``). ``trusted_certificates``
    is a file of PEM certificates to trust instead of the system's (None: the system's);
    ``request_timeout`` how long one request may take, in seconds (more than 0, at most 3600);
    ``long_poll`` how long a download waits at the server for news, in seconds (0 to 60);
    ``changesets_per_transaction`` the most changesets one download asks the server for (1 to
    100000); ``starts_connected=False`` opens the session paused (``realm.sync.resume()``
    connects it); ``client_reset`` is what the file does when it can no longer sync under its id
    (an older copy of itself, or a server that lost history): "recover" (the default: a new id,
    and what the server never took sent again), "discard" (a new id, the synced objects and what
    was not uploaded dropped, the server's state downloaded) or "manual" (the session stops).

    Settings out of range raise InvalidArgumentError here; ``cove.open`` checks the URL and the
    token (InvalidArgumentError) and that every class has a primary key (SchemaError). A
    SyncConfig is immutable and may be shared by any number of opens.
    """

    __slots__ = ("url", "token", "trusted_certificates", "request_timeout", "long_poll",
                 "changesets_per_transaction", "starts_connected", "client_reset", "_handle")

    url: str
    token: str
    trusted_certificates: Optional[str]
    request_timeout: float
    long_poll: int
    changesets_per_transaction: int
    starts_connected: bool
    client_reset: ClientReset
    _handle: Any

    def __init__(self, url: str, token: str, *,
                 trusted_certificates: Union[str, "os.PathLike[str]", None] = None,
                 request_timeout: float = 30.0, long_poll: int = 25, changesets_per_transaction: int = 1000,
                 starts_connected: bool = True, client_reset: ClientReset = "recover") -> None:
        out = ffi.new("cove_sync_config_t**")
        check(lib.cove_sync_config_new(c_string(url, "url"), c_string(token, "token"), out))
        handle = ffi.gc(out[0], lib.cove_release)
        certificates = None if trusted_certificates is None else os.fspath(trusted_certificates)
        if certificates is not None:
            check(lib.cove_sync_config_set_trusted_certificates(handle, c_string(certificates, "trusted_certificates")))
        timeout = _number(request_timeout, "request_timeout")
        check(lib.cove_sync_config_set_request_timeout(handle, timeout))
        poll = _int32(long_poll, "long_poll", "0 to 60 seconds")
        check(lib.cove_sync_config_set_long_poll(handle, poll))
        per = _int32(changesets_per_transaction, "changesets_per_transaction", "1 to 100000")
        check(lib.cove_sync_config_set_changesets_per_transaction(handle, per))
        if not isinstance(starts_connected, bool):
            raise WrongTypeError(Status.WRONG_TYPE, f"starts_connected is a bool, got {type(starts_connected).__name__}")
        check(lib.cove_sync_config_set_starts_connected(handle, starts_connected))
        if client_reset not in _CLIENT_RESETS:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"client_reset {client_reset!r}: expected 'recover', 'discard' or 'manual'")
        check(lib.cove_sync_config_set_client_reset(handle, _CLIENT_RESETS.index(client_reset)))
        for name, value in (("url", url), ("token", token), ("trusted_certificates", certificates),
                            ("request_timeout", timeout), ("long_poll", poll),
                            ("changesets_per_transaction", per), ("starts_connected", starts_connected),
                            ("client_reset", client_reset), ("_handle", handle)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a cove.SyncConfig is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a cove.SyncConfig is immutable: cannot delete {name!r}")

    def _fields(self) -> Tuple[Any, ...]:
        return (self.url, self.token, self.trusted_certificates, self.request_timeout, self.long_poll,
                self.changesets_per_transaction, self.starts_connected, self.client_reset)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SyncConfig):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        # The token stays out of logs.
        return (f"cove.SyncConfig({self.url!r}, token=..., trusted_certificates={self.trusted_certificates!r}, "
                f"request_timeout={self.request_timeout!r}, long_poll={self.long_poll!r}, "
                f"changesets_per_transaction={self.changesets_per_transaction!r}, "
                f"starts_connected={self.starts_connected!r}, client_reset={self.client_reset!r})")


class SyncSession:
    """The background link between a synced realm's file and its server (``realm.sync``): one
    per file in a process, shared by every realm of the file opened with ``sync``. Closing the
    file's last realm stops it; what it had not uploaded stays queued in the file for the next
    session."""

    __slots__ = ("_realm",)

    def __init__(self, realm: "Realm") -> None:
        self._realm = realm

    def _status(self) -> Any:
        out = ffi.new("cove_sync_status_t*")
        check(lib.cove_sync_get_status(self._realm._h(), out))
        return out

    @property
    def state(self) -> SyncState:
        """"active", "paused" or "inactive" (stopped: see ``last_error``)."""
        return _STATES[int(self._status().state)]

    @property
    def connection(self) -> SyncConnection:
        """"disconnected", "connecting" or "connected"."""
        return _CONNECTIONS[int(self._status().connection)]

    @property
    def progress(self) -> SyncProgress:
        """How far uploads and downloads have come."""
        s = self._status()
        return SyncProgress(int(s.local_version), int(s.uploaded_version), int(s.downloaded_version),
                            int(s.server_version))

    @property
    def last_error(self) -> Optional[str]:
        """The latest error: a request that failed (the session tries again; a request that
        succeeds clears it), or the refusal that stopped the session. None when there is none."""
        out = ffi.new("char**")
        check(lib.cove_sync_last_error(self._realm._h(), out))
        return _taken_text(out[0])

    @property
    def compensating_writes(self) -> List[CompensatingWrite]:
        """The newest (up to 100) writes of this file the server refused and undid, oldest
        first."""
        out = ffi.new("char**")
        total = ffi.new("uint64_t*")
        check(lib.cove_sync_compensating_writes(self._realm._h(), out, total))
        try:
            entries = json.loads(ffi.string(out[0]).decode("utf-8", "replace"))
        finally:
            lib.cove_free(out[0])
        return [CompensatingWrite(str(e.get("class", "?")), _primary_key(e.get("key")), str(e.get("reason", "")))
                for e in entries if isinstance(e, dict)]

    @property
    def client_reset_count(self) -> int:
        """How many client resets the session made (``SyncConfig(client_reset=...)``)."""
        count = ffi.new("uint64_t*")
        check(lib.cove_sync_client_resets(self._realm._h(), count, ffi.NULL))
        return int(count[0])

    @property
    def last_client_reset(self) -> Optional[str]:
        """Why the session's last client reset was made, None before the first."""
        count = ffi.new("uint64_t*")
        out = ffi.new("char**")
        check(lib.cove_sync_client_resets(self._realm._h(), count, out))
        return _taken_text(out[0])

    @property
    def compensating_write_count(self) -> int:
        """How many writes the server refused and undid since the session started."""
        out = ffi.new("char**")
        total = ffi.new("uint64_t*")
        check(lib.cove_sync_compensating_writes(self._realm._h(), out, total))
        lib.cove_free(out[0])
        return int(total[0])

    def pause(self) -> None:
        """Stops uploading and downloading until ``resume()``; what the file writes meanwhile
        stays queued. Affects every realm of the file in this process."""
        check(lib.cove_sync_pause(self._realm._h()))

    def resume(self) -> None:
        """Starts a paused session again (a stopped one stays stopped: a realm of the file opened
        afterwards starts a new session)."""
        check(lib.cove_sync_resume(self._realm._h()))

    def wait_for_upload(self, timeout: float = 60.0) -> None:
        """Waits until everything the file had written when the call was made is on the server.
        Raises SyncError when ``timeout`` seconds pass first, with the session's last error (a
        paused session does not upload), or when the session stops (the server's refusal);
        TransactionError inside a write of this realm. Other Python threads run meanwhile (the
        GIL is released); Ctrl-C is handled when the wait returns."""
        seconds = self._timeout(timeout)
        check(lib.cove_sync_wait_for_upload(self._realm._h(), seconds))

    def wait_for_download(self, timeout: float = 60.0) -> None:
        """Waits until the file holds everything the server had when the call was made;
        ``realm.refresh()`` then shows it. Raises as ``wait_for_upload``."""
        seconds = self._timeout(timeout)
        check(lib.cove_sync_wait_for_download(self._realm._h(), seconds))

    @staticmethod
    def _timeout(timeout: Any) -> float:
        seconds = _number(timeout, "timeout")
        if not (seconds >= 0 and math.isfinite(seconds)):
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"timeout {timeout} is not a finite number of seconds >= 0")
        return seconds

    def __repr__(self) -> str:
        try:
            s = self._status()
        except Exception:
            return "<cove.SyncSession of a closed realm>"
        return (f"<cove.SyncSession {_STATES[s.state]}, {_CONNECTIONS[s.connection]}, "
                f"uploaded {s.uploaded_version} of {s.local_version}, downloaded {s.downloaded_version} of {s.server_version}>")
