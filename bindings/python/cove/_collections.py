"""Lists, sets and maps: live views of one collection property of one object.

Reading goes through to the realm's current version; writing happens inside a write
transaction. Elements convert as property values do (links come back as objects); a dict put
into a collection of embedded objects creates one in place with those values.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import typing
from collections import abc
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List as _PyList, Mapping, Optional,
                    Sequence, Tuple, Type, TypeVar, Union, overload)

from ._errors import (FrozenError, InvalidArgumentError, InvalidatedError, OutOfRangeError, Status, TransactionError,
                      WrongTypeError)
from ._lib import check, ffi, lib, owned
from ._notifications import ChangeStream, observe
from ._results import Results
from ._schema import LIST, PropertyInfo
from ._speedups import (DONE, LIST_ELEMENTS, MAP_ENTRIES, MAP_KEYS, MAP_VALUES, MISS, MISSING, SET_ELEMENTS,
                        iterate_elements, list_append, list_element, list_insert, list_set, map_entry, map_set,
                        map_store, map_value, set_add, set_element)
from ._nested import wrap as wrap_nested
from ._values import Timestamp, position, read_value, write_value

if TYPE_CHECKING:
    from ._notifications import NotificationToken
    from ._object import Object
    from ._realm import Realm

_T = TypeVar("_T")
_V = TypeVar("_V")


# cove.Object, the class of the objects that collections hold and that links point to: _object
# defines it on top of this module and registers it here when it is imported
# (register_object_class), rather than this module importing _object.
_object_class: Type["Object"]


def register_object_class(cls: Type["Object"]) -> None:
    """Makes `cls` the class of objects here (called by _object with cove.Object)."""
    global _object_class
    _object_class = cls


class Embedded:
    """The values of an embedded object still to be created in place."""

    __slots__ = ("values",)

    def __init__(self, values: Dict[str, Any]) -> None:
        self.values = values


def prepare(realm: "Realm", info: PropertyInfo, value: Any, update: bool) -> Any:
    """An element or link value ready to write into `info`: for an embedded class the values
    of a new embedded object (from a dict, or copied from an embedded object), for a link a dict
    turned into a new object; anything else as it is (the library checks its type)."""
    if info.target is None:
        return value
    if not info.embedded:
        # collections.abc's Mapping: typing's answers isinstance() through two more calls.
        if isinstance(value, abc.Mapping):
            return realm._create_nested(info.target, value, update)
        if isinstance(value, _object_class) and "_cove_values" in value.__dict__:
            # An unmanaged object assigned or given as a link is added, as in realm-swift.
            return realm._add_object(value, update, nested=True)
        return value
    if value is None and info.kind != LIST:
        return None
    if isinstance(value, abc.Mapping):
        return Embedded(dict(value))
    if isinstance(value, _object_class):
        if value.class_name != info.target:
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{info.label} holds {info.target} objects, got an object of {value.class_name}")
        return Embedded(value._snapshot())
    raise WrongTypeError(
        Status.WRONG_TYPE, f"{info.label} holds embedded {info.target} objects: give a dict of their values, got {type(value).__name__}")


def cvalue(value: Any, realm: Any) -> Tuple[Any, _PyList[Any]]:
    """A cove_value_t* holding `value` for a collection of `realm`, and the buffers to keep
    alive while the C side reads it."""
    v = ffi.new("cove_value_t*")
    keep: _PyList[Any] = []
    write_value(ffi, v, value, keep, realm)
    return v, keep


def compare_key(value: Any) -> Any:
    """A hashable key under which two values are equal when Cove holds them as one element."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, decimal.Decimal)):
        return ("number", value)
    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        return ("date", Timestamp.parts(value))
    if isinstance(value, _object_class):
        return ("object", value._identity())
    return (type(value).__name__, value)


