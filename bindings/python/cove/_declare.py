"""Declared classes: ``class Dog(cove.Object)`` with annotated attributes, turned into the schema
notation at ``cove.open(schema=[Dog, ...])``.

Annotations map onto Cove types: int, float (double), bool, str (string), bytes (data),
datetime.datetime and cove.Timestamp (date), decimal.Decimal (decimal128), uuid.UUID,
cove.ObjectId, typing.Any (mixed); ``X | None`` and ``Optional[X]`` are optional; a declared class
(or its name as a string) is a link; ``cove.List[X]``, ``cove.Set[X]`` and ``cove.Map[X]`` (also
``list[X]``, ``set[X]``, ``dict[str, X]``) are collections. String annotations (``from __future__
import annotations``) are resolved against the class's module and the other declared classes.
"""
from __future__ import annotations

import ast
import builtins
import collections.abc
import datetime as _dt
import decimal
import sys
import typing
import uuid
from typing import Any, Dict, Generic, Iterator, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from ._collections import List as CoveList, Map as CoveMap, Set as CoveSet
from ._errors import InvalidArgumentError, SchemaError, Status
from ._schema import PRIMITIVES, VALUE, ClassInfo, parse_class
from ._speedups import Accessor
from ._values import ObjectId, Timestamp

if typing.TYPE_CHECKING:
    from ._results import Results

