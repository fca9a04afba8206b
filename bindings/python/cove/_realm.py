"""Opening a realm and its transactions, versions and freezing."""
from __future__ import annotations

import json
import math
import os
import sys
import time
import weakref
from contextlib import contextmanager
from typing import (TYPE_CHECKING, Literal, Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, Type, TypeVar, Union, overload)

from . import _migration, _notifications

from ._add import Adder
from ._collections import Embedded, prepare
from ._declare import MISSING, class_name_of, defaults_of, missing_values, required_of, schema_from_classes
from ._errors import (ClosedError, Error, InvalidArgumentError, NotFoundError, Status, TransactionError,
                      WrongTypeError, error_for)
from ._lib import check, ffi, lib, release_handle
from ._migration import Migration
from ._object import EmbeddedObject, Object, install_accessors, is_unmanaged
from ._results import Results
from ._schema import BACKLINKS, LINK, LIST, MAP, SET, VALUE, ClassInfo, PropertyInfo, parse_class
from ._speedups import DONE, FULL, MISS, RealmBase, find_int, take
from ._speedups import create as create_object
from ._subscriptions import SubscriptionSet
from ._sync import SyncConfig, SyncSession
from ._values import TYPE_LIST, TYPE_MAP, Elements, pack_rows, write_value

_O = TypeVar("_O", bound=Object)

SchemaLike = Union[Mapping[str, Any], str, Sequence[Type[Object]], Type[Object], None]

_DURABILITY = {"full": 0, "no_sync": 1, "mem_only": 2}


def _release_realm(handle: Any, open_: List[bool]) -> None:
    """The realm finalizer: marks the realm closed, then releases its handle."""
    open_[0] = False
    release_handle(handle)


class FileSpace(NamedTuple):
    """How a file's space is used (``Realm.file_space()``): the bytes of its pages, and of those
    holding data of a version in use; the rest are free, and later commits reuse them."""

    format_version: int
    total_bytes: int
    used_bytes: int

    @property
    def free_bytes(self) -> int:
        return self.total_bytes - self.used_bytes


class Recovery(NamedTuple):
    """A commit that opening the file discarded (``Realm.recovery``)."""

    discarded_version: int
    opened_version: int
    reason: str


