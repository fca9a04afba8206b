"""Notifications: ``observe(callback, key_paths=None)`` on results, lists, sets, maps, objects,
sectioned results and projections, the change objects callbacks receive, the tokens that end an
observation, and ``changes()``, an asyncio iterator riding on the realm's notification
descriptor.

Callbacks run inside ``realm.deliver()``, ``realm.refresh()`` and ``realm.begin_write()`` on the
calling thread. The library's change objects are valid during its call only, so each change is
copied into plain Python values before the callback sees it. An exception a callback raises
never crosses into the library: it is kept on the realm and raised by the call that ran it.
"""
from __future__ import annotations

import asyncio
import collections
import weakref
from dataclasses import dataclass, field
from typing import (TYPE_CHECKING, Any, Callable, Deque, Dict, Generic, List, Optional, Sequence, Set, Tuple, TypeVar,
                    Union)

from ._errors import InvalidArgumentError, Status, WrongTypeError
from ._lib import check, ffi, lib
from ._values import read_value

if TYPE_CHECKING:
    from ._realm import Realm

_C = TypeVar("_C")
_P = TypeVar("_P")

KeyPaths = Optional[Sequence[str]]

AVAILABLE = hasattr(lib, "cove_results_observe")
"""Whether the loaded libcove has notifications."""

# The library's status for a collection property's old and new values: an object change lists a
# changed list, set or map without values.
_WRONG_TYPE = Status.WRONG_TYPE


@dataclass(eq=True)
class _Change(Generic[_P]):
    """The fields of a collection's or a map's change; ``_P`` is a position: an index or a key."""

    is_initial: bool = False
    deletions: List[_P] = field(default_factory=list)
    insertions: List[_P] = field(default_factory=list)
    modifications: List[_P] = field(default_factory=list)
    modifications_old: List[_P] = field(default_factory=list)
    moves: List[Tuple[_P, _P]] = field(default_factory=list)
    cleared: bool = False
    root_deleted: bool = False
    error: Optional[str] = None

    @property
    def is_final(self) -> bool:
        """Whether no call follows this one (the owner was deleted or an error stopped it)."""
        return self.root_deleted or self.error is not None


@dataclass(eq=True)
class CollectionChange(_Change[int]):
    """What changed in observed results, a list or a set since the callback's previous call.

    ``deletions`` are indices in the collection before the change; ``insertions`` and
    ``modifications`` indices after it; ``modifications_old`` the modified rows' indices before
    it, in the same order as ``modifications``; each ascending, ready for a table view's batch
    update: deletions and insertions alone turn the old contents into the new. ``moves`` are a
    list's ``(from, to)`` pairs for the elements its ``move`` moved; each is also a deletion (at
    ``from``) and an insertion (at ``to``), and not a modification (results report a reorder as
    a deletion and an insertion, without moves). The first call of a callback has
    ``is_initial`` and nothing else. ``cleared`` says a list or set was emptied by a clear in
    the commits the change covers (every old index is then deleted, and what it holds now
    inserted, even values added back after the clear);
    ``root_deleted`` that its owner was deleted (every old index is then deleted, and no call
    follows); ``error`` is why the observation stopped (no call follows), else None.
    """


@dataclass(eq=True)
class MapChange(_Change[str]):
    """What changed in an observed map, by key: the same names as ``CollectionChange`` holding
    keys (in the order of their UTF-8 bytes) instead of indices. A key is its own position, so
    ``modifications_old`` equals ``modifications`` and ``moves`` is always empty; the library
    reports a map's clear as the deletion of every key, so ``cleared`` is always False."""


@dataclass(eq=True)
class PropertyChange:
    """One changed property of an observed object: its value at the callback's previous call (at
    registration, for the first) and now. Writing a value equal to the old one is reported, with
    equal values. A list, set or map property carries no values (both None): read it from the
    object. A change along a link (``dog.name``) is reported as a change of the link (``dog``);
    a linked object that no longer exists reads as None."""

    name: str
    old_value: Any = None
    new_value: Any = None


