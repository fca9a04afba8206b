"""Projections: a class of names mapped onto key paths of one root object::

    class PersonView(cove.Projection, root="Person"):
        name = cove.projected("firstName")
        friend_names = cove.projected("friends.firstName")
        last_caps = cove.projected("lastName", transform=str.upper)

    view = PersonView(person)
    view.name, list(view.friend_names), view.last_caps, view.root

Reads go through to the root object as it is at each read; the library resolves the key paths
(cove_projection_new and its kin) and a transform runs in Python on what it reads. Observing
reports changes under the projected names.
"""
from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, Iterator, List, Optional, Sequence, Type, Union, overload

from ._declare import class_name_of
from ._errors import InvalidArgumentError, OutOfRangeError, Status, WrongTypeError
from ._lib import check, ffi, lib, owned
from ._notifications import ChangeStream, observe
from ._object import Object
from ._results import Results
from ._schema import BACKLINKS, LINK, LIST, MAP, SET, VALUE
from ._values import read_value

if TYPE_CHECKING:
    from ._notifications import NotificationToken, ObjectChange
    from ._realm import Realm

AVAILABLE = hasattr(lib, "cove_projection_new")
"""Whether the loaded libcove has projections."""

# cove_projection_get's status for a projected name whose key path reaches a collection.
_WRONG_TYPE = Status.WRONG_TYPE

# What a projected key path reaches from the root.
_ONE = "one"            # one value (through to-one links): view.name is the value
_LIST = "list"          # a list or set property of the root itself: live cove.Results
_MANY = "many"          # values through a collection ("friends.firstName"): cove.ProjectedValues


class ProjectedProperty:
    """A projected attribute of a ``cove.Projection`` class (what ``cove.projected`` returns):
    the root's ``key_path`` it reads, and the ``transform`` applied to each value read."""

    __slots__ = ("key_path", "transform", "name")

    def __init__(self, key_path: str, transform: Optional[Callable[[Any], Any]] = None) -> None:
        self.key_path = key_path
        self.transform = transform
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, view: None, owner: Optional[type] = None) -> "ProjectedProperty": ...
    @overload
    def __get__(self, view: "Projection", owner: Optional[type] = None) -> Any: ...

    def __get__(self, view: Optional["Projection"], owner: Optional[type] = None) -> Any:
        if view is None:
            return self
        return view._read(self)

    def __set__(self, view: "Projection", value: Any) -> None:
        view._write(self, value)

    def _apply(self, value: Any) -> Any:
        """The value as the projection shows it: transformed, except None."""
        if self.transform is None or value is None:
            return value
        return self.transform(value)

    def __repr__(self) -> str:
        extra = "" if self.transform is None else f", transform={getattr(self.transform, '__qualname__', self.transform)!r}"
        return f"cove.projected({self.key_path!r}{extra})"


def projected(key_path: str, *, transform: Optional[Callable[[Any], Any]] = None) -> Any:
    """A projected attribute: ``name = cove.projected("firstName")`` reads the root's
    ``firstName`` as ``view.name``. ``key_path`` is a property of the root's class or a dotted
    path through links, lists and sets (``"dog.name"``, ``"friends.firstName"``); a path that
    reaches many values reads as a live read-only sequence. ``transform`` is applied to each
    value read (and to the old and new values observed), never to None; a transformed attribute
    cannot be assigned. Typed as Any so that annotations of projection classes type-check."""
    if not isinstance(key_path, str):
        raise WrongTypeError(Status.WRONG_TYPE, f"projected() takes a key path, got {type(key_path).__name__}")
    if not key_path:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, "projected() takes a key path, got ''")
    if transform is not None and not callable(transform):
        raise WrongTypeError(
            Status.WRONG_TYPE, f"projected(transform=...) is a function of one value, got {type(transform).__name__}")
    return ProjectedProperty(key_path, transform)