class Realm(RealmBase):
    """An open Cove database. Use it from one thread at a time; a frozen realm from any thread.

    A live realm reads the version it last advanced to: ``refresh()`` moves it to the newest
    commit of any thread or process, and a write starts from the newest version.
    """

    def __init__(self, handle: Any, *, path: Optional[str], frozen: bool,
                 classes: Optional[Dict[str, Type[Object]]] = None, file: Any = None) -> None:
        self._handle = handle
        # What names the data this realm reads: its file's real path, or for an in-memory realm
        # a token its frozen copies share. Objects of realms with the same one link here.
        self._file: Any = file if file is not None else (os.path.realpath(path) if path is not None else object())
        # The handle's address, for the C paths of _speedups.c (used only while the realm is open).
        self._addr: int = int(ffi.cast("uintptr_t", handle))
        self._path = path
        self._frozen = frozen
        # [True] while the handle is held: the hot paths test it rather than the finalizer
        # (whose `alive` is a lookup); the finalizer clears it whenever it runs.
        self._open = [True]
        self._finalizer = weakref.finalize(self, _release_realm, handle, self._open)
        self._schema_cache: Optional[Dict[str, Any]] = None
        self._infos: Dict[str, ClassInfo] = {}
        self._class_by_key: Dict[int, str] = {}
        self._classes: Dict[str, Type[Object]] = dict(classes or {})
        # The C arrays of names that create() passes, by class and property names (_create_new).
        self._name_arrays: Dict[Tuple[str, ...], Tuple[bytes, Any, List[Any], int]] = {}
        # By the cls given to create() (a class name or a declared class): the plan of its C
        # path (_speedups.c, planned()), made after a first create of the class (_plan_creates), or
        # () for a class it cannot create. By the cls given to find(): (class name as bytes,
        # Python class of the objects, class name). Both are cleared when the schema read again
        # differs, or a class is declared.
        self._create_plans: Dict[Any, Tuple[Any, ...]] = {}
        self._targets: Dict[Any, Tuple[bytes, Type[Object], str]] = {}
        # The required properties of each declared class (_required), cleared with the plans.
        self._requireds: Dict[str, Tuple[str, ...]] = {}
        # By class name: its class key and the keys of its single values and links, by name, for
        # the objects iteration reads by keys (_read_keys); cleared with the plans.
        self._key_maps: Dict[str, Tuple[int, Dict[str, int]]] = {}
        # The (class, name) of the objects of each class key met in a link, for the C path that
        # makes the object a link names (_speedups.c); filled by _resolve_link.
        self._link_classes: Dict[int, Tuple[Type[Object], str]] = {}
        # Exceptions raised by notification callbacks during the delivering call now running.
        self._callback_errors: List[BaseException] = []
        self._delivering = 0
        self._watch: Optional[_notifications._FdWatch] = None
        # Out-parameters of the commonest calls (find, an attribute read), allocated once: a
        # live realm is used from one thread at a time. A frozen realm, read from any thread,
        # allocates them per call.
        self._scratch_value: Any = None if frozen else ffi.new("cove_value_t*")
        self._scratch_object: Any = None if frozen else ffi.new("cove_object_t**")

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the realm (cancelling a write in progress). Calling it again does nothing."""
        if self._finalizer.alive:
            watch, self._watch = self._watch, None
            if watch is not None:
                # Off the loop before the library closes the descriptor; `changes()` iterators
                # waiting on it wake up and stop.
                watch.wake()
            check(lib.cove_close(self._handle))
            self._finalizer()

    @property
    def is_closed(self) -> bool:
        return not self._open[0]

    def __enter__(self) -> "Realm":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _h(self) -> Any:
        if not self._finalizer.alive:
            # The handle is gone; the library still answers CLOSED for the closed realm's calls,
            # but the Python object no longer holds a handle to pass.
            raise ClosedError(Status.CLOSED, "the realm is closed")
        return self._handle

    # -- state ---------------------------------------------------------------------------------

    @property
    def path(self) -> Optional[str]:
        """The file, or None for an in-memory realm."""
        return self._path

    @property
    def version(self) -> int:
        """The commit version this realm sees (inside a write: the version it started from)."""
        out = ffi.new("uint64_t*")
        check(lib.cove_version(self._h(), out))
        return int(out[0])

    @property
    def active_versions(self) -> int:
        """How many versions every process pins now, the newest included."""
        out = ffi.new("uint64_t*")
        check(lib.cove_active_versions(self._h(), out))
        return int(out[0])

    def file_space(self) -> FileSpace:
        """How the file's space is used at the version this realm reads."""
        out_format = ffi.new("uint32_t*")
        out_bytes = ffi.new("uint64_t[2]")
        check(lib.cove_file_space(self._h(), out_format, out_bytes, out_bytes + 1))
        return FileSpace(int(out_format[0]), int(out_bytes[0]), int(out_bytes[1]))

    @property
    def recovery(self) -> Optional["Recovery"]:
        """What opening the file left out: when this process opened the file first and the
        newest commit on disk did not check out (a page it wrote does not hold what it wrote),
        the version before it was opened, and this says which version was discarded, which was
        opened and why (naming the page). After a crash during a commit that is the unfinished
        commit; after a finished one, damage to the file. None when nothing was discarded."""
        discarded = ffi.new("bool*")
        versions = ffi.new("uint64_t[2]")
        reason = ffi.new("char**")
        check(lib.cove_recovery(self._h(), discarded, versions, versions + 1, reason))
        if not discarded[0]:
            return None
        try:
            text = ffi.string(reason[0]).decode("utf-8", "replace")
        finally:
            lib.cove_free(reason[0])
        return Recovery(int(versions[0]), int(versions[1]), text)

    @property
    def sync(self) -> Optional[SyncSession]:
        """The sync session of the realm's file (``cove.open(..., sync=cove.SyncConfig(...))``):
        its ``state``, ``connection``, ``progress`` and ``last_error``, ``pause()``,
        ``resume()``, ``wait_for_upload()`` and ``wait_for_download()``. None for a realm that
        does not sync, and for a frozen one (its live realm has the session)."""
        handle = self._h()
        status = lib.cove_sync_get_status(handle, ffi.new("cove_sync_status_t*"))
        if status == Status.SYNC:
            return None
        check(status)
        return SyncSession(self)

    @property
    def subscriptions(self) -> SubscriptionSet:
        """The subscriptions of a synced realm: what its file downloads (see
        ``cove.SubscriptionSet``; ``results.subscribe()`` adds one)."""
        self._h()
        return SubscriptionSet(self)

    @property
    def in_write(self) -> bool:
        out = ffi.new("bool*")
        check(lib.cove_is_in_write(self._h(), out))
        return bool(out[0])

    @property
    def is_frozen(self) -> bool:
        """Whether this is a frozen realm. Raises ClosedError once closed, as every question
        about a closed realm's state (and of its objects, collections and results) does."""
        self._h()
        return self._frozen

    # -- transactions --------------------------------------------------------------------------

    def begin_write(self) -> None:
        """Begins a write transaction, advancing to the newest version first and delivering
        notifications before the write starts. An exception a notification callback raised
        there cancels the write and is raised here."""
        handle = self._h()
        status, errors = _notifications.delivering(self, lambda: lib.cove_begin_write(handle))
        if errors and status == Status.OK:
            lib.cove_cancel_write(handle)
        _notifications.raise_for(status, errors)

    def commit(self) -> None:
        """Commits the write transaction (durable on return unless durability says otherwise)."""
        check(lib.cove_commit(self._h()))

    def cancel_write(self) -> None:
        """Discards the write transaction's changes."""
        check(lib.cove_cancel_write(self._h()))

    @contextmanager
    def write(self) -> Iterator["Realm"]:
        """``with realm.write():`` commits on success and cancels on an exception."""
        self.begin_write()
        try:
            yield self
        except BaseException:
            if self._finalizer.alive and self.in_write:
                self.cancel_write()
            raise
        if self.in_write:
            self.commit()

    def refresh(self) -> bool:
        """Advances to the newest version and delivers notifications; returns whether it
        advanced. An exception a notification callback raised is raised here (after every
        callback due has run), the first one if several did."""
        out = ffi.new("bool*")
        handle = self._h()
        _notifications.raise_for(*_notifications.delivering(self, lambda: lib.cove_refresh(handle, out)))
        return bool(out[0])

    def deliver(self) -> None:
        """Advances the realm to the newest version (as Realm's autorefresh does; the same as
        ``refresh()``), then calls the notification callbacks that have something to report:
        initial calls due and the changes of the commits of any thread or process since each
        callback's last call. Raises TransactionError inside
        a write; an exception a callback raised is raised here, the first one if several did.
        Called from inside a callback, it does nothing."""
        handle = self._h()
        _notifications.raise_for(*_notifications.delivering(self, lambda: lib.cove_deliver(handle)))

    def notification_fd(self) -> int:
        """A file descriptor that becomes readable when a commit of any realm of the file (in
        any thread or process) made a version newer than the one this realm last delivered, and
        the realm's notification thread has computed its results observers' change sets for it:
        wait for it with select, poll or an event loop, then call ``refresh()``, which drains it.
        Only wait on it: never read, write or close it; it is closed with the realm. Raises
        FrozenError for a frozen realm."""
        out = ffi.new("int*")
        check(lib.cove_notification_fd(self._h(), out))
        return int(out[0])

    def wait_for_change(self, timeout: Optional[float] = None) -> bool:
        """Blocks (without holding the GIL) until a version newer than the realm's exists or
        ``timeout`` seconds pass (None: forever, 0: only check); returns whether one exists. It
        neither advances nor delivers: call ``refresh()`` next. Raises TransactionError inside a
        write. Ctrl-C interrupts it at once (KeyboardInterrupt): it waits in slices of at most
        50 ms, between which Python runs its signal handlers."""
        if timeout is None or timeout == math.inf:
            deadline = math.inf
        else:
            if not timeout >= 0:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"timeout {timeout} is not a number of seconds >= 0")
            deadline = time.monotonic() + min(timeout, 1e9)   # longer waits forever
        out = ffi.new("bool*")
        handle = self._h()
        while True:
            left = deadline - time.monotonic()
            slice_ms = 0 if left <= 0 else int(math.ceil(min(left, 0.05) * 1000))
            check(lib.cove_wait_for_change(handle, slice_ms, out))
            if out[0] or left <= 0:
                return bool(out[0])
            # Between slices: a pending signal's handler runs here (Ctrl-C raises).
            time.sleep(0)

    def _fd_watch(self) -> "_notifications._FdWatch":
        """The notification descriptor's watch on the running asyncio loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        watch = self._watch
        if watch is None or watch.loop is not loop:
            if watch is not None and watch.waiters:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, "the realm's changes() are awaited on another event loop")
            watch = self._watch = _notifications._FdWatch(loop, self.notification_fd())
        return watch

    def invalidate(self) -> None:
        """Releases the pinned version; the next read pins the newest."""
        check(lib.cove_invalidate(self._h()))

    def freeze(self) -> "Realm":
        """An immutable snapshot of this realm's version, readable from any thread."""
        out = ffi.new("cove_realm_t**")
        check(lib.cove_freeze(self._h(), out))
        frozen = Realm(out[0], path=self._path, frozen=True, classes=self._classes, file=self._file)
        frozen._live_ref = weakref.ref(self)     # where its results thaw to by default
        return frozen

    def _thaw_target(self, given: Optional["Realm"], live_ref: Any, what: str, call: str) -> "Realm":
        """The live realm a frozen ``what`` of this realm thaws into: ``given``, else the realm
        ``live_ref`` (or this frozen realm) was frozen from."""
        live = given
        if live is None:
            ref = live_ref or getattr(self, "_live_ref", None)
            live = ref() if ref is not None else None
            if live is None:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"{what} does not know its live realm: pass it, {call}")
        if live.is_frozen:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{what} thaws into a live realm, not a frozen one")
        return live

    def write_copy(self, path: Union[str, "os.PathLike[str]"], encryption_key: Optional[bytes] = None) -> None:
        """Writes a compacted copy of the version this realm reads to a new file at `path`
        (SQLite's VACUUM INTO): the same objects, links, collections and indexes in as few pages
        as they fit. The copy is encrypted with ``encryption_key`` (64 bytes), or plain without
        one, whatever this realm's file is: a copy adds, changes or removes a key. Raises
        InvalidArgumentError when a file exists there, inside a write, or for a key not of 64
        bytes; OSError-like StorageError subclasses when it cannot be written."""
        key, size = _key_arg(encryption_key)
        check(lib.cove_write_copy(self._h(), os.fsencode(path), key, size))

    def verify(self) -> str:
        """Checks the whole file; returns a report or raises StorageError naming the problem."""
        out = ffi.new("char**")
        check(lib.cove_verify(self._h(), out))
        try:
            return str(ffi.string(out[0]).decode())
        finally:
            lib.cove_free(out[0])

    # -- schema --------------------------------------------------------------------------------

    @property
    def schema(self) -> Dict[str, Any]:
        """The realm's schema in the JSON notation, as a dict keyed by class name."""
        out = ffi.new("char**")
        check(lib.cove_schema_json(self._h(), out))
        try:
            text = ffi.string(out[0]).decode()
        finally:
            lib.cove_free(out[0])
        schema: Dict[str, Any] = json.loads(text)
        if schema != self._schema_cache:
            # Plans and targets name the properties and classes of the schema they were made in.
            self._create_plans.clear()
            self._targets.clear()
            self._requireds.clear()
            self._key_maps.clear()
        self._schema_cache = schema
        self._infos = {}
        return schema

    @property
    def classes(self) -> Dict[str, Type[Object]]:
        """The declared Python classes objects of each class come back as, by class name."""
        return dict(self._classes)

    def _class_info(self, class_name: str) -> ClassInfo:
        info = self._infos.get(class_name)
        if info is not None:
            return info
        schema = self._schema_cache if self._schema_cache is not None else self.schema
        if class_name not in schema:
            schema = self.schema  # another realm may have added it
        if class_name not in schema:
            raise NotFoundError(Status.NOT_FOUND, f"no class '{class_name}' in the schema")
        info = parse_class(class_name, schema[class_name], schema)
        self._infos[class_name] = info
        install_accessors(info.properties)
        return info

    def _property_info(self, class_name: str, name: str) -> Optional[PropertyInfo]:
        info = self._infos.get(class_name) or self._class_info(class_name)
        return info.properties.get(name)

    def _property_names(self, class_name: str) -> List[str]:
        return [p.name for p in self._class_info(class_name).properties.values() if p.kind != "backlinks"]

    def _class_name_for_key(self, class_key: int) -> str:
        if class_key not in self._class_by_key:
            out = ffi.new("uint32_t*")
            for name in self.schema:
                check(lib.cove_class_key(self._h(), name.encode(), out))
                self._class_by_key[int(out[0])] = name
        if class_key not in self._class_by_key:
            raise NotFoundError(Status.NOT_FOUND, f"no class with key {class_key} in the schema")
        return self._class_by_key[class_key]

    def _object_class(self, class_name: str) -> Type[Object]:
        """The Python class of the objects of `class_name`: its declared class, or Object or
        EmbeddedObject."""
        return self._classes.get(class_name) or (EmbeddedObject if self._class_info(class_name).embedded else Object)

    def _wrap(self, handle: Any, class_name: str) -> Object:
        """An object handle as an instance of its declared class, or of Object/EmbeddedObject."""
        try:
            cls = self._object_class(class_name)
        except BaseException:
            lib.cove_release(handle)
            raise
        return cls._wrap(self, handle, class_name)

    def _read_keys(self, class_name: str) -> Tuple[int, Dict[str, int]]:
        """The class key of `class_name` and the property keys of its single values and links
        by name: what objects read by keys (_speedups.c, results' iteration) read with."""
        found = self._key_maps.get(class_name)
        if found is None:
            handle = self._h()
            name = class_name.encode()
            class_key = ffi.new("uint32_t*")
            check(lib.cove_class_key(handle, name, class_key))
            key = ffi.new("int64_t*")
            props: Dict[str, int] = {}
            for p in self._class_info(class_name).properties.values():
                if p.kind in (VALUE, LINK):
                    check(lib.cove_property_key(handle, name, p.name.encode(), key))
                    props[p.name] = int(key[0])
            found = self._key_maps[class_name] = (int(class_key[0]), props)
        return found

    def _object_handle(self, class_key: int, object_key: int) -> int:
        """The address of a new handle (+1) to the object of `class_key` with `object_key`, for an
        object read by keys that now needs one (_speedups.c); raises as the library refuses."""
        out = ffi.new("cove_object_t**")
        check(lib.cove_object_from_keys(self._h(), class_key, object_key, out))
        return int(ffi.cast("uintptr_t", out[0]))

    def _resolve_link(self, class_key: int, object_key: int) -> Optional[Object]:
        """The object a link names; None when it is gone (a change set's old value may name a
        deleted object). An unknown class key raises NotFoundError."""
        value = ffi.new("cove_value_t*")
        value.type = 11
        value.u.link.class_key = class_key
        value.u.link.object_key = object_key
        out = ffi.new("cove_object_t**")
        handle = self._h()
        name = self._class_name_for_key(class_key)
        status = lib.cove_object_from_link(handle, value, out)
        if status == lib.COVE_ERR_NOT_FOUND:
            return None
        check(status)
        obj = self._wrap(out[0], name)
        self._link_classes[class_key] = (type(obj), name)
        return obj

    def _declared(self, cls: Union[str, Type[Object]]) -> str:
        """The class name of `cls`; a declared class is remembered so that its objects come back
        as instances of it."""
        if isinstance(cls, str):
            return cls
        name = class_name_of(cls)
        if name not in self._classes:
            self._classes[name] = cls
            self._link_classes.clear()   # made before the class was declared
            self._create_plans.clear()
            self._targets.clear()
            self._requireds.clear()
        return name

    # -- objects -------------------------------------------------------------------------------

    # create() and find() are RealmBase's (_speedups.c, where their documentation is): a call
    # its plan or target covers goes to the library from C, any other to _create_call or
    # _find_call, the Python paths, which also make the plans and targets.
    if TYPE_CHECKING:
        @overload
        def create(self, cls: Type[_O], values: Optional[Mapping[str, Any]] = None, update: bool = False) -> _O: ...
        @overload
        def create(self, cls: str, values: Optional[Mapping[str, Any]] = None, update: bool = False) -> Object: ...
        def create(self, cls: Union[str, Type[Object]], values: Optional[Mapping[str, Any]] = None,
                   update: bool = False) -> Object: ...

        @overload
        def find(self, cls: Type[_O], primary_key: Any) -> Optional[_O]: ...
        @overload
        def find(self, cls: str, primary_key: Any) -> Optional[Object]: ...
        def find(self, cls: Union[str, Type[Object]], primary_key: Any) -> Optional[Object]: ...

    def _create_call(self, cls: Union[str, Type[Object]], values: Optional[Mapping[str, Any]] = None,
                     update: bool = False) -> Object:
        """create() past its C path."""
        class_name = self._declared(cls)
        values = dict(values or {})
        info = self._class_info(class_name)
        pk_name = info.primary_key
        declared = self._classes.get(class_name)
        if pk_name is not None and pk_name not in values:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"class '{class_name}' has primary key '{pk_name}': give its value")
        if not update:
            obj = self._create_new(class_name, info, declared, values)
            if cls not in self._create_plans:
                self._create_plans[cls] = self._plan_creates(class_name, info, declared)
            return obj
        if pk_name is None:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"class '{class_name}' has no primary key to update by")
        pk = ffi.new("cove_value_t*")
        keep: List[Any] = []
        write_value(ffi, pk, values.pop(pk_name), keep)
        # Found: updated in place (and a declared class's defaults are not applied).
        out = ffi.new("cove_object_t**")
        check(lib.cove_object_find(self._h(), class_name.encode(), pk, out))
        is_new = out[0] == ffi.NULL
        if is_new and declared is not None:
            self._check_required(class_name, declared, info, values)
        if is_new:
            check(lib.cove_object_create_with_primary_key(self._h(), class_name.encode(), pk, out))
        obj = self._wrap(out[0], class_name)
        if is_new and declared is not None:
            for name, default in defaults_of(declared).items():
                if name != pk_name and name in info.properties:
                    values.setdefault(name, default)
        obj._fill(values, update)
        return obj

    def _plan_creates(self, class_name: str, info: ClassInfo, declared: Optional[Type[Object]]) -> Tuple[Any, ...]:
        """The plan by which RealmBase.create (_speedups.c) creates objects of the class (see
        _create_plans), or () when it cannot: an embedded class, or a default it would not
        write as it is."""
        if info.embedded:
            return ()
        # Interned names: the keys of a dict written in the program are interned, and a lookup
        # that finds the very same string object skips comparing the text.
        props = {sys.intern(name): name.encode() for name, p in info.properties.items()
                 if p.kind == VALUE or (p.kind == LINK and not p.embedded)}
        defaults: Tuple[Tuple[str, Any], ...] = ()
        if declared is not None:
            defaults = tuple((sys.intern(name), value) for name, value in defaults_of(declared).items()
                             if name in info.properties)
            if any(name not in props for name, _ in defaults):
                return ()
            # A required value not given: MISSING, which the C path does not write, sends the
            # create to _create_new, which raises.
            defaults += tuple((sys.intern(name), MISSING) for name in self._required(class_name))
        key = None if info.primary_key is None else sys.intern(info.primary_key)
        # The last item: the keys of the last dict created from and their names, kept in C.
        return (self._addr, class_name.encode(), declared or Object, class_name, props, defaults, key, [None, None])

    def _create_new(self, class_name: str, info: ClassInfo, declared: Optional[Type[Object]],
                    values: Dict[str, Any]) -> Object:
        """create() of a new object: its single values and links (the primary key among them)
        in the one call that creates it, then its collections and embedded objects."""
        if declared is not None:
            for name, default in defaults_of(declared).items():
                if name in info.properties:
                    values.setdefault(name, default)
            self._check_required(class_name, declared, info, values)
        names: List[str] = []
        row: List[Any] = []
        later: Dict[str, Any] = {}
        for name, value in values.items():
            p = info.properties.get(name)
            if p is None or p.kind == VALUE:
                names.append(name)   # an unknown name: the library names it
                row.append(value)
                continue
            if p.kind == BACKLINKS:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"{p.label} is backlinks: it is computed, not assigned")
            if p.kind == LINK:
                element = prepare(self, p, value, False)
                if not isinstance(element, Embedded):
                    names.append(name)
                    row.append(element)
                    continue
            later[name] = value
        key = (class_name, *names)
        encoded = self._name_arrays.get(key)
        if encoded is None:
            # The class's and properties' names as the library takes them, made once for each
            # set of names (a program creates its objects from few of them).
            if len(self._name_arrays) >= 256:
                self._name_arrays.clear()
            c_names = [ffi.new("char[]", name.encode()) for name in names]
            array = ffi.new("const char*[]", c_names) if names else ffi.NULL
            encoded = self._name_arrays[key] = (class_name.encode(), array, c_names, int(ffi.cast("uintptr_t", array)))
        obj: Any = MISS
        if self._open[0]:
            # In C (_speedups.c); MISS for a value it does not pack or a create the library
            # refused (which made nothing): the general path below repeats it and raises.
            obj = create_object(self._addr, encoded[0], encoded[3], row, self,
                                declared or (EmbeddedObject if info.embedded else Object), class_name)
        if obj is MISS:
            keep: List[Any] = []
            buffer, filled, failure = pack_rows(ffi, [row], len(names), keep, self)
            if failure is not None:
                raise failure
            out = self._scratch_object or ffi.new("cove_object_t**")
            check(lib.cove_object_create_with_values(self._h(), encoded[0], encoded[1], len(names), buffer, out))
            obj = self._wrap(out[0], class_name)
        if later:
            obj._fill(later, False)
        return obj

    def create_many(self, cls: Union[str, Type[Object]], objects: Iterable[Mapping[str, Any]],
                    update: bool = False) -> int:
        """Creates objects from an iterable of dicts inside a write and returns how many were
        created (or, with ``update=True``, created or updated by primary key).

        The single values and links of up to 1000 objects at a time go to the library in one
        call; lists, sets, maps and embedded objects of each object are set afterwards (for a
        class without a primary key, an object that has any is created on its own, in order).
        A declared class's defaults fill what new objects are not given (not with
        ``update=True``), and a new object of a declared class that lacks a required value (see
        ``create``) raises InvalidArgumentError naming the object's index in the input and the
        property. A bad value raises with the library's message naming the object's index; the
        objects before it stay created until the write is cancelled.
        """
        class_name = self._declared(cls)
        info = self._class_info(class_name)
        declared = self._classes.get(class_name)
        defaults = {} if declared is None or update else {
            k: v for k, v in defaults_of(declared).items() if k in info.properties}
        required = self._required(class_name)
        if not self.in_write:
            raise TransactionError(
                Status.NOT_IN_WRITE, f"cannot create {class_name} objects outside a write transaction")
        batch = _Batch(self, class_name, info, update)
        rows = iter(objects)
        whole = True    # whether the last row had every required value
        while True:
            if batch.plain_keys is not None and not defaults and whole:
                # In C (_speedups.c): the rows with the same single-value keys, in the same
                # order, as the batch's rows so far go into the batch as they are.
                row = take(rows, batch.plain_keys, batch.rows, _Batch.SIZE)
                if row is FULL:
                    batch.flush()
                    continue
            else:
                row = next(rows, DONE)
            if row is DONE:
                break
            if type(row) is not dict and not isinstance(row, Mapping):
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"create_many() takes dicts of property values, got {type(row).__name__}")
            if defaults:
                row = {**defaults, **row}
            if required:
                # The C path above only takes rows with the keys of a row that had every
                # required value; a row that lacks some (and updates an object) is checked here.
                missing = [name for name in required if name not in row]
                whole = not missing
                if missing and not (update and self._updates(class_name, info, row)):
                    batch.flush()   # the objects before it are created, as for a bad value
                    raise missing_values(class_name, missing, f"create_many: object {batch.start} of the input: ")
                if tuple(row) == batch.plain_keys and len(batch.rows) < _Batch.SIZE:
                    batch.rows.append(list(row.values()))
                    continue
            batch.add(row)
        batch.flush()
        return batch.created

    def _required(self, class_name: str) -> Tuple[str, ...]:
        """The properties a new object of `class_name` must be given: none for a class not
        declared in Python (the schema notation has no defaults: a value not given is its type's
        zero), else required_of() its declared class."""
        required = self._requireds.get(class_name)
        if required is None:
            declared = self._classes.get(class_name)
            required = () if declared is None else required_of(declared, self._class_info(class_name))
            self._requireds[class_name] = required
        return required

    def _check_required(self, class_name: str, declared: Optional[Type[Object]], info: ClassInfo,
                        values: Mapping[str, Any]) -> None:
        """Raises InvalidArgumentError naming the required properties `values` lacks."""
        if declared is None:
            return
        missing = [name for name in self._required(class_name) if name not in values]
        if missing and self.in_write:   # outside a write, the library's TransactionError comes first
            raise missing_values(class_name, missing)

    def _updates(self, class_name: str, info: ClassInfo, row: Mapping[str, Any]) -> bool:
        """Whether create_many(update=True) updates an object with `row` (its primary key is
        given and an object has it) rather than creating one."""
        pk = info.primary_key
        return pk is not None and pk in row and self.find(class_name, row[pk]) is not None

    @overload
    def add(self, obj: _O, update: bool = False) -> _O: ...
    @overload
    def add(self, obj: Iterable[_O], update: bool = False) -> List[_O]: ...

    def add(self, obj: Union[Object, Iterable[Object]], update: bool = False) -> Any:
        """Adds an unmanaged object (made by calling its declared class, ``Dog(name="Rex")``)
        inside a write, as realm-swift's ``add``: the object is created with its values, the
        unmanaged objects it links to (in links, lists, sets and maps; embedded ones are created
        inside it) are added with it, and the same Python objects are then this realm's: their
        attributes read and write the realm. Returns ``obj``.

        ``update=True`` updates the object with the same primary key when there is one (and
        the objects it links to likewise) rather than raising DuplicateKeyError. An object of
        this realm already is left as it is; one of another realm raises InvalidArgumentError
        (copy it with ``realm.create(cls, obj.to_dict())``). A required value the object lacks
        raises InvalidArgumentError, as ``create`` does. Given an iterable of objects (a list,
        results), adds each of them and returns them as a list, as realm-swift's
        ``add(_ objects:)``. Raises TransactionError outside a write. When add raises midway,
        the objects it added before stay this realm's (and go if the write is cancelled).
        """
        if not self.in_write:
            what = obj.class_name if isinstance(obj, Object) else "the"
            raise TransactionError(Status.NOT_IN_WRITE, f"cannot add {what} objects outside a write transaction")
        if isinstance(obj, Object):
            return self._add_object(obj, update)
        if isinstance(obj, (str, bytes, Mapping)):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"add() takes a cove.Object or an iterable of them, got {type(obj).__name__}"
                                         " (realm.create(cls, values) creates an object from a dict)")
        return [self._add_object(item, update) for item in _objects_in(obj, "add")]

    def _add_object(self, obj: Object, update: bool, nested: bool = False) -> Object:
        """add() of one object (inside a write); `nested` for an object linked from one being
        written (see Adder.run)."""
        if not is_unmanaged(obj):
            if obj._realm is self:
                return obj
            owner = obj._realm
            where = owner.path if owner.path is not None else "an in-memory realm"
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"the {obj.class_name} object belongs to another realm ({where}): add() takes unmanaged objects "
                   "and this realm's own; copy it with realm.create(cls, obj.to_dict())")
        return Adder(self, update).run(obj, nested)

    def _create_nested(self, class_name: str, values: Mapping[str, Any], update: bool) -> Object:
        """The object a dict stands for inside another object's values."""
        has_key = self._class_info(class_name).primary_key is not None
        return self.create(class_name, values, update=update and has_key)

    def _find_call(self, cls: Union[str, Type[Object]], primary_key: Any) -> Optional[Object]:
        """find() past its C path, which takes the target this keeps for an int key."""
        class_name = cls if isinstance(cls, str) else self._declared(cls)
        if type(primary_key) is int and self._open[0]:
            target = (class_name.encode(), self._object_class(class_name), class_name)
            self._targets[cls] = target
            # In C (_speedups.c), which makes the object too; MISS when the library refused:
            # the general path below repeats the call and raises.
            found = find_int(self._addr, target[0], primary_key, target[1], self, target[2])
            if found is not MISS:
                return found  # type: ignore[no-any-return]
        pk = ffi.new("cove_value_t*")
        keep: List[Any] = []    # the key's bytes, held until the call returns
        write_value(ffi, pk, primary_key, keep)
        out = self._scratch_object or ffi.new("cove_object_t**")
        status = lib.cove_object_find(self._h(), class_name.encode(), pk, out)
        if status:
            check(status)
        handle = out[0]
        if handle == ffi.NULL:
            return None
        return self._wrap(handle, class_name)

    @overload
    def objects(self, cls: Type[_O]) -> "Results[_O]": ...
    @overload
    def objects(self, cls: str) -> "Results[Object]": ...

    def objects(self, cls: Union[str, Type[Object]]) -> "Results[Any]":
        """Every object of a class (a name or a declared class) as live, lazy results: narrow
        them with ``filter(query, *args)``, order them with ``sorted``, read them by index, slice
        or iteration. Raises NotFoundError for a class the schema lacks."""
        class_name = self._declared(cls)
        self._h()
        self._class_info(class_name)
        return Results._of_class(self, class_name)

    def delete(self, obj: Union[Object, Iterable[Object]]) -> None:
        """Deletes an object inside a write: links to it become None, lists and sets drop it,
        maps keep their keys with None, and its embedded objects are deleted with it. Given
        results, a list, a set or any iterable of objects, deletes each of them, as Realm's
        ``delete`` does (the objects are taken first, so a live collection changing meanwhile
        does not skip any; one already deleted with an earlier one is passed over)."""
        if isinstance(obj, Object):
            check(lib.cove_object_delete(obj._handle))
            return
        if isinstance(obj, Results):
            obj.delete_all()
            return
        for item in _objects_in(obj, "delete"):
            if item.is_valid:
                check(lib.cove_object_delete(item._handle))

    def delete_all(self) -> None:
        """Deletes every object of every class inside a write, as Realm's ``deleteAll``: the
        file keeps its schema. (Embedded objects go with their parents.)"""
        for name, cls in self.schema.items():
            if not cls.get("embedded", False):
                self.objects(name).delete_all()

    def __repr__(self) -> str:
        state = "closed" if self.is_closed else ("frozen" if self._frozen else "live")
        return f"<cove.Realm {self._path or ':memory:'} {state}>"


