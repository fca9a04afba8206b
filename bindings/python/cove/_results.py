"""Results: the live, lazy matches of a query over a class, a list or set, or an object's
backlinks, narrowed with filter, sorted and distinct."""
from __future__ import annotations

import threading
import typing
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union, overload

from ._errors import Error, FrozenError, InvalidArgumentError, Status, TransactionError, WrongTypeError
from ._lib import c_string, check, ffi, lib, owned
from ._notifications import ChangeStream, observe
from ._query import argument_array, bind_arguments
from ._sections import SectionedResults, sectioned
from . import _subscriptions
from ._speedups import MISS, iterate_objects, object_by_key, results_object
from ._values import position, read_value

if TYPE_CHECKING:
    from ._notifications import CollectionChange, NotificationToken
    from ._realm import Realm
    from ._subscriptions import WaitForSync

_T = TypeVar("_T")


# Guards the first query of results made by realm.objects(), which may be read from several
# threads at once when their realm is frozen.
_MAKE_LOCK = threading.Lock()

SortKeys = Union[None, str, Sequence[Union[str, Tuple[str, bool]]]]


def _owned_text(pointer: Any) -> str:
    """Text the library handed out (+1): decoded, then freed."""
    try:
        return str(ffi.string(pointer).decode("utf-8"))
    finally:
        lib.cove_free(pointer)


# `count()` without a value: every match.
_EVERY: Any = object()


