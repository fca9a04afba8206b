"""`@type` on mixed values, and the comparisons the query language calls type errors: a list of
objects or backlinks compared with None, a collection compared with a collection, aggregates of
what has no sum, average or order. Each raises cove.InvalidArgumentError naming the property."""
import datetime as dt
import decimal
import pathlib
import uuid
from typing import Any, Iterator, List, Tuple

import pytest

import cove

SCHEMA = {
    "Thing": {"properties": {"name": "string", "n": "int", "extra": "mixed", "many": "mixed[]", "bag": "mixed{}",
                             "tags": "string[]", "tags2": "string[]", "dogs": "Dog[]", "toys": "Dog[]"}},
    "Dog": {"properties": {"name": "string", "age": "int", "owners": "@links(Thing.dogs)"}},
}


@pytest.fixture(scope="module")
def realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[cove.Realm]:
    path: pathlib.Path = tmp_path_factory.mktemp("types") / "t.cove"
    with cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync") as r:
        with r.write():
            rex = r.create("Dog", {"name": "rex", "age": 3})
            extras = {"int": 4, "double": 2.5, "decimal": decimal.Decimal("1.5"), "string": "s", "binary": b"\x01",
                      "date": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), "uuid": uuid.uuid4(),
                      "objectId": cove.ObjectId("5f1b2c3d4e5f60718293a4b5"), "link": rex, "null": None,
                      "bool": True}
            for name, value in extras.items():
                r.create("Thing", {"name": name, "extra": value})
            r.objects("Thing").filter("name == 'int'")[0].many.extend([1, "a", None])
            r.objects("Thing").filter("name == 'string'")[0].many.extend([1, 2.0])
        yield r


def things(realm: cove.Realm, query: str, *args: Any) -> List[str]:
    return [t.name for t in realm.objects("Thing").filter(query, *args)]


def test_each_type_name(realm: cove.Realm) -> None:
    for name in ["int", "double", "decimal", "string", "binary", "date", "uuid", "objectId", "null", "bool"]:
        assert things(realm, f"extra.@type == '{name}'") == [name]
    assert things(realm, "extra.@type == 'object'") == ["link"]
    assert things(realm, "extra.@type == 'numeric'") == ["int", "double", "decimal"]
    assert things(realm, "extra.@type == 'float'") == []


def test_aliases_operators_and_arguments(realm: cove.Realm) -> None:
    assert things(realm, "extra.@type == 'OBJECTID'") == ["objectId"]
    assert things(realm, "extra.@type == 'boolean'") == ["bool"]
    assert things(realm, "extra.@type IN {'int', 'string'}") == ["int", "string"]
    assert things(realm, "extra.@type != 'numeric' AND extra.@type != 'null' AND extra.@type != 'bool'") == [
        "string", "binary", "date", "uuid", "objectId", "link"]
    assert things(realm, "extra.@type == $0", "double") == ["double"]
    assert things(realm, "extra.@type IN $0", ["uuid", "binary"]) == ["binary", "uuid"]
    assert things(realm, "many.@type == 'string'") == ["int"]
    assert things(realm, "ALL many.@type == 'numeric' AND many.@count > 0") == ["string"]


@pytest.mark.parametrize("class_name, query, args, message", [
    # @type: a known name, on a mixed value, with == != IN, without [c].
    ("Thing", "extra.@type == 'intt'", (), "unknown type name 'intt'"),
    ("Thing", "n.@type == 'int'", (), "@type applies to mixed values, but 'n' is int"),
    ("Thing", "extra.@type < 'int'", (), "@type compares with ==, != and IN only"),
    ("Thing", "extra.@type == $0", (3,), "got int 3"),
    ("Thing", "extra.@type ==[c] 'int'", (), r"\[c\]/\[d\] do not apply to @type"),
    # A list of objects or backlinks holds no nulls.
    ("Thing", "dogs == nil", (), r"cannot compare 'dogs' \(a list of Dog objects\) with null"),
    ("Thing", "dogs != $0", (None,), r"'dogs' \(a list of Dog objects\)"),
    ("Dog", "owners == NULL", (), r"'owners' \(backlinks from Thing.dogs\)"),
    # A collection is never compared with a collection.
    ("Thing", "dogs == toys", (), "cannot compare two collections, 'dogs' and 'toys'"),
    ("Thing", "tags == tags2", (), "cannot compare two collections, 'tags' and 'tags2'"),
    ("Thing", "tags IN tags2", (), "'tags' and 'tags2'"),
    ("Thing", "dogs.age != many", (), "'dogs.age' and 'many'"),
    # Aggregates of what has none.
    ("Thing", "tags.@sum > 1", (), "@sum needs numbers, but 'tags.@sum' is string"),
    ("Thing", "tags.@avg > 1", (), "@avg needs numbers, but 'tags.@avg' is string"),
    ("Thing", "dogs.@sum > 1", (), "@sum over 'dogs' needs a property of the Dog objects"),
    ("Thing", "dogs.@avg.name > 1", (), "'dogs.@avg.name' is string"),
    ("Dog", "owners.@max > 1", (), "@max over 'owners' needs a property"),
])
def test_type_errors_are_query_errors(realm: cove.Realm, class_name: str, query: str, args: Tuple[Any, ...],
                                      message: str) -> None:
    with pytest.raises(cove.InvalidArgumentError, match=message):
        realm.objects(class_name).filter(query, *args)


def test_what_stays_allowed(realm: cove.Realm) -> None:
    assert things(realm, "many == nil") == ["int"]                  # values in a list may be null
    assert len(things(realm, "dogs.@count == 0")) == 11
    assert len(things(realm, "tags.@count == tags2.@count")) == 11
    # A list of mixed: @sum and @avg take its numbers, @max orders every value.
    assert things(realm, "many.@sum == 3") == ["string"]
    assert things(realm, "many.@avg == 1") == ["int"]
    assert things(realm, "many.@max == 'a'") == ["int"]