_migration.register_realm_class(Realm)


def _objects_in(values: Any, call: str) -> List[Object]:
    """The objects of an iterable given to add() or delete() (`call`), all taken first (a live
    collection that changes meanwhile skips none)."""
    try:
        objects = list(values)
    except TypeError:
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, f"{call}() takes a cove.Object or an iterable of them, got {type(values).__name__}") from None
    for item in objects:
        if not isinstance(item, Object):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"{call}() takes cove.Objects, got {type(item).__name__} among them")
    return objects


#: The durability a realm is opened with: "full" (a commit survives power loss), "no_sync" (a
#: crash of the process), "mem_only" (an unlinked temporary file that disappears on close).
Durability = Literal["full", "no_sync", "mem_only"]


def schema_version(path: Union[str, "os.PathLike[str]"]) -> int:
    """The schema version of the file at ``path``, read without a schema and without changing
    the file (Realm's ``schemaVersion(at:)``); 0 for a file that holds no schema yet. Raises
    NotFoundError when there is no file there, CorruptError or FormatError for a file Cove
    cannot read."""
    fspath = os.fspath(path)
    out = ffi.new("uint64_t*")
    check(lib.cove_schema_version_at(fspath.encode(), out))
    return int(out[0])


def open(
    path: Union[str, "os.PathLike[str]", None],
    *,
    schema: SchemaLike = None,
    schema_version: int = 0,
    migration: Optional[Callable[[Migration], Any]] = None,
    read_only: bool = False,
    max_active_versions: int = 0,
    durability: Durability = "full",
    write_timeout: Optional[float] = None,
    should_compact_on_launch: Optional[Callable[[int, int], bool]] = None,
    in_memory_identifier: Optional[str] = None,
    encryption_key: Optional[bytes] = None,
    sync: Optional[SyncConfig] = None,
) -> Realm:
    """Opens (creating if needed) a Cove file; ``path=None`` is an in-memory realm.

    ``schema`` is the JSON notation as a dict or as text, or a list of declared classes
    (subclasses of ``cove.Object`` and ``cove.EmbeddedObject``, whose objects then come back as
    instances of them); without it the file's own schema is used. A new file takes the schema;
    additive changes (new classes, properties, indexes) need a higher ``schema_version`` and
    apply by themselves; other changes need ``migration`` and raise MigrationRequiredError
    without one.

    ``migration(m)`` runs when the file's schema version is lower than ``schema_version``,
    inside the write that brings the file to the new schema: ``m.old_version``, ``m.old_realm``
    (read-only, the old schema), ``m.new_realm`` (writable, the new schema),
    ``m.rename_property(cls, old, new)`` and ``for old, new in m.enumerate(cls)``. An exception
    it raises fails the open with that exception (its cause the library's CallbackError) and
    leaves the file as it was. With declared classes, the objects the file has get the declared
    default of each property the new schema adds to their class (rather than the zero of its
    type), in that same write, before ``migration`` runs.

    ``durability`` is "full" (a commit survives power loss), "no_sync" (survives a process crash)
    or "mem_only"; ``write_timeout`` is how many seconds a write waits for another writer (None:
    forever). Raises StorageError for a file that cannot be opened, is not a Cove file, or was
    written by a newer Cove.

    ``in_memory_identifier`` (with ``path=None``), as Realm's ``inMemoryIdentifier``: the realm
    lives in memory, shared by every realm of this process opened with the same identifier, and
    its data is gone when the last of them closes.

    ``should_compact_on_launch(total_bytes, used_bytes)``, as Realm's ``shouldCompactOnLaunch``,
    is asked before opening an existing file that no other handle has open; true compacts it
    first (see ``cove.compact``). Not asked for in-memory or read-only opens.

    ``encryption_key`` (64 bytes), as Realm's ``encryptionKey``: every page of the file is
    sealed with AES-256-GCM. A new file is created encrypted; an existing one must have been
    made with this key. A wrong or missing key, or a key for a plain file, raises
    DecryptionError; a key of another length InvalidArgumentError.

    ``sync`` (a ``cove.SyncConfig``), as Realm's ``syncConfiguration``: what the file's realms
    write is uploaded to a Cove Sync server, and what others wrote there downloaded into the
    file, by a session in the background (``realm.sync``). A file that never synced has every
    object it holds queued for upload. Raises InvalidArgumentError for a URL or token the
    library refuses, an in-memory or read-only realm; SchemaError for a class without a primary
    key, or with an embedded object (neither can sync).
    """
    key, key_size = _key_arg(encryption_key)
    if durability not in _DURABILITY:
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, f"durability {durability!r} is not 'full', 'no_sync' or 'mem_only'")
    if max_active_versions < 0:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"max_active_versions {max_active_versions} is negative")
    if write_timeout is not None and write_timeout < 0:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"write_timeout {write_timeout} is negative")
    fspath = None if path is None else os.fspath(path)
    if should_compact_on_launch is not None:
        if not callable(should_compact_on_launch):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"should_compact_on_launch is a function of (total_bytes, used_bytes), got {type(should_compact_on_launch).__name__}")
        if fspath is not None and not read_only and durability != "mem_only" and os.path.exists(fspath):
            compact(fspath, should_compact_on_launch, encryption_key=encryption_key)
    config_out = ffi.new("cove_config_t**")
    check(lib.cove_config_new(ffi.NULL if fspath is None else fspath.encode(), config_out))
    config = ffi.gc(config_out[0], lib.cove_release)
    if in_memory_identifier is not None:
        if fspath is not None:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, "in_memory_identifier replaces the path: pass path=None")
        check(lib.cove_config_set_in_memory_identifier(config, in_memory_identifier.encode()))
    check(lib.cove_config_set_read_only(config, read_only))
    check(lib.cove_config_set_encryption_key(config, key, key_size))
    if sync is not None:
        if not isinstance(sync, SyncConfig):
            raise WrongTypeError(Status.WRONG_TYPE, f"sync is a cove.SyncConfig, got {type(sync).__name__}")
        check(lib.cove_config_set_sync(config, sync._handle))
    check(lib.cove_config_set_max_active_versions(config, max_active_versions))
    check(lib.cove_config_set_durability(config, _DURABILITY[durability]))
    timeout_ms = -1 if write_timeout is None else int(write_timeout * 1000)
    check(lib.cove_config_set_write_timeout_ms(config, timeout_ms))
    classes: Dict[str, Type[Object]] = {}
    if isinstance(schema, type) or (isinstance(schema, Sequence) and not isinstance(schema, str)):
        declared = [schema] if isinstance(schema, type) else list(schema)
        schema = schema_from_classes(declared)
        classes = {class_name_of(c): c for c in declared}
    if schema is not None:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        if schema_version < 0:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"schema_version {schema_version} is negative")
        check(lib.cove_config_set_schema_json(config, text.encode(), schema_version))
    if migration is not None:
        if not callable(migration):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"migration is a function taking a cove.Migration, got {type(migration).__name__}")
        if not _migration.AVAILABLE:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, "this libcove has no migrations (cove_config_set_migration)")
    if _adds_to_objects(fspath, classes, schema_version, read_only):
        # The declared defaults of the properties the schema adds go to the file's objects in
        # the migration's write, before the program's own migration, if any, runs.
        migration = _migration.with_defaults(migration, classes)
    if migration is not None:
        return Realm(_migration.open_with_migration(config, migration, classes, fspath), path=fspath,
                     frozen=False, classes=classes)
    out = ffi.new("cove_realm_t**")
    check(lib.cove_open(config, out))
    return Realm(out[0], path=fspath, frozen=False, classes=classes)


