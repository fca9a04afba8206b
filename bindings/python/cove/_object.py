"""Live objects: attribute reads and writes go through to the realm."""
from __future__ import annotations

from collections import abc
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _declare
from ._collections import Embedded, List as CoveList, Map as CoveMap, Set as CoveSet
from ._errors import InvalidArgumentError, WrongTypeError
from ._lib import check, ffi, lib
from ._speedups import MISS, Accessor, ObjectBase, adopt, set_value
from ._schema import BACKLINKS, LINK, LIST, MAP, SET, VALUE, PropertyInfo
from ._values import read_value, write_value

if TYPE_CHECKING:
    from ._notifications import ChangeStream, NotificationToken, ObjectChange
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
    """

    __cove_internal__ = ("_realm", "_handle", "_class_name")

    _realm: "Realm"
    _handle: Any
    _class_name: str

    def __init__(self, **values: Any) -> None:
        raise TypeError("create objects with realm.create(cls, values)")

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
            handle = self.__dict__["_handle"] = ffi.cast("cove_object_t*", self._addr)
            return handle
        if name.startswith("__") or name in Object.__cove_internal__:
            raise AttributeError(name)
        return self._get(name)

    # `obj.name = value` is ObjectBase's (_speedups.c): a value of a plain type goes to the
    # library from C, an underscore name is an ordinary attribute, and everything else, or a
    # write the library refused (which changed nothing), comes here.
    def _setattr(self, name: str, value: Any) -> None:
        self._set_general(name, value, False)

    def __getitem__(self, name: str) -> Any:
        return self._get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._set(name, value)

    def _get(self, name: str, encoded: Optional[bytes] = None) -> Any:
        realm = self._realm
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
            return read_value(ffi, out[0], realm._resolve_link)
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
        from ._results import Results

        results = ffi.new("cove_results_t**")
        check(lib.cove_object_get_backlinks(self._handle, name.encode(), results))
        origin = info.origin or (str(info.target), "")
        label = f"{origin[0]} linking through '{origin[1]}' ({info.label})"
        return Results._make(self._realm, results[0], origin[0], label)

    def _set(self, name: str, value: Any, update: bool = False) -> None:
        # A value of a plain type goes to the library from C (_speedups.c) before the property
        # is looked up. MISS for any other value, and when the library refused, which changes
        # nothing: for a property that does not take the value as it is (a collection,
        # backlinks, an embedded object) the general path does what the property wants, and
        # for the others it raises the library's error.
        if set_value(self._addr, name.encode(), value) is MISS:
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
            raise InvalidArgumentError(1, f"{info.label} is backlinks: it is computed, not assigned")
        self._get(name)._assign(value, update)

    def _write(self, name: str, value: Any) -> None:
        v = ffi.new("cove_value_t*")
        keep: List[Any] = []
        write_value(ffi, v, value, keep, self._realm)
        check(lib.cove_object_set(self._handle, name.encode(), v))

    def _fill(self, values: Mapping[str, Any], update: bool) -> None:
        for name, value in values.items():
            self._set(name, value, update)

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
    def is_valid(self) -> bool:
        """False once the object was deleted (or its realm closed)."""
        out = ffi.new("bool*")
        check(lib.cove_object_is_valid(self._handle, out))
        return bool(out[0])

    @property
    def class_name(self) -> str:
        return self._class_name

    @property
    def realm(self) -> "Realm":
        return self._realm

    @property
    def is_embedded(self) -> bool:
        return self._realm._class_info(self._class_name).embedded

    @property
    def is_frozen(self) -> bool:
        """Whether the object keeps one version (from ``freeze()`` or a frozen realm)."""
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
        from ._notifications import observe

        return observe("cove_object_observe", self._handle, self._realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[ObjectChange]":
        """``async for change in obj.changes():`` the changes ``observe()`` would report, as an
        asyncio iterator that waits on the realm's notification descriptor and refreshes the
        realm when it is readable. It ends after the deletion or when the realm closes."""
        from ._notifications import ChangeStream

        return ChangeStream(self._realm, lambda append: self.observe(append, key_paths), initial=False)

    def to_dict(self) -> Dict[str, Any]:
        """The object's properties as plain Python values: lists, sets and dicts for its
        collections, dicts for its embedded objects, objects for its links (backlinks are left
        out)."""
        return self._snapshot()

    def _snapshot(self) -> Dict[str, Any]:
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
        return hash(self._identity())

    def __repr__(self) -> str:
        kind = type(self)
        if kind in (Object, EmbeddedObject):
            prefix = f"cove.{kind.__name__} {self._class_name}"
        else:
            prefix = kind.__qualname__
        if not self.is_valid:
            return f"<{prefix} (deleted)>"
        return f"<{prefix} {self._identity()[1]}>"


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
    from ._collections import List, Map, Set

    if isinstance(value, List):
        return [plain(v) for v in value]
    if isinstance(value, Set):
        return set(value)
    if isinstance(value, Map):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Object) and value._realm._class_info(value._class_name).embedded:
        return value._snapshot()
    return value


def prepare(realm: "Realm", info: PropertyInfo, value: Any, update: bool) -> Any:
    """An element or link value ready to write into `info`: for an embedded class the values
    of a new embedded object (from a dict, or copied from an embedded object), for a link a dict
    turned into a new object; anything else as it is (the library checks its type)."""
    if info.target is None:
        return value
    if not info.embedded:
        # collections.abc's Mapping: typing's answers isinstance() through two more calls.
        return realm._create_nested(info.target, value, update) if isinstance(value, abc.Mapping) else value
    if value is None and info.kind != LIST:
        return None
    if isinstance(value, abc.Mapping):
        return Embedded(dict(value))
    if isinstance(value, Object):
        if value._class_name != info.target:
            raise WrongTypeError(2, f"{info.label} holds {info.target} objects, got an object of {value._class_name}")
        return Embedded(value._snapshot())
    raise WrongTypeError(
        2, f"{info.label} holds embedded {info.target} objects: give a dict of their values, got {type(value).__name__}")