_O = TypeVar("_O")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No default value."""


class PropertySpec:
    """What ``cove.Property(...)`` returns: the options of one declared property."""

    __slots__ = ("primary_key", "indexed", "fulltext", "default", "type")

    def __init__(self, primary_key: bool, indexed: bool, fulltext: bool, default: Any, type: Optional[str]) -> None:
        self.primary_key = primary_key
        self.indexed = indexed
        self.fulltext = fulltext
        self.default = default
        self.type = type

    def __repr__(self) -> str:
        return (f"cove.Property(primary_key={self.primary_key}, indexed={self.indexed}, "
                f"fulltext={self.fulltext}, default={self.default!r}, type={self.type!r})")


def Property(*, primary_key: bool = False, indexed: bool = False, fulltext: bool = False,
             default: Any = MISSING, type: Optional[str] = None) -> Any:
    """Options of a declared property: ``age: int = cove.Property(indexed=True)``.

    ``primary_key`` makes it the class's primary key (int, str, ObjectId or UUID), ``indexed``
    adds a secondary index, ``fulltext`` a full-text index (strings). ``default`` is the value a
    new object gets when ``realm.create`` is not given one (a plain ``age: int = 3`` does the
    same), and the value the objects a file has get when an open adds the property. Without a
    default, a property that is not optional, a collection or a link is required: a new object
    must be given it (InvalidArgumentError, "missing value for property 'Dog.age'"). ``type`` gives the schema notation outright ("float", "int?[]") instead of the
    annotation's. Typed as Any so that ``age: int = cove.Property(...)`` type-checks, as
    ``dataclasses.field`` is.
    """
    return PropertySpec(primary_key, indexed, fulltext, default, type)


class LinkingObjects(Generic[_O]):
    """Backlinks of a declared class: ``owners = cove.LinkingObjects("Person", "dogs")`` lists the
    Person objects whose ``dogs`` hold this object (the schema's ``@links(Person.dogs)``), one per
    link: a Person whose ``dogs`` holds it twice is there twice."""

    @typing.overload
    def __init__(self: "LinkingObjects[Any]", origin: str, property: str) -> None: ...
    @typing.overload
    def __init__(self, origin: Type[_O], property: str) -> None: ...

    def __init__(self, origin: Union[str, Type[_O]], property: str) -> None:
        self.origin = origin
        self.property = property

    @property
    def origin_name(self) -> str:
        if isinstance(self.origin, str):
            return self.origin
        return str(getattr(self.origin, "__cove_class_name__", self.origin.__name__))

    def __repr__(self) -> str:
        return f"cove.LinkingObjects({self.origin_name!r}, {self.property!r})"

    if typing.TYPE_CHECKING:
        # For type checkers only: read on an object, the backlinks are live results of the
        # origin class (a declared class replaces this attribute by its field at run time).
        @typing.overload
        def __get__(self, obj: None, owner: Any) -> "LinkingObjects[_O]": ...
        @typing.overload
        def __get__(self, obj: object, owner: Any) -> "Results[_O]": ...
        def __get__(self, obj: Any, owner: Any) -> Any: ...


class FieldDecl:
    """One declared property: its annotation, options and default."""

    __slots__ = ("name", "annotation", "spec", "default", "links", "owner")

    def __init__(self, name: str, annotation: Any, spec: Optional[PropertySpec], default: Any,
                 links: Optional[LinkingObjects[Any]], owner: type) -> None:
        self.name = name
        self.annotation = annotation
        self.spec = spec
        self.default = default
        self.links = links
        self.owner = owner


class Field(Accessor):
    """The class attribute of a declared property: reads and writes go to the realm (reads of
    plain values in C, ``_speedups.Accessor``; the rest through ``obj._get``)."""

    __slots__ = ("decl",)

    def __init__(self, name: str, decl: FieldDecl) -> None:
        super().__init__(name)
        self.decl = decl

    if typing.TYPE_CHECKING:
        @typing.overload
        def __get__(self, obj: None, owner: Optional[type] = None) -> "Field": ...
        @typing.overload
        def __get__(self, obj: Any, owner: Optional[type] = None) -> Any: ...
        def __get__(self, obj: Any, owner: Optional[type] = None) -> Any: ...

    def __set__(self, obj: Any, value: Any) -> None:
        obj._set(self.name, value)

    def __repr__(self) -> str:
        return f"<cove field {self.decl.owner.__name__}.{self.name}>"


def _own_annotations(cls: type) -> Dict[str, Any]:
    try:
        import annotationlib  # type: ignore[import-not-found]  # Python 3.14: lazy annotations
    except ImportError:
        return dict(cls.__dict__.get("__annotations__", {}))
    return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.STRING))


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        text = annotation.strip()
        return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar


def prepare_class(cls: type, class_name: Optional[str]) -> None:
    """Collects the declared properties of a new subclass of cove.Object and puts a Field in
    place of each (so a default or a cove.Property() never hides the stored value)."""
    fields: Dict[str, FieldDecl] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(base.__dict__.get("__cove_fields__", {}))
    annotations = _own_annotations(cls)
    names: List[str] = [n for n in annotations if not n.startswith("_") and not _is_classvar(annotations[n])]
    names += [n for n, v in cls.__dict__.items() if isinstance(v, LinkingObjects) and n not in annotations]
    for name in names:
        value = cls.__dict__.get(name, MISSING)
        spec: Optional[PropertySpec] = None
        links: Optional[LinkingObjects[Any]] = None
        default: Any = MISSING
        if isinstance(value, PropertySpec):
            spec = value
            default = value.default
        elif isinstance(value, LinkingObjects):
            links = value
        elif isinstance(value, Field):
            value = value.decl.default
            default = value
        else:
            default = value
        decl = FieldDecl(name, annotations.get(name), spec, default, links, cls)
        fields[name] = decl
        setattr(cls, name, Field(name, decl))
    cls.__cove_fields__ = fields  # type: ignore[attr-defined]
    cls.__cove_class_name__ = class_name or cls.__name__  # type: ignore[attr-defined]


# -- annotations to the schema notation ----------------------------------------------------------

class _Name:
    """A name that resolves to nothing in scope: a forward reference to a class by name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __or__(self, other: Any) -> "_Union":
        return _Union([self, other])

    def __ror__(self, other: Any) -> "_Union":
        return _Union([other, self])

    def __repr__(self) -> str:
        return self.name


class _Union:
    def __init__(self, members: List[Any]) -> None:
        self.members = members

    def __or__(self, other: Any) -> "_Union":
        return _Union(self.members + [other])

    def __ror__(self, other: Any) -> "_Union":
        return _Union([other] + self.members)


class _Scope(collections.abc.Mapping):  # type: ignore[type-arg]
    """Names for eval(): the declared classes, then the class's module, then builtins; any other
    name becomes a _Name (a class named by a forward reference)."""

    def __init__(self, declared: Mapping[str, type], module_globals: Mapping[str, Any]) -> None:
        self._declared = declared
        self._globals = module_globals

    def __getitem__(self, key: str) -> Any:
        if key in self._declared:
            return self._declared[key]
        if key in self._globals:
            return self._globals[key]
        if hasattr(builtins, key):
            return getattr(builtins, key)
        return _Name(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._declared)

    def __len__(self) -> int:
        return len(self._declared)


def _split_union(text: str) -> List[str]:
    """The parts of "A | B[C | D] | None" at bracket depth 0, outside quotes."""
    parts, depth, start, quote = [], 0, 0, ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


_SCALARS: Dict[Any, str] = {
    int: "int", float: "double", bool: "bool", str: "string", bytes: "data",
    _dt.datetime: "date", Timestamp: "date", decimal.Decimal: "decimal128", uuid.UUID: "uuid",
    ObjectId: "objectId",
}


class _Resolver:
    def __init__(self, cls: type, declared: Mapping[str, type]) -> None:
        module = sys.modules.get(cls.__module__)
        self.cls = cls
        self.declared = declared
        self.scope = _Scope(declared, vars(module) if module is not None else {})

    def fail(self, where: str, message: str) -> SchemaError:
        return SchemaError(Status.SCHEMA, f"property '{where}' of class '{self.cls.__name__}': {message}")

    def evaluate(self, annotation: Any, where: str) -> Any:
        if isinstance(annotation, typing.ForwardRef):
            annotation = annotation.__forward_arg__
        if not isinstance(annotation, str):
            return annotation
        parts = _split_union(annotation)
        if len(parts) > 1:
            return _Union([self.evaluate(p, where) for p in parts])
        text = parts[0]
        if text.isidentifier() and text in self.declared:
            return self.declared[text]
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            try:
                inner = ast.literal_eval(text)   # a quoted annotation under `from __future__ import annotations`
            except (ValueError, SyntaxError):
                inner = None
            if isinstance(inner, str):
                return self.evaluate(inner, where)
        try:
            return eval(text, {"__builtins__": builtins}, self.scope)  # noqa: S307 - the class's own annotation
        except Exception as exc:
            raise self.fail(where, f"cannot read the annotation {text!r}: {exc}") from None

    def strip_optional(self, annotation: Any, where: str) -> Tuple[Any, bool]:
        """The annotation without None, and whether None was allowed."""
        annotation = self.evaluate(annotation, where)
        members: Optional[List[Any]] = None
        if isinstance(annotation, _Union):
            members = annotation.members
        elif typing.get_origin(annotation) is Union or type(annotation).__name__ == "UnionType":
            members = list(typing.get_args(annotation))
        if members is None:
            return annotation, False
        evaluated = [self.evaluate(m, where) for m in members]
        rest = [m for m in evaluated if m is not None and m is not type(None)]
        optional = len(rest) < len(evaluated)
        if len(rest) != 1:
            if any(m is Any for m in rest):
                return Any, optional
            raise self.fail(where, f"a union of {len(rest)} types cannot be stored (typing.Any is mixed)")
        inner, inner_optional = self.strip_optional(rest[0], where)
        return inner, optional or inner_optional

    def collection(self, annotation: Any, where: str) -> Optional[Tuple[str, Any]]:
        """("[]", element) for a list annotation, "<>" for a set, "{}" for a map; else None."""
        origin = typing.get_origin(annotation) or annotation
        args = typing.get_args(annotation)
        if origin in (CoveList, list, collections.abc.MutableSequence, collections.abc.Sequence):
            suffix = "[]"
        elif origin in (CoveSet, set, frozenset, collections.abc.MutableSet, collections.abc.Set):
            suffix = "<>"
        elif origin in (CoveMap, dict, collections.abc.MutableMapping, collections.abc.Mapping):
            suffix = "{}"
            if len(args) == 2:
                key = self.evaluate(args[0], where)
                if key is not str:
                    raise self.fail(where, f"map keys are strings, got {key!r}")
                args = args[1:]
        else:
            return None
        if len(args) != 1:
            raise self.fail(where, f"give the element type of the collection ({getattr(origin, '__name__', origin)}[X])")
        return suffix, args[0]

    def element(self, annotation: Any, where: str) -> str:
        annotation = self.evaluate(annotation, where)
        if annotation is Any:
            return "mixed"
        if isinstance(annotation, _Name):
            return annotation.name
        if isinstance(annotation, type):
            name = getattr(annotation, "__cove_fields__", None) is not None and getattr(annotation, "__cove_class_name__", None)
            if name:
                return str(name)
            for t, notation in _SCALARS.items():
                if annotation is t:
                    return notation
            if issubclass(annotation, _dt.datetime):
                return "date"
        raise self.fail(where, f"the annotation {annotation!r} is not a Cove type")

    def notation(self, annotation: Any, where: str) -> str:
        inner, optional = self.strip_optional(annotation, where)
        coll = self.collection(inner, where)
        if coll is not None:
            if optional:
                raise self.fail(where, "a list, set or map cannot be None (it is empty instead)")
            suffix, element_annotation = coll
            element_inner, element_optional = self.strip_optional(element_annotation, where)
            if self.collection(element_inner, where) is not None:
                raise self.fail(where, "collections of collections cannot be stored")
            element = self.element(element_inner, where)
            nullable = element_optional and element in PRIMITIVES and element != "mixed"
            return element + ("?" if nullable else "") + suffix
        element = self.element(inner, where)
        return element + ("?" if optional and element != "mixed" else "")


def _is_declared(cls: Any) -> bool:
    return isinstance(cls, type) and "__cove_fields__" in cls.__dict__


def schema_from_classes(classes: Sequence[Any]) -> Dict[str, Any]:
    """The schema notation (a dict keyed by class name) of declared classes."""
    for cls in classes:
        if not _is_declared(cls):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, f"schema= takes a dict, JSON text or a list of cove.Object subclasses, got {cls!r} in the list")
    declared: Dict[str, type] = {}
    for cls in classes:
        declared[cls.__name__] = cls
        declared[cls.__cove_class_name__] = cls
    schema: Dict[str, Any] = {}
    for cls in classes:
        name = cls.__cove_class_name__
        if name in schema:
            raise SchemaError(Status.SCHEMA, f"class '{name}' is declared twice")
        resolver = _Resolver(cls, declared)
        properties: Dict[str, str] = {}
        indexed: List[str] = []
        fulltext: List[str] = []
        primary_key: Optional[str] = None
        fields: Dict[str, FieldDecl] = cls.__cove_fields__
        for prop, decl in fields.items():
            if decl.links is not None:
                properties[prop] = f"@links({decl.links.origin_name}.{decl.links.property})"
                continue
            spec = decl.spec
            if spec is not None and spec.type:
                properties[prop] = spec.type
            elif decl.annotation is None:
                raise resolver.fail(prop, "give it an annotation")
            else:
                properties[prop] = resolver.notation(decl.annotation, prop)
            if spec is not None:
                if spec.primary_key:
                    if primary_key is not None:
                        raise SchemaError(
                            Status.SCHEMA, f"class '{name}' has two primary keys: '{primary_key}' and '{prop}'")
                    primary_key = prop
                if spec.indexed:
                    indexed.append(prop)
                if spec.fulltext:
                    fulltext.append(prop)
        entry: Dict[str, Any] = {"properties": properties}
        if primary_key is not None:
            entry["primaryKey"] = primary_key
        if getattr(cls, "__cove_embedded__", False):
            entry["embedded"] = True
        if indexed:
            entry["indexed"] = indexed
        if fulltext:
            entry["fulltext"] = fulltext
        schema[name] = entry
    return schema


