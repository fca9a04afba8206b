"""realm.create_many: batches of single values and links through one library call each, the
collections and embedded objects of each object set afterwards, upserts, declared classes, and
the exception raised for each kind of bad input with the index of the object at fault."""
from __future__ import annotations

import pathlib

import pytest

import cove
from cove import _realm

SCHEMA = {
    "Person": {"primaryKey": "id",
               "properties": {"id": "int", "name": "string", "age": "int", "score": "double?",
                              "dog": "Dog?", "tags": "string<>", "home": "Address?", "pets": "Dog[]"}},
    "Dog": {"properties": {"name": "string", "toys": "Toy[]", "owners": "@links(Person.pets)"}},
    "Toy": {"embedded": True, "properties": {"brand": "string"}},
    "Address": {"embedded": True, "properties": {"city": "string"}},
}


def test_batches_of_single_values(realm: cove.Realm, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    lib = _realm.lib
    original = lib.cove_object_create_many

    class Spy:
        def __getattr__(self, name: str) -> object:
            return getattr(lib, name)

    spy = Spy()
    spy.cove_object_create_many = lambda *args: calls.append(args[5]) or original(*args)  # type: ignore[attr-defined]
    monkeypatch.setattr(_realm, "lib", spy)
    with realm.write():
        rows = ({"id": i, "name": f"p{i}", "age": i % 90, "score": i / 2} for i in range(2500))   # any iterable
        assert realm.create_many("Person", rows) == 2500
    assert calls == [1000, 1000, 500]                       # one call per batch of up to 1000
    assert realm.find("Person", 1234).name == "p1234" and realm.find("Person", 2499).score == 1249.5
    with realm.write():
        assert realm.create_many("Person", []) == 0


def test_rows_whose_keys_change_order_or_kind(realm: cove.Realm) -> None:
    # Each row's values go with its own keys: the same keys in another order, fewer keys, a row
    # with a collection or a link between rows of single values.
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        rows = [{"id": 1, "name": "a", "age": 1}, {"id": 2, "name": "b", "age": 2},
                {"age": 3, "id": 3, "name": "c"}, {"name": "d", "id": 4},
                {"id": 5, "name": "e", "age": 5, "tags": ["t"]}, {"id": 6, "name": "f", "age": 6},
                {"id": 7, "name": "g", "age": 7, "dog": rex}, {"id": 8, "name": "h", "age": 8}]
        assert realm.create_many("Person", rows) == 8
    expected = [(1, "a", 1), (2, "b", 2), (3, "c", 3), (4, "d", 0), (5, "e", 5), (6, "f", 6), (7, "g", 7), (8, "h", 8)]
    assert [(p.id, p.name, p.age) for p in (realm.find("Person", i) for i in range(1, 9))] == expected
    assert list(realm.find("Person", 5).tags) == ["t"] and realm.find("Person", 7).dog == rex


def test_links_collections_and_embedded_values(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        created = realm.create_many("Person", [
            {"id": 1, "name": "Ann", "dog": rex, "tags": ["a", "b"], "home": {"city": "Oslo"}, "pets": [rex]},
            {"id": 2, "name": "Bob", "dog": {"name": "Max"}, "pets": [{"name": "Fido", "toys": [{"brand": "A"}]}]},
            {"id": 3, "name": "Cy"},
        ])
        assert created == 3
        ann, bob, cy = (realm.find("Person", i) for i in (1, 2, 3))
        assert ann.dog == rex and set(ann.tags) == {"a", "b"} and ann.home.city == "Oslo" and list(ann.pets) == [rex]
        assert bob.dog.name == "Max" and bob.pets[0].toys[0].brand == "A"
        assert cy.name == "Cy" and cy.dog is None and len(cy.tags) == 0
        # a class without a primary key: objects with collections are created in order
        assert realm.create_many("Dog", [{"name": "D1"}, {"name": "D2", "toys": [{"brand": "T"}]}, {"name": "D3"}]) == 3


def test_update(realm: cove.Realm) -> None:
    with realm.write():
        realm.create_many("Person", [{"id": i, "name": f"p{i}", "age": 1} for i in range(3)])
        assert realm.create_many("Person", [{"id": 1, "age": 50, "tags": ["x"]}, {"id": 7, "name": "new"}], update=True) == 2
        one = realm.find("Person", 1)
        assert one.name == "p1" and one.age == 50 and list(one.tags) == ["x"]   # not given: kept
        assert realm.find("Person", 7).name == "new"
        with pytest.raises(cove.InvalidArgumentError):
            realm.create_many("Dog", [{"name": "x"}], update=True)     # no primary key to update by


def test_declared_class(tmp_path: pathlib.Path) -> None:
    class Item(cove.Object):
        sku: str = cove.Property(primary_key=True)
        count: int = 1
        labels: cove.Set[str]

    with cove.open(None, schema=[Item], schema_version=1) as realm:
        with realm.write():
            assert realm.create_many(Item, [{"sku": "a"}, {"sku": "b", "count": 5, "labels": {"x"}}]) == 2
            a = realm.find(Item, "a")
            assert isinstance(a, Item) and a.count == 1 and realm.find(Item, "b").count == 5
            assert list(realm.find(Item, "b").labels) == ["x"]
            a.count = 9
            realm.create_many(Item, [{"sku": "a"}], update=True)      # defaults only for new objects
            assert a.count == 9


def test_bad_input(realm: cove.Realm) -> None:
    with pytest.raises(cove.TransactionError, match="outside a write"):
        realm.create_many("Person", [{"id": 1}])
    with pytest.raises(cove.TransactionError):
        realm.create_many("Person", [])
    with realm.write():
        with pytest.raises(cove.WrongTypeError, match=r"object 2: property 'age' of class 'Person' is int.*\(object 2 of the input\)"):
            realm.create_many("Person", [{"id": 1, "age": 1}, {"id": 2, "age": 2}, {"id": 3, "age": "x"}])
        assert realm.find("Person", 2) is not None and realm.find("Person", 3) is None   # the ones before stay
        with pytest.raises(cove.WrongTypeError, match="object 1 of the input: cove cannot store"):
            realm.create_many("Person", [{"id": 10, "age": 1}, {"id": 11, "age": object()}])
        assert realm.find("Person", 10) is not None
        with pytest.raises(cove.DuplicateKeyError, match="object 1 of the input"):
            realm.create_many("Person", [{"id": 20}, {"id": 20}])
        with pytest.raises(cove.InvalidArgumentError, match="primary key"):
            realm.create_many("Person", [{"name": "no key"}])
        with pytest.raises(cove.NotFoundError, match="colour"):
            realm.create_many("Person", [{"id": 30, "colour": "red"}])
        with pytest.raises(cove.NotFoundError, match="no class 'Cat'"):
            realm.create_many("Cat", [{}])
        with pytest.raises(cove.InvalidArgumentError):
            realm.create_many("Toy", [{"brand": "A"}])                 # embedded
        with pytest.raises(cove.InvalidArgumentError, match="dicts"):
            realm.create_many("Person", [("id", 1)])                   # type: ignore[list-item]
        with pytest.raises(cove.InvalidArgumentError):
            realm.create_many("Dog", [{"name": "x", "owners": []}])    # backlinks are computed
        with pytest.raises(OverflowError, match="object 0 of the input"):
            realm.create_many("Person", [{"id": 1 << 70}])


def test_persists(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "p.cove"
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            realm.create_many("Person", [{"id": i, "name": str(i), "tags": [str(i)]} for i in range(1500)])
    with cove.open(path) as realm:
        assert realm.find("Person", 1499).name == "1499" and list(realm.find("Person", 7).tags) == ["7"]
        assert realm.verify()


def test_columns_of_every_shape(tmp_path: pathlib.Path) -> None:
    """Columns of one Python type go to the library whole, others value by value: both give
    the same objects, and a bad value in either stops the batch at its row."""
    schema = {"Thing": {"primaryKey": "id", "properties": {
        "id": "int", "s": "string", "b": "bool", "d": "double", "oi": "int?", "os": "string?", "n": "int?",
        "raw": "data"}}}
    with cove.open(tmp_path / "t.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        texts = ["", "plain", "h\u00e9llo", "\U0001F600 emoji", "x" * 3000]
        rows = [{"id": i, "s": texts[i % 5], "b": i % 2 == 0, "d": i / 4,
                 "oi": None if i % 3 == 0 else -i * (1 << 40),      # ints and None: value by value
                 "os": texts[i % 5] if i % 4 else None, "n": None, "raw": bytes([i % 256]) * (i % 7)}
                for i in range(300)]
        with realm.write():
            assert realm.create_many("Thing", rows) == 300
        for i in (0, 1, 2, 3, 4, 151, 299):
            t = realm.find("Thing", i)
            assert (t.s, t.b, t.d, t.oi, t.os, t.n, t.raw) == (
                texts[i % 5], i % 2 == 0, i / 4, None if i % 3 == 0 else -i * (1 << 40),
                texts[i % 5] if i % 4 else None, None, bytes([i % 256]) * (i % 7))
        with realm.write():
            # An int past 64 bits in a column of ints: the rows before it are created.
            with pytest.raises(OverflowError, match="object 2 of the input: .* does not fit a 64-bit int"):
                realm.create_many("Thing", [{"id": 1000 + k, "oi": 1 << 70 if k == 2 else k} for k in range(5)])
            assert realm.find("Thing", 1001) is not None and realm.find("Thing", 1002) is None
            # A str in a column of ints reaches the library, which names property and row.
            with pytest.raises(cove.WrongTypeError, match=r"object 1: property 'oi' of class 'Thing' is int\?"):
                realm.create_many("Thing", [{"id": 2000, "oi": 1}, {"id": 2001, "oi": "one"}])
            # Invalid UTF-8 (a lone surrogate) in a column of strs is refused by the library.
            with pytest.raises(cove.Error, match="UTF-8"):
                realm.create_many("Thing", [{"id": 3000, "s": "ok"}, {"id": 3001, "s": "bad \ud800"}])
            assert realm.find("Thing", 3000) is not None and realm.find("Thing", 3001) is None
