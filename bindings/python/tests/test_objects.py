"""Objects through Python: schema at open, every value type, primary keys and upserts, links,
deletes, and the exception raised for each kind of bad input."""
from __future__ import annotations

import datetime as dt
import decimal
import pathlib
import uuid

import pytest

import cove

SCHEMA = {
    "Person": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "dog": "Dog?"}},
    "Dog": {"properties": {"name": "string", "weight": "double?", "good": "bool", "born": "date?",
                           "tag": "objectId?", "id": "uuid?", "price": "decimal128?", "photo": "data?",
                           "ratio": "float", "any": "mixed", "owners": "@links(Person.dog)"}},
}


def test_every_type_round_trips(tmp_path: pathlib.Path) -> None:
    born = cove.Timestamp(2020, 5, 17, 12, 30, 1, 250, tzinfo=dt.timezone.utc, nanosecond=7)
    tag = cove.ObjectId("0123456789abcdef01234567")
    ident = uuid.uuid4()
    path = tmp_path / "types.cove"
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            dog = realm.create("Dog", {"name": "Rex ü", "weight": 12.5, "good": True, "born": born, "tag": tag,
                                       "id": ident, "price": decimal.Decimal("19.99"), "photo": b"\x00\x01\xff",
                                       "ratio": 2, "any": "mixed!"})
            realm.create("Person", {"name": "Ann", "dog": dog})
    with cove.open(path) as realm:  # no schema: the file's own
        assert set(realm.schema) == {"Person", "Dog"}
        dog = realm.find("Person", "Ann").dog
        assert dog.name == "Rex ü"
        assert dog.weight == 12.5
        assert dog.good is True
        assert dog.born == born and dog.born.nanosecond == 7 and isinstance(dog.born, cove.Timestamp)
        assert dog.tag == tag
        assert dog.id == ident
        assert dog.price == decimal.Decimal("19.99")
        assert dog.photo == b"\x00\x01\xff"
        assert dog.ratio == 2.0
        assert dog.any == "mixed!"
        assert dog["name"] == "Rex ü"
        assert "Dog" in repr(dog)


def test_strings_with_nul_bytes_round_trip(realm: cove.Realm) -> None:
    """A string is its bytes with their length, not a C string: an embedded NUL survives the
    trip in and out, in a string property and in a mixed one."""
    with realm.write():
        dog = realm.create("Dog", {"name": "a\0b", "any": "\0c\0"})
    assert dog.name == "a\0b" and len(dog.name) == 3
    assert dog.any == "\0c\0"
    assert len(realm.objects("Dog").filter("name == $0", "a\0b")) == 1


def test_defaults_nulls_and_type_errors(realm: cove.Realm) -> None:
    with realm.write():
        dog = realm.create("Dog")
        assert dog.name == "" and dog.weight is None and dog.any is None and dog.good is False
        dog.weight = None
        with pytest.raises(cove.WrongTypeError, match="property 'good' of class 'Dog' is bool, got string"):
            dog.good = "yes"
        with pytest.raises(cove.WrongTypeError, match="cannot be null"):
            dog.name = None
        with pytest.raises(cove.NotFoundError, match="class 'Dog' has no property 'color'"):
            dog.color = "brown"
        with pytest.raises(cove.NotFoundError, match="class 'Dog' has no property 'color'"):
            dog.color
        with pytest.raises(cove.NotFoundError, match="no class 'Cat'"):
            realm.create("Cat")
        with pytest.raises(TypeError, match="cannot store a value of type"):
            dog.any = object()
        with pytest.raises(OverflowError):
            dog.any = 1 << 70
        with pytest.raises(ValueError, match="naive datetime"):
            dog.born = dt.datetime(2020, 1, 1)
    with pytest.raises(cove.TransactionError, match="outside a write"):
        dog.name = "Max"
    with pytest.raises(cove.TransactionError, match="outside a write"):
        realm.create("Dog")