class Projection:
    """A view of one root object under names of the class's choosing. Subclass it with the
    root's class (a name or a declared class) and ``cove.projected`` attributes::

        class PersonView(cove.Projection, root="Person"):
            name = cove.projected("firstName")
            friend_names = cove.projected("friends.firstName")     # a live sequence of str
            last_caps = cove.projected("lastName", transform=str.upper)

    ``PersonView(person)`` projects an object of the root class. Reading an attribute reads
    through to the object now: one value (a path through to-one links; None when a link on the
    way is None), live ``cove.Results`` for a list or set property of the root itself, or a
    ``cove.ProjectedValues`` (a live read-only ``Sequence`` that reads the values anew at each
    access) for a path through a list or set. Assigning an attribute that maps onto one plain
    property or to-one link of the root, untransformed, writes it (inside a write); any other
    raises InvalidArgumentError. ``observe(callback, key_paths=None)`` reports changes under
    the projected names. Subclasses inherit their bases' attributes and root.
    """

    __slots__ = ("_root", "_handle", "_reach", "__weakref__")

    __cove_root__: ClassVar[Optional[str]] = None
    __cove_fields__: ClassVar[Dict[str, ProjectedProperty]] = {}

    _root: Object
    _handle: Any
    _reach: Dict[str, str]

    def __init_subclass__(cls, *, root: Union[str, Type[Object], None] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if root is not None:
            cls.__cove_root__ = class_name_of(root)
        fields: Dict[str, ProjectedProperty] = {}
        for base in reversed(cls.__mro__):
            for name, value in vars(base).items():
                if isinstance(value, ProjectedProperty):
                    fields[name] = value
                elif name in fields:
                    del fields[name]            # a subclass replaced it with something else
        cls.__cove_fields__ = fields

    def __init__(self, root: Object) -> None:
        cls = type(self)
        expected = cls.__cove_root__
        if expected is None:
            raise TypeError(f"{cls.__qualname__} declares no root class: class {cls.__name__}(cove.Projection, root='Class')")
        if not isinstance(root, Object):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{cls.__qualname__} projects a {expected} object, got {type(root).__name__}")
        if root.class_name != expected:
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{cls.__qualname__} projects a {expected} object, got an object of {root.class_name}")
        if not AVAILABLE:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, "this libcove has no projections (cove_projection_new)")
        fields = cls.__cove_fields__
        names = [ffi.new("char[]", name.encode("utf-8", "surrogatepass")) for name in fields]
        paths = [ffi.new("char[]", f.key_path.encode("utf-8", "surrogatepass")) for f in fields.values()]
        c_names = ffi.new("const char*[]", names) if names else ffi.NULL
        c_paths = ffi.new("const char*[]", paths) if paths else ffi.NULL
        out = ffi.new("cove_projection_t**")
        check(lib.cove_projection_new(root._handle, c_names, c_paths, len(names), out))
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_handle", owned(out[0]))
        object.__setattr__(self, "_reach", {name: _reach(root._realm, expected, f.key_path) for name, f in fields.items()})

    # -- reading -------------------------------------------------------------------------------

    @property
    def root(self) -> Object:
        """The projected object."""
        return self._root

    @property
    def realm(self) -> "Realm":
        return self._root._realm

    @classmethod
    def fields(cls) -> Dict[str, ProjectedProperty]:
        """The projected attributes by name, in declaration order (a base's first)."""
        return dict(cls.__cove_fields__)

    def _read(self, field: ProjectedProperty) -> Any:
        reach = self._reach[field.name]
        name = field.name.encode("utf-8", "surrogatepass")
        if reach == _ONE:
            out = ffi.new("cove_value_t*")
            status = lib.cove_projection_get(self._handle, name, out)
            if status != _WRONG_TYPE:
                check(status)
                return field._apply(read_value(ffi, out[0], self.realm._resolve_link))
            reach = self._reach[field.name] = _MANY    # the schema said one value; the library knows better
        if reach == _LIST and field.transform is None:
            results = ffi.new("cove_results_t**")
            check(lib.cove_projection_get_list(self._handle, name, results))
            info = self.realm._property_info(self._root.class_name, field.key_path)
            target = None if info is None else info.target
            label = f"{type(self).__qualname__}.{field.name} ({self._root.class_name}.{field.key_path})"
            return Results._make(self.realm, results[0], target, label)
        return ProjectedValues._make(self, field)

    def _values(self, field: ProjectedProperty) -> List[Any]:
        """The values a projected name reaches now, transformed."""
        name = field.name.encode("utf-8", "surrogatepass")
        n = ffi.new("size_t*")
        check(lib.cove_projection_get_values(self._handle, name, ffi.NULL, 0, n))
        while True:
            capacity = int(n[0])
            if not capacity:
                return []
            values = ffi.new("cove_value_t[]", capacity)
            check(lib.cove_projection_get_values(self._handle, name, values, capacity, n))
            if n[0] <= capacity:
                resolve = self.realm._resolve_link
                return [field._apply(read_value(ffi, values[i], resolve)) for i in range(int(n[0]))]

    def to_dict(self) -> Dict[str, Any]:
        """Every projected attribute's value now, collections as lists."""
        out: Dict[str, Any] = {}
        for name, field in type(self).__cove_fields__.items():
            value = self._read(field)
            out[name] = list(value) if self._reach[name] != _ONE else value
        return out

    # -- writing -------------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or hasattr(type(self), name):
            object.__setattr__(self, name, value)    # a projected attribute writes through
            return
        raise AttributeError(f"{type(self).__qualname__} has no projected attribute '{name}'")

    def _write(self, field: ProjectedProperty, value: Any) -> None:
        label = f"projected attribute '{field.name}' ({self._root.class_name}.{field.key_path})"
        if field.transform is not None:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{label} has a transform: it is read-only")
        info = None if "." in field.key_path else self.realm._property_info(self._root.class_name, field.key_path)
        if info is None or info.kind not in (VALUE, LINK):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"{label}: only a projected plain property or to-one link of the root can be assigned")
        self._root._set(field.key_path, value)

    # -- notifications -------------------------------------------------------------------------

    def observe(self, callback: Callable[["ObjectChange"], Any],
                key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` with a ``cove.ObjectChange`` after each commit (of any realm
        of the file, in any process) that changed what a projected attribute reads, through its
        whole key path: ``properties`` are the projected names that changed, in declaration
        order, with ``old_value`` and ``new_value`` transformed as reads are (a name that reaches
        many values has None for both: read it from the view). Names whose paths start with the
        same property of the root are reported together. The root's deletion is reported once
        (``deleted``), and no call follows. There is no initial call.

        ``key_paths``: the projected names to observe (``["name"]``); None every name, ``[]``
        only the deletion. An exception a transform raises is raised by the ``deliver()`` or
        ``refresh()`` that ran the callback. Raises InvalidArgumentError for a name the class
        does not project, FrozenError for a frozen root, TransactionError inside a write,
        InvalidatedError for a deleted root."""
        if not callable(callback):
            raise WrongTypeError(
                Status.WRONG_TYPE, f"observe() takes a function of one change, got {type(callback).__name__}")
        fields = type(self).__cove_fields__
        reach = self._reach

        def deliver(change: "ObjectChange") -> None:
            for p in change.properties:
                field = fields.get(p.name)
                if field is not None and field.transform is not None and reach.get(p.name) == _ONE:
                    p.old_value = field._apply(p.old_value)
                    p.new_value = field._apply(p.new_value)
            callback(change)

        return observe("cove_projection_observe", self._handle, self.realm, self, deliver, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[ObjectChange]":
        """``async for change in view.changes():`` the changes ``observe()`` would report, as an
        asyncio iterator on the realm's notification descriptor. It ends after the root's
        deletion or when the realm closes."""
        return ChangeStream(self.realm, lambda append: self.observe(append, key_paths), initial=False)

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} of {self._root!r}>"


class ProjectedValues(typing.Sequence[Any]):
    """The values a projected attribute reaches through a list or set (``friends.firstName``):
    a live, read-only ``Sequence`` that reads them anew at each access (``len``, an index, a
    slice, iteration over the values as they were when it began), transformed. ``list(values)``
    copies them. Equal to a list or tuple of the same values."""

    __slots__ = ("_view", "_field")

    _view: Projection
    _field: ProjectedProperty

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("projected values come from a projection's attribute")

    @classmethod
    def _make(cls, view: Projection, field: ProjectedProperty) -> "ProjectedValues":
        self = object.__new__(cls)
        self._view = view
        self._field = field
        return self

    def __len__(self) -> int:
        n = ffi.new("size_t*")
        check(lib.cove_projection_get_values(self._view._handle, self._field.name.encode("utf-8", "surrogatepass"),
                                             ffi.NULL, 0, n))
        return int(n[0])

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> List[Any]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        values = self._view._values(self._field)
        if isinstance(index, slice):
            return values[index]
        try:
            return values[index]
        except IndexError:
            raise OutOfRangeError(Status.OUT_OF_RANGE, f"index {index} is out of range for {len(values)} values of "
                                                       f"'{self._field.name}'") from None
        except TypeError:
            raise WrongTypeError(Status.WRONG_TYPE, f"indices are ints or slices, got {type(index).__name__}") from None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._view._values(self._field))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, ProjectedValues)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<cove.ProjectedValues {self._field.name} {list(self)!r}>"


def _reach(realm: "Realm", class_name: str, key_path: str) -> str:
    """What a key path reaches from an object of `class_name`, as far as the schema says (the
    library has already checked that it names properties)."""
    steps = key_path.split(".")
    current: Optional[str] = class_name
    for i, step in enumerate(steps):
        if current is None:
            return _ONE
        info = realm._property_info(current, step)
        if info is None:
            return _ONE
        if info.kind in (LIST, SET, MAP, BACKLINKS):
            return _LIST if len(steps) == 1 and info.kind in (LIST, SET) else _MANY
        current = info.target
    return _ONE
