"""Live objects: attribute reads and writes go through to the realm."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Dict

from ._lib import check, ffi, lib, release_handle
from ._values import read_value, write_value

if TYPE_CHECKING:
    from ._realm import Realm


class Object:
    """An object of a realm. Its properties are attributes: reading one reads the realm's
    current version, assigning one (inside a write) writes it.

    Subclass it to declare a class (``class Dog(cove.Object): name: str``); objects of classes
    not declared in Python come back as plain ``cove.Object`` instances.
    """

    __cove_internal__ = ("_realm", "_handle", "_class_name", "_finalizer")

    def __init__(self, **values: Any) -> None:
        raise TypeError("create objects with realm.create(class_name, values)")

    @classmethod
    def _wrap(cls, realm: "Realm", handle: Any, class_name: str) -> "Object":
        self = object.__new__(cls)
        object.__setattr__(self, "_realm", realm)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_class_name", class_name)
        object.__setattr__(self, "_finalizer", weakref.finalize(self, release_handle, handle))
        return self

    # -- properties ----------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in Object.__cove_internal__:
            raise AttributeError(name)
        return self._get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        self._set(name, value)

    def __getitem__(self, name: str) -> Any:
        return self._get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self._set(name, value)

    def _get(self, name: str) -> Any:
        out = ffi.new("cove_value_t*")
        check(lib.cove_object_get(self._handle, name.encode(), out))
        return read_value(ffi, out[0], self._realm._resolve_link)

    def _set(self, name: str, value: Any) -> None:
        v = ffi.new("cove_value_t*")
        keep: list = []
        write_value(ffi, v, value, keep)
        check(lib.cove_object_set(self._handle, name.encode(), v))

    def _cove_link(self) -> tuple:
        out = ffi.new("cove_value_t*")
        check(lib.cove_object_to_link(self._handle, out))
        return int(out.u.link.class_key), int(out.u.link.object_key)

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

    def to_dict(self) -> Dict[str, Any]:
        """The object's properties as a dict (links as objects)."""
        return {name: self._get(name) for name in self._realm._property_names(self._class_name)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Object):
            return NotImplemented
        try:
            return self._cove_link() == other._cove_link()
        except Exception:
            return self is other

    def __hash__(self) -> int:
        return hash(self._cove_link())

    def __repr__(self) -> str:
        if not self.is_valid:
            return f"<cove.Object {self._class_name} (deleted)>"
        return f"<cove.Object {self._class_name} {self._cove_link()[1]}>"