def test_create_makes_the_object_with_its_values_in_one_call(tmp_path: pathlib.Path) -> None:
    """A new object gets its single values and links in the call that creates it (a bad value
    creates nothing), then its collections and embedded objects; upserts set values on the
    object found."""
    schema = {"Owner": {"primaryKey": "id", "properties": {
        "id": "int", "name": "string", "pet": "Pet?", "home": "Home?", "tags": "string[]", "fans": "@links(Pet.owner)"}},
        "Pet": {"properties": {"name": "string", "owner": "Owner?"}},
        "Home": {"embedded": True, "properties": {"city": "string"}}}
    with cove.open(tmp_path / "c.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            ann = realm.create("Owner", {"tags": ["a"], "id": 1, "name": "Ann", "pet": {"name": "Rex"}, "home": {"city": "Oslo"}})
            assert (ann.name, ann.pet.name, ann.home.city, list(ann.tags)) == ("Ann", "Rex", "Oslo", ["a"])
            with pytest.raises(cove.WrongTypeError, match="property 'name' of class 'Owner' is string, got int"):
                realm.create("Owner", {"id": 2, "name": 7})
            with pytest.raises(cove.NotFoundError, match="class 'Owner' has no property 'colour'"):
                realm.create("Owner", {"id": 3, "colour": "red"})
            with pytest.raises(cove.InvalidArgumentError, match="backlinks"):
                realm.create("Owner", {"id": 4, "fans": []})
            with pytest.raises(OverflowError):
                realm.create("Owner", {"id": 5, "pet": None, "name": "x", "tags": [], "home": None, **{"id": 1 << 64}})
            assert [o.id for o in realm.objects("Owner")] == [1]               # none of those was made
            rex = ann.pet
            bob = realm.create("Owner", {"id": 6, "pet": rex})
            assert bob.pet == rex and bob.name == "" and bob.home is None and list(bob.tags) == []
            same = realm.create("Owner", {"id": 6, "name": "Bob", "tags": ["b"]}, update=True)
            assert same == bob and bob.name == "Bob" and list(bob.tags) == ["b"] and bob.pet == rex
            cy = realm.create("Owner", {"id": 7, "name": "Cy", "tags": ["c"]}, update=True)   # upserted: new
            assert (cy.name, list(cy.tags)) == ("Cy", ["c"])
            with pytest.raises(cove.InvalidArgumentError, match="no primary key to update by"):
                realm.create("Pet", {"name": "x"}, update=True)
            with pytest.raises(cove.InvalidArgumentError, match="primary key 'id': give its value"):
                realm.create("Owner", {"name": "x"}, update=True)
        assert realm.verify()


def test_primary_keys_and_upsert(realm: cove.Realm) -> None:
    with realm.write():
        ann = realm.create("Person", {"name": "Ann", "age": 30})
        with pytest.raises(cove.DuplicateKeyError):
            realm.create("Person", {"name": "Ann"})
        with pytest.raises(cove.InvalidArgumentError, match="primary key 'name'"):
            realm.create("Person", {"age": 1})
        with pytest.raises(cove.WrongTypeError, match="is string, got int"):
            realm.create("Person", {"name": 5})
        same = realm.create("Person", {"name": "Ann", "age": 31}, update=True)
        assert same == ann and ann.age == 31
    assert realm.find("Person", "Ann") == ann
    assert realm.find("Person", "Bob") is None
    with pytest.raises(cove.InvalidArgumentError, match="has no primary key"):
        realm.find("Dog", 1)


def test_links_and_delete(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        ann = realm.create("Person", {"name": "Ann", "dog": rex})
        assert ann.dog == rex and ann.dog.name == "Rex"
        with pytest.raises(cove.WrongTypeError, match="links to Dog, got an object of Person"):
            ann.dog = ann
        realm.delete(rex)
        assert not rex.is_valid
        assert ann.dog is None
        with pytest.raises(cove.InvalidatedError, match="was deleted"):
            rex.name
    assert ann.to_dict() == {"name": "Ann", "age": 0, "dog": None}


def test_schema_changes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.cove"
    with cove.open(path, schema={"A": {"properties": {"x": "int"}}}, schema_version=1) as realm:
        with realm.write():
            realm.create("A", {"x": 7})
    with pytest.raises(cove.SchemaError, match="not higher"):
        cove.open(path, schema={"A": {"properties": {"x": "int", "y": "string?"}}}, schema_version=1)
    with cove.open(path, schema={"A": {"properties": {"x": "int", "y": "string?"}}}, schema_version=2) as realm:
        assert realm.schema["A"]["properties"]["y"] == "string?"
    with pytest.raises(cove.MigrationRequiredError):
        cove.open(path, schema={"A": {"properties": {"x": "string", "y": "string?"}}}, schema_version=3)
    with pytest.raises(cove.SchemaError, match="'B'"):
        cove.open(None, schema={"A": {"properties": {"b": "B"}}}, schema_version=1)
    with pytest.raises(cove.SchemaError, match="line 1"):
        cove.open(None, schema='{"A": ', schema_version=1)


def test_an_open_realm_sees_another_realms_schema_change(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "shared.cove"
    v1 = {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int"}}}
    v2 = {"A": {"primaryKey": "id", "properties": {"id": "int", "x": "int", "y": "string?"}}}
    with cove.open(path, schema=v1, schema_version=1) as first:
        with first.write():
            first.create("A", {"id": 1, "x": 7})
        with first.write():                     # after a commit of its own, as after any
            first.find("A", 1).x = 8
        with pytest.raises(cove.NotFoundError, match="'y'"):
            first.find("A", 1)["y"]
        with cove.open(path, schema=v2, schema_version=2) as second:
            with second.write():
                second.find("A", 1).y = "new"
        first.refresh()
        assert first.find("A", 1)["y"] == "new" and first.find("A", 1).x == 8
        with first.write():
            first.create("A", {"id": 2, "x": 1, "y": "w"})
        assert first.find("A", 2)["y"] == "w"


def test_values_module() -> None:
    with pytest.raises(ValueError, match="24 hex digits"):
        cove.ObjectId("xyz")
    t = cove.Timestamp.from_parts(-1, -500)
    assert cove.Timestamp.parts(t) == (-1, -500)
    a, b = cove.ObjectId(), cove.ObjectId()
    assert a != b and len(str(a)) == 24


def test_freeze_and_thaw_an_object(realm: cove.Realm) -> None:
    import threading

    with realm.write():
        ann = realm.create("Person", {"name": "Ann", "age": 30})
        bob = realm.create("Person", {"name": "Bob", "age": 40})
        with pytest.raises(cove.TransactionError):
            ann.freeze()
    assert not ann.is_frozen and ann.thaw() is ann
    frozen = ann.freeze()
    assert frozen.is_frozen and frozen.freeze() is frozen and frozen.realm.is_frozen
    with realm.write():
        ann.age = 31
    assert (ann.age, frozen.age) == (31, 30)   # the frozen copy keeps its version
    seen = []
    reader = threading.Thread(target=lambda: seen.append((frozen.name, frozen.age)))
    reader.start()
    reader.join()
    assert seen == [("Ann", 30)]
    with pytest.raises(cove.FrozenError):
        with frozen.realm.write():
            pass
    thawed = frozen.thaw()
    assert thawed is not None and not thawed.is_frozen and thawed.age == 31 and thawed == ann
    frozen_bob = bob.freeze()
    with realm.write():
        realm.delete(bob)
    assert frozen_bob.age == 40 and frozen_bob.thaw() is None
    with pytest.raises(cove.InvalidArgumentError):
        frozen.thaw(frozen_bob.realm)           # a frozen realm is no place to thaw into
    with pytest.raises(cove.InvalidatedError):
        bob.freeze()


def test_plain_object_attributes(tmp_path: pathlib.Path) -> None:
    """A plain Object reads properties as attributes whatever other classes the process has
    seen: a property another class has is still an error here, a property named like one of
    Object's methods reads only by subscript, and a declared class's own fields come first."""

    class Kennel(cove.Object):
        name: str
        size: int = 0

    schema = {"Badge": {"properties": {"size": "string", "realm": "string", "_hidden": "int"}},
              "Ball": {"properties": {"colour": "string"}}}
    with cove.open(tmp_path / "p.cove", schema=[Kennel], schema_version=1, durability="no_sync") as declared, \
            cove.open(tmp_path / "q.cove", schema=schema, schema_version=1, durability="no_sync") as r:
        with r.write():
            badge = r.create("Badge", {"size": "large", "realm": "north", "_hidden": 4})
            ball = r.create("Ball", {"colour": "red"})
        with declared.write():
            kennel = declared.create(Kennel, {"name": "k", "size": 3})
        assert type(badge) is cove.Object and type(ball) is cove.Object
        assert badge.size == "large" and ball.colour == "red" and badge._hidden == 4
        assert kennel.size == 3 and type(kennel.size) is int
        assert badge.realm is r and badge["realm"] == "north"
        with pytest.raises(cove.NotFoundError, match="class 'Ball' has no property 'size'"):
            ball.size
        with pytest.raises(cove.NotFoundError, match="class 'Badge' has no property 'colour'"):
            badge.colour
        del badge, ball, kennel
