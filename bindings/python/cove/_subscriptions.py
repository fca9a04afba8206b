"""Flexible-sync subscriptions: ``results.subscribe()`` (awaited), ``results.subscribe_sync()``
and ``results.unsubscribe()``, and ``realm.subscriptions``, the synced realm's subscription set:
read it, change it in ``with realm.subscriptions.update() as subs:``, wait for a version.

A synced realm downloads the objects its subscriptions cover; each change of the set commits a
new version of it (1, 2, ...; 0 before the first), which the file's session sends to the server.
Waits wait on that session, never on the realm: while ``subscribe_sync()`` or ``wait()`` blocks
(the GIL released), other threads may use the realm.
"""
from __future__ import annotations

import datetime
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Literal, Optional, Set, Tuple

from ._errors import ClosedError, InvalidArgumentError, Status, WrongTypeError, error_for
from ._lib import c_string, check, ffi, lib
from ._query import argument_array, bind_arguments
from ._values import Timestamp

if TYPE_CHECKING:
    from ._realm import Realm

AVAILABLE = hasattr(lib, "cove_results_subscribe")
"""Whether the loaded libcove has subscriptions."""

#: When a subscribe waits for the server's objects: "always" (every time, for the subscription's
#: objects and then everything the server held at the call), "on_creation" (only when the call
#: added the subscription or gave a name a new query), "never".
WaitForSync = Literal["always", "on_creation", "never"]

#: Where the newest version of a subscription set stands: "pending" (the server has not taken
#: it yet), "bootstrapping" (its objects are downloading), "complete" (they are in the file),
#: "error" (the server refused it: ``error`` says why; the set it had before stays in force),
#: "superseded" (a newer version was committed before it completed).
SubscriptionState = Literal["pending", "bootstrapping", "complete", "error", "superseded"]

# By the numbers of cove_wait_for_sync_e and cove_subscription_state_e.
_MODES = {"always": 0, "on_creation": 1, "never": 2}
_STATES: Tuple[SubscriptionState, ...] = ("pending", "bootstrapping", "complete", "error", "superseded")


@dataclass(frozen=True)
class Subscription:
    """One subscription of a set: ``name`` (None for an unnamed one), the ``class_name`` and
    ``query`` it subscribes to (its arguments written ``$0``, ``$1``, ...), when it was created
    and when its query last changed (UTC, millisecond precision)."""

    name: Optional[str]
    class_name: str
    query: str
    created_at: datetime.datetime
    updated_at: datetime.datetime


def _mode(wait_for_sync: Any) -> int:
    mode = _MODES.get(wait_for_sync) if isinstance(wait_for_sync, str) else None
    if mode is None:
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, f"wait_for_sync is 'always', 'on_creation' or 'never', not {wait_for_sync!r}")
    return mode


def _timeout(timeout: Any) -> float:
    """Seconds for the library: -1 for no limit (None or infinity)."""
    if timeout is None:
        return -1.0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise WrongTypeError(Status.WRONG_TYPE, f"timeout is a number of seconds or None, got {type(timeout).__name__}")
    if timeout == math.inf:
        return -1.0
    if not timeout >= 0:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"timeout {timeout} is not a number of seconds >= 0")
    return float(timeout)


def _name(name: Any) -> Any:
    return ffi.NULL if name is None else c_string(name, "name")


def _text(pointer: Any) -> Optional[str]:
    return None if pointer == ffi.NULL else str(ffi.string(pointer).decode("utf-8", "replace"))


# -- subscribing results ---------------------------------------------------------------------------

class _Pending:
    """The outcome of a cove_results_subscribe() call, set by its callback."""

    __slots__ = ("done", "status", "message", "__weakref__")

    def __init__(self) -> None:
        self.done = False
        self.status = 0
        self.message: Optional[str] = None


# What the library holds a handle to, until it frees its user data.
_LIVE: Set[_Pending] = set()


def _on_subscribed(userdata: Any, status: int, message: Any) -> None:
    pending: _Pending = ffi.from_handle(userdata)
    pending.status = int(status)
    pending.message = _text(message)
    pending.done = True


def _free_pending(userdata: Any) -> None:
    _LIVE.discard(ffi.from_handle(userdata))