@dataclass(eq=True)
class ObjectChange:
    """What changed in an observed object: ``properties`` in schema order, or ``deleted`` (once;
    no call follows), or ``error``, why the observation stopped (no call follows)."""

    deleted: bool = False
    properties: List[PropertyChange] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def is_final(self) -> bool:
        """Whether no call follows this one (the object was deleted or an error stopped it)."""
        return self.deleted or self.error is not None


@dataclass(eq=True)
class SectionedChange:
    """What changed in observed sectioned results (or one observed section) since the
    callback's previous call, as ``(section, row)`` index paths.

    ``deletions`` are index paths before the change, ``insertions`` and ``modifications`` after
    it, each ascending; ``sections_to_delete`` are positions of sections before the change,
    ``sections_to_insert`` positions after it. The rows of a deleted or inserted section are not
    listed row by row. A row whose key changed moves between sections as a deletion plus an
    insertion. Apply a change as a table view does: delete rows (from the end, old paths),
    delete sections, insert sections whole, insert rows (new paths), reload the modified rows.
    For one observed section every path has section 0 and no section is inserted or deleted:
    when its key goes away its rows are deletions, when it comes back they are insertions. The
    first call has
    ``is_initial`` and nothing else; ``error`` is why the observation stopped (no call follows),
    else None.
    """

    is_initial: bool = False
    insertions: List[Tuple[int, int]] = field(default_factory=list)
    deletions: List[Tuple[int, int]] = field(default_factory=list)
    modifications: List[Tuple[int, int]] = field(default_factory=list)
    sections_to_insert: List[int] = field(default_factory=list)
    sections_to_delete: List[int] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def is_final(self) -> bool:
        """Whether no call follows this one (an error stopped the observation)."""
        return self.error is not None


Change = Union[CollectionChange, MapChange, ObjectChange, SectionedChange]


class NotificationToken:
    """The observation ``observe()`` started. ``invalidate()`` ends it (no callback starts after
    it returns; it may be called from inside the callback itself, and again, harmlessly);
    ``with obj.observe(cb) as token:`` ends it when the block ends. Keep the token as long as the
    observation should go on: when it is garbage-collected the observation ends too."""

    __slots__ = ("_handle", "_finalizer", "_observed", "__weakref__")

    def __init__(self, handle: Any, observed: Any) -> None:
        self._handle = handle
        # The observed results, collection or object, so that its handle lives as long as the
        # observation (the library's token keeps the realm's handle alive itself).
        self._observed = observed
        self._finalizer = weakref.finalize(self, lib.cove_release, handle)

    def invalidate(self) -> None:
        """Ends the observation and releases the token; calling it again does nothing."""
        if self._finalizer.alive:
            try:
                check(lib.cove_token_invalidate(self._handle))
            finally:
                self._finalizer()
                self._observed = None

    @property
    def is_valid(self) -> bool:
        """False once ``invalidate()`` was called."""
        return bool(self._finalizer.alive)

    def __enter__(self) -> "NotificationToken":
        return self

    def __exit__(self, *exc: object) -> None:
        self.invalidate()

    def __repr__(self) -> str:
        return f"<cove.NotificationToken {'active' if self.is_valid else 'invalidated'}>"


# -- the callbacks the library calls -------------------------------------------------------------

class _Observation:
    """What the library's userdata points at: the Python callback, the realm to read link values
    with and the list a callback's exception is kept in until the delivering call raises it."""

    __slots__ = ("callback", "realm", "errors", "handle", "__weakref__")

    def __init__(self, callback: Callable[[Any], Any], realm: "Realm") -> None:
        self.callback = callback
        self.realm = weakref.ref(realm)
        self.errors: List[BaseException] = realm._callback_errors
        self.handle: Any = None


# The observations the library may still call: each stays here, with its cffi handle, until the
# library frees its userdata (when the token is invalidated or released).
_LIVE: Set[_Observation] = set()


def _indices(getter: Any, changes: Any) -> List[int]:
    out = ffi.new("size_t**")
    n = getter(changes, out)
    return ffi.unpack(out[0], n) if n else []


