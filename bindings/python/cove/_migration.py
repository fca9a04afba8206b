"""Migrations: ``cove.open(..., schema_version=2, migration=fn)`` runs ``fn(m)`` inside the write
that brings the file to the new schema. An exception raised by ``fn`` fails the open with that
exception and leaves the file as it was."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple, Type, Union

from ._declare import class_name_of, defaults_of
from ._errors import InvalidatedError, MigrationRequiredError, Status
from ._lib import check, ffi, lib

if TYPE_CHECKING:
    from ._object import Object
    from ._realm import Realm

# cove.Realm, the class of the old and new realms a migration hands out: _realm defines it on
# top of this module and registers it here when it is imported (register_realm_class), rather
# than this module importing _realm.
_realm_class: Type["Realm"]


def register_realm_class(cls: Type["Realm"]) -> None:
    """Makes `cls` the class of the realms migrations hand out (called by _realm with
    cove.Realm)."""
    global _realm_class
    _realm_class = cls


class Migration:
    """What a migration function gets: the file's old schema version, the old realm (frozen,
    read-only, with the old schema), the new realm (writable, with the new schema, already in
    the migration's write), and the means to rename a property and to visit each object."""

    def __init__(self, handle: Any, classes: Dict[str, Type["Object"]], path: Optional[str]) -> None:
        self._handle = handle
        self._classes = classes
        self._path = path
        self._old: Optional["Realm"] = None
        self._new: Optional["Realm"] = None
        self._done = False

    def _h(self) -> Any:
        if self._done:
            raise InvalidatedError(
                Status.INVALIDATED, "the migration has ended: a cove.Migration is valid only inside the migration function")
        return self._handle

    @property
    def old_version(self) -> int:
        """The file's schema version before the migration."""
        out = ffi.new("uint64_t*")
        check(lib.cove_migration_old_version(self._h(), out))
        return int(out[0])

    @property
    def old_realm(self) -> "Realm":
        """The file as it was: a frozen realm with the old schema (plain cove.Object objects)."""
        if self._old is None:
            out = ffi.new("cove_realm_t**")
            check(lib.cove_migration_old_realm(self._h(), out))
            self._old = _realm_class(out[0], path=self._path, frozen=True)
        return self._old

    @property
    def new_realm(self) -> "Realm":
        """The realm being opened, inside the migration's write, with the new schema (objects of
        declared classes come back as instances of them)."""
        if self._new is None:
            out = ffi.new("cove_realm_t**")
            check(lib.cove_migration_new_realm(self._h(), out))
            self._new = _realm_class(out[0], path=self._path, frozen=False, classes=self._classes)
        return self._new

    def rename_property(self, cls: Union[str, Type["Object"]], old_name: str, new_name: str) -> None:
        """Keeps the values of ``old_name`` under ``new_name`` (same type; links keep their
        backlinks)."""
        check(lib.cove_migration_rename_property(self._h(), class_name_of(cls).encode(), old_name.encode(),
                                                 new_name.encode()))

    def delete_data(self, cls: Union[str, Type["Object"]]) -> bool:
        """Deletes the data of ``cls`` (Realm's ``deleteData(forType:)``): every object of a
        class of the new schema; a class of the file that the new schema leaves out (which
        otherwise stays in the file as it is) goes from the file when the migration ends.
        Returns whether there was anything to delete. ``NotFoundError`` when the file has no
        such class."""
        out = ffi.new("bool*")
        check(lib.cove_migration_delete_data(self._h(), class_name_of(cls).encode(), out))
        return bool(out[0])

    def enumerate(self, cls: Union[str, Type["Object"]]) -> Iterator[Tuple["Object", Optional["Object"]]]:
        """Each object the old file has of ``cls`` as ``(old, new)``, in creation order: ``old``
        from the old realm, ``new`` the same object in the new realm (None when the new schema
        has no such class or the object was deleted in the migration)."""
        name = class_name_of(cls)
        pairs: List[Tuple[Any, Any]] = []
        ctx = _EnumerateContext(pairs)
        handle = ffi.new_handle(ctx)
        status = lib.cove_migration_enumerate(self._h(), name.encode(), lib._cove_migration_object_cb, handle)
        if ctx.error is not None:
            for old, new in pairs:
                lib.cove_release(old)
                lib.cove_release(new)
            raise ctx.error
        check(status)
        old_realm, new_realm = self.old_realm, self.new_realm
        wrapped = [(old_realm._wrap(old, name), None if new == ffi.NULL else new_realm._wrap(new, name))
                   for old, new in pairs]
        return iter(wrapped)

    def __repr__(self) -> str:
        return f"<cove.Migration {'ended' if self._done else 'running'}>"


class _EnumerateContext:
    def __init__(self, pairs: List[Tuple[Any, Any]]) -> None:
        self.pairs = pairs
        self.error: Optional[BaseException] = None


class _MigrationContext:
    def __init__(self, function: Callable[[Migration], Any], classes: Dict[str, Type["Object"]], path: Optional[str]) -> None:
        self.function = function
        self.classes = classes
        self.path = path
        self.error: Optional[BaseException] = None


def _migration_object(userdata: Any, old_object: Any, new_object: Any) -> bool:
    ctx: _EnumerateContext = ffi.from_handle(userdata)
    try:
        ctx.pairs.append((lib.cove_retain(old_object), lib.cove_retain(new_object)))
        return True
    except BaseException as exc:  # never across the C boundary
        ctx.error = exc
        return False


def _migration(userdata: Any, handle: Any) -> bool:
    ctx: _MigrationContext = ffi.from_handle(userdata)
    migration = Migration(handle, ctx.classes, ctx.path)
    try:
        ctx.function(migration)
        return True
    except BaseException as exc:  # re-raised by cove.open
        ctx.error = exc
        return False
    finally:
        migration._done = True


AVAILABLE = hasattr(lib, "cove_config_set_migration")
"""Whether the loaded libcove runs migrations."""

if AVAILABLE:
    ffi.def_extern(name="_cove_migration_object_cb")(_migration_object)
    ffi.def_extern(name="_cove_migration_cb")(_migration)


def with_defaults(function: Optional[Callable[[Migration], Any]],
                  classes: Dict[str, Type["Object"]]) -> Callable[[Migration], Any]:
    """The migration that ``cove.open`` runs for declared classes with defaults: the objects the
    file has of a class get the declared default of each property the new schema adds to it
    (rather than the zero of its type), then `function` runs and sees them. Without `function`,
    a change that needs one raises MigrationRequiredError, as the library does without a
    migration. Everything happens in the migration's write: the file is left as it was if
    anything raises."""
    def migrate(m: Migration) -> None:
        old, new = m.old_realm.schema, m.new_realm.schema
        if function is None:
            changes = _changes_needing_migration(old, new)
            if changes:
                raise MigrationRequiredError(
                    Status.MIGRATION_REQUIRED, f"the schema changed in ways that need a migration: {'; '.join(changes)}")
        for name, cls in classes.items():
            if name not in old or name not in new:
                continue
            before = old[name].get("properties", {})
            added = {prop: value for prop, value in defaults_of(cls).items()
                     if prop not in before and prop in new[name].get("properties", {})}
            if not added:
                continue
            for _, obj in m.enumerate(name):
                if obj is not None:
                    for prop, value in added.items():
                        obj._set(prop, value)
        if function is not None:
            function(m)

    return migrate


def _changes_needing_migration(old: Dict[str, Any], new: Dict[str, Any]) -> List[str]:
    """What differs from the `old` schema to the `new` one (both as the library prints them)
    beyond added classes, properties and indexes and backlinks: what needs a migration."""
    changes: List[str] = []
    for name, entry in new.items():
        before = old.get(name)
        if before is None:
            continue
        if bool(before.get("embedded", False)) != bool(entry.get("embedded", False)):
            changes.append(f"class '{name}' changed being embedded")
        if before.get("primaryKey") != entry.get("primaryKey"):
            changes.append(f"class '{name}' changed its primary key")
        properties = entry.get("properties", {})
        for prop, notation in before.get("properties", {}).items():
            if str(notation).startswith("@links("):
                continue
            if prop not in properties:
                changes.append(f"property '{name}.{prop}' removed")
            elif properties[prop] != notation:
                changes.append(f"property '{name}.{prop}' changed from {notation} to {properties[prop]}")
        for kind in ("indexed", "fulltext"):
            for prop in before.get(kind, []):
                if prop in properties and prop not in entry.get(kind, []):
                    changes.append(f"index ({kind}) of '{name}.{prop}' removed")
    return changes


def open_with_migration(config: Any, function: Callable[[Migration], Any], classes: Dict[str, Type["Object"]],
                        path: Optional[str]) -> Any:
    """cove_open() with `function` as the migration callback; returns the realm handle."""
    ctx = _MigrationContext(function, classes, path)
    handle = ffi.new_handle(ctx)
    check(lib.cove_config_set_migration(config, lib._cove_migration_cb, handle, ffi.NULL))
    out = ffi.new("cove_realm_t**")
    try:
        status = lib.cove_open(config, out)
        if ctx.error is not None:
            if status == Status.OK:
                lib.cove_release(out[0])
            error = ctx.error
            try:
                check(status)
            except Exception as failure:
                raise error from failure
            raise error
        check(status)
    finally:
        lib.cove_config_set_migration(config, ffi.NULL, ffi.NULL, ffi.NULL)
        del handle
    return out[0]