def _key_arg(key: Optional[bytes]) -> Tuple[Any, int]:
    """An encryption key as the C calls take it: NULL and 0 for None, else the bytes (64 of
    them, which the library checks)."""
    if key is None:
        return ffi.NULL, 0
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, f"an encryption key is 64 bytes, got {type(key).__name__}")
    data = bytes(key)
    if len(data) != 64:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"an encryption key has 64 bytes, not {len(data)}")
    return ffi.from_buffer("uint8_t[]", data), len(data)


def compact(path: Union[str, "os.PathLike[str]"], should_compact: Optional[Callable[[int, int], bool]] = None,
            *, encryption_key: Optional[bytes] = None) -> bool:
    """Compacts the Cove file at ``path`` in place when no other handle (in this process or
    another) has it open, and ``should_compact(total_bytes, used_bytes)``, when given, returns
    true: a compacted copy is written beside it and renamed over it, so that a crash leaves the
    old file or the new one. Returns whether it compacted. An exception ``should_compact``
    raises leaves the file as it was and is raised again. An encrypted file needs its
    ``encryption_key`` and stays encrypted with it."""
    out = ffi.new("bool*")
    target = os.fsencode(path)
    key, key_size = _key_arg(encryption_key)
    if should_compact is None:
        check(lib.cove_compact_file(target, key, key_size, ffi.NULL, ffi.NULL, out))
        return bool(out[0])
    box: Dict[str, Any] = {"function": should_compact, "error": None}
    handle = ffi.new_handle(box)
    check(lib.cove_compact_file(target, key, key_size, lib._cove_should_compact_cb, handle, out))
    if box["error"] is not None:
        raise box["error"]
    return bool(out[0])