def _keys(getter: Any, changes: Any) -> List[str]:
    out = ffi.new("cove_string_t**")
    n = getter(changes, out)
    return [bytes(ffi.buffer(out[0][i].data, out[0][i].size)).decode("utf-8") for i in range(n)]


def _error(pointer: Any) -> Optional[str]:
    return None if pointer == ffi.NULL else str(ffi.string(pointer).decode("utf-8", "replace"))


def _collection_change(changes: Any) -> CollectionChange:
    error = _error(lib.cove_changes_error(changes))
    if lib.cove_changes_is_initial(changes):
        return CollectionChange(is_initial=True, error=error)
    sources = ffi.new("size_t**")
    targets = ffi.new("size_t**")
    n = lib.cove_changes_moves(changes, sources, targets)
    moves = list(zip(ffi.unpack(sources[0], n), ffi.unpack(targets[0], n))) if n else []
    return CollectionChange(
        deletions=_indices(lib.cove_changes_deletions, changes),
        insertions=_indices(lib.cove_changes_insertions, changes),
        modifications=_indices(lib.cove_changes_modifications, changes),
        modifications_old=_indices(lib.cove_changes_modifications_old, changes),
        moves=moves,
        cleared=bool(lib.cove_changes_cleared(changes)),
        root_deleted=bool(lib.cove_changes_root_deleted(changes)),
        error=error,
    )


def _map_change(changes: Any) -> MapChange:
    error = _error(lib.cove_map_changes_error(changes))
    if lib.cove_map_changes_is_initial(changes):
        return MapChange(is_initial=True, error=error)
    modifications = _keys(lib.cove_map_changes_modifications, changes)
    return MapChange(
        deletions=_keys(lib.cove_map_changes_deletions, changes),
        insertions=_keys(lib.cove_map_changes_insertions, changes),
        modifications=modifications,
        modifications_old=list(modifications),
        root_deleted=bool(lib.cove_map_changes_root_deleted(changes)),
        error=error,
    )


def _object_change(changes: Any, realm: Optional["Realm"]) -> ObjectChange:
    error = _error(lib.cove_object_changes_error(changes))
    if lib.cove_object_changes_is_deleted(changes):
        return ObjectChange(deleted=True, error=error)
    resolve = None if realm is None else realm._resolve_link
    value = ffi.new("cove_value_t*")

    def read(getter: Any, i: int) -> Any:
        status = getter(changes, i, value)
        if status == _WRONG_TYPE:
            return None          # a list, set or map: listed without values
        check(status)
        return read_value(ffi, value[0], resolve)

    properties = []
    for i in range(lib.cove_object_changes_count(changes)):
        name = ffi.string(lib.cove_object_changes_property(changes, i)).decode("utf-8")
        properties.append(PropertyChange(name, read(lib.cove_object_changes_old_value, i),
                                         read(lib.cove_object_changes_new_value, i)))
    return ObjectChange(properties=properties, error=error)


def _index_paths(getter: Any, changes: Any) -> List[Tuple[int, int]]:
    out = ffi.new("cove_index_path_t**")
    n = getter(changes, out)
    return [(int(out[0][i].section), int(out[0][i].row)) for i in range(n)]


def _sectioned_change(changes: Any) -> SectionedChange:
    error = _error(lib.cove_sectioned_changes_error(changes))
    if lib.cove_sectioned_changes_is_initial(changes):
        return SectionedChange(is_initial=True, error=error)
    return SectionedChange(
        insertions=_index_paths(lib.cove_sectioned_changes_insertions, changes),
        deletions=_index_paths(lib.cove_sectioned_changes_deletions, changes),
        modifications=_index_paths(lib.cove_sectioned_changes_modifications, changes),
        sections_to_insert=_indices(lib.cove_sectioned_changes_sections_to_insert, changes),
        sections_to_delete=_indices(lib.cove_sectioned_changes_sections_to_delete, changes),
        error=error,
    )


def _call(userdata: Any, make: Callable[["_Observation"], Any]) -> None:
    observation: _Observation = ffi.from_handle(userdata)
    try:
        observation.callback(make(observation))
    except BaseException as exc:  # never across the C boundary: raised by deliver()/refresh()
        observation.errors.append(exc)