if AVAILABLE:
    ffi.def_extern(name="_cove_subscribe_cb")(_on_subscribed)
    ffi.def_extern(name="_cove_free_subscribe")(_free_pending)


async def subscribe(realm: "Realm", handle: Any, name: Optional[str], wait_for_sync: Any, timeout: Any) -> None:
    """Commits the subscription now, then awaits how its wait ended: the library's callback runs
    inside a ``refresh()`` this coroutine makes when the realm's notification descriptor wakes
    the loop."""
    mode, seconds, c_name = _mode(wait_for_sync), _timeout(timeout), _name(name)
    pending = _Pending()
    userdata = ffi.new_handle(pending)
    _LIVE.add(pending)
    try:
        check(lib.cove_results_subscribe(handle, c_name, mode, seconds, lib._cove_subscribe_cb, userdata,
                                         lib._cove_free_subscribe))
    except BaseException:
        _LIVE.discard(pending)   # a call that fails calls neither the callback nor the free
        raise
    realm.deliver()              # a call that does not wait completes at the first delivery
    while not pending.done:
        if realm.is_closed:
            raise ClosedError(Status.CLOSED, "the realm was closed before the subscription's wait ended")
        await realm._fd_watch().wait()
        if not realm.is_closed:
            realm.refresh()
    if pending.status != Status.OK:
        raise error_for(pending.status, pending.message or "")


def subscribe_sync(realm: "Realm", handle: Any, name: Optional[str], wait_for_sync: Any, timeout: Any) -> None:
    """Commits the subscription and blocks (the GIL released) while it waits, then refreshes the
    realm so that what arrived is readable."""
    mode, seconds, c_name = _mode(wait_for_sync), _timeout(timeout), _name(name)
    check(lib.cove_results_subscribe_blocking(handle, c_name, mode, seconds))
    if mode != _MODES["never"]:
        realm.refresh()


# -- the set -----------------------------------------------------------------------------------------

class SubscriptionUpdate:
    """What ``with realm.subscriptions.update() as subs:`` gives: the changes made through it are
    committed together, as one new version of the set, when the block ends (nothing when it
    raises). Reads of ``realm.subscriptions`` inside the block show them."""

    __slots__ = ("_realm",)

    def __init__(self, realm: "Realm") -> None:
        self._realm = realm

    def append(self, class_name: Any, query: str = "TRUEPREDICATE", *args: Any, name: Optional[str] = None) -> None:
        """Subscribes to the objects of a class (a name or a declared class) that match ``query``
        with its arguments (``$0``, ``$1``... as in ``filter``). A name in use takes the new
        query; an unnamed subscription with the same query is not added twice. Raises
        InvalidArgumentError for an unknown class or a query subscriptions do not take (SORT,
        DISTINCT, LIMIT, key paths through links), QuerySyntaxError for one that does not
        parse."""
        realm = self._realm
        cls = c_string(realm._declared(class_name), "class_name")
        text, values, labels = bind_arguments(c_string(query, "query").decode("utf-8"), args)
        c_args, keep = argument_array(values, labels, realm)
        check(lib.cove_subscriptions_append(realm._h(), cls, text.encode("utf-8", "surrogatepass"), c_args,
                                            len(values), _name(name)))
        del keep

    def remove(self, name: str) -> None:
        """Removes the subscription named ``name``; NotFoundError when there is none."""
        check(lib.cove_subscriptions_remove(self._realm._h(), c_string(name, "name")))

    def remove_all(self, class_name: Any = None, unnamed_only: bool = False) -> None:
        """Removes every subscription (of ``class_name`` only, when given), or only the unnamed
        ones with ``unnamed_only``."""
        cls = ffi.NULL if class_name is None else c_string(self._realm._declared(class_name), "class_name")
        check(lib.cove_subscriptions_remove_all(self._realm._h(), cls, bool(unnamed_only)))


