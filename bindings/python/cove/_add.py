"""``realm.add(obj)``: an unmanaged object, and the unmanaged objects it links to, created in a
realm, each Python object then becoming the realm's object."""
from __future__ import annotations

from collections import abc
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from ._errors import InvalidArgumentError, Status, WrongTypeError
from ._object import Object, is_unmanaged
from ._schema import LINK, LIST, MAP, SET, PropertyInfo

if TYPE_CHECKING:
    from ._realm import Realm


class _Later:
    """A value that names an object whose add has begun but not ended (a cycle of links)."""


LATER: Any = _Later()


class Adder:
    """One ``realm.add()``: adds an object after the unmanaged objects it links to, so that its
    create can link them. A link back to an object still being added (a cycle) is set once every
    object of the call is in the realm."""

    def __init__(self, realm: "Realm", update: bool) -> None:
        self.realm = realm
        self.update = update
        self.adding: Dict[int, Object] = {}                # by id(): the objects being added now
        self.later: List[Tuple[Object, PropertyInfo, Any]] = []

    def run(self, obj: Object, nested: bool = False) -> Object:
        """Adds `obj`; `nested` when it is linked from an object being written (then, as
        create() does for a dict, update applies only to a class with a primary key)."""
        self.add(obj, nested)
        for owner, p, value in self.later:
            owner._set(p.name, value, self.update)
            self.bind(p, value, owner)
        return obj

    def add(self, obj: Object, nested: bool = True) -> Object:
        realm = self.realm
        class_name = realm._declared(type(obj))
        info = realm._class_info(class_name)
        if info.embedded:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"{class_name} is an embedded class: its objects are added with the object that holds them")
        store: Dict[str, Any] = obj.__dict__["_cove_values"]
        self.adding[id(obj)] = obj
        values: Dict[str, Any] = {}
        deferred: List[Tuple[PropertyInfo, Any]] = []
        for name, value in store.items():
            p = info.properties.get(name)
            converted = value if p is None else self.convert(p, value)
            if converted is LATER:
                deferred.append((p, value))  # type: ignore[arg-type]  # p is set: LATER needs one
            else:
                values[name] = converted
        update = self.update and (not nested or info.primary_key is not None)
        made = realm.create(type(obj), values, update=update)
        del self.adding[id(obj)]
        obj._become(made)
        for name, value in store.items():
            p = info.properties.get(name)
            if p is not None and name in values:
                self.bind(p, value, obj)
        self.later.extend((obj, p, value) for p, value in deferred)
        return obj

    def convert(self, p: PropertyInfo, value: Any) -> Any:
        """`value` of property `p` ready for create(): unmanaged objects added (or, embedded, as
        dicts of their values); LATER when it names an object being added."""
        if p.target is None:
            return value
        if p.kind == LINK:
            return self.element(p, value)
        if p.kind == MAP:
            pairs = value.items() if isinstance(value, abc.Mapping) else value
            converted = {key: self.element(p, v) for key, v in pairs}
            return LATER if any(v is LATER for v in converted.values()) else converted
        if p.kind in (LIST, SET):
            elements = [self.element(p, v) for v in value]
            return LATER if any(v is LATER for v in elements) else elements
        return value

    def element(self, p: PropertyInfo, value: Any) -> Any:
        if not is_unmanaged(value):
            return value
        if not p.embedded:
            if id(value) in self.adding:
                return LATER
            return self.add(value)
        if value.class_name != p.target:
            raise WrongTypeError(
                Status.WRONG_TYPE, f"{p.label} holds {p.target} objects, got an object of {value.class_name}")
        info = self.realm._class_info(value.class_name)
        values = {}
        for name, v in value.__dict__["_cove_values"].items():
            inner = info.properties.get(name)
            converted = v if inner is None else self.convert(inner, v)
            if converted is LATER:
                return LATER
            values[name] = converted
        return values

    def bind(self, p: PropertyInfo, value: Any, owner: Object) -> None:
        """Makes the unmanaged embedded objects in `value`, which `owner`'s property `p` was
        given, the embedded objects the realm made of them."""
        if not p.embedded:
            return
        if p.kind == LINK:
            if is_unmanaged(value):
                self.become(value, owner._get(p.name))
        elif p.kind == LIST:
            managed = owner._get(p.name)
            for i, v in enumerate(value):
                if is_unmanaged(v):
                    self.become(v, managed[i])
        elif p.kind == MAP:
            managed = owner._get(p.name)
            pairs = value.items() if isinstance(value, abc.Mapping) else value
            for key, v in pairs:
                if is_unmanaged(v):
                    self.become(v, managed[key])

    def become(self, obj: Object, managed: Object) -> None:
        store: Dict[str, Any] = obj.__dict__["_cove_values"]
        obj._become(managed)
        info = self.realm._class_info(obj.class_name)
        for name, value in store.items():
            p = info.properties.get(name)
            if p is not None:
                self.bind(p, value, obj)