class RecoveredClass(NamedTuple):
    """What ``recover`` made of one class: objects copied into the new file and lost (None when
    the class's table itself could not be read, so that how many is unknown), lists, sets and
    maps of which some elements could not be read, single values that could not be read (the
    new file holds the property's default), links to lost objects taken out, and the pages that
    could not be read where the class's data lives."""

    objects_copied: int
    objects_lost: Optional[int]
    collections_damaged: int
    values_lost: int
    links_dropped: int
    damaged_pages: Tuple[int, ...]


class RecoverReport(NamedTuple):
    """What ``recover`` copied out of a damaged file: the version salvaged (the newest whose
    schema could be read) and the newest the file holds, notes on the versions, every page that
    could not be read (``catalog_pages``: those of the catalog), and per class, in schema order,
    a ``RecoveredClass``. ``complete`` when nothing was lost."""

    version: int
    newest_version: int
    complete: bool
    version_notes: Tuple[str, ...]
    damaged_pages: Tuple[int, ...]
    catalog_pages: Tuple[int, ...]
    classes: Dict[str, RecoveredClass]


def recover(damaged: Union[str, "os.PathLike[str]"], out: Union[str, "os.PathLike[str]"],
            *, encryption_key: Optional[bytes] = None) -> RecoverReport:
    """Copies everything that can still be read of the damaged Cove file ``damaged`` into a new
    file ``out`` (sqlite3's ``.recover``), reading the damaged file without trusting or writing
    it: objects on pages that can be read with what of their values and collections can be read,
    links to lost objects taken out, indexes and backlinks built anew. Returns what was copied
    and lost. Raises CorruptError when nothing can be salvaged (nothing is written),
    InvalidArgumentError (a ValueError) when ``out`` exists or is ``damaged``, StorageIOError (an
    OSError) when a file cannot be read or written. An encrypted file needs its
    ``encryption_key`` (DecryptionError without it); the new file is encrypted with it too."""
    report = ffi.new("char**")
    key, key_size = _key_arg(encryption_key)
    check(lib.cove_recover_file(os.fsencode(damaged), os.fsencode(out), key, key_size, report))
    try:
        data = json.loads(ffi.string(report[0]).decode())
    finally:
        lib.cove_free(report[0])
    classes = {c["class"]: RecoveredClass(c["objects_copied"], c["objects_lost"], c["collections_damaged"],
                                          c["values_lost"], c["links_dropped"], tuple(c["damaged_pages"]))
               for c in data["classes"]}
    return RecoverReport(data["version"], data["newest_version"], data["complete"], tuple(data["version_notes"]),
                         tuple(data["damaged_pages"]), tuple(data["catalog_pages"]), classes)