class SubscriptionSet:
    """A synced realm's subscriptions (``realm.subscriptions``): ``len()``, iteration and
    ``[i]`` give ``Subscription`` objects in the order they were added; ``version``, ``state``
    and ``error`` say where the newest version stands; ``update()`` changes it; ``wait()`` waits
    for its objects. Each read shows the file's newest version. A realm that does not sync
    raises InvalidArgumentError, a frozen one FrozenError, and a read or change inside a write
    TransactionError."""

    __slots__ = ("_realm",)

    def __init__(self, realm: "Realm") -> None:
        self._realm = realm

    @property
    def version(self) -> int:
        """0 before the first change, one more at each committed change."""
        out = ffi.new("uint64_t*")
        check(lib.cove_subscriptions_get_version(self._realm._h(), out))
        return int(out[0])

    def _state(self) -> Tuple[SubscriptionState, Optional[str]]:
        state = ffi.new("int32_t*")
        error = ffi.new("char**")
        check(lib.cove_subscriptions_get_state(self._realm._h(), state, error))
        try:
            return _STATES[int(state[0])], _text(error[0])
        finally:
            if error[0] != ffi.NULL:
                lib.cove_free(error[0])

    @property
    def state(self) -> SubscriptionState:
        """"pending", "bootstrapping", "complete", "error" (see ``error``) or "superseded"."""
        return self._state()[0]

    @property
    def error(self) -> Optional[str]:
        """Why the server refused the newest version (state "error"), else None."""
        return self._state()[1]

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        check(lib.cove_subscriptions_count(self._realm._h(), out))
        return int(out[0])

    def __getitem__(self, index: int) -> Subscription:
        if isinstance(index, bool) or not isinstance(index, int):
            raise WrongTypeError(Status.WRONG_TYPE, f"a subscription's index is an int, got {type(index).__name__}")
        if index < 0:
            index += len(self)
        out = ffi.new("cove_subscription_t*")
        if index < 0:
            raise IndexError("subscription index out of range")
        check(lib.cove_subscriptions_get(self._realm._h(), index, out))
        s = out[0]
        return Subscription(_text(s.name), str(_text(s.class_name)), str(_text(s.query)),
                            Timestamp.from_parts(s.created_at.seconds, s.created_at.nanoseconds),
                            Timestamp.from_parts(s.updated_at.seconds, s.updated_at.nanoseconds))

    def __iter__(self) -> Iterator[Subscription]:
        return iter([self[i] for i in range(len(self))])

    def find(self, name: str) -> Optional[Subscription]:
        """The subscription named ``name``, or None."""
        return next((s for s in self if s.name == name), None)

    @contextmanager
    def update(self) -> Iterator[SubscriptionUpdate]:
        """``with realm.subscriptions.update() as subs:`` changes the set with ``subs.append``,
        ``subs.remove`` and ``subs.remove_all``, and commits the changes as one new version when
        the block ends (none when they changed nothing); an exception in the block commits
        nothing. It does not wait: ``wait()`` does."""
        handle = self._realm._h()
        check(lib.cove_subscriptions_update_begin(handle))
        try:
            yield SubscriptionUpdate(self._realm)
        except BaseException:
            if not self._realm.is_closed:
                lib.cove_subscriptions_update_cancel(handle)
            raise
        check(lib.cove_subscriptions_update_commit(self._realm._h(), ffi.NULL))

    def wait(self, version: Optional[int] = None, timeout: Optional[float] = None) -> None:
        """Blocks (the GIL released) until version ``version`` of the set (None: the newest) has
        its objects in the file; ``realm.refresh()`` then shows them. Raises SyncError when the
        server refuses it, the session stops or ``timeout`` seconds (None: no limit) pass
        first (the subscriptions stay); InvalidArgumentError for a version not committed.
        Ctrl-C is handled when the wait returns."""
        seconds = _timeout(timeout)
        if version is None:
            version = self.version
        if isinstance(version, bool) or not isinstance(version, int):
            raise WrongTypeError(Status.WRONG_TYPE, f"version is an int, got {type(version).__name__}")
        if version < 0:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"version {version} is below 0")
        check(lib.cove_subscriptions_wait(self._realm._h(), version, seconds))

    def __repr__(self) -> str:
        try:
            return f"<cove.SubscriptionSet version {self.version}, {self.state}, {len(self)} subscriptions>"
        except Exception:
            return "<cove.SubscriptionSet>"