def defaults_of(cls: type) -> Dict[str, Any]:
    """The default values of a declared class's properties."""
    fields: Dict[str, FieldDecl] = getattr(cls, "__cove_fields__", {})
    return {name: d.default for name, d in fields.items() if d.default is not MISSING and d.links is None}


def shape_of(cls: type) -> Tuple["ClassInfo", Dict[str, Any]]:
    """What an unmanaged object of a declared class holds: the class's properties as its own
    declaration describes them (a link's target is not looked at: whether it is embedded is the
    realm's to say when the object is added) and its defaults. Made once per class."""
    shape: Optional[Tuple[ClassInfo, Dict[str, Any]]] = cls.__dict__.get("__cove_shape__")
    if shape is None:
        if not _is_declared(cls):
            raise TypeError(f"{cls.__qualname__} is not a declared class: create objects with realm.create(class_name, values), "
                            "or declare a class (class Dog(cove.Object): ...) and call it")
        name = cls.__cove_class_name__  # type: ignore[attr-defined]
        entry = schema_from_classes([cls])[name]
        shape = (parse_class(name, entry, {}), defaults_of(cls))
        setattr(cls, "__cove_shape__", shape)
    return shape


def required_of(cls: type, info: "ClassInfo") -> Tuple[str, ...]:
    """The properties of `info` that a new object of the declared class `cls` must be given: its
    declared single values that are neither optional nor given a default (the primary key has its
    own rule)."""
    fields: Dict[str, FieldDecl] = getattr(cls, "__cove_fields__", {})
    return tuple(name for name, p in info.properties.items()
                 if p.kind == VALUE and not p.optional and name != info.primary_key
                 and name in fields and fields[name].default is MISSING)


def missing_values(class_name: str, names: Sequence[str], where: str = "") -> InvalidArgumentError:
    """The error for a new object that lacks required values (`names`, in schema order);
    `where` goes first in the message."""
    quoted = [f"'{class_name}.{name}'" for name in names]
    if len(quoted) == 1:
        return InvalidArgumentError(Status.INVALID_ARGUMENT, f"{where}missing value for property {quoted[0]}")
    return InvalidArgumentError(
        Status.INVALID_ARGUMENT, f"{where}missing values for properties {', '.join(quoted[:-1])} and {quoted[-1]}")


def class_name_of(cls: Union[str, Type[Any]]) -> str:
    """The class name a realm knows: a string as is, a declared class by its name."""
    if isinstance(cls, str):
        return cls
    name = getattr(cls, "__cove_class_name__", None) if isinstance(cls, type) else None
    if name is None or not _is_declared(cls):
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, f"a class is named by a string or a declared cove.Object subclass, got {cls!r}")
    return str(name)
