"""Declared classes: subclasses of cove.Object and cove.EmbeddedObject with annotations become
the schema at open, their objects come back as instances of them, and the annotations that
cannot be stored are refused with SchemaError."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import pathlib
import typing
import uuid
from typing import Any, ClassVar, Dict, List, Optional

import pytest

import cove


class Person(cove.Object):
    name: str = cove.Property(primary_key=True)
    dogs: cove.List[Dog]
    best: Optional[Dog]
    nickname: str | None


class Dog(cove.Object):
    name: str = cove.Property(fulltext=True)
    age: int = cove.Property(indexed=True)
    owner: "Person | None"
    toys: cove.List["Toy"]
    tags: cove.Set[str]
    scores: cove.Map[float]
    home: Address | None
    owners = cove.LinkingObjects("Person", "dogs")
    good: bool = True
    weight: float = 1.5
    kind: ClassVar[str] = "not a property"
    _cache: int = 0


class Toy(cove.EmbeddedObject):
    brand: str
    price: Optional[float]


class Address(cove.EmbeddedObject):
    city: str
    street: typing.Optional[str] = None


class Everything(cove.Object):
    i: int
    f: float
    b: bool
    s: str
    data: bytes
    when: dt.datetime
    stamp: cove.Timestamp
    d: decimal.Decimal
    u: uuid.UUID
    oid: cove.ObjectId
    m: Any
    maybe_m: Optional[Any]
    oi: Optional[int]
    ints: cove.List[int]
    maybe_ints: cove.List[Optional[int]]
    plain_list: list[str]
    plain_set: set[uuid.UUID]
    plain_map: dict[str, Optional[bool]]
    typing_list: List[float]
    typing_map: Dict[str, Dog]
    dog_set: cove.Set[Dog]
    toy_map: cove.Map[Toy]
    renamed: cove.List[Hound]
    as_float: float = cove.Property(type="float")


class Hound(cove.Object, class_name="HoundDog"):
    name: str


SCHEMA = [Person, Dog, Toy, Address, Everything, Hound]


def test_schema_from_classes(realm: cove.Realm) -> None:
    schema = realm.schema
    assert schema["Person"] == {"primaryKey": "name", "properties": {"name": "string", "dogs": "Dog[]",
                                                                     "best": "Dog?", "nickname": "string?"}}
    assert schema["Dog"] == {
        "properties": {"name": "string", "age": "int", "owner": "Person?", "toys": "Toy[]", "tags": "string<>",
                       "scores": "double{}", "home": "Address?", "good": "bool", "weight": "double",
                       "owners": "@links(Person.dogs)"},
        "indexed": ["age"], "fulltext": ["name"]}
    assert schema["Toy"] == {"embedded": True, "properties": {"brand": "string", "price": "double?"}}
    assert schema["Address"]["embedded"] is True
    assert schema["Everything"]["properties"] == {
        "i": "int", "f": "double", "b": "bool", "s": "string", "data": "data", "when": "date", "stamp": "date",
        "d": "decimal128", "u": "uuid", "oid": "objectId", "m": "mixed", "maybe_m": "mixed", "oi": "int?",
        "ints": "int[]", "maybe_ints": "int?[]", "plain_list": "string[]", "plain_set": "uuid<>",
        "plain_map": "bool?{}", "typing_list": "double[]", "typing_map": "Dog{}", "dog_set": "Dog<>",
        "toy_map": "Toy{}", "renamed": "HoundDog[]", "as_float": "float"}
    assert "HoundDog" in schema and "Hound" not in schema
    assert realm.classes["Dog"] is Dog and realm.classes["HoundDog"] is Hound


def test_generic_annotations() -> None:
    assert typing.get_origin(cove.List["Toy"]) is cove.List
    assert typing.get_args(cove.Set[str]) == (str,)
    assert typing.get_args(cove.Map[float]) == (float,)
    assert isinstance(Dog.__dict__["age"], object) and "Dog.age" in repr(Dog.age)
    assert Dog.kind == "not a property" and Dog._cache == 0


def test_objects_come_back_as_their_classes(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create(Dog, {"name": "Rex", "age": 3, "toys": [{"brand": "A"}], "home": {"city": "Oslo"}})
        assert isinstance(rex, Dog) and rex.name == "Rex" and rex.age == 3
        assert rex.good is True and rex.weight == 1.5          # defaults of the class
        assert isinstance(rex.toys, cove.List) and isinstance(rex.toys[0], Toy) and rex.toys[0].brand == "A"
        assert isinstance(rex.home, Address) and isinstance(rex.home, cove.EmbeddedObject)
        assert rex.home.street is None
        ann = realm.create(Person, {"name": "Ann", "dogs": [rex, {"name": "Max", "age": 1}], "best": rex})
        assert isinstance(ann, Person) and isinstance(ann.best, Dog) and ann.best == rex
        assert all(isinstance(d, Dog) for d in ann.dogs) and ann.dogs[1].weight == 1.5
        rex.owner = ann
        assert isinstance(rex.owner, Person)
        zero = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        required = {"i": 0, "f": 0.0, "b": False, "s": "", "data": b"", "when": zero, "stamp": zero,
                    "d": decimal.Decimal(0), "u": uuid.UUID(int=0), "oid": cove.ObjectId(), "as_float": 0.0}
        everything = realm.create(Everything, {**required, "dog_set": [rex], "typing_map": {"r": rex},
                                               "toy_map": {"t": {"brand": "T"}}, "renamed": [{"name": "Fido"}]})
        assert isinstance(next(iter(everything.dog_set)), Dog)
        assert isinstance(everything.typing_map["r"], Dog) and isinstance(everything.toy_map["t"], Toy)
        assert isinstance(everything.renamed[0], Hound) and everything.renamed[0].class_name == "HoundDog"
        assert repr(rex).startswith("<Dog ")
    found = realm.find(Person, "Ann")
    assert isinstance(found, Person) and found == ann
    assert isinstance(realm.find("Person", "Ann"), Person)
    assert realm.find(Person, "Nobody") is None
    frozen = realm.freeze()
    assert isinstance(frozen.find(Person, "Ann"), Person)
    frozen.close()


def test_typed_attributes(realm: cove.Realm) -> None:
    when = dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc)
    ident = uuid.uuid4()
    oid = cove.ObjectId()
    with realm.write():
        e = realm.create(Everything, {"i": 1, "f": 2, "b": True, "s": "s", "data": b"x", "when": when,
                                      "stamp": cove.Timestamp(2020, 1, 1, tzinfo=dt.timezone.utc, nanosecond=9),
                                      "d": decimal.Decimal("1.1"), "u": ident, "oid": oid, "m": "any", "oi": None,
                                      "ints": [1], "maybe_ints": [None, 2], "plain_set": {ident}, "plain_map": {"k": None},
                                      "as_float": 0.5})
        assert type(e.i) is int and type(e.f) is float and e.f == 2.0 and type(e.b) is bool
        assert e.s == "s" and e.data == b"x" and e.when == when and isinstance(e.when, cove.Timestamp)
        assert e.stamp.nanosecond == 9 and e.d == decimal.Decimal("1.1") and e.u == ident and e.oid == oid
        assert e.m == "any" and e.oi is None and list(e.maybe_ints) == [None, 2] and ident in e.plain_set
        assert dict(e.plain_map) == {"k": None} and e.as_float == 0.5
        with pytest.raises(cove.WrongTypeError, match="int"):
            e.i = "one"
        with pytest.raises(cove.WrongTypeError):
            e.ints.append("one")
        with pytest.raises(cove.WrongTypeError, match="cannot be null"):
            e.s = None
        with pytest.raises(cove.WrongTypeError):
            realm.create(Dog, {"name": "Bad", "age": 1, "tags": [1]})
        with pytest.raises(cove.WrongTypeError, match="links to Dog"):
            realm.create(Person, {"name": "Bob", "best": e})
    with pytest.raises(cove.TransactionError):
        e.i = 2
    with pytest.raises(cove.TransactionError):
        realm.create(Dog, {"name": "Outside"})


def test_defaults_apply_to_new_objects_only(realm: cove.Realm) -> None:
    class Counter(cove.Object):
        key: int = cove.Property(primary_key=True)
        count: int = 10
        labels: cove.List[str] = cove.Property(default=["a"])

    with cove.open(None, schema=[Counter], schema_version=1) as r:
        with r.write():
            c = r.create(Counter, {"key": 1})
            assert c.count == 10 and list(c.labels) == ["a"]
            c.count = 3
            c.labels.append("b")
            same = r.create(Counter, {"key": 1}, update=True)
            assert same == c and c.count == 3 and list(c.labels) == ["a", "b"]
            fresh = r.create(Counter, {"key": 2, "count": 5}, update=True)
            assert fresh.count == 5 and list(fresh.labels) == ["a"]


def test_deleted_objects(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create(Dog, {"name": "Rex", "age": 3, "toys": [{"brand": "A"}]})
        toy = rex.toys[0]
        toys = rex.toys
        ann = realm.create(Person, {"name": "Ann", "dogs": [rex], "best": rex})
        realm.delete(rex)
        assert ann.best is None and len(ann.dogs) == 0
        assert not toy.is_valid and "(deleted)" in repr(rex)
        with pytest.raises(cove.InvalidatedError):
            rex.name
        with pytest.raises(cove.InvalidatedError):
            rex.age = 4
        with pytest.raises(cove.InvalidatedError):
            len(toys)


def test_backlinks_read_as_live_results_of_declared_objects(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create(Dog, {"name": "Rex", "age": 3})
        owners = rex.owners
        assert isinstance(owners, cove.Results) and len(owners) == 0
        ann = realm.create(Person, {"name": "Ann", "dogs": [rex]})
        assert list(owners) == [ann] and isinstance(owners[0], Person)
        with pytest.raises(cove.InvalidArgumentError, match="computed"):
            rex.owners = []


def test_forward_references_between_local_classes() -> None:
    class Owner(cove.Object):
        pets: cove.List["Pet"]
        favourite: "Pet | None"
        tags: "cove.Set[str]"
        when: "dt.datetime | None"                  # names from the module

    class Pet(cove.Object):
        name: str
        owner: Optional[Owner]                      # a class object, not a string
        collar: typing.Optional["Collar"]

    class Collar(cove.EmbeddedObject):
        size: int

    with cove.open(None, schema=[Owner, Pet, Collar], schema_version=1) as r:
        assert r.schema["Owner"]["properties"] == {"pets": "Pet[]", "favourite": "Pet?", "tags": "string<>",
                                                  "when": "date?"}
        assert r.schema["Pet"]["properties"] == {"name": "string", "owner": "Owner?", "collar": "Collar?"}
        with r.write():
            o = r.create(Owner, {"pets": [{"name": "Tom", "collar": {"size": 3}}]})
            assert isinstance(o.pets[0], Pet) and isinstance(o.pets[0].collar, Collar)
            assert o.pets[0].collar.size == 3


@pytest.mark.parametrize("annotation, message", [
    ("complex", "not a Cove type"),
    ("int | str", "union of 2 types"),
    ("Optional[cove.List[int]]", "cannot be None"),
    ("cove.List[cove.List[int]]", "collections of collections"),
    ("dict[int, str]", "map keys are strings"),
    ("cove.List", "element type"),
    ("no such syntax (", "cannot read the annotation"),
])
def test_annotations_that_cannot_be_stored(annotation: str, message: str) -> None:
    Bad = type("Bad", (cove.Object,), {"__annotations__": {"x": annotation}, "__module__": __name__})
    with pytest.raises(cove.SchemaError, match=message):
        cove.open(None, schema=[Bad], schema_version=1)


def test_schema_errors() -> None:
    class TwoKeys(cove.Object):
        a: int = cove.Property(primary_key=True)
        b: int = cove.Property(primary_key=True)

    with pytest.raises(cove.SchemaError, match="two primary keys"):
        cove.open(None, schema=[TwoKeys], schema_version=1)

    class Part(cove.EmbeddedObject):
        label: str

    class Machine(cove.Object):
        parts: cove.Set[Part]

    with pytest.raises(cove.SchemaError, match="sets cannot hold embedded objects"):
        cove.open(None, schema=[Machine, Part], schema_version=1)
    with pytest.raises(cove.SchemaError, match="Part"):
        cove.open(None, schema=[Machine], schema_version=1)    # Part not in the schema
    with pytest.raises(cove.InvalidArgumentError, match="list of cove.Object subclasses"):
        cove.open(None, schema=[Machine, "Part"], schema_version=1)  # type: ignore[list-item]
    with pytest.raises(cove.InvalidArgumentError):
        cove.open(None, schema=[cove.Object], schema_version=1)


def test_classes_are_not_constructed_directly(realm: cove.Realm) -> None:
    with pytest.raises(TypeError, match="realm.create"):
        cove.Object()                                       # a declared class makes unmanaged objects
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match="declared cove.Object subclass"):
            realm.create(int, {})                           # type: ignore[call-overload]
        with pytest.raises(cove.InvalidArgumentError):
            realm.create(Toy, {"brand": "A"})               # embedded: created inside an owner


def test_reopen(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "r.cove"
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            rex = realm.create(Dog, {"name": "Rex", "age": 3, "tags": ["a"], "toys": [{"brand": "A", "price": 1.5}]})
            realm.create(Person, {"name": "Ann", "dogs": [rex]})
        schema = realm.schema
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        assert realm.schema == schema
        ann = realm.find(Person, "Ann")
        assert isinstance(ann, Person) and isinstance(ann.dogs[0].toys[0], Toy)
        assert ann.dogs[0].toys[0].price == 1.5 and list(ann.dogs[0].tags) == ["a"]
    with cove.open(path) as realm:                          # the file's schema: plain objects
        ann = realm.find("Person", "Ann")
        assert type(ann) is cove.Object and type(ann.dogs[0].toys[0]) is cove.EmbeddedObject
        assert json.loads(json.dumps(realm.schema)) == schema


def test_declared_class_on_a_dict_schema() -> None:
    schema = {"Dog": {"properties": {"name": "string", "good": "bool"}}}
    with cove.open(None, schema=schema, schema_version=1) as realm:
        with realm.write():
            plain = realm.create("Dog", {"name": "Plain"})
            assert type(plain) is cove.Object
            rex = realm.create(Dog, {"name": "Rex"})          # remembered from here on
            assert isinstance(rex, Dog) and rex.good is True
            assert isinstance(realm.create("Dog", {"name": "Max"}), Dog)


def test_py_typed() -> None:
    assert (pathlib.Path(cove.__file__).parent / "py.typed").exists()
