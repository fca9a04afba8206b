"""What the schema notation says about each property: its kind (a value, a link, a list, a set,
a map or backlinks), its element type and whether the element may be null."""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

PRIMITIVES = frozenset(
    ["bool", "int", "float", "double", "string", "data", "date", "decimal128", "objectId", "uuid", "mixed"]
)

VALUE, LINK, LIST, SET, MAP, BACKLINKS = "value", "link", "list", "set", "map", "backlinks"

_SUFFIXES = (("[]", LIST), ("<>", SET), ("{}", MAP))


class PropertyInfo(NamedTuple):
    """One property of a class, read from its type notation ("int?", "Toy[]", "string<>")."""

    name: str
    class_name: str
    kind: str                       # VALUE, LINK, LIST, SET, MAP or BACKLINKS
    type: str                       # the element's primitive name or class name
    optional: bool                  # the element may be null
    target: Optional[str]           # the linked class, for links and collections of links
    embedded: bool                  # the linked class is embedded
    origin: Optional[Tuple[str, str]]   # (class, property) that backlinks follow

    @property
    def label(self) -> str:
        """How messages name the property: "list 'tags' of class 'Dog'"."""
        what = "property" if self.kind in (VALUE, LINK, BACKLINKS) else self.kind
        return f"{what} '{self.name}' of class '{self.class_name}'"


class ClassInfo(NamedTuple):
    name: str
    primary_key: Optional[str]
    embedded: bool
    properties: Dict[str, PropertyInfo]


def parse_property(class_name: str, name: str, notation: str, schema: Mapping[str, Any]) -> PropertyInfo:
    text = notation
    kind = VALUE
    for suffix, collection in _SUFFIXES:
        if text.endswith(suffix):
            kind = collection
            text = text[:-2]
            break
    optional = text.endswith("?")
    if optional:
        text = text[:-1]
    if text.startswith("@links(") and text.endswith(")"):
        origin_class, _, origin_property = text[7:-1].partition(".")
        return PropertyInfo(name, class_name, BACKLINKS, origin_class, False, origin_class, False,
                            (origin_class, origin_property))
    if text in PRIMITIVES:
        return PropertyInfo(name, class_name, kind, text, optional or text == "mixed", None, False, None)
    target = schema.get(text, {})
    embedded = bool(target.get("embedded", False)) if isinstance(target, Mapping) else False
    return PropertyInfo(name, class_name, LINK if kind == VALUE else kind, text, True, text, embedded, None)


def parse_class(name: str, spec: Mapping[str, Any], schema: Mapping[str, Any]) -> ClassInfo:
    properties = {
        prop: parse_property(name, prop, notation if isinstance(notation, str) else _object_form(notation), schema)
        for prop, notation in spec.get("properties", {}).items()
    }
    return ClassInfo(name, spec.get("primaryKey"), bool(spec.get("embedded", False)), properties)


def _object_form(notation: Mapping[str, Any]) -> str:
    """The type string of a property written in the object form ({"type": "int", "optional": true})."""
    kind = {"list": "[]", "set": "<>", "dictionary": "{}"}
    t = str(notation.get("type", ""))
    if t in kind:
        return f"{notation.get('objectType', '')}{'?' if notation.get('optional') else ''}{kind[t]}"
    if t == "linkingObjects":
        return f"@links({notation.get('objectType', '')}.{notation.get('property', '')})"
    if t == "object":
        return str(notation.get("objectType", ""))
    return t + ("?" if notation.get("optional") and not t.endswith("?") else "")