def _on_collection(userdata: Any, changes: Any) -> None:
    _call(userdata, lambda _: _collection_change(changes))


def _on_map(userdata: Any, changes: Any) -> None:
    _call(userdata, lambda _: _map_change(changes))


def _on_object(userdata: Any, changes: Any) -> None:
    _call(userdata, lambda observation: _object_change(changes, observation.realm()))


def _on_sectioned(userdata: Any, changes: Any) -> None:
    _call(userdata, lambda _: _sectioned_change(changes))


def _free_observation(userdata: Any) -> None:
    _LIVE.discard(ffi.from_handle(userdata))


if AVAILABLE:
    ffi.def_extern(name="_cove_collection_cb")(_on_collection)
    ffi.def_extern(name="_cove_map_cb")(_on_map)
    ffi.def_extern(name="_cove_object_cb")(_on_object)
    ffi.def_extern(name="_cove_free_observation")(_free_observation)

SECTIONS_AVAILABLE = hasattr(lib, "cove_sectioned_observe")
"""Whether the loaded libcove has sectioned results and projections."""

if SECTIONS_AVAILABLE:
    ffi.def_extern(name="_cove_sectioned_cb")(_on_sectioned)


# -- registering ---------------------------------------------------------------------------------

def _key_path_array(key_paths: KeyPaths) -> Tuple[Any, int, List[Any]]:
    """The C array of key paths (NULL for None: every property; an empty array for [])."""
    if key_paths is None:
        return ffi.NULL, 0, []
    if isinstance(key_paths, (str, bytes)):
        raise WrongTypeError(
            Status.WRONG_TYPE, f"key_paths is a list of key paths, got {type(key_paths).__name__} {key_paths!r}")
    texts = []
    for path in key_paths:
        if not isinstance(path, str):
            raise WrongTypeError(Status.WRONG_TYPE, f"a key path is a str, got {type(path).__name__}")
        data = path.encode("utf-8", "surrogatepass")
        if b"\0" in data:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"key path {path!r} holds a NUL character")
        texts.append(ffi.new("char[]", data))
    return ffi.new("const char*[]", texts), len(texts), texts


def _callbacks() -> Dict[str, Any]:
    """The C callback each registration function takes, where it is not a collection's."""
    callbacks = {"cove_map_observe": lib._cove_map_cb, "cove_object_observe": lib._cove_object_cb}
    if SECTIONS_AVAILABLE:
        callbacks.update(cove_projection_observe=lib._cove_object_cb, cove_sectioned_observe=lib._cove_sectioned_cb,
                         cove_section_observe=lib._cove_sectioned_cb)
    return callbacks


_CALLBACK_OF: Dict[str, Any] = _callbacks() if AVAILABLE else {}


def observe(register: str, handle: Any, realm: "Realm", observed: Any, callback: Callable[[Any], Any],
            key_paths: KeyPaths) -> NotificationToken:
    """Registers `callback` through the library's `register` function (cove_results_observe and
    its kin, cove_sectioned_observe, cove_projection_observe) for `handle`, which `observed`
    holds; `key_paths` go to it as its array of strings (a projection's names)."""
    if not AVAILABLE:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, "this libcove has no notifications (cove_results_observe)")
    if not callable(callback):
        raise WrongTypeError(
            Status.WRONG_TYPE, f"observe() takes a function of one change, got {type(callback).__name__}")
    paths, n, keep = _key_path_array(key_paths)
    c_callback = _CALLBACK_OF.get(register)
    if c_callback is None:
        c_callback = lib._cove_collection_cb
    observation = _Observation(callback, realm)
    observation.handle = ffi.new_handle(observation)
    out = ffi.new("cove_token_t**")
    _LIVE.add(observation)
    try:
        check(getattr(lib, register)(handle, paths, n, c_callback, observation.handle, lib._cove_free_observation, out))
    except BaseException:
        _LIVE.discard(observation)   # a failed registration never calls free_userdata
        raise
    del keep
    return NotificationToken(out[0], observed)