@ffi.def_extern(name="_cove_should_compact_cb")
def _should_compact(userdata: Any, total: int, used: int) -> bool:
    box = ffi.from_handle(userdata)
    try:
        return bool(box["function"](int(total), int(used)))
    except BaseException as exc:  # raised again by compact()
        box["error"] = exc
        return False


def _adds_to_objects(fspath: Optional[str], classes: Dict[str, Type[Object]], version: int, read_only: bool) -> bool:
    """Whether opening may add properties with declared defaults to objects a file has: there
    is a file, of a lower schema version, and a declared class has defaults."""
    if fspath is None or read_only or not classes or not _migration.AVAILABLE:
        return False
    if not any(defaults_of(cls) for cls in classes.values()):
        return False
    out = ffi.new("uint64_t*")
    if lib.cove_schema_version_at(fspath.encode(), out) != Status.OK:
        return False    # no file yet (or one the open will refuse)
    return int(out[0]) < version


def _elements_of_values(p: Any) -> bool:
    """Whether `p` is a list, set or map of values (not of objects), which a batch call takes
    whole, as its elements."""
    return p.kind in (LIST, SET, MAP) and p.target is None


def _elements(p: Any, value: Any) -> Elements:
    """The elements of `value` for collection `p` in a batch call."""
    if p.kind == MAP:
        if not isinstance(value, dict):
            raise WrongTypeError(Status.WRONG_TYPE, f"{p.label} takes a dict, got {type(value).__name__}")
        items: List[Any] = []
        for key, item in value.items():
            items.append(key)
            items.append(item)
        return Elements(items, True, len(value))
    if isinstance(value, dict):
        raise WrongTypeError(Status.WRONG_TYPE, f"{p.label} takes a list or set of values, got dict")
    return Elements(list(value), False, len(value))


