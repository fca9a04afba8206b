"""Live objects: attribute reads and writes go through to the realm."""
from __future__ import annotations

from collections import abc
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _declare
from ._collections import Embedded, List as CoveList, Map as CoveMap, Set as CoveSet, prepare, register_object_class
from ._errors import InvalidArgumentError, NotFoundError, Status, WrongTypeError
from ._lib import check, ffi, lib
from ._notifications import ChangeStream, observe
from ._results import Results
from ._speedups import MISS, Accessor, ObjectBase, adopt, manage, set_value
from ._schema import BACKLINKS, LINK, LIST, MAP, SET, VALUE, PropertyInfo
from ._nested import NestedDict, NestedList, wrap as wrap_nested
from ._values import read_value, write_value

if TYPE_CHECKING:
    from ._notifications import NotificationToken, ObjectChange
    from ._realm import Realm


class Object(ObjectBase):
    """An object of a realm. Its properties are attributes: reading one reads the realm's
    current version, assigning one (inside a write) writes it. A list, set or map property reads
    as a live ``cove.List``, ``cove.Set`` or ``cove.Map``, a backlinks property
    (``@links(Class.prop)``, ``cove.LinkingObjects``) as live ``cove.Results`` of the objects
    linking to this one, one per link (an object whose list holds this one twice is there
    twice); assigning a list, set or dict replaces its contents, and assigning a
    dict to a link to an embedded class creates the embedded object with those values.

    Subclass it to declare a class::

        class Dog(cove.Object):
            name: str
            age: int = cove.Property(indexed=True)
            owner: "Person | None"
            toys: cove.List["Toy"]
            tags: cove.Set[str]

    and open the realm with ``cove.open(path, schema=[Dog, Person, Toy])``: objects of the class
    then come back as ``Dog`` instances. Objects of classes not declared in Python come back as
    plain ``cove.Object`` (or ``cove.EmbeddedObject``) instances.

    Calling a declared class, ``Dog(name="Rex", age=3)``, makes an unmanaged object, as
    realm-swift's ``Dog(value:)``: it belongs to no realm, its attributes are plain Python
    values (a list, set or map property a Python list, set or dict; a link another object,
    unmanaged or not; backlinks an empty list), read and assigned without a write, and they are
    checked when it is added. ``realm.add(dog)`` inside a write creates it (and the unmanaged
    objects it links to), and ``dog`` is then the realm's object: its attributes read and write
    the realm. A property not given holds its default, None when optional, an empty collection;
    a required one without a default has no value until it is assigned (reading it raises
    NotFoundError, an AttributeError, and adding the object InvalidArgumentError). An unmanaged
    object equals and hashes as itself only (its hash changes when it is added).
    """

    __cove_internal__ = ("_realm", "_handle", "_class_name", "_addr", "_cove_values")

    _realm: "Realm"
    _handle: Any
    _class_name: str

    def __init__(self, **values: Any) -> None:
        info, defaults = _declare.shape_of(type(self))
        for name in values:
            p = info.properties.get(name)
            if p is None:
                raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument '{name}': "
                                f"class '{info.name}' has no property of that name")
            if p.kind == BACKLINKS:
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"{p.label} is backlinks: it is computed, not assigned")
        store: Dict[str, Any] = {}
        for name, p in info.properties.items():
            if name in values:
                store[name] = _held(p, values[name])
            elif name in defaults:
                store[name] = _held(p, defaults[name])
            elif p.kind in _EMPTY:
                store[name] = _EMPTY[p.kind]()
            elif p.optional and p.kind != BACKLINKS:
                store[name] = None
        # The values of an unmanaged object; gone once it is added (is_unmanaged()).
        self.__dict__["_cove_values"] = store

    def __init_subclass__(cls, *, class_name: Optional[str] = None, _base: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not _base:
            _declare.prepare_class(cls, class_name)

    @classmethod
    def _wrap(cls, realm: "Realm", handle: Any, class_name: str) -> "Object":
        # ObjectBase (_speedups.c) keeps the handle, which it releases when the object goes.
        return adopt(cls, realm, int(ffi.cast("uintptr_t", handle)), class_name)  # type: ignore[no-any-return]

    # -- properties ----------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # ObjectBase keeps the handle as an address (_addr); its cffi pointer, which the calls
        # through cffi take, is made the first time it is asked for, then kept.
        if name == "_handle":
            try:
                address = self._addr
            except AttributeError:
                raise _unmanaged_error(self, "belongs to no realm yet") from None
            handle = self.__dict__["_handle"] = ffi.cast("cove_object_t*", address)
            return handle
        if name.startswith("__") or name in Object.__cove_internal__:
            raise AttributeError(name)
        return self._get(name)

    # `obj.name = value` is ObjectBase's (_speedups.c): a value of a plain type goes to the
    # library from C, an underscore name is an ordinary attribute, and everything else, or a
    # write the library refused (which changed nothing), comes here.
    def _setattr(self, name: str, value: Any) -> None:
        if "_cove_values" in self.__dict__:
            self._store(name, value)
            return
        self._set_general(name, value, False)

    def __getitem__(self, name: str) -> Any:
        return self._get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._set(name, value)

    def _get(self, name: str, encoded: Optional[bytes] = None) -> Any:
        try:
            realm = self._realm
        except AttributeError:
            # An object without a realm: an unmanaged one (its handle and realm come with add).
            return self._stored(name)
        info = realm._property_info(self._class_name, name)
        kind = VALUE if info is None else info.kind
        if kind == VALUE or kind == LINK:
            # A live realm's out-parameter is allocated once (one thread at a time uses it).
            out = realm._scratch_value or ffi.new("cove_value_t*")
            status = lib.cove_object_get(self._handle, encoded or name.encode(), out)
            if status:
                check(status)
            # read_value takes what it needs from the out-parameter before any other call
            # (a link's resolution) could reuse it.
            value = read_value(ffi, out[0], realm._resolve_link)
            if type(value) is list or type(value) is dict:
                # A mixed value holding a collection: a live view of it.
                return wrap_nested(value, lambda: self._read_raw(name), lambda v: self._write(name, v),
                                   f"{self._class_name}.{name}")
            return value
        assert info is not None
        if kind == LIST:
            handle = ffi.new("cove_list_t**")
            check(lib.cove_object_get_list(self._handle, name.encode(), handle))
            return CoveList._make(self._realm, self, info, handle[0])
        if kind == SET:
            handle = ffi.new("cove_set_t**")
            check(lib.cove_object_get_set(self._handle, name.encode(), handle))
            return CoveSet._make(self._realm, self, info, handle[0])
        if kind == MAP:
            handle = ffi.new("cove_map_t**")
            check(lib.cove_object_get_map(self._handle, name.encode(), handle))
            return CoveMap._make(self._realm, self, info, handle[0])
        assert kind == BACKLINKS
        results = ffi.new("cove_results_t**")
        check(lib.cove_object_get_backlinks(self._handle, name.encode(), results))
        origin = info.origin or (str(info.target), "")
        label = f"{origin[0]} linking through '{origin[1]}' ({info.label})"
        return Results._make(self._realm, results[0], origin[0], label)

    def _read_raw(self, name: str) -> Any:
        """The value of a property of one value as plain Python (nested collections as lists
        and dicts)."""
        out = ffi.new("cove_value_t*")
        check(lib.cove_object_get(self._handle, name.encode(), out))
        return read_value(ffi, out[0], self._realm._resolve_link)

    def _set(self, name: str, value: Any, update: bool = False) -> None:
        # A value of a plain type goes to the library from C (_speedups.c) before the property
        # is looked up. MISS for any other value, and when the library refused, which changes
        # nothing: for a property that does not take the value as it is (a collection,
        # backlinks, an embedded object) the general path does what the property wants, and
        # for the others it raises the library's error.
        try:
            address = self._addr
        except AttributeError:
            self._store(name, value)
            return
        if set_value(address, name.encode(), value) is MISS:
            self._set_general(name, value, update)

    def _set_general(self, name: str, value: Any, update: bool) -> None:
        info = self._realm._property_info(self._class_name, name)
        kind = VALUE if info is None else info.kind
        if kind == VALUE:
            self._write(name, value)
            return
        assert info is not None
        if kind == LINK:
            element = prepare(self._realm, info, value, update)
            if isinstance(element, Embedded):
                out = ffi.new("cove_object_t**")
                check(lib.cove_object_create_embedded(self._handle, name.encode(), out))
                self._realm._wrap(out[0], str(info.target))._fill(element.values, update)
            else:
                self._write(name, element)
            return
        if kind == BACKLINKS:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"{info.label} is backlinks: it is computed, not assigned")
        self._get(name)._assign(value, update)

    def _write(self, name: str, value: Any) -> None:
        v = ffi.new("cove_value_t*")
        keep: List[Any] = []
        write_value(ffi, v, value, keep, self._realm)
        check(lib.cove_object_set(self._handle, name.encode(), v))

    def _fill(self, values: Mapping[str, Any], update: bool) -> None:
        for name, value in values.items():
            self._set(name, value, update)

    # -- unmanaged objects -----------------------------------------------------------------------

    def _stored(self, name: str) -> Any:
        """The value of `name` of an unmanaged object."""
        store = self.__dict__.get("_cove_values")
        if store is None:
            raise AttributeError(name)
        if name in store:
            return store[name]
        info, _ = _declare.shape_of(type(self))
        p = info.properties.get(name)
        if p is None:
            raise NotFoundError(Status.NOT_FOUND, f"no property '{name}' in class '{info.name}'")
        if p.kind == BACKLINKS:
            return []     # nothing links to an object that is in no realm
        raise NotFoundError(Status.NOT_FOUND, f"property '{info.name}.{name}' of the unmanaged object has no value yet")

    def _store(self, name: str, value: Any) -> None:
        """`name` = `value` on an unmanaged object: kept as it is (collections copied into a
        list, set or dict), to be checked when the object is added."""
        info, _ = _declare.shape_of(type(self))
        p = info.properties.get(name)
        if p is None:
            raise NotFoundError(Status.NOT_FOUND, f"no property '{name}' in class '{info.name}'")
        if p.kind == BACKLINKS:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{p.label} is backlinks: it is computed, not assigned")
        self.__dict__["_cove_values"][name] = _held(p, value)

    def _become(self, managed: "Object") -> None:
        """Makes this unmanaged object `managed`'s object: it takes a handle of its own to the
        same object of the realm, and its values are dropped (the realm's are read from now on)."""
        handle = lib.cove_retain(managed._handle)
        manage(self, managed._realm, int(ffi.cast("uintptr_t", handle)), managed._class_name)
        del self.__dict__["_cove_values"]

    def _cove_link(self) -> Tuple[int, int]:
        """The (class key, object key) a link to the object holds; InvalidatedError once it
        was deleted (a link to nothing is never made), ClosedError once its realm closed."""
        out = ffi.new("cove_value_t*")
        check(lib.cove_object_to_link(self._handle, out))
        return int(out.u.link.class_key), int(out.u.link.object_key)

    def _identity(self) -> Tuple[int, int]:
        """The object's keys for equality and hashing, kept from the first time they are read:
        an object hashed while it existed keeps its hash after it is deleted."""
        key = self.__dict__.get("_cove_identity")
        if key is None:
            key = self.__dict__["_cove_identity"] = self._cove_link()
        return key

    # -- state ---------------------------------------------------------------------------------

    @property
    def is_managed(self) -> bool:
        """Whether the object belongs to a realm: False for an unmanaged object (made by calling
        its class) until ``realm.add()`` adds it."""
        return "_cove_values" not in self.__dict__

    @property
    def is_valid(self) -> bool:
        """False once the object was deleted (or its realm closed); True for an unmanaged one."""
        if "_cove_values" in self.__dict__:
            return True
        if self._realm.is_closed:
            # What the library answers for a closed realm's object, said here: an object read
            # by keys would make its handle first, which a closed realm refuses.
            return False
        out = ffi.new("bool*")
        check(lib.cove_object_is_valid(self._handle, out))
        return bool(out[0])

    @property
    def class_name(self) -> str:
        if "_cove_values" in self.__dict__:
            return str(type(self).__cove_class_name__)  # type: ignore[attr-defined]
        return self._class_name

    @property
    def realm(self) -> Optional["Realm"]:
        """The object's realm; None for an unmanaged object (as realm-swift's ``realm``)."""
        if "_cove_values" in self.__dict__:
            return None
        return self._realm

    @property
    def is_embedded(self) -> bool:
        if "_cove_values" in self.__dict__:
            return bool(getattr(type(self), "__cove_embedded__", False))
        return self._realm._class_info(self._class_name).embedded

    @property
    def is_frozen(self) -> bool:
        """Whether the object keeps one version (from ``freeze()`` or a frozen realm)."""
        if "_cove_values" in self.__dict__:
            return False
        return self._realm.is_frozen

    def freeze(self) -> "Object":
        """The object in a frozen copy of its realm at the realm's current version: immutable,
        readable from any thread, kept while it lives. A frozen object returns itself. Raises
        TransactionError inside a write, InvalidatedError for a deleted object."""
        if self.is_frozen:
            return self
        out = ffi.new("cove_object_t**")
        check(lib.cove_object_freeze(self._handle, out))
        try:
            frozen = self._realm.freeze()
        except BaseException:
            lib.cove_release(out[0])
            raise
        return frozen._wrap(out[0], self._class_name)

    def thaw(self, realm: Optional["Realm"] = None) -> Optional["Object"]:
        """The same object in a live realm of the same file at its current version: ``realm``,
        by default the one it was frozen from. None when the object was deleted since. A live
        object returns itself."""
        if not self.is_frozen:
            return self
        live = self._realm._thaw_target(realm, None, f"a frozen {self._class_name}", "obj.thaw(realm)")
        out = ffi.new("cove_object_t**")
        check(lib.cove_object_thaw(self._handle, live._h(), out))
        if out[0] == ffi.NULL:
            return None
        return live._wrap(out[0], self._class_name)

    # -- notifications -------------------------------------------------------------------------

    def observe(self, callback: Callable[["ObjectChange"], Any],
                key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` with a ``cove.ObjectChange`` at the ``realm.deliver()``,
        ``refresh()`` or write after each commit (of any realm of the file, in any process) that
        wrote properties of the object (an equal value too) or, as ``key_paths`` say, of objects
        it links to: ``properties``, each with ``name``, ``old_value`` and ``new_value``; or
        ``deleted``, once, after which no call follows. There is no initial call.

        ``key_paths``: None observes every property and the linked objects (four levels deep;
        a change along a link is reported as a change of the link property); a list such as
        ``["name", "owner.name"]`` only those; ``[]`` only the deletion. Returns a
        ``cove.NotificationToken``: keep it while the observation should go on. Raises
        FrozenError for a frozen object, TransactionError inside a write, InvalidatedError for a
        deleted object."""
        return observe("cove_object_observe", self._handle, self._realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[ObjectChange]":
        """``async for change in obj.changes():`` the changes ``observe()`` would report, as an
        asyncio iterator that waits on the realm's notification descriptor and refreshes the
        realm when it is readable. It ends after the deletion or when the realm closes."""
        return ChangeStream(self._realm, lambda append: self.observe(append, key_paths), initial=False)

    def to_dict(self) -> Dict[str, Any]:
        """The object's properties as plain Python values: lists, sets and dicts for its
        collections, dicts for its embedded objects, objects for its links (backlinks are left
        out)."""
        return self._snapshot()

    def _snapshot(self) -> Dict[str, Any]:
        store = self.__dict__.get("_cove_values")
        if store is not None:
            return {name: plain(value) for name, value in store.items()}
        info = self._realm._class_info(self._class_name)
        return {name: plain(self._get(name)) for name, p in info.properties.items() if p.kind != BACKLINKS}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Object):
            return NotImplemented
        try:
            return self._identity() == other._identity()
        except Exception:
            return self is other

    def __hash__(self) -> int:
        # An unmanaged object hashes as itself (and so differently once it is added).
        if "_cove_values" in self.__dict__:
            return object.__hash__(self)
        return hash(self._identity())

    def __repr__(self) -> str:
        kind = type(self)
        if "_cove_values" in self.__dict__:
            return f"<{kind.__qualname__} (unmanaged)>"
        if kind in (Object, EmbeddedObject):
            prefix = f"cove.{kind.__name__} {self._class_name}"
        else:
            prefix = kind.__qualname__
        if not self.is_valid:
            return f"<{prefix} (deleted)>"
        return f"<{prefix} {self._identity()[1]}>"


register_object_class(Object)


class EmbeddedObject(Object, _base=True):
    """An object of an embedded class: it lives inside its owner (a link, list or map property)
    and is deleted with it. Subclass it to declare an embedded class; create one by assigning a
    dict (``dog.home = {"city": "Oslo"}``, ``dog.toys.append({"brand": "A"})``)."""

    __cove_embedded__ = True


class _PropertyAccessor(Accessor):
    """``obj.name`` for a property of a plain Object: installed on Object once some realm's
    schema has a property of that name, so that reading it is a descriptor call rather than a
    failed attribute lookup that falls through to ``__getattr__`` (which costs more than the
    read itself). It reads what ``__getattr__`` would: ``obj._get(name)``, with values of the
    plain types (int, float, bool, str, bytes, None) read in C (``_speedups.Accessor``). A
    declared class's own fields and any attribute Object already has come first."""

    __slots__ = ()


def install_accessors(names: Any) -> None:
    """Adds a _PropertyAccessor to Object for each of `names` that Object does not define yet
    (names starting with an underscore stay with ``__getattr__``)."""
    for name in names:
        if name.startswith("_") or not name.isidentifier() or hasattr(Object, name):
            continue
        setattr(Object, name, _PropertyAccessor(name))


def plain(value: Any) -> Any:
    """A property value as plain Python: collections copied, embedded objects as dicts."""
    if isinstance(value, (CoveList, list)):
        return [plain(v) for v in value]
    if isinstance(value, (CoveSet, set)):
        return set(value)
    if isinstance(value, (CoveMap, dict)):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (NestedList, NestedDict)):
        return value._current()
    if isinstance(value, Object) and value.is_embedded:
        return value._snapshot()
    return value


def is_unmanaged(value: Any) -> bool:
    """Whether `value` is an unmanaged object (made by calling a declared class, not added)."""
    return isinstance(value, Object) and "_cove_values" in value.__dict__


def _unmanaged_error(obj: Object, what: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        Status.INVALID_ARGUMENT, f"the {type(obj).__qualname__} object is unmanaged: it {what}; add it with realm.add() inside a write first")


# The value an unmanaged object's collection property holds when it is not given one.
_EMPTY: Dict[str, Callable[..., Any]] = {LIST: list, SET: set, MAP: dict}


def _held(p: PropertyInfo, value: Any) -> Any:
    """What an unmanaged object keeps for `value` of property `p`: a collection's elements
    copied into a list, set or dict, anything else as it is."""
    make = _EMPTY.get(p.kind)
    if make is None:
        return value
    try:
        return make(value.items() if p.kind == MAP and isinstance(value, abc.Mapping) else value)
    except (TypeError, ValueError):
        what = "a mapping of strings to its values" if p.kind == MAP else "an iterable of its elements"
        raise WrongTypeError(Status.WRONG_TYPE, f"{p.label} takes {what}, got {type(value).__name__}") from None