def delivering(realm: "Realm", call: Callable[[], int]) -> Tuple[int, List[BaseException]]:
    """Runs a library call that may deliver notifications; returns its status and the
    exceptions its callbacks raised, in order. A call made from inside a callback (which the
    library answers without delivering) returns none: the outer call raises them."""
    outer = realm._delivering == 0
    realm._delivering += 1
    try:
        status = call()
    finally:
        realm._delivering -= 1
    if not outer:
        return status, []
    errors = list(realm._callback_errors)
    realm._callback_errors.clear()
    return status, errors


def raise_for(status: int, errors: List[BaseException]) -> None:
    """Raises the first exception a callback raised (the call's own failure as its cause, the
    other callbacks' exceptions as notes), else the call's failure, if any."""
    if not errors:
        check(status)
        return
    first = errors[0]
    if hasattr(first, "add_note"):
        for other in errors[1:]:
            first.add_note(f"another notification callback also raised {type(other).__name__}: {other}")
    if status != Status.OK:
        try:
            check(status)
        except Exception as failure:
            raise first from failure
    raise first


# -- asyncio -------------------------------------------------------------------------------------

class _FdWatch:
    """The realm's notification descriptor on one asyncio loop: one reader, added while some
    ``changes()`` iterator waits, for every iterator of the realm (a loop keeps one reader per
    descriptor). The descriptor stays readable until ``refresh()`` drains it, so the reader is
    removed as soon as it fires and added again for the next wait."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.loop = loop
        self.fd = fd
        self.waiters: List["asyncio.Future[None]"] = []
        self.reading = False

    async def wait(self) -> None:
        """Returns when the descriptor is readable or the realm closes."""
        future: "asyncio.Future[None]" = self.loop.create_future()
        self.waiters.append(future)
        if not self.reading:
            self.loop.add_reader(self.fd, self.wake)
            self.reading = True
        try:
            await future
        finally:
            if future in self.waiters:
                self.waiters.remove(future)
            if not self.waiters:
                self.stop_reading()

    def stop_reading(self) -> None:
        if self.reading:
            self.reading = False
            self.loop.remove_reader(self.fd)

    def wake(self) -> None:
        self.stop_reading()
        waiters, self.waiters = self.waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)


class ChangeStream(Generic[_C]):
    """``async for change in x.changes():`` the changes of an observation as an asyncio
    iterator: the initial change first (for results and collections), then one change per
    delivery. Waiting rides on the realm's notification descriptor (``loop.add_reader``); when
    it is readable the iterator calls ``realm.refresh()``, which delivers. Use it on the realm's
    thread, inside its running loop. It ends when the realm closes, after a final change (a
    deletion, an error), or when ``aclose()`` is called; breaking out of the loop ends the
    observation as the iterator is dropped."""

    def __init__(self, realm: "Realm", start: Callable[[Callable[[Any], None]], NotificationToken],
                 initial: bool) -> None:
        self._realm = realm
        self._initial = initial
        self._queue: Deque[_C] = collections.deque()
        self._done = False
        # Registered now, so that a frozen collection or a bad key path fails at changes().
        self._token: Optional[NotificationToken] = start(self._queue.append)
        self._started = False

    def __aiter__(self) -> "ChangeStream[_C]":
        return self

    async def __anext__(self) -> _C:
        if self._done:
            raise StopAsyncIteration
        realm = self._realm
        if not self._started:
            self._started = True
            if self._initial and not realm.is_closed:
                realm.deliver()      # the initial change comes at the first delivery
        while not self._queue:
            if realm.is_closed:
                self._finish()
                raise StopAsyncIteration
            await realm._fd_watch().wait()
            if not realm.is_closed:
                realm.refresh()
        change = self._queue.popleft()
        if getattr(change, "is_final", False):
            self._finish()
        return change

    def _finish(self) -> None:
        self._done = True
        if self._token is not None:
            token, self._token = self._token, None
            token.invalidate()

    async def aclose(self) -> None:
        """Ends the observation; the iterator then stops."""
        self._finish()
        self._queue.clear()