class _Collection:
    """What lists, sets and maps share: the handle, the owner and the property."""

    __slots__ = ("_realm", "_owner", "_info", "_handle", "_addr", "__weakref__")

    _realm: "Realm"
    _owner: Optional["Object"]
    _info: PropertyInfo
    _handle: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("lists, sets and maps are properties of objects: read them as obj.<property>")

    @classmethod
    def _make(cls, realm: "Realm", owner: Optional["Object"], info: PropertyInfo, handle: Any) -> Any:
        self = object.__new__(cls)
        self._realm = realm
        self._owner = owner
        self._info = info
        self._handle = owned(handle)
        # The handle's address, for the C paths of _speedups.c.
        self._addr = int(ffi.cast("uintptr_t", handle))
        return self

    @property
    def is_frozen(self) -> bool:
        """Whether this is an immutable snapshot (from ``freeze()`` or a frozen realm)."""
        out = ffi.new("bool*")
        check(lib.cove_is_frozen(self._handle, out))
        return bool(out[0])

    @property
    def is_valid(self) -> bool:
        """False once the owner was deleted (or the realm closed)."""
        if self._owner is None:
            return not self._realm.is_closed
        return self._owner.is_valid

    @property
    def owner(self) -> Optional["Object"]:
        """The object whose property this is."""
        return self._owner

    @property
    def property_name(self) -> str:
        return self._info.name

    def _read(self, v: Any) -> Any:
        return read_value(ffi, v, self._realm._resolve_link)

    def _get(self, i: int) -> Any:
        raise NotImplementedError

    def _element_or_done(self, i: int) -> Any:
        """The element at `i` read by the general path, or DONE when the collection has
        shortened below `i` while it was iterated: where _speedups.iterate_elements takes
        what it does not read itself."""
        try:
            return self._get(i)
        except OutOfRangeError:
            return DONE

    def _require_write(self) -> None:
        """The checks of a write that may call nothing in the library (an empty union...)."""
        if self._realm.is_frozen:
            raise FrozenError(Status.FROZEN, f"{self._info.label} is frozen and cannot be written")
        if not self._realm.in_write:
            raise TransactionError(Status.NOT_IN_WRITE, f"cannot write {self._info.label} outside a write transaction")

    def _prepare(self, value: Any, update: bool = False) -> Any:
        """An element ready to insert: an Embedded for an embedded class, a new object for a dict
        put into a collection of links, else the value itself."""
        if self._info.target is None:
            return value    # a collection of values: as it is (the library checks its type)
        return prepare(self._realm, self._info, value, update)

    def _fill_new(self, handle: Any, values: Dict[str, Any], update: bool) -> None:
        obj = self._realm._wrap(handle, str(self._info.target))
        obj._fill(values, update)

    def _frozen_owner(self) -> Tuple["Realm", Optional["Object"]]:
        frozen = self._realm.freeze()
        owner = None
        if self._owner is not None:
            owner = frozen._resolve_link(*self._owner._cove_link())
        return frozen, owner

    def _label_repr(self) -> str:
        return f"{self._info.class_name}.{self._info.name}"

    # -- notifications -------------------------------------------------------------------------

    _OBSERVE = "cove_list_observe"    # the library's registration function for the kind

    def observe(self, callback: Callable[[Any], Any], key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` once with the initial state (``is_initial``) at the next
        ``realm.deliver()``, ``refresh()`` or write, then after each commit (of any realm of the
        file, in any process) that changed the collection or, as ``key_paths`` say, its
        objects: a ``cove.CollectionChange`` for a list (with ``moves``) or a set, a
        ``cove.MapChange`` holding keys for a map. When the owner is deleted the last call has
        ``root_deleted``.

        ``key_paths``: None observes the elements' objects deeply (four levels); a list such as
        ``["name"]`` only those properties of them (insertions and deletions are always
        reported); ``[]`` insertions and deletions only (a collection of values takes no other).
        Returns a ``cove.NotificationToken``: keep it while the observation should go on. Raises
        FrozenError for a frozen collection, TransactionError inside a write, InvalidatedError
        once the owner is deleted."""
        return observe(self._OBSERVE, self._handle, self._realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[Any]":
        """``async for change in collection.changes():`` the changes ``observe()`` would report,
        the initial one first, as an asyncio iterator that waits on the realm's notification
        descriptor and refreshes the realm when it is readable. It ends when the realm closes or
        after the owner's deletion."""
        return ChangeStream(self._realm, lambda append: self.observe(append, key_paths), initial=True)


class List(_Collection, typing.MutableSequence[_T]):
    """A list property (``"int[]"``, ``"Toy[]"``): a live ``MutableSequence``.

    Reading by index (negative indices count from the end) and by slice; ``lst[i] = v``,
    ``del lst[i]``, ``insert``, ``append``, ``extend``, ``clear``, ``move(from_index, to_index)``
    write inside a write transaction. An index out of range raises OutOfRangeError (an
    IndexError); an element of the wrong type WrongTypeError.
    """

    __slots__ = ()

    # -- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        check(lib.cove_list_size(self._handle, out))
        return int(out[0])

    def _index(self, index: Any) -> int:
        return position(index, self.__len__, self._info.label)

    def _get(self, i: int) -> Any:
        # In C (_speedups.c); MISS for what the general path reads, or raises.
        value = list_element(self._addr, i, self._realm)
        if value is not MISS:
            return value
        out = ffi.new("cove_value_t*")
        check(lib.cove_list_get(self._handle, i, out))
        value = self._read(out[0])
        if type(value) is list or type(value) is dict:
            # An element of mixed values holding a collection: a live view of it.
            def read() -> Any:
                raw = ffi.new("cove_value_t*")
                check(lib.cove_list_get(self._handle, i, raw))
                return self._read(raw[0])

            def store(v: Any) -> None:
                self[i] = v
            return wrap_nested(value, read, store, f"{self._label_repr()}[{i}]")
        return value

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> _PyList[_T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            return [self._get(i) for i in range(*index.indices(len(self)))]
        return self._get(self._index(index))

    def __iter__(self) -> Iterator[_T]:
        # In C (_speedups.c): the size at the first next(), each element as the iteration
        # reaches it, through _element_or_done when C does not read it.
        walk: Iterator[_T] = iterate_elements(LIST_ELEMENTS, self._addr, self, self._realm, self._element_or_done)
        return walk

    def __contains__(self, value: object) -> bool:
        return any(v == value for v in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (List, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        try:
            return f"cove.List({self._label_repr()}, {list(self)!r})"
        except Exception:
            return f"cove.List({self._label_repr()}, invalid)"

    # -- writing -------------------------------------------------------------------------------

    def _insert_prepared(self, i: int, element: Any, update: bool) -> None:
        if isinstance(element, Embedded):
            out = ffi.new("cove_object_t**")
            check(lib.cove_list_insert_embedded(self._handle, i, out))
            self._fill_new(out[0], element.values, update)
        elif list_insert(self._addr, i, element) is MISS:
            # Not a plain value, or refused: the general path (_speedups.c) writes it or raises.
            v, keep = cvalue(element, self._realm)
            check(lib.cove_list_insert(self._handle, i, v))

    def _set_prepared(self, i: int, element: Any, update: bool) -> None:
        if isinstance(element, Embedded):
            # The library creates embedded elements only by inserting: the old one goes, the new
            # one takes its place.
            check(lib.cove_list_erase(self._handle, i))
            self._insert_prepared(i, element, update)
        elif list_set(self._addr, i, element) is MISS:
            v, keep = cvalue(element, self._realm)
            check(lib.cove_list_set(self._handle, i, v))

    @overload
    def __setitem__(self, index: int, value: Union[_T, Mapping[str, Any]]) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Union[_T, Mapping[str, Any]]]) -> None: ...

    def __setitem__(self, index: Union[int, slice], value: Any) -> None:
        if isinstance(index, slice):
            self._set_slice(index, value)
            return
        i = self._index(index)
        self._set_prepared(i, self._prepare(value), False)

    def _set_slice(self, index: slice, values: Any) -> None:
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{self._info.label}: a slice takes an iterable, got {type(values).__name__}")
        items = [self._prepare(v) for v in values]
        size = len(self)
        start, stop, step = index.indices(size)
        if step == 1:
            stop = max(start, stop)
            self._require_write()
            for i in range(stop - 1, start - 1, -1):
                check(lib.cove_list_erase(self._handle, i))
            for offset, element in enumerate(items):
                self._insert_prepared(start + offset, element, False)
            return
        positions = range(start, stop, step)
        if len(positions) != len(items):
            raise ValueError(f"attempt to assign a sequence of size {len(items)} to an extended slice of size {len(positions)}")
        self._require_write()
        for i, element in zip(positions, items):
            self._set_prepared(i, element, False)

    def __delitem__(self, index: Union[int, slice]) -> None:
        if isinstance(index, slice):
            positions = sorted(range(*index.indices(len(self))), reverse=True)
            self._require_write()
            for i in positions:
                check(lib.cove_list_erase(self._handle, i))
            return
        check(lib.cove_list_erase(self._handle, self._index(index)))

    def insert(self, index: int, value: Union[_T, Mapping[str, Any]]) -> None:
        """Inserts before ``index`` (0..len; negative counts from the end, -1 before the last);
        an index outside the list raises OutOfRangeError rather than clamping."""
        self._insert_prepared(self._index(index), self._prepare(value), False)

    def append(self, value: Union[_T, Mapping[str, Any]]) -> None:
        # A plain value into a list of values in C (_speedups.c), at the size it reads; MISS for
        # anything else and for a refused write (which changed nothing): the general path.
        if self._info.target is not None or list_append(self._addr, value) is MISS:
            self._insert_prepared(len(self), self._prepare(value), False)

    def extend(self, values: Iterable[Union[_T, Mapping[str, Any]]]) -> None:
        items = [self._prepare(v) for v in values]   # reads `values` first: lst.extend(lst) works
        if not items:
            self._require_write()
        size = len(self)
        for offset, element in enumerate(items):
            self._insert_prepared(size + offset, element, False)

    def __iadd__(self, values: Iterable[Union[_T, Mapping[str, Any]]]) -> "List[_T]":
        self.extend(values)
        return self

    def clear(self) -> None:
        check(lib.cove_list_clear(self._handle))

    def pop(self, index: int = -1) -> _T:
        """Removes and returns an element (an embedded element removed is deleted: its values
        come back as a dict)."""
        i = self._index(index)
        value = self._get(i)
        if self._info.embedded and isinstance(value, _object_class):
            value = value._snapshot()
        check(lib.cove_list_erase(self._handle, i))
        return typing.cast(_T, value)

    def reverse(self) -> None:
        """Reverses the list in place by moves (embedded elements keep their identity)."""
        size = len(self)
        self._require_write()
        for i in range(size - 1):
            check(lib.cove_list_move(self._handle, size - 1, i))

    def move(self, from_index: int, to_index: int) -> None:
        """Moves the element at ``from_index`` so that it ends up at ``to_index``."""
        check(lib.cove_list_move(self._handle, self._index(from_index), self._index(to_index)))

    def _assign(self, values: Any, update: bool) -> None:
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{self._info.label} takes an iterable of elements, got {type(values).__name__}")
        items = [self._prepare(v, update) for v in values]
        check(lib.cove_list_clear(self._handle))
        for i, element in enumerate(items):
            self._insert_prepared(i, element, update)

    def as_results(self) -> "Results[_T]":
        """The elements as live ``cove.Results``, in list order: objects for a list of objects,
        values otherwise (``self`` names the element in their queries: ``filter("self > 2")``)."""
        out = ffi.new("cove_results_t**")
        check(lib.cove_list_as_results(self._handle, out))
        return Results._make(self._realm, out[0], self._info.target, self._info.label)

    def freeze(self) -> "List[_T]":
        """An immutable snapshot of the list at the realm's current version, readable from any
        thread (not inside a write)."""
        if self.is_frozen:
            return self
        out = ffi.new("cove_list_t**")
        check(lib.cove_list_freeze(self._handle, out))
        try:
            frozen, owner = self._frozen_owner()
        except BaseException:
            lib.cove_release(out[0])
            raise
        result: List[_T] = List._make(frozen, owner, self._info, out[0])
        return result


class Set(_Collection, typing.MutableSet[_T]):
    """A set property (``"string<>"``): a live ``MutableSet`` in the set's value order.

    ``add``, ``discard``, ``remove`` (KeyError when missing), ``clear``, and Realm's in-place
    ``union``, ``intersect``, ``minus``, ``assign`` with another set of the realm or any
    iterable (also as ``|=``, ``&=``, ``-=``); ``is_subset``, ``intersects``; ``min()``, ``max()``,
    ``sum()``, ``average()`` of numbers and dates, of a property of the objects for a set of
    objects (``dog.pack.min("age")``), as ``Results`` take it.
    """

    __slots__ = ()

    _OBSERVE = "cove_set_observe"

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        check(lib.cove_set_size(self._handle, out))
        return int(out[0])

    def _get(self, i: int) -> Any:
        # In C (_speedups.c); MISS for what the general path reads, or raises.
        value = set_element(self._addr, i, self._realm)
        if value is not MISS:
            return value
        out = ffi.new("cove_value_t*")
        check(lib.cove_set_get(self._handle, i, out))
        return self._read(out[0])

    def __iter__(self) -> Iterator[_T]:
        # In C, as List's.
        walk: Iterator[_T] = iterate_elements(SET_ELEMENTS, self._addr, self, self._realm, self._element_or_done)
        return walk

    def __contains__(self, value: object) -> bool:
        try:
            v, keep = cvalue(value, self._realm)
        except (WrongTypeError, InvalidatedError, OverflowError, ValueError):
            return False   # a value the set can never hold
        out = ffi.new("bool*")
        try:
            check(lib.cove_set_contains(self._handle, v, out))
        except WrongTypeError:
            return False
        return bool(out[0])

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> "set[Any]":
        return set(it)   # a | b, a & b, a - b give plain Python sets

    def __repr__(self) -> str:
        try:
            return f"cove.Set({self._label_repr()}, {list(self)!r})"
        except Exception:
            return f"cove.Set({self._label_repr()}, invalid)"

    def add(self, value: _T) -> None:
        element = value if self._info.target is None else self._prepare(value)
        if set_add(self._addr, element) is MISS:
            v, keep = cvalue(element, self._realm)
            check(lib.cove_set_insert(self._handle, v, ffi.NULL))

    def discard(self, value: _T) -> None:
        v, keep = cvalue(value, self._realm)
        check(lib.cove_set_erase(self._handle, v, ffi.NULL))

    def remove(self, value: _T) -> None:
        """Removes a value; KeyError when the set does not hold it."""
        v, keep = cvalue(value, self._realm)
        out = ffi.new("bool*")
        check(lib.cove_set_erase(self._handle, v, out))
        if not out[0]:
            raise KeyError(value)

    def pop(self) -> _T:
        if len(self) == 0:
            raise KeyError("pop from an empty set")
        value = self._get(0)
        self.discard(value)
        return typing.cast(_T, value)

    def clear(self) -> None:
        check(lib.cove_set_clear(self._handle))

    def _same_realm(self, other: Any) -> bool:
        return isinstance(other, Set) and other._realm is self._realm

    def _values_of(self, other: Iterable[Any]) -> _PyList[Any]:
        if isinstance(other, (str, bytes, Mapping)) or not isinstance(other, Iterable):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{self._info.label}: set operations take a set or an iterable of elements, got {type(other).__name__}")
        return [self._prepare(v) for v in other]

    def union(self, other: Iterable[_T]) -> None:
        """Adds every element of ``other`` (in place, as Realm's ``union``)."""
        if self._same_realm(other):
            check(lib.cove_set_union(self._handle, other._handle))  # type: ignore[attr-defined]
            return
        values = self._values_of(other)
        self._require_write()
        len(self)   # the owner still exists
        for value in values:
            self.add(value)

    def intersect(self, other: Iterable[_T]) -> None:
        """Keeps only the elements ``other`` holds too."""
        if self._same_realm(other):
            check(lib.cove_set_intersect(self._handle, other._handle))  # type: ignore[attr-defined]
            return
        keys = {compare_key(v) for v in self._values_of(other)}
        self._require_write()
        for value in list(self):
            if compare_key(value) not in keys:
                self.discard(value)

    def minus(self, other: Iterable[_T]) -> None:
        """Removes every element of ``other``."""
        if self._same_realm(other):
            check(lib.cove_set_minus(self._handle, other._handle))  # type: ignore[attr-defined]
            return
        values = self._values_of(other)
        self._require_write()
        len(self)
        for value in values:
            if value in self:
                self.discard(value)

    def assign(self, other: Iterable[_T]) -> None:
        """Makes the set hold exactly the elements of ``other`` (Realm's ``setSet``)."""
        self._assign(other, False)

    def _assign(self, other: Any, update: bool) -> None:
        if self._same_realm(other):
            check(lib.cove_set_assign(self._handle, other._handle))
            return
        if isinstance(other, (str, bytes, Mapping)) or not isinstance(other, Iterable):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{self._info.label} takes an iterable of elements, got {type(other).__name__}")
        values = [self._prepare(v, update) for v in other]
        check(lib.cove_set_clear(self._handle))
        for value in values:
            self.add(value)

    def is_subset(self, other: Iterable[Any]) -> bool:
        """Whether every element of this set is in ``other``."""
        if self._same_realm(other):
            out = ffi.new("bool*")
            check(lib.cove_set_is_subset(self._handle, other._handle, out))  # type: ignore[attr-defined]
            return bool(out[0])
        keys = {compare_key(v) for v in self._values_of(other)}
        return all(compare_key(v) in keys for v in self)

    def intersects(self, other: Iterable[Any]) -> bool:
        """Whether the two share an element."""
        if self._same_realm(other):
            out = ffi.new("bool*")
            check(lib.cove_set_intersects(self._handle, other._handle, out))  # type: ignore[attr-defined]
            return bool(out[0])
        return any(v in self for v in self._values_of(other))

    def __ior__(self, other: Iterable[Any]) -> "Set[_T]":  # type: ignore[misc]
        self.union(other)
        return self

    def __iand__(self, other: Iterable[Any]) -> "Set[_T]":
        self.intersect(other)
        return self

    def __isub__(self, other: Iterable[Any]) -> "Set[_T]":
        self.minus(other)
        return self

    def __eq__(self, other: object) -> bool:
        if self._same_realm(other):
            out = ffi.new("bool*")
            try:
                check(lib.cove_set_equals(self._handle, other._handle, out))  # type: ignore[attr-defined]
            except WrongTypeError:
                return False   # sets of different element types
            return bool(out[0])
        if isinstance(other, typing.AbstractSet):
            return len(self) == len(other) and self.is_subset(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    # -- aggregates ----------------------------------------------------------------------------

    def _of_objects(self, what: str, prop: Optional[str]) -> Optional["Results[Any]"]:
        """The set's objects as results to aggregate `prop` of, or None for a set of values
        (aggregated in place); InvalidArgumentError when `prop` is missing for objects or given
        for values."""
        if self._info.target is None:
            if prop is not None:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"{what} of {self._info.label}: a set of values takes no property name, got {prop!r}")
            return None
        if prop is None:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT,
                f"{what} of {self._info.label}: a set of {self._info.target} objects needs a property name, as in {what}(\"age\")")
        return self.as_results()

    def _aggregate(self, what: str, fn: Any, prop: Optional[str]) -> Any:
        objects = self._of_objects(what, prop)
        if objects is not None:
            return getattr(objects, what)(prop)
        out = ffi.new("cove_value_t*")
        found = ffi.new("bool*")
        check(fn(self._handle, out, found))
        return self._read(out[0]) if found[0] else None

    def min(self, prop: Optional[str] = None) -> Any:
        """The smallest number or date (nulls skipped), or None for an empty set. For a set of
        objects, of the numeric or date property ``prop`` of its objects (a key path, as
        ``Results.min`` takes); a set of values takes none."""
        return self._aggregate("min", lib.cove_set_min, prop)

    def max(self, prop: Optional[str] = None) -> Any:
        """The greatest number or date, or None for an empty set; ``prop`` as for ``min``."""
        return self._aggregate("max", lib.cove_set_max, prop)

    def sum(self, prop: Optional[str] = None) -> Any:
        """The sum of the numbers (zero of the element type for an empty set); ``prop`` as for
        ``min``, a numeric property."""
        objects = self._of_objects("sum", prop)
        if objects is not None:
            return objects.sum(prop)
        out = ffi.new("cove_value_t*")
        check(lib.cove_set_sum(self._handle, out))
        return self._read(out[0])

    def average(self, prop: Optional[str] = None) -> Any:
        """The mean of the numbers (a float, or a Decimal for decimal128), or None when empty;
        ``prop`` as for ``min``, a numeric property."""
        return self._aggregate("average", lib.cove_set_average, prop)

    def as_results(self) -> "Results[_T]":
        """The elements as live ``cove.Results``, in the set's order: objects for a set of
        objects, values otherwise (``self`` names the element in their queries)."""
        out = ffi.new("cove_results_t**")
        check(lib.cove_set_as_results(self._handle, out))
        return Results._make(self._realm, out[0], self._info.target, self._info.label)

    def freeze(self) -> "Set[_T]":
        """An immutable snapshot of the set at the realm's current version."""
        if self.is_frozen:
            return self
        frozen, owner = self._frozen_owner()
        if owner is None:
            raise InvalidatedError(Status.INVALIDATED, f"the owner of {self._info.label} was deleted")
        result: Set[_T] = owner._get(self._info.name)
        return result


class _MapItems(typing.ItemsView[str, _V]):
    _mapping: "Map[_V]"

    def __iter__(self) -> Iterator[Tuple[str, _V]]:
        return self._mapping._entries()


class _MapValues(typing.ValuesView[_V]):
    _mapping: "Map[_V]"

    def __iter__(self) -> Iterator[_V]:
        return self._mapping._entries(MAP_VALUES)


class Map(_Collection, typing.MutableMapping[str, _V]):
    """A map property (``"double{}"``): a live ``MutableMapping`` with string keys in the order
    of their UTF-8 bytes. A missing key raises KeyError; keys may not contain '.' or start with
    '$' (InvalidArgumentError)."""

    __slots__ = ()

    _OBSERVE = "cove_map_observe"

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        check(lib.cove_map_size(self._handle, out))
        return int(out[0])

    def _key(self, key: Any) -> bytes:
        if not isinstance(key, str):
            raise WrongTypeError(Status.WRONG_TYPE, f"{self._info.label} has string keys, got {type(key).__name__}")
        data = key.encode("utf-8", "surrogatepass")
        if b"\0" in data:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"key {key!r} of {self._info.label} holds a NUL character")
        return data

    def _lookup(self, key: Any) -> Tuple[bool, Any]:
        if not isinstance(key, str):
            return False, None
        data = self._key(key)
        # In C (_speedups.c); MISS for what the general path reads, or raises.
        value = map_value(self._addr, data, self._realm)
        if value is not MISS:
            return (False, None) if value is MISSING else (True, value)
        out = ffi.new("cove_value_t*")
        found = ffi.new("bool*")
        check(lib.cove_map_get(self._handle, data, out, found))
        if not found[0]:
            return False, None
        return True, self._read(out[0])

    def __getitem__(self, key: str) -> _V:
        found, value = self._lookup(key)
        if not found:
            raise KeyError(key)
        if type(value) is list or type(value) is dict:
            # A value of mixed values holding a collection: a live view of it.
            def read() -> Any:
                present, current = self._lookup(key)
                return current if present else None

            def store(v: Any) -> None:
                self[key] = v
            value = wrap_nested(value, read, store, f"{self._label_repr()}[{key!r}]")
        result: _V = value
        return result

    def __contains__(self, key: object) -> bool:
        return self._lookup(key)[0]

    def _entry(self, i: int) -> Tuple[str, Any]:
        # In C (_speedups.c); MISS for what the general path reads, or raises.
        entry = map_entry(self._addr, i, self._realm)
        if entry is not MISS:
            return entry   # type: ignore[no-any-return]
        k = ffi.new("cove_string_t*")
        out = ffi.new("cove_value_t*")
        check(lib.cove_map_get_at(self._handle, i, k, out))
        key = bytes(ffi.buffer(k.data, k.size)).decode("utf-8")
        return key, self._read(out[0])

    def _get(self, i: int) -> Tuple[str, Any]:
        return self._entry(i)

    def _entries(self, walk: int = MAP_ENTRIES) -> Iterator[Any]:
        # In C, as List's: the entries, or their keys or values.
        entries: Iterator[Any] = iterate_elements(walk, self._addr, self, self._realm, self._element_or_done)
        return entries

    def __iter__(self) -> Iterator[str]:
        return self._entries(MAP_KEYS)

    def items(self) -> "_MapItems[_V]":
        return _MapItems(self)

    def values(self) -> "_MapValues[_V]":
        return _MapValues(self)

    def __setitem__(self, key: str, value: Union[_V, Mapping[str, Any]]) -> None:
        # A str key and a plain value into a map of values in C (_speedups.c); MISS for anything
        # else and for a refused write (which changed nothing): the general path, which raises.
        if self._info.target is not None or map_store(self._addr, key, value) is MISS:
            self._set_prepared(self._key(key), self._prepare(value), False)

    def _set_prepared(self, key: bytes, element: Any, update: bool) -> None:
        if isinstance(element, Embedded):
            out = ffi.new("cove_object_t**")
            check(lib.cove_map_set_embedded(self._handle, key, out))
            self._fill_new(out[0], element.values, update)
        elif map_set(self._addr, key, element) is MISS:
            v, keep = cvalue(element, self._realm)
            check(lib.cove_map_set(self._handle, key, v))

    def __delitem__(self, key: str) -> None:
        if not isinstance(key, str):
            raise KeyError(key)
        out = ffi.new("bool*")
        check(lib.cove_map_erase(self._handle, self._key(key), out))
        if not out[0]:
            raise KeyError(key)

    def clear(self) -> None:
        self._require_write()
        for key in [k for k, _ in self._entries()]:
            check(lib.cove_map_erase(self._handle, self._key(key), ffi.NULL))

    def _assign(self, values: Any, update: bool) -> None:
        if not isinstance(values, Mapping):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{self._info.label} takes a mapping of string keys, got {type(values).__name__}")
        items = [(self._key(k), self._prepare(v, update)) for k, v in values.items()]
        self.clear()
        for key, element in items:
            self._set_prepared(key, element, update)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        try:
            return f"cove.Map({self._label_repr()}, {dict(self.items())!r})"
        except Exception:
            return f"cove.Map({self._label_repr()}, invalid)"

    def freeze(self) -> "Map[_V]":
        """An immutable snapshot of the map at the realm's current version."""
        if self.is_frozen:
            return self
        frozen, owner = self._frozen_owner()
        if owner is None:
            raise InvalidatedError(Status.INVALIDATED, f"the owner of {self._info.label} was deleted")
        result: Map[_V] = owner._get(self._info.name)
        return result