class _Batch:
    """Rows of create_many waiting for one cove_object_create_many call: consecutive rows with
    the same single-value properties, up to SIZE of them."""

    SIZE = 1000

    def __init__(self, realm: Realm, class_name: str, info: ClassInfo, update: bool) -> None:
        self.realm = realm
        self.class_name = class_name
        self.info = info
        self.update = update
        self.names: Tuple[str, ...] = ()
        # The keys of the batch's rows while they are all single values, in that order (the
        # names then): a row with these keys goes in as it is.
        self.plain_keys: Optional[Tuple[str, ...]] = None
        self.rows: List[List[Any]] = []
        self.extras: List[Tuple[int, Dict[str, Any]]] = []   # (row in batch, collection values)
        self.plans: Dict[Tuple[str, ...], Tuple[Tuple[str, ...], bool, Optional[Tuple[Tuple[int, bool], ...]]]] = {}
        self.created = 0
        self.start = 0        # the input's index of the batch's first row

    def _plan(self, keys: Tuple[str, ...]) -> Tuple[Tuple[str, ...], bool, Optional[Tuple[Tuple[int, bool], ...]]]:
        """The names among `keys` that go into the batch call (single values, links, and lists,
        sets and maps of values, which go in as their elements); whether every key is one that
        is written as it is (no link that may need preparing, no collection or embedded value);
        and, when every key is a single value or a collection of values, the positions of the
        collections (with whether each is a map), for rows taken without looking at each key."""
        names = []
        plain = True
        collections: Optional[List[Tuple[int, bool]]] = []
        for j, name in enumerate(keys):
            p = self.info.properties.get(name)
            if p is not None and p.kind == BACKLINKS:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"{p.label} is backlinks: it is computed, not given")
            if p is None or p.kind == VALUE:
                names.append(name)
            else:
                plain = False
                if p.kind == LINK or _elements_of_values(p):
                    names.append(name)
                if collections is not None and _elements_of_values(p):
                    collections.append((j, p.kind == MAP))
                else:
                    collections = None
        return tuple(names), plain, None if plain or collections is None else tuple(collections)

    def add(self, row: Mapping[str, Any]) -> None:
        keys = tuple(row)
        plan = self.plans.get(keys)
        if plan is None:
            plan = self.plans[keys] = self._plan(keys)
        names, plain, collections = plan
        if plain:
            # Every key a single value: the row goes in as it is (the common case, kept short).
            if names is not self.names or len(self.rows) >= self.SIZE:
                self.flush()
                self.names = names
            self.plain_keys = keys
            self.rows.append(list(row.values()))
            return
        if collections is not None and self._add_with_collections(row, names, collections):
            return
        extras: Dict[str, Any] = {}
        names_list: List[str] = []
        values = []
        for name, value in row.items():
            p = self.info.properties.get(name)
            if p is None or p.kind == VALUE:
                names_list.append(name)
                values.append(value)
            elif p.kind == LINK and not (p.embedded and value is not None):
                names_list.append(name)
                values.append(prepare(self.realm, p, value, self.update))
            elif _elements_of_values(p) and isinstance(value, (list, tuple, set, frozenset, dict)):
                names_list.append(name)
                values.append(_elements(p, value))
            else:
                extras[name] = value
        names = tuple(names_list)
        if extras and self.info.primary_key is None:
            # Without a primary key the new object cannot be found again after the batch call:
            # it is created on its own, after the rows before it.
            self.flush()
            self.realm.create(self.class_name, row, update=self.update)
            self.created += 1
            self.start += 1
            return
        if names != self.names or len(self.rows) >= self.SIZE:
            self.flush()
            self.names = names
        self.plain_keys = None
        if extras:
            self.extras.append((len(self.rows), extras))
        self.rows.append(values)

    def _add_with_collections(self, row: Mapping[str, Any], names: Tuple[str, ...],
                              collections: Tuple[Tuple[int, bool], ...]) -> bool:
        """Adds a row of single values and collections of values without looking at each key;
        False (nothing added) when a collection is not given as a list, set or dict."""
        values = list(row.values())
        for j, is_map in collections:
            value = values[j]
            kind = type(value)
            if is_map:
                if kind is not dict:
                    return False
                items: List[Any] = []
                for key, item in value.items():
                    items.append(key)
                    items.append(item)
                values[j] = Elements(items, True, len(value))
            elif kind is list:
                values[j] = Elements(value, False, len(value))
            elif kind in (tuple, set, frozenset):
                values[j] = Elements(list(value), False, len(value))
            else:
                return False
        if names != self.names or len(self.rows) >= self.SIZE:
            self.flush()
            self.names = names
        self.plain_keys = None
        self.rows.append(values)
        return True

    def _take_elements(self, rows: List[List[Any]], names: Tuple[str, ...]) -> List[Tuple[int, Elements]]:
        """The collections given whole in `rows` as (flat index, elements), each replaced by
        None in its row."""
        columns = [j for j, name in enumerate(names)
                   if (p := self.info.properties.get(name)) is not None and _elements_of_values(p)]
        spans: List[Tuple[int, Elements]] = []
        if not columns:
            return spans
        n = len(names)
        for i, row in enumerate(rows):
            for j in columns:
                elements = row[j]
                if isinstance(elements, Elements):
                    spans.append((i * n + j, elements))
                    row[j] = None
        return spans

    def flush(self) -> None:
        if not self.rows:
            return
        rows, names, extras = self.rows, self.names, self.extras
        self.rows, self.extras = [], []
        n = len(names)
        keep: List[Any] = []
        c_names = [ffi.new("char[]", name.encode()) for name in names]
        names_array = ffi.new("const char*[]", c_names) if n else ffi.NULL
        # The elements of the batch's lists, sets and maps are packed together, in one array.
        spans = self._take_elements(rows, names)
        # A value that cannot be written stops the batch at its row: the rows before it are
        # still created, as the library does.
        values, filled, failure = pack_rows(ffi, rows, n, keep, self.realm)
        if spans:
            flat: List[Any] = []
            for _, elements in spans:
                flat.extend(elements.items)
            items, _, flat_failure = pack_rows(ffi, [flat], len(flat), keep, self.realm)
            if flat_failure is None:
                start = 0
                for index, elements in spans:
                    v = values[index]
                    v.type = TYPE_MAP if elements.is_map else TYPE_LIST
                    v.u.elements.items = items + start if flat else ffi.NULL
                    v.u.elements.count = elements.count
                    start += len(elements.items)
            else:
                # Some element cannot be written: each collection again on its own, so that
                # the batch stops at the row that holds it.
                for index, elements in spans:
                    rows[index // n][index % n] = elements
                values, filled, failure = pack_rows(ffi, rows, n, keep, self.realm)
        created = ffi.new("size_t*")
        status = Status.OK
        if filled:
            status = lib.cove_object_create_many(self.realm._h(), self.class_name.encode(), names_array, n, values,
                                                 filled, self.update, created)
            self.created += int(created[0])
        if status != Status.OK:
            message = ffi.string(lib.cove_last_error_message()).decode("utf-8", "replace")
            raise error_for(status, f"{message} (object {self.start + int(created[0])} of the input)")
        if failure is not None:
            where = f"create_many: object {self.start + filled} of the input"
            if isinstance(failure, Error):
                raise type(failure)(failure.code, f"{where}: {failure.message}") from failure
            raise type(failure)(f"{where}: {failure}") from failure
        self.start += len(rows)
        if extras:
            pk = self.info.primary_key
            assert pk is not None
            position = names.index(pk)
            for index, values_after in extras:
                obj = self.realm.find(self.class_name, rows[index][position])
                assert obj is not None
                obj._fill(values_after, self.update)