class Results(typing.Sequence[_T]):
    """The matches of a query: a live, lazy ``Sequence``.

    ``realm.objects(cls)`` gives every object of a class; ``filter(query, *args)``,
    ``sorted(key_path, ascending=True)`` and ``distinct(*key_paths)`` give new results (the query
    language is RQL, as docs/query-language.md describes it). Nothing is read until it is needed, and every
    read sees the realm's current version, a write in progress included; frozen results
    (``freeze()``, or results of a frozen realm) keep their version and may be read from any
    thread.

    Elements are objects (instances of their declared class when there is one) for results of
    a class, of a list or set of objects and of backlinks, and Python values for results of a
    list or set of values. ``results[i]`` takes negative indices and raises OutOfRangeError (an
    IndexError) outside the matches; a slice gives a list; iterating goes over the matches as
    they were when the iteration began.
    """

    __slots__ = ("_realm", "_handle", "_addr", "_class_name", "_label", "_root", "_live", "__weakref__")

    _realm: "Realm"
    _handle: Any
    _class_name: Optional[str]     # the class of the objects; None for results of values
    _label: str
    _root: bool                    # realm.objects(cls) itself: filter() queries the class directly
    _live: Any                     # the live realm frozen results came from (a weak reference)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("results come from realm.objects(cls), lst.as_results() or backlinks properties")

    @classmethod
    def _make(cls, realm: "Realm", handle: Any, class_name: Optional[str], label: str) -> "Results[Any]":
        self: Results[Any] = object.__new__(cls)
        self._realm = realm
        self._class_name = class_name
        self._label = label
        self._root = False
        self._live = None
        self._handle = None
        if handle is not None:
            self._adopt(handle)
        return self

    @classmethod
    def _of_class(cls, realm: "Realm", class_name: str) -> "Results[Any]":
        """Every object of a class; the query runs at the first read."""
        self = cls._make(realm, None, class_name, class_name)
        self._root = True
        return self

    def _adopt(self, handle: Any) -> None:
        self._handle = owned(handle)
        # The handle's address, for the C paths of _speedups.c.
        self._addr = int(ffi.cast("uintptr_t", handle))

    def _h(self) -> Any:
        handle = self._handle
        if handle is None:
            with _MAKE_LOCK:
                if self._handle is None:
                    assert self._class_name is not None
                    out = ffi.new("cove_results_t**")
                    check(lib.cove_query(self._realm._h(), self._class_name.encode(), b"TRUEPREDICATE",
                                         ffi.NULL, 0, out))
                    self._adopt(out[0])
                handle = self._handle
        return handle

    def _derive(self, handle: Any, stage: str) -> "Results[_T]":
        result: Results[_T] = Results._make(self._realm, handle, self._class_name, f"{self._label} {stage}")
        result._live = self._live
        return result

    # -- state ---------------------------------------------------------------------------------

    @property
    def realm(self) -> "Realm":
        """The realm the results read (for frozen results, the frozen realm of their version)."""
        return self._realm

    @property
    def is_frozen(self) -> bool:
        """Whether the results keep one version (from ``freeze()`` or a frozen realm)."""
        return self._realm.is_frozen

    @property
    def is_valid(self) -> bool:
        """False once the realm is closed, or once the owner of the list or set they read was
        deleted."""
        if self._handle is None:
            return not self._realm.is_closed
        out = ffi.new("bool*")
        check(lib.cove_results_is_valid(self._handle, out))
        return bool(out[0])

    @property
    def holds_objects(self) -> bool:
        """True for results of objects, False for results of a list or set of values."""
        return self._class_name is not None

    @property
    def class_name(self) -> Optional[str]:
        """The class of the objects, or None for results of values."""
        return self._class_name

    # -- reading -------------------------------------------------------------------------------

    @property
    def first(self) -> Optional[_T]:
        """The first match, or None when there is none (Realm's ``first``)."""
        return self[0] if len(self) else None

    @property
    def last(self) -> Optional[_T]:
        """The last match, or None when there is none (Realm's ``last``)."""
        size = len(self)
        return self[size - 1] if size else None

    def count(self, value: Any = _EVERY) -> int:
        """The number of matches, as Realm's ``count`` (``len(results)`` is the same); with a
        value, how many times it is among them, as ``Sequence.count``."""
        if value is _EVERY:
            return len(self)
        return super().count(value)

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        check(lib.cove_results_count(self._h(), out))
        return int(out[0])

    def _index(self, index: Any) -> int:
        return position(index, self.__len__, "results")

    def _read(self, v: Any) -> Any:
        return read_value(ffi, v, self._realm._resolve_link)

    def _get(self, i: int) -> Any:
        if self._class_name is None:
            out = ffi.new("cove_value_t*")
            check(lib.cove_results_get_value(self._h(), i, out))
            return self._read(out[0])
        handle = self._h()
        realm = self._realm
        name = self._class_name
        if realm._open[0]:
            # In C (_speedups.c), which makes the object too; MISS when the library refused:
            # the call below repeats it and raises.
            found = results_object(self._addr, i, realm._object_class(name), realm, name)
            if found is not MISS:
                return found
        obj = ffi.new("cove_object_t**")
        check(lib.cove_results_get_object(handle, i, obj))
        return realm._wrap(obj[0], name)

    def _keys(self, start: int, count: int) -> List[int]:
        """The object keys of up to `count` matches from `start`, in one call."""
        keys = ffi.new("int64_t[]", count) if count else ffi.NULL
        n = ffi.new("size_t*")
        check(lib.cove_results_get_keys(self._h(), start, count, keys, n))
        return ffi.unpack(keys, int(n[0])) if n[0] else []

    def _objects(self, keys: List[int]) -> Iterator[Any]:
        """The objects of `keys`, read one at a time as the iterator advances; one deleted since
        its key was read is skipped."""
        assert self._class_name is not None
        realm = self._realm
        class_name = self._class_name
        name = class_name.encode()
        cls = realm._object_class(class_name)
        is_open = realm._open
        for key in keys:
            found = MISS
            if is_open[0]:
                # In C (_speedups.c); MISS when the library refused: the call below raises.
                found = object_by_key(realm._addr, name, key, cls, realm, class_name)
            if found is MISS:
                found = self._object_by_key(key)
            if found is not None:
                yield found

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> List[_T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if not isinstance(index, slice):
            return self._get(self._index(index))
        positions = range(*index.indices(len(self)))
        if not positions:
            return []
        if self._class_name is None:
            return [self._get(i) for i in positions]
        low, high = min(positions[0], positions[-1]), max(positions[0], positions[-1])
        keys = self._keys(low, high - low + 1)
        return list(self._objects([keys[i - low] for i in positions if i - low < len(keys)]))

    def __iter__(self) -> Iterator[_T]:
        # Not a generator itself: the matches are read when iter() is called, not at the first next().
        if self._class_name is None:
            size = len(self)
            values = [self._get(i) for i in range(size)]
            return iter(values)
        realm = self._realm
        if realm._open[0]:
            self._h()                      # the query runs now, as len() would run it
            name = self._class_name
            # In C (_speedups.c): the keys now, each object as the iteration reaches it, read by
            # keys without a handle of its own, through _object_by_key when the library does not
            # answer there. MISS when the library does not give the keys: the general path below
            # asks again and raises.
            class_key, props = realm._read_keys(name)
            walk = iterate_objects(self._addr, realm._addr, class_key, props, realm._object_class(name), realm, name,
                                   realm._open, self._object_by_key)
            if walk is not MISS:
                return walk  # type: ignore[no-any-return]
        size = len(self)
        return self._objects(self._keys(0, size) if size else [])

    def _object_by_key(self, key: int) -> Any:
        """The object of `key` read through cffi, None when it was deleted (raises when the
        library refuses): what _speedups.iterate_objects hands out when it cannot read it."""
        assert self._class_name is not None
        realm = self._realm
        out = ffi.new("cove_object_t**")
        check(lib.cove_object_get_by_object_key(realm._h(), self._class_name.encode(), key, out))
        return None if out[0] == ffi.NULL else realm._wrap(out[0], self._class_name)

    def __repr__(self) -> str:
        state = " frozen" if self._realm._frozen else ""
        try:
            size = len(self)
        except Error:
            return f"<cove.Results of {self._label}{state} (invalid)>"
        return f"<cove.Results of {self._label}{state} ({size} {'match' if size == 1 else 'matches'})>"

    # -- narrowing and ordering ----------------------------------------------------------------

    def filter(self, query: str, *args: Any) -> "Results[_T]":
        """The matches that also satisfy an RQL query, e.g. ``filter("age > $0 AND name
        BEGINSWITH[c] $1", 3, "r")``; the query's SORT, DISTINCT, LIMIT and OFFSET apply after
        the stages of these results. For results of values the element is ``self``.

        Arguments bind to ``$0``, ``$1``... (or to ``%@`` in order): None, bool, int, float, str,
        bytes, datetime, Decimal, UUID, ObjectId and objects; a list, tuple or set becomes a list
        literal (``filter("age IN $0", [1, 2])``). A query that does not parse raises
        QuerySyntaxError (the message gives the position); one that names an unknown property,
        compares types that do not compare or misuses an argument, InvalidQueryError (also an
        InvalidArgumentError); both are QueryErrors. A Python value Cove has no type for raises
        WrongTypeError.
        """
        c_string(query, "the query")
        text, values, labels = bind_arguments(query, args)
        c_text = text.encode("utf-8", "surrogatepass")
        c_args, keep = argument_array(values, labels, self._realm)
        out = ffi.new("cove_results_t**")
        if self._root and self._class_name is not None:
            check(lib.cove_query(self._realm._h(), self._class_name.encode(), c_text, c_args, len(values), out), query=True)
        else:
            check(lib.cove_results_filter(self._h(), c_text, c_args, len(values), out), query=True)
        del keep
        return self._derive(out[0], f"where {query!r}")

    def sorted(self, key_path: SortKeys = None, ascending: bool = True) -> "Results[_T]":
        """The results sorted by a key path (a property, or a path through to-one links such as
        ``"owner.name"``; ``"self"``, the default, for results of values), stably; or by a list
        of ``(key_path, ascending)`` pairs, the first the primary key (a plain key path in the
        list takes ``ascending``). Nulls come first ascending; strings compare by their UTF-8
        bytes; a path through a null link sorts last."""
        if key_path is None or isinstance(key_path, str):
            keys = [(key_path or "self", bool(ascending))]
        else:
            keys = []
            for item in key_path:
                if isinstance(item, str):
                    keys.append((item, bool(ascending)))
                elif isinstance(item, tuple) and len(item) == 2:
                    keys.append((item[0], bool(item[1])))
                else:
                    raise WrongTypeError(
                        Status.WRONG_TYPE, f"sorted() takes a key path or (key_path, ascending) pairs, got {item!r}")
        if not keys:
            return self
        result: Results[_T] = self
        # Sorting again makes the new key the primary one: the last key goes first.
        for path, up in reversed(keys):
            out = ffi.new("cove_results_t**")
            check(lib.cove_results_sort(result._h(), c_string(path, "the key path"), up, out), query=True)
            result = result._derive(out[0], f"sorted by {path}{'' if up else ' descending'}")
        return result

    def distinct(self, *key_paths: Union[str, Sequence[str]]) -> "Results[_T]":
        """The first match of each distinct value (of each combination of values, for several
        key paths), in the order of these results; ``"self"``, the default, for results of
        values. ``distinct("a", "b")`` and ``distinct(["a", "b"])`` are the same."""
        paths: List[str] = []
        for item in key_paths:
            if isinstance(item, str):
                paths.append(item)
            elif isinstance(item, (list, tuple)):
                paths.extend(item)
            else:
                raise WrongTypeError(Status.WRONG_TYPE, f"distinct() takes key paths, got {type(item).__name__}")
        if not paths:
            paths = ["self"]
        out = ffi.new("cove_results_t**")
        if len(paths) == 1:
            check(lib.cove_results_distinct(self._h(), c_string(paths[0], "the key path"), out), query=True)
        else:
            # One DISTINCT of several paths; the paths go in as $K arguments, so that a name the
            # query language reads as a keyword still works.
            text = "TRUEPREDICATE DISTINCT(" + ", ".join(f"$K{i}" for i in range(len(paths))) + ")"
            for path in paths:
                c_string(path, "the key path")
            c_args, keep = argument_array(paths, [f"key path {p!r}" for p in paths], self._realm)
            check(lib.cove_results_filter(self._h(), text.encode(), c_args, len(paths), out), query=True)
            del keep
        return self._derive(out[0], f"distinct on {', '.join(paths)}")

    def sectioned(self, by: Optional[str] = None, ascending: bool = True, *,
                  key: Optional[Callable[[_T], Any]] = None, sort: SortKeys = None) -> "SectionedResults[_T]":
        """The results of objects cut into sections (``cove.SectionedResults``), live and lazy.

        ``sectioned(by="age", ascending=True)``: by the value of a key path (a property or a path
        through to-one links, not a collection); the rows are sorted by it, and sections go in
        ascending (or descending) key order. ``sort`` (as ``sorted()`` takes it) orders the rows
        within each section.

        ``sectioned(key=lambda dog: dog.name[:1], sort=[("name", True)])``: by what a function
        says of each object (its declared class's instance), any value Cove stores (None, bool,
        int, float, str, bytes, datetime, Decimal, UUID, ObjectId, an object); sections go in
        ascending key order, rows in the order of the results sorted by ``sort``. The function
        runs while the sections are read or their changes computed, on the reading thread; an
        exception it raises comes out of that read (or of the ``deliver()``/``refresh()`` that
        computed a change). It must give the same key for the same object at one version.

        Raises InvalidArgumentError for both or neither of ``by`` and ``key``, a key path that
        names no property or reaches a collection, and ``ascending=False`` with a key function;
        WrongTypeError for results of values."""
        return sectioned(self, by, ascending, key, sort)

    # -- aggregates ----------------------------------------------------------------------------

    def _property(self, prop: Optional[str]) -> Any:
        return ffi.NULL if prop is None else c_string(prop, "the property")

    def _aggregate(self, fn: Any, prop: Optional[str]) -> Any:
        out = ffi.new("cove_value_t*")
        found = ffi.new("bool*")
        check(fn(self._h(), self._property(prop), out, found))
        return self._read(out[0]) if found[0] else None

    def min(self, prop: Optional[str] = None) -> Any:
        """The smallest value of a numeric or date property over the matches (nulls skipped),
        or None when there is none. ``prop`` is omitted for results of values."""
        return self._aggregate(lib.cove_results_min, prop)

    def max(self, prop: Optional[str] = None) -> Any:
        """The greatest value of a numeric or date property, or None when there is none."""
        return self._aggregate(lib.cove_results_max, prop)

    def sum(self, prop: Optional[str] = None) -> Any:
        """The sum of a numeric property (nulls skipped): an int for ints, a float when any value
        is one, a Decimal when any is; zero of the property's type when nothing matches."""
        out = ffi.new("cove_value_t*")
        check(lib.cove_results_sum(self._h(), self._property(prop), out))
        return self._read(out[0])

    def average(self, prop: Optional[str] = None) -> Any:
        """The mean of a numeric property (a float, or a Decimal for decimals), or None when
        there is no value."""
        return self._aggregate(lib.cove_results_average, prop)

    # -- export --------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The matches as JSON text: an array of objects (their properties) or of values."""
        out = ffi.new("char**")
        check(lib.cove_results_to_json(self._h(), out))
        return _owned_text(out[0])

    def explain(self) -> str:
        """How the results are computed, for a person to read: the source (a scan, an index
        lookup, a list's elements) and each stage after it. The wording may change."""
        out = ffi.new("char**")
        check(lib.cove_results_explain(self._h(), out))
        return _owned_text(out[0])

    # -- versions ------------------------------------------------------------------------------

    def freeze(self) -> "Results[_T]":
        """Frozen results: the same query over the realm's current version, kept while they
        live, readable from any thread (not inside a write). Frozen results return themselves."""
        if self.is_frozen:
            return self
        out = ffi.new("cove_results_t**")
        check(lib.cove_results_freeze(self._h(), out))
        try:
            frozen = self._realm.freeze()
        except BaseException:
            lib.cove_release(out[0])
            raise
        result: Results[_T] = Results._make(frozen, out[0], self._class_name, self._label)
        result._live = weakref.ref(self._realm)
        return result

    def thaw(self, realm: Optional["Realm"] = None) -> Optional["Results[_T]"]:
        """Live results of the same query, sort and distinct over a live realm of the same file
        at its current version: ``realm``, by default the one the results were frozen from. None
        when the owner of the list or set they read no longer exists there. Live results return
        themselves."""
        if not self.is_frozen:
            return self
        live = self._realm._thaw_target(realm, self._live, "frozen results", "results.thaw(realm)")
        out = ffi.new("cove_results_t**")
        check(lib.cove_results_thaw(self._h(), live._h(), out))
        if out[0] == ffi.NULL:
            return None
        return Results._make(live, out[0], self._class_name, self._label)

    # -- notifications -------------------------------------------------------------------------

    def observe(self, callback: Callable[["CollectionChange"], Any],
                key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` with a ``cove.CollectionChange``: once with the initial
        state (``is_initial``) at the next ``realm.deliver()``, ``refresh()`` or write, then after
        each commit (of any realm of the file, in any process) that changed the matches or their
        objects: ``deletions`` (old indices), ``insertions`` and ``modifications`` (new indices),
        ``modifications_old``. Commits before a delivery are merged into one change.

        ``key_paths``: None observes every property of the objects and of the objects they link
        to (four levels deep); a list such as ``["name", "toys.brand"]`` observes only those
        (insertions and deletions are always reported); ``[]`` insertions and deletions only.
        Returns a ``cove.NotificationToken``: keep it while the observation should go on. Raises
        FrozenError for frozen results, TransactionError inside a write, InvalidArgumentError
        for a key path that names no property."""
        return observe("cove_results_observe", self._h(), self._realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[CollectionChange]":
        """``async for change in results.changes():`` the changes ``observe()`` would report, the
        initial one first, as an asyncio iterator that waits on the realm's notification
        descriptor and refreshes the realm when it is readable. It ends when the realm closes."""
        return ChangeStream(self._realm, lambda append: self.observe(append, key_paths), initial=True)

    # -- writing -------------------------------------------------------------------------------

    # -- subscriptions -------------------------------------------------------------------------

    async def subscribe(self, name: Optional[str] = None, wait_for_sync: "WaitForSync" = "on_creation",
                        timeout: Optional[float] = None) -> "Results[_T]":
        """Subscribes a synced realm to what these results' filters match (a sort or DISTINCT is
        left out), committing the subscription now, then waits for its objects as
        ``wait_for_sync`` says: "always", "on_creation" (only when this call added it or gave
        ``name`` a new query) or "never"; returns these results, the objects that arrived
        readable. Unnamed, a query an unnamed subscription already has adds nothing; named, the
        same query adds nothing and another one replaces the name's query. Await it on the
        realm's thread, in its running loop: the wait runs off the loop, and the loop wakes on
        the realm's notification descriptor. Raises SyncError when the server refuses the
        subscription, the session stops or ``timeout`` seconds (None: no limit) pass (the
        subscription stays); InvalidArgumentError for a realm that does not sync, results of
        values or a query subscriptions do not take (SORT, DISTINCT, LIMIT, key paths through
        links), QuerySyntaxError, TransactionError inside a write."""
        await _subscriptions.subscribe(self._realm, self._h(), name, wait_for_sync, timeout)
        return self

    def subscribe_sync(self, name: Optional[str] = None, wait_for_sync: "WaitForSync" = "on_creation",
                       timeout: Optional[float] = None) -> "Results[_T]":
        """``subscribe`` that blocks (the GIL released; the realm is not used during the wait,
        so other threads may use it) and then refreshes the realm. Ctrl-C is handled when the
        wait returns."""
        _subscriptions.subscribe_sync(self._realm, self._h(), name, wait_for_sync, timeout)
        return self

    def unsubscribe(self) -> None:
        """Removes the subscription these results made with ``subscribe`` (the named one, or the
        unnamed one with their query) without waiting for its objects to leave. Results that
        made none, and a realm that does not sync, have nothing to remove."""
        check(lib.cove_results_unsubscribe(self._h()))

    def delete_all(self) -> None:
        """Deletes every object that matches, inside a write (the matches when it is called)."""
        if self._class_name is None:
            raise WrongTypeError(Status.WRONG_TYPE, f"the results of {self._label} hold values, not objects: "
                                                    "remove them from their list or set")
        if self._realm.is_frozen:
            raise FrozenError(
                Status.FROZEN, f"the results of {self._label} are frozen: nothing can be deleted through them")
        if not self._realm.in_write:
            raise TransactionError(
                Status.NOT_IN_WRITE, f"cannot delete the objects of {self._label} outside a write transaction")
        size = len(self)
        if not size:
            return
        realm = self._realm._h()
        name = self._class_name.encode()
        out = ffi.new("cove_object_t**")
        for key in self._keys(0, size):
            check(lib.cove_object_get_by_object_key(realm, name, key, out))
            if out[0] == ffi.NULL:
                continue    # gone with an object deleted before it (an embedded one)
            try:
                check(lib.cove_object_delete(out[0]))
            finally:
                lib.cove_release(out[0])
