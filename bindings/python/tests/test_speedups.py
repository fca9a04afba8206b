"""The binding's C paths (cove/_speedups.c) against the general Python paths they stand in for:
attribute reads of every type, objects found by an int primary key (which carry their handle as
an address and an owner that releases it), and create_many's rows taken and packed in C. Each C
path must give what the general path gives, errors included."""
from __future__ import annotations

import datetime
import decimal
import gc
import pathlib
import re
import uuid
from collections import OrderedDict
from typing import Any, Iterator

import pytest

import cove

SCHEMA = {
    "Thing": {"primaryKey": "id", "properties": {
        "id": "int", "i": "int?", "b": "bool?", "f": "float?", "d": "double?", "s": "string?",
        "raw": "data?", "when": "date?", "dec": "decimal128?", "oid": "objectId?", "u": "uuid?",
        "any": "mixed", "other": "Thing?", "tags": "string[]", "set": "int<>", "map": "string{}",
        "home": "Place?", "fans": "@links(Thing.other)"}},
    "Place": {"embedded": True, "properties": {"city": "string"}},
    "Loose": {"properties": {"n": "int"}},
}

VALUES: dict[str, Any] = {
    "i": -(1 << 62), "b": True, "f": 1.5, "d": 2.25, "s": "h\u00e9llo \U0001F600", "raw": b"\x00\xff\x10",
    "when": datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.timezone.utc),
    "dec": decimal.Decimal("12.5"), "oid": cove.ObjectId(bytes(range(12))),
    "u": uuid.UUID("12345678-1234-5678-1234-567812345678"), "any": "mixed text",
}


def test_reads_of_every_type_match_the_general_path(realm: cove.Realm) -> None:
    with realm.write():
        first = realm.create("Thing", {"id": 1, **VALUES})
        second = realm.create("Thing", {"id": 2, "other": first, "tags": ["a", "b"], "set": [3],
                                        "map": {"k": "v"}, "home": {"city": "Oslo"}})
    for obj in (realm.find("Thing", 1), realm.find("Thing", 2), first, second):
        for name in SCHEMA["Thing"]["properties"]:
            fast, general = getattr(obj, name), obj._get(name)
            if isinstance(general, (cove.List, cove.Set, cove.Map, cove.Results)):
                assert type(fast) is type(general) and list(fast) == list(general), name
            elif isinstance(general, cove.Object):
                assert fast == general, name
            else:
                assert type(fast) is type(general) and fast == general, name
    found = realm.find("Thing", 1)
    assert {name: getattr(found, name) for name in VALUES} == VALUES
    # The C path leaves no value of a plain type to the general path.
    assert type(found.i) is int and type(found.b) is bool and type(found.s) is str and type(found.raw) is bytes
    none = realm.find("Thing", 2)
    assert (none.i, none.s, none.raw, none.any) == (None, None, None, None)
    assert none.other == found and none.home.city == "Oslo" and list(found.fans) == [none]


def test_an_object_found_by_int_key_works_as_any_other(realm: cove.Realm) -> None:
    with realm.write():
        realm.create("Thing", {"id": 7, "s": "seven"})
    found = realm.find("Thing", 7)
    assert "_handle" not in found.__dict__ and found._addr                 # an address and an owner
    same = realm.objects("Thing").filter("id == 7")[0]                     # a cffi handle
    assert found == same and hash(found) == hash(same) and found.is_valid
    seen = []
    token = found.observe(lambda change: seen.append(change))
    with realm.write():
        found.s = "SEVEN"
        found.tags.append("x")
    realm.refresh()
    assert same.s == "SEVEN" and list(found.tags) == ["x"] and seen
    token.invalidate()
    frozen = found.freeze()
    assert frozen.s == "SEVEN" and frozen.is_frozen
    with realm.write():
        realm.delete(found)
    assert not same.is_valid
    with pytest.raises(cove.InvalidatedError):
        found.s
    with pytest.raises(cove.InvalidatedError):
        same.s
    assert frozen.s == "SEVEN"


def test_find_by_int_key_edge_cases(realm: cove.Realm) -> None:
    with realm.write():
        realm.create("Thing", {"id": -(1 << 63)})
        realm.create("Thing", {"id": (1 << 63) - 1})
        realm.create("Loose", {"n": 1})
    assert realm.find("Thing", -(1 << 63)).id == -(1 << 63)
    assert realm.find("Thing", (1 << 63) - 1).id == (1 << 63) - 1
    assert realm.find("Thing", 0) is None
    with pytest.raises(OverflowError):
        realm.find("Thing", 1 << 63)                          # past 64 bits: the general path
    with pytest.raises(cove.WrongTypeError):
        realm.find("Thing", True)                             # a bool is not an int key
    with pytest.raises(cove.NotFoundError, match="Nope"):
        realm.find("Nope", 1)
    with pytest.raises(cove.InvalidArgumentError):
        realm.find("Loose", 1)                                # no primary key


def test_find_gives_declared_classes_and_follows_a_class_declared_later(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    with cove.open(path, schema={"Dog": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}}},
                   schema_version=1) as realm:
        with realm.write():
            realm.create("Dog", {"id": 1, "name": "Rex"})
        assert type(realm.find("Dog", 1)) is cove.Object

        class Dog(cove.Object):
            id: int = cove.Property(primary_key=True)
            name: str

        dog = realm.find(Dog, 1)
        assert type(dog) is Dog and dog.name == "Rex"
        assert type(realm.find("Dog", 1)) is Dog                   # declared now: goes first
        assert Dog.name.name == "name" and Dog.name.encoded == b"name"   # the class attribute
    with pytest.raises(ValueError, match="NUL"):
        cove._object._PropertyAccessor("a\0b")                           # names reach C as NUL-terminated


def test_closed_realm_and_frozen_realms(tmp_path: pathlib.Path) -> None:
    realm = cove.open(tmp_path / "c.cove", schema=SCHEMA, schema_version=1, durability="no_sync")
    with realm.write():
        realm.create("Thing", {"id": 1, "s": "one"})
    found = realm.find("Thing", 1)
    frozen = realm.freeze()
    assert frozen.find("Thing", 1).s == "one"
    realm.close()
    with pytest.raises(cove.ClosedError):
        realm.find("Thing", 1)
    with pytest.raises(cove.ClosedError):
        found.s
    assert frozen.find("Thing", 1).s == "one"
    frozen.close()


def test_an_object_found_by_int_key_releases_its_handle(realm: cove.Realm) -> None:
    with realm.write():
        realm.create("Thing", {"id": 1})
    frozen = realm.freeze()
    found = frozen.find("Thing", 1)
    del frozen
    gc.collect()
    with realm.write():
        realm.create("Thing", {"id": 2})
    assert realm.active_versions == 2             # the object keeps its frozen version
    del found
    gc.collect()
    assert realm.active_versions == 1             # its handle went with it


def test_create_many_rows_of_every_kind(realm: cove.Realm) -> None:
    class Row(OrderedDict):  # type: ignore[type-arg]
        pass

    rows: list[Any] = [{"id": i, "i": i, "s": f"s{i}"} for i in range(2500)]        # past one batch
    rows[5] = Row(id=5, i=5, s="s5")                                              # not a dict
    rows[6] = {"id": 6, "s": "s6", "i": 6}                                        # another order
    rows[7] = {"id": 7, "i": None, "s": None}                                     # nulls
    rows[8] = {"id": 8, "i": 8, "s": "s8", "tags": ["t"]}                         # a collection
    rows[9] = {"id": 9, "i": 9, "s": "s9", "when": VALUES["when"]}                # a general value

    class Key(str):
        pass

    rows[10] = {Key("id"): 10, Key("i"): 10, Key("s"): "s10"}                     # keys of a str subclass
    with realm.write():
        assert realm.create_many("Thing", iter(rows)) == 2500
    assert [realm.find("Thing", k).s for k in (0, 5, 6, 8, 9, 10, 2499)] == ["s0", "s5", "s6", "s8", "s9", "s10", "s2499"]
    assert realm.find("Thing", 7).i is None and realm.find("Thing", 7).s is None
    assert list(realm.find("Thing", 8).tags) == ["t"] and realm.find("Thing", 9).when == VALUES["when"]
    assert len(realm.objects("Thing")) == 2500


def test_create_many_when_the_input_fails(realm: cove.Realm) -> None:
    def rows() -> Iterator[dict[str, Any]]:
        for i in range(1500):
            if i == 1200:
                raise RuntimeError("the input broke")
            yield {"id": i, "s": "x"}

    with realm.write():
        with pytest.raises(RuntimeError, match="the input broke"):
            realm.create_many("Thing", rows())
        assert realm.find("Thing", 999) is not None         # the first batch went in
        with pytest.raises(OverflowError, match="object 3 of the input"):
            realm.create_many("Thing", [{"id": 5000 + k, "i": 1 << 64 if k == 3 else k} for k in range(6)])
        assert realm.find("Thing", 5002) is not None and realm.find("Thing", 5003) is None
        with pytest.raises(cove.Error, match="UTF-8"):
            realm.create_many("Thing", [{"id": 6000, "s": "ok"}, {"id": 6001, "s": "\udc80"}])
        assert realm.find("Thing", 6000) is not None and realm.find("Thing", 6001) is None
        with pytest.raises(cove.WrongTypeError, match=r"property 'i' of class 'Thing' is int\?, got bool.*object 1 of the input"):
            realm.create_many("Thing", [{"id": 7000, "i": 1}, {"id": 7001, "i": True}])


def test_a_frozen_realm_is_read_through_the_c_paths_from_threads(realm: cove.Realm) -> None:
    import threading

    with realm.write():
        realm.create_many("Thing", [{"id": i, "s": f"s{i}", "d": i / 2} for i in range(200)])
    frozen = realm.freeze()
    errors: list[BaseException] = []

    def reader(offset: int) -> None:
        try:
            for n in range(3000):
                k = (n * 7 + offset) % 200
                obj = frozen.find("Thing", k)
                assert (obj.id, obj.s, obj.d) == (k, f"s{k}", k / 2)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    frozen.close()


def test_random_rows_load_the_same_through_create_many_and_create(tmp_path: pathlib.Path) -> None:
    """Random rows of every plain type, edge values among them, and some of other types: what
    create_many's C path loads and what create() loads one object at a time read back the same,
    through the C accessors and through the general path."""
    import math
    import random

    rng = random.Random(20261124)
    ints = [0, 1, -1, (1 << 63) - 1, -(1 << 63), 1 << 31, -(1 << 31) - 1]
    floats = [0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, math.inf, -math.inf, math.nan]
    texts = ["", "a", "h\u00e9llo", "\u4e2d\u6587", "\U0001F600", "x" * 5000, "nul\x00inside"]
    blobs = [b"", b"\x00", bytes(range(256)), b"\xff" * 3000]

    def value(kind: str) -> Any:
        choice = rng.random()
        if choice < 0.15:
            return None
        if kind == "i":
            return rng.choice(ints) if choice < 0.4 else rng.randrange(-(1 << 63), 1 << 63)
        if kind == "b":
            return rng.random() < 0.5
        if kind in ("f", "d"):
            return rng.choice(floats) if choice < 0.4 else rng.uniform(-1e6, 1e6)
        if kind == "s":
            return rng.choice(texts) if choice < 0.6 else "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(40)))
        if kind == "raw":
            return rng.choice(blobs)
        if kind == "when":
            return VALUES["when"] + datetime.timedelta(seconds=rng.randrange(10**6))
        return rng.choice([VALUES["dec"], VALUES["oid"], VALUES["u"], 7, "mixed", 2.5, None])

    kinds = ["i", "b", "d", "s", "raw", "when", "any"]
    rows = []
    for k in range(3000):
        names = [n for n in kinds if rng.random() < 0.8]
        if rng.random() < 0.3:
            rng.shuffle(names)
        rows.append({"id": k, **{n: value(n) for n in names}})
    with cove.open(tmp_path / "a.cove", schema=SCHEMA, schema_version=1, durability="no_sync") as bulk, \
            cove.open(tmp_path / "b.cove", schema=SCHEMA, schema_version=1, durability="no_sync") as single:
        with bulk.write():
            assert bulk.create_many("Thing", rows) == len(rows)
        with single.write():
            for row in rows:
                single.create("Thing", row)

        def same(a: Any, b: Any) -> bool:
            if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
                return True
            return type(a) is type(b) and a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))

        for row in rows:
            a, b = bulk.find("Thing", row["id"]), single.find("Thing", row["id"])
            for name in kinds:
                fast, general, other = getattr(a, name), a._get(name), getattr(b, name)
                assert same(fast, general) and same(fast, other), (row["id"], name, fast, general, other)
                if name in row and row[name] is not None and name != "f":
                    want = row[name]
                    assert same(fast, float(want) if name == "d" else want) or name in ("when", "any"), (row["id"], name)


def test_results_made_in_c_iterate_index_and_fail_as_before(realm: cove.Realm) -> None:
    with realm.write():
        realm.create_many("Thing", [{"id": i, "s": f"s{i}"} for i in range(50)])
    results = realm.objects("Thing").sorted("id")
    assert [t.id for t in results] == list(range(50))
    assert results[7].s == "s7" and results[-1].id == 49 and [t.id for t in results[10:13]] == [10, 11, 12]
    assert type(results[0]) is cove.Object and "_handle" not in results[0].__dict__
    with pytest.raises(cove.OutOfRangeError, match="50"):
        results[50]
    walk = iter(results)
    first = next(walk)
    with realm.write():
        realm.delete(realm.find("Thing", 1))                 # deleted after iter() read the keys
    assert first.id == 0 and [t.id for t in walk] == [k for k in range(2, 50)]
    frozen = results.freeze()
    with realm.write():
        realm.delete(realm.find("Thing", 2))
    assert [t.id for t in frozen][:3] == [0, 2, 3] and frozen[1].s == "s2"
    walk = iter(results)
    realm.close()
    with pytest.raises(cove.ClosedError):
        next(walk)
    with pytest.raises(cove.ClosedError):
        results[0]


def test_links_and_collection_elements_made_in_c(tmp_path: pathlib.Path) -> None:
    schema = {
        "Person": {"primaryKey": "id", "properties": {
            "id": "int", "dog": "Dog?", "dogs": "Dog[]", "pack": "Dog<>", "any": "mixed", "anys": "mixed[]",
            "tags": "string[]", "nums": "int<>", "home": "Place?"}},
        "Dog": {"properties": {"name": "string"}},
        "Place": {"embedded": True, "properties": {"city": "string"}},
    }
    with cove.open(tmp_path / "l.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            rex, fido = realm.create("Dog", {"name": "Rex"}), realm.create("Dog", {"name": "Fido"})
            ann = realm.create("Person", {"id": 1, "dog": rex, "dogs": [rex, fido, rex], "pack": [fido],
                                          "any": fido, "anys": [1, rex, "x", None], "tags": ["a", "b"],
                                          "nums": [3, 1], "home": {"city": "Oslo"}})
        for _ in range(2):                  # the first read of a class fills the cache, the second is C's
            assert ann.dog == rex and ann.dog.name == "Rex" and ann.any == fido
            assert [d.name for d in ann.dogs] == ["Rex", "Fido", "Rex"] and list(ann.pack) == [fido]
            assert list(ann.anys) == [1, rex, "x", None] and ann.dogs[-1] == rex and ann.dogs[1:] == [fido, rex]
            assert list(ann.tags) == ["a", "b"] and sorted(ann.nums) == [1, 3] and ann.home.city == "Oslo"
            assert type(ann.dog) is cove.Object and type(ann.home) is cove.EmbeddedObject
        assert realm._link_classes                                   # the C path had what it needs
        with pytest.raises(cove.OutOfRangeError):
            ann.dogs[3]
        with realm.write():
            realm.delete(fido)
        assert ann.any is None and list(ann.pack) == [] and [d.name for d in ann.dogs] == ["Rex", "Rex"]

        class Dog(cove.Object):
            name: str

        realm.objects(Dog)                                           # declares it: its links come back as Dogs
        assert type(ann.dog) is Dog and all(type(d) is Dog for d in ann.dogs)
        frozen = ann.freeze()
        realm.close()
        with pytest.raises(cove.ClosedError):
            ann.dog
        with pytest.raises(cove.ClosedError):
            list(ann.dogs)
        assert frozen.dog.name == "Rex" and [d.name for d in frozen.dogs] == ["Rex", "Rex"]
        frozen.realm.close()


def test_maps_read_in_c(tmp_path: pathlib.Path) -> None:
    schema = {"Person": {"primaryKey": "id", "properties": {
        "id": "int", "scores": "double{}", "dogs": "Dog?{}", "any": "mixed{}"}},
        "Dog": {"properties": {"name": "string"}}}
    with cove.open(tmp_path / "m.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex"})
            ann = realm.create("Person", {"id": 1, "scores": {"b": 2.5, "a": 1.0, "\u00e9": -0.0},
                                          "dogs": {"first": rex, "none": None}, "any": {"x": 1, "y": "two", "z": rex}})
        for _ in range(2):
            assert list(ann.scores.items()) == [("a", 1.0), ("b", 2.5), ("\u00e9", -0.0)]
            assert ann.scores["b"] == 2.5 and ann.scores.get("q", 7) == 7 and "a" in ann.scores and "q" not in ann.scores
            assert dict(ann.dogs) == {"first": rex, "none": None} and ann.dogs["first"].name == "Rex"
            assert dict(ann.any) == {"x": 1, "y": "two", "z": rex} and list(ann.any.values())[2] == rex
        with pytest.raises(KeyError):
            ann.scores["q"]
        assert 1 not in ann.scores                                  # not a str: never a key
        with pytest.raises(cove.InvalidArgumentError, match="NUL"):
            ann.scores["a\0b"]
        scores = ann.scores
        with realm.write():
            realm.delete(ann)
        with pytest.raises(cove.InvalidatedError):
            scores["a"]
        with pytest.raises(cove.InvalidatedError):
            list(scores.items())


def test_sets_of_plain_values_in_c_and_their_errors(realm: cove.Realm) -> None:
    with realm.write():
        t = realm.create("Thing", {"id": 1})
        values = {"i": -(1 << 63), "b": False, "f": 2.5, "d": -0.0, "s": "\u00e9t\u00e9 \U0001F600", "raw": b"\x00\x01",
                  "any": "text"}
        for name, value in values.items():
            setattr(t, name, value)
            assert getattr(t, name) == value and type(getattr(t, name)) is type(value), name
        for name in ("i", "b", "s", "raw", "any"):
            setattr(t, name, None)
            assert getattr(t, name) is None, name
        t.when = VALUES["when"]                                  # not a plain type: the general path
        assert t.when == VALUES["when"]
        with pytest.raises(cove.WrongTypeError, match="property 'i' of class 'Thing' is int\\?, got string"):
            t.i = "x"
        with pytest.raises(cove.WrongTypeError, match="got bool"):
            t.i = True
        with pytest.raises(OverflowError):
            t.i = 1 << 64
        with pytest.raises(cove.WrongTypeError, match="primary key 'id' of class 'Thing' is int, got null"):
            t.id = None
        with pytest.raises(cove.NotFoundError, match="no property 'nope'"):
            t.nope = 1
        assert t.i is None and t.id == 1                         # the refused sets changed nothing
        realm.delete(t)
        with pytest.raises(cove.InvalidatedError):
            t.i = 1
    other = realm.find("Thing", 1)
    assert other is None
    with realm.write():
        u = realm.create("Thing", {"id": 2})
    with pytest.raises(cove.TransactionError, match="outside a write"):
        u.i = 3


def test_collection_writes_in_c_and_their_errors(realm: cove.Realm) -> None:
    with realm.write():
        t = realm.create("Thing", {"id": 1})
        t.tags.append("a")
        t.tags.insert(0, "\u00e9")
        t.tags[1] = "b"
        t.set.add(3)
        t.set.add(3)
        t.map["k"] = "v"
        t.map["k"] = "w"
        assert list(t.tags) == ["\u00e9", "b"] and list(t.set) == [3] and dict(t.map) == {"k": "w"}
        with pytest.raises(cove.WrongTypeError, match="got int"):
            t.tags.append(5)
        with pytest.raises(cove.WrongTypeError):
            t.set.add("three")
        with pytest.raises(cove.OutOfRangeError):
            t.tags[7] = "x"
        with pytest.raises(cove.OutOfRangeError):
            t.tags.insert(9, "x")
        with pytest.raises(OverflowError):
            t.set.add(1 << 64)
        assert list(t.tags) == ["\u00e9", "b"] and list(t.set) == [3]        # refused writes changed nothing
    with pytest.raises(cove.TransactionError, match="outside a write"):
        t.tags.append("c")
    with pytest.raises(cove.TransactionError, match="outside a write"):
        t.map["x"] = "y"
    frozen = t.freeze()
    with pytest.raises(cove.FrozenError):
        frozen.set.add(4)


def test_links_packed_in_c_and_objects_of_another_file(tmp_path: pathlib.Path) -> None:
    """create() and create_many() pack links to objects of the same realm in C; an object of a
    realm on another file is refused wherever it would become a link (its key would name some
    other object there), and one of the same file (a frozen realm, a second handle) is taken."""
    schema = {
        "Person": {"primaryKey": "id", "properties": {
            "id": "int", "dog": "Dog?", "dogs": "Dog[]", "pack": "Dog<>", "named": "Dog?{}", "any": "mixed"}},
        "Dog": {"properties": {"name": "string", "owners": "@links(Person.dog)"}},
    }
    here = cove.open(tmp_path / "here.cove", schema=schema, schema_version=1, durability="no_sync")
    there = cove.open(tmp_path / "there.cove", schema=schema, schema_version=1, durability="no_sync")
    with there.write():
        stranger = there.create("Dog", {"name": "Stranger"})
    with here.write():
        rex = here.create("Dog", {"name": "Rex"})
        gone = here.create("Dog", {"name": "Gone"})
        people = [here.create("Person", {"id": i, "dog": rex, "any": rex}) for i in range(50)]
        assert here.create_many("Person", ({"id": 100 + i, "dog": rex} for i in range(50))) == 50
        assert len(rex.owners) == 100 and people[7].dog == rex and people[7].any == rex
        here.delete(gone)
        with pytest.raises(cove.InvalidatedError, match="was deleted"):
            here.create("Person", {"id": 200, "dog": gone})       # a deleted object makes no link
        with pytest.raises(cove.InvalidArgumentError, match=r"belongs to another realm \(.*there\.cove\)"):
            here.create("Person", {"id": 201, "dog": stranger})
        for write in (lambda p: here.create("Person", {"id": 202, "any": stranger}),
                      lambda p: here.create_many("Person", [{"id": 203, "dog": stranger}]),
                      lambda p: setattr(p, "dog", stranger), lambda p: setattr(p, "any", stranger),
                      lambda p: p.dogs.append(stranger), lambda p: p.pack.add(stranger),
                      lambda p: p.named.__setitem__("x", stranger)):
            with pytest.raises(cove.InvalidArgumentError, match="belongs to another realm"):
                write(people[0])
        assert len(here.objects("Person")) == 100 and people[0].dog == rex and people[0].any == rex
        assert list(people[0].dogs) == [] and len(people[0].pack) == 0 and len(people[0].named) == 0
    with pytest.raises(cove.InvalidArgumentError, match="belongs to another realm"):
        here.objects("Person").filter("dog == $0", stranger)
    frozen_rex = rex.freeze()
    again = cove.open(tmp_path / "here.cove", schema=schema, schema_version=1, durability="no_sync")
    with here.write():
        p = here.create("Person", {"id": 300, "dog": frozen_rex})                 # a frozen object of this file
        p.dogs.append(again.objects("Dog")[0])                                    # a second handle's
    assert p.dog == rex and list(p.dogs) == [rex] and len(rex.owners) == 101
    assert len(here.objects("Person").filter("dog == $0", frozen_rex)) == 101
    for r in (frozen_rex.realm, again, here, there):
        r.close()


def test_create_in_c_and_what_it_leaves_to_python(tmp_path: pathlib.Path) -> None:
    """create() makes an object from plain values and links in one C call; more values than the
    C path packs, a value it does not pack (a date, a string with a lone surrogate) and a create
    the library refuses take the general path, which gives the same objects and raises the
    library's errors."""
    wide = {f"v{i}": "int" for i in range(40)}
    schema = {"Wide": {"properties": wide},
              "Thing": {"primaryKey": "id", "properties": {"id": "int", "s": "string?", "when": "date?", "other": "Thing?"}}}
    with cove.open(tmp_path / "c.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            w = realm.create("Wide", {f"v{i}": i * 3 for i in range(40)})                   # past 32 values
            assert [getattr(w, f"v{i}") for i in range(40)] == [i * 3 for i in range(40)]
            a = realm.create("Thing", {"id": 1, "s": "a"})
            b = realm.create("Thing", {"id": 2, "when": VALUES["when"], "other": a})          # a date: Python packs it
            c = realm.create("Thing", {"id": 3, "s": "c", "other": b})
            assert type(a) is cove.Object and b.when == VALUES["when"] and b.other == a and c.other.other == a
            for values, error, text in (({"id": 1}, cove.DuplicateKeyError, "primary key 1"),
                                        ({"id": 4, "s": 5}, cove.WrongTypeError, "property 's' of class 'Thing' is string?, got int"),
                                        ({"id": 4, "nope": 1}, cove.NotFoundError, "nope"),
                                        ({"id": 4, "s": "\ud800"}, cove.InvalidArgumentError, "not valid UTF-8"),
                                        # carrying a realm and a handle, but not objects
                                        ({"id": 4, "other": realm.objects("Thing")}, cove.WrongTypeError, "type Results"),
                                        ({"id": 4, "other": realm}, cove.WrongTypeError, "type Realm")):
                with pytest.raises(error, match=re.escape(text)):
                    realm.create("Thing", values)
            assert len(realm.objects("Thing")) == 3 and realm.find("Thing", 4) is None
    with pytest.raises(cove.ClosedError):
        realm.create("Thing", {"id": 5})


def test_attribute_sets_try_c_first_and_fall_back(realm: cove.Realm) -> None:
    """`obj.name = value` hands a plain value to the library from C before looking the property
    up; what the library refuses (a collection, an embedded object, a wrong type, a frozen
    object, no write) takes the general path, which does what the property wants or raises."""
    with realm.write():
        realm.create("Thing", {"id": 1})
        realm.create("Thing", {"id": 2})
    a, b = list(realm.objects("Thing"))                  # made in C: no cffi pointer yet
    assert "_handle" not in a.__dict__ and a._addr
    with realm.write():
        a.s = "text"
        a.i = 7
        a.any = 2.5
        a.tags = ["x", "y"]                              # refused in C, assigned as a list
        a.set = {3, 4}
        a.map = {"k": "v"}
        a.home = {"city": "Oslo"}                        # an embedded object from a dict
        a.other = b
        a.other = None                                   # a null link, from C
        b["i"] = 11                                      # item syntax takes the same steps
        b["tags"] = ["z"]
        with pytest.raises(cove.WrongTypeError, match=re.escape("property 'i' of class 'Thing' is int?, got string")):
            b["i"] = "eleven"
        with pytest.raises(cove.WrongTypeError, match=re.escape("property 'i' of class 'Thing' is int?, got string")):
            a.i = "seven"
        with pytest.raises(cove.WrongTypeError):
            a.other = 5
        with pytest.raises(cove.NotFoundError, match="nope"):
            a.nope = 1
        with pytest.raises(cove.InvalidArgumentError, match="backlinks"):
            a.fans = 1
    assert (a.s, a.i, a.any, list(a.tags), sorted(a.set), dict(a.map)) == ("text", 7, 2.5, ["x", "y"], [3, 4], {"k": "v"})
    assert a.home.city == "Oslo" and a.other is None and b.i == 11 and list(b.tags) == ["z"]
    with pytest.raises(cove.TransactionError, match="outside a write"):
        a.i = 8
    frozen = a.freeze()
    with pytest.raises(cove.FrozenError):
        frozen.i = 9
    assert a.i == 7
    frozen.realm.close()


def test_planned_creates_match_the_general_path_and_raise_as_it(tmp_path: pathlib.Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """After a first create of a class, create() goes to C by the class's plan
    (RealmBase.create, _speedups.c); what the plan does not cover takes the general path, and every
    error is the general path's."""
    schema = {"Thing": {"primaryKey": "id", "properties": {
        "id": "int", "s": "string?", "n": "int", "when": "date?", "other": "Thing?", "tags": "string[]",
        "home": "Place?"}},
        "Place": {"embedded": True, "properties": {"city": "string"}},
        "Loose": {"properties": {"n": "int"}}}
    in_python = []
    general = cove.Realm._create_call

    def recorded(realm: cove.Realm, cls: Any, values: Any = None, update: bool = False) -> Any:
        in_python.append((cls, dict(values or {}).get("id")))
        return general(realm, cls, values, update)

    monkeypatch.setattr(cove.Realm, "_create_call", recorded)
    path = tmp_path / "p.cove"
    with cove.open(path, schema=schema, schema_version=1, durability="no_sync") as realm:
        with pytest.raises(cove.TransactionError):
            realm.create("Thing", {"id": 0})
        with realm.write():
            first = realm.create("Thing", {"id": 1, "s": "one", "n": 1})
            assert realm._create_plans["Thing"]                          # planned from now on
            plain = realm.create("Thing", {"id": 2, "s": "two", "n": 2})
            linked = realm.create("Thing", {"n": 3, "other": first, "id": 3})          # any order
            mixed = realm.create("Thing", {"id": 4, "tags": ["a"], "home": {"city": "Oslo"}, "when": VALUES["when"],
                                           "other": {"id": 5, "n": 5}})   # left to the general path
            ordered = realm.create("Thing", OrderedDict(id=6, s="six"))   # not a dict: the same
            assert type(plain) is cove.Object and (plain.id, plain.s, plain.n, plain.other) == (2, "two", 2, None)
            assert linked.other == first and list(mixed.tags) == ["a"] and mixed.home.city == "Oslo"
            assert mixed.when == VALUES["when"] and mixed.other.n == 5 and ordered.s == "six"
            assert realm.create("Loose", None).n == 0 and realm.create("Loose", {"n": 4}).n == 4
            # plain, linked, mixed's nested Thing and the second Loose in C; the rest in Python
            assert in_python == [("Thing", 0), ("Thing", 1), ("Thing", 4), ("Thing", 6), ("Loose", None)]
            assert realm.create("Thing", {"id": 20}, False).id == 20 and realm.create("Thing", {"id": 21}, update=False)
            assert realm.create("Thing", values={"id": 22}).id == 22 and realm.create(cls="Thing", values={"id": 23})
            assert realm.create("Thing", {"id": 20, "s": "up"}, True).s == "up"              # update: Python's
            assert realm.create("Thing", {"id": 21, "s": "up"}, update=True).s == "up"
            assert in_python[5:] == [("Thing", 22), ("Thing", 23), ("Thing", 20), ("Thing", 21)]
            with pytest.raises(TypeError):
                realm.create()                                                   # type: ignore[call-overload]
            with pytest.raises(TypeError):
                realm.create("Thing", {"id": 24}, False, 1)                      # type: ignore[call-overload]
            with pytest.raises(TypeError):
                realm.create("Thing", {"id": 24}, nope=1)                        # type: ignore[call-overload]
            assert realm.find(cls="Thing", primary_key=22).id == 22
            with pytest.raises(TypeError):
                realm.find("Thing")                                              # type: ignore[call-overload]
            for n in (20, 21, 22, 23):
                realm.delete(realm.find("Thing", n))
            assert [t.id for t in realm.objects("Thing").sorted("id")] == [1, 2, 3, 4, 5, 6]     # inside the write
            gone = realm.create("Thing", {"id": 7})
            realm.delete(gone)

            class Key(str):
                pass

            for values, error, text in (
                    ({"id": 1}, cove.DuplicateKeyError, "primary key 1"),
                    ({"s": "no key"}, cove.InvalidArgumentError, "give its value"),
                    ({"id": 8, "n": "x"}, cove.WrongTypeError, "property 'n' of class 'Thing' is int, got string"),
                    ({"id": 8, "n": None}, cove.WrongTypeError, "property 'n' of class 'Thing' is int"),
                    ({"id": 8, "nope": 1}, cove.NotFoundError, "nope"),
                    ({"id": 8, Key("nope"): 1}, cove.NotFoundError, "nope"),
                    ({"id": 8, "other": gone}, cove.InvalidatedError, "deleted"),
                    ({"id": 8, "other": 5}, cove.WrongTypeError, "'other'")):
                with pytest.raises(error, match=re.escape(text)):
                    realm.create("Thing", values)
            with pytest.raises(cove.InvalidArgumentError):
                realm.create(5, {"id": 8})                                       # type: ignore[arg-type]
            with pytest.raises(cove.InvalidArgumentError):
                realm.create([], {"id": 8})                                      # type: ignore[arg-type]
            assert realm.find("Thing", 8) is None
        assert [t.s for t in realm.objects("Thing").sorted("id")] == ["one", "two", None, None, None, "six"]
        with pytest.raises(cove.TransactionError):
            realm.create("Thing", {"id": 9})
        frozen = realm.freeze()
        frozen._create_plans["Thing"] = frozen._plan_creates("Thing", frozen._class_info("Thing"), None)
        with pytest.raises(cove.FrozenError):
            frozen.create("Thing", {"id": 9})                                    # refused in C, raised in Python
        frozen.close()
        with cove.open(path) as other, other.write():
            other.create("Thing", {"id": 10})                                    # each realm plans its own
            assert other._create_plans["Thing"][0] == other._addr
            assert other.create("Thing", {"id": 11, "other": first}).other.id == 1  # a second handle's object
    with pytest.raises(cove.ClosedError):
        realm.create("Thing", {"id": 9})


def test_planned_creates_of_declared_classes_take_their_defaults(tmp_path: pathlib.Path) -> None:
    class Pet(cove.Object):
        id: int = cove.Property(primary_key=True)
        name: str = "unnamed"
        age: int = 3
        toys: cove.List[str] = ["ball"]                     # a default the plan does not write

    class Bird(cove.Object):
        id: int = cove.Property(primary_key=True)
        name: str = "tweety"
        wings: int = 2

    with cove.open(tmp_path / "d.cove", schema=[Pet, Bird], schema_version=1, durability="no_sync") as realm:
        with realm.write():
            realm.create(Bird, {"id": 1})
            assert realm._create_plans[Bird]
            b2 = realm.create(Bird, {"id": 2, "wings": 4})
            b3 = realm.create("Bird", {"id": 3, "name": "polly"})            # by name: the same defaults
            assert type(b2) is Bird and (b2.name, b2.wings) == ("tweety", 4) and (b3.name, b3.wings) == ("polly", 2)
            realm.create(Pet, {"id": 1})
            assert realm._create_plans[Pet] == ()                           # the list default: Python's
            p2 = realm.create(Pet, {"id": 2, "age": 5})
            assert type(p2) is Pet and (p2.name, p2.age, list(p2.toys)) == ("unnamed", 5, ["ball"])
        assert [(b.id, b.name, b.wings) for b in realm.objects(Bird)] == [(1, "tweety", 2), (2, "tweety", 4), (3, "polly", 2)]


def test_a_plan_follows_a_class_declared_after_it(tmp_path: pathlib.Path) -> None:
    schema = {"Dog": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}}}
    with cove.open(tmp_path / "l.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            assert type(realm.create("Dog", {"id": 1})) is cove.Object
            assert type(realm.create("Dog", {"id": 2})) is cove.Object and realm._create_plans["Dog"]
            assert type(realm.find("Dog", 1)) is cove.Object and realm._targets["Dog"]

            class Dog(cove.Object):
                id: int = cove.Property(primary_key=True)
                name: str = "rex"

            assert type(realm.find(Dog, 1)) is Dog                       # declared: plans and targets anew
            assert type(realm.find("Dog", 2)) is Dog
            made = realm.create("Dog", {"id": 3})
            again = realm.create(Dog, {"id": 4})
            assert type(made) is Dog and made.name == "rex" and type(again) is Dog and again.name == "rex"
            realm.schema                                                 # read again, unchanged: kept
            assert realm._create_plans and realm._targets
            assert type(realm.create("Dog", {"id": 5})) is Dog and type(realm.find("Dog", 5)) is Dog


def test_find_keeps_its_target_and_raises_as_before(tmp_path: pathlib.Path) -> None:
    schema = {"Dog": {"primaryKey": "id", "properties": {"id": "int"}}, "Tag": {"primaryKey": "name", "properties": {"name": "string"}}}
    with cove.open(tmp_path / "f.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            realm.create("Dog", {"id": 1})
            realm.create("Tag", {"name": "a"})
        for _ in range(2):                                              # the second time by the kept target
            assert realm.find("Dog", 1).id == 1 and realm.find("Dog", 2) is None and realm.find("Tag", "a").name == "a"
            with pytest.raises(cove.NotFoundError, match="Nope"):
                realm.find("Nope", 1)
            with pytest.raises(cove.WrongTypeError):
                realm.find("Tag", 1)
            with pytest.raises(cove.WrongTypeError):
                realm.find("Dog", "1")
            with pytest.raises(cove.InvalidArgumentError):
                realm.find(["Dog"], 1)                                   # type: ignore[arg-type]
        assert realm.find("Dog", 1).id == 1 and "Dog" in realm._targets and "Nope" not in realm._targets
    with pytest.raises(cove.ClosedError):
        realm.find("Dog", 1)


def test_results_iterate_in_c_as_the_general_path(realm: cove.Realm) -> None:
    with realm.write():
        realm.create_many("Thing", [{"id": i, "s": f"s{i}", "other": None} for i in range(20)])
        first = realm.find("Thing", 0)
        for i in range(1, 20):
            realm.find("Thing", i).other = first
        walk = iter(realm.objects("Thing"))
        assert type(walk).__name__ == "ObjectIterator"
        assert [t.id for t in walk] == list(range(20))                  # inside the write
        walk = iter(realm.objects("Thing").filter("id >= 15"))
        assert next(walk).id == 15
        realm.delete(realm.find("Thing", 16))                            # skipped: deleted since
        assert [t.id for t in walk] == [17, 18, 19]
    results = realm.objects("Thing").sorted("id", ascending=False)
    assert [t.id for t in results] == [t.id for t in results._objects(results._keys(0, len(results)))]
    assert [t.id for t in first.fans][:3] == [1, 2, 3] and len(list(first.fans)) == 18     # backlinks
    assert list(realm.objects("Thing").filter("id > 100")) == []
    walk = iter(realm.objects("Thing"))
    next(walk)
    realm.close()                                  # the next object through the Python path, which raises
    with pytest.raises(cove.ClosedError):
        next(walk)
    with pytest.raises(cove.ClosedError):
        iter(results)


def _by_keys(obj: cove.Object) -> bool:
    """Whether an object reads by keys (an iterated object that has not needed its handle yet)."""
    return not obj._has_handle


def test_iterated_objects_read_by_keys_as_objects_with_handles(realm: cove.Realm) -> None:
    with realm.write():
        first = realm.create("Thing", {"id": 1, **VALUES})
        realm.create("Thing", {"id": 2, "other": first, "tags": ["a", "b"], "set": [3], "map": {"k": "v"},
                               "home": {"city": "Oslo"}})
    iterated = list(realm.objects("Thing").sorted("id"))
    assert [type(o) for o in iterated] == [cove.Object, cove.Object] and all(_by_keys(o) for o in iterated)
    for obj, found in zip(iterated, (realm.find("Thing", 1), realm.find("Thing", 2))):
        for name in SCHEMA["Thing"]["properties"]:
            fast, general = getattr(obj, name), getattr(found, name)
            if isinstance(general, (cove.List, cove.Set, cove.Map, cove.Results)):
                assert type(fast) is type(general) and list(fast) == list(general), name
            else:
                assert type(fast) is type(general) and fast == general, name
    plain = next(iter(realm.objects("Thing").filter("id == 1")))
    assert {name: getattr(plain, name) for name in ("i", "b", "f", "d", "s", "raw")} == \
        {name: VALUES[name] for name in ("i", "b", "f", "d", "s", "raw")}
    assert _by_keys(plain)                                   # plain values need no handle
    assert plain == first and hash(plain) == hash(first) and plain in {first} and plain.is_valid
    assert not _by_keys(plain) and repr(plain) == repr(first)    # equality made the handle


def test_objects_read_by_keys_see_writes_and_deletes(realm: cove.Realm) -> None:
    with realm.write():
        realm.create_many("Thing", [{"id": i, "i": i, "s": f"s{i}"} for i in range(10)])
    with realm.write():
        for t in realm.objects("Thing"):
            t.i = t.i * 10                               # written by keys too; the read sees it
            assert _by_keys(t) and t.i == t.id * 10
        walk = iter(realm.objects("Thing").sorted("id"))
        zero = next(walk)
        realm.find("Thing", 0).s = "changed"
        realm.create("Thing", {"id": 10, "s": "new"})
        assert _by_keys(zero) and zero.s == "changed" and zero.i == 0
        assert [(t.id, t.i) for t in walk] == [(i, i * 10) for i in range(1, 10)]
    kept = list(realm.objects("Thing").sorted("id"))
    assert [t.s for t in kept][:2] == ["changed", "s1"] and kept[10].s == "new"
    with pytest.raises(cove.TransactionError):
        kept[1].i = 5                                   # refused by keys, then by the general path
    with realm.write():
        with pytest.raises(cove.WrongTypeError, match="'i'"):
            kept[1].i = "five"
        kept[1].tags = ["a"]                            # not a single value: the general path
    assert kept[1].i == 10 and list(kept[1].tags) == ["a"]
    with realm.write():
        realm.delete(realm.find("Thing", 3))             # through another object's handle
        realm.delete(kept[4])                            # through the object read by keys
        kept[5].other = kept[6]                          # links to and from objects read by keys
        realm.create("Thing", {"id": 11, "other": kept[7]})
    for gone in (kept[3], kept[4]):
        with pytest.raises(cove.InvalidatedError, match="deleted"):
            gone.s
        assert not gone.is_valid and "(deleted)" in repr(gone)
    assert kept[5].other == kept[6] and realm.find("Thing", 11).other.s == "s7"
    still = {t.id: t for t in realm.objects("Thing")}
    with realm.write():
        realm.objects("Thing").filter("id == 8").delete_all()
    with pytest.raises(cove.InvalidatedError):
        still[8].i                                      # deleted before it needed a handle
    assert _by_keys(still[9]) and still[9].i == 90 and not still[8].is_valid
    with pytest.raises(cove.InvalidatedError):
        hash(still[8])


def test_objects_read_by_keys_keep_to_their_thread_and_their_realm(realm: cove.Realm) -> None:
    import threading

    with realm.write():
        realm.create_many("Thing", [{"id": i, "s": f"s{i}"} for i in range(3)])
    live = list(realm.objects("Thing").sorted("id"))
    frozen = list(realm.objects("Thing").sorted("id").freeze())
    got: list[Any] = []

    def read(objects: list[cove.Object]) -> None:
        try:
            got.append([t.s for t in objects])
        except cove.Error as exc:
            got.append(exc)

    with realm.write():
        realm.find("Thing", 0).s = "in the write"
        for objects in (live, frozen):
            t = threading.Thread(target=read, args=(objects,))
            t.start()
            t.join()
    assert isinstance(got[0], cove.WrongThreadError) and got[1] == ["s0", "s1", "s2"]
    assert live[0].s == "in the write" and frozen[0].s == "s0" and _by_keys(live[0]) and _by_keys(frozen[0])
    realm.close()
    with pytest.raises(cove.ClosedError):
        live[1].s
    assert not live[2].is_valid and frozen[1].s == "s1"          # the frozen realm stays open
    frozen[0].realm.close()
    with pytest.raises(cove.ClosedError):
        frozen[1].s
    assert not frozen[2].is_valid


def test_collections_iterate_in_c_as_their_generators_did(tmp_path: pathlib.Path) -> None:
    schema = {"Box": {"properties": {
        "nums": "int[]", "set": "string<>", "map": "double{}", "dates": "date[]", "links": "Box[]", "anys": "mixed{}"}}}
    when = VALUES["when"]
    with cove.open(tmp_path / "c.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            box = realm.create("Box", {"nums": [3, 1, 2], "set": ["b", "a"], "map": {"y": 2.5, "x": 1.5},
                                       "dates": [when, when], "anys": {"d": when, "i": 1}})
            other = realm.create("Box", {})
            box.links.extend([other, box])
        assert list(box.nums) == [3, 1, 2] and list(box.set) == ["a", "b"] and list(box.map) == ["x", "y"]
        assert list(box.map.values()) == [1.5, 2.5] and list(box.map.items()) == [("x", 1.5), ("y", 2.5)]
        assert list(box.dates) == [when, when] and list(box.links) == [other, box]      # dates through Python
        assert dict(box.anys) == {"d": when, "i": 1} and list(box.anys.values()) == [when, 1]
        assert list(box.anys.items()) == [("d", when), ("i", 1)] and list(box.anys) == ["d", "i"]
        for collection in (box.nums, box.set, box.map, box.map.values(), box.map.items(), box.dates):
            assert type(iter(collection)).__name__ == "ElementIterator"
        with realm.write():
            walk = iter(box.nums)                    # the size is read at the first next(), as before
            box.nums.append(4)
            assert next(walk) == 3
            del box.nums[2:]
            assert list(walk) == [1]                 # shortened while iterating: the iteration ends
            walk = iter(box.dates)
            assert next(walk) == when
            box.dates.clear()
            assert list(walk) == []                  # the Python path's end, too
            walk = iter(box.map.items())
            realm.delete(box)
            with pytest.raises(cove.InvalidatedError):
                next(walk)
            realm.cancel_write()
        walk = iter(box.set)
        realm.close()
        with pytest.raises(cove.ClosedError):
            next(walk)


def test_attribute_writes_of_object_base(tmp_path: pathlib.Path) -> None:
    """ObjectBase writes `obj.name = value` in C; underscore names and deletions are ordinary
    attributes, and what C leaves (a name that is not a plain str, a refused write) raises as
    the general path does."""
    schema = {"T": {"primaryKey": "id", "properties": {"id": "int", "n": "int", "s": "string?"}}}
    with cove.open(tmp_path / "a.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            t = realm.create("T", {"id": 1})
            gone = realm.create("T", {"id": 2})
            t.n = 5
            t.s = "\u00e9t\u00e9"

            class Name(str):
                pass

            setattr(t, Name("n"), 6)                                   # a str subclass: the general path
            t._note = "kept"                                           # an ordinary attribute
            assert t._note == "kept" and t.__dict__["_note"] == "kept"
            del t._note
            assert "_note" not in t.__dict__
            with pytest.raises(AttributeError):
                del t.n
            realm.delete(gone)
            with pytest.raises(cove.InvalidatedError):
                gone.n = 1
            with pytest.raises(AttributeError):
                t._addr = 5                                             # the handle's address is read-only
        assert (t.n, t.s) == (6, "\u00e9t\u00e9")
        with pytest.raises(cove.TransactionError):
            t.n = 7
    with pytest.raises(cove.ClosedError):
        t.n = 8
    assert isinstance(t, cove._speedups.ObjectBase)
    assert "Creates an object inside a write" in (cove.Realm.create.__doc__ or "")
    assert "primary key" in (cove.Realm.find.__doc__ or "")
    with pytest.raises(TypeError, match="realm.create"):
        cove.Object()


def test_planned_creates_remember_the_keys_of_the_last_dict(realm: cove.Realm) -> None:
    """A plan keeps the key objects of the last dict it created from; a dict with the same
    objects in the same order skips their lookups, and any other dict is looked up anew."""
    with realm.write():
        realm.create("Thing", {"id": 1, "s": "a"})
        for i, values in enumerate(({"id": 2, "s": "b"}, {"id": 3, "s": "c"}, {"s": "d", "id": 4},
                                    {"".join(["i", "d"]): 5, "".join("s"): "e"}, {"id": 6, "i": 7}), start=2):
            made = realm.create("Thing", values)
            assert (made.id, made.s) == (i, values.get("s")) and made.i == values.get("i")
        memo = realm._create_plans["Thing"][-1]
        assert memo[0] == ("id", "i") and memo[1] == (b"id", b"i")
        with pytest.raises(cove.InvalidArgumentError, match="give its value"):
            realm.create("Thing", {"i": 1, "s": "no key"})                   # as many keys, none the key
        with pytest.raises(cove.NotFoundError, match="nope"):
            realm.create("Thing", {"id": 8, "nope": 1})                      # the first key as before
        with pytest.raises(cove.WrongTypeError, match="property 'i'"):
            realm.create("Thing", {"id": 8, "i": "x"})                       # the same keys, a refused value
        assert realm.create("Thing", {"id": 8, "i": 9}).i == 9
    assert [(t.id, t.s, t.i) for t in realm.objects("Thing")][-3:] == [(5, "e", None), (6, None, 7), (8, None, 9)]


def test_appends_adds_and_map_stores_in_c_and_what_they_leave(tmp_path: pathlib.Path) -> None:
    """list.append, set.add and map[key] = value of a plain value into a collection of values go
    to the library from C; other keys and values, collections of objects and refused writes take
    the general path, which raises its errors."""
    schema = {"Box": {"properties": {
        "tags": "string[]", "anys": "mixed[]", "dogs": "Dog[]", "places": "Place[]", "nums": "int<>",
        "map": "int{}", "dog_map": "Dog{}"}},
        "Dog": {"properties": {"name": "string"}},
        "Place": {"embedded": True, "properties": {"city": "string"}}}
    with cove.open(tmp_path / "w.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            box = realm.create("Box", {})
            gone = realm.create("Box", {})
            box.tags.append("a")
            box.anys.append(None)
            box.anys.append({"k": 1})                                    # a nested dict: Python's path
            assert box.anys[1] == {"k": 1}
            box.dogs.append({"name": "Rex"})                             # a new object from a dict
            box.places.append({"city": "Oslo"})                          # an embedded object
            box.nums.add(2)
            box.map["a"] = 1
            box.map["\u00e9"] = 2
            box.dog_map["rex"] = box.dogs[0]
            assert list(box.tags) == ["a"] and list(box.anys) == [None, {"k": 1}]
            assert box.dogs[0].name == "Rex" and box.places[0].city == "Oslo" and list(box.nums) == [2]
            assert dict(box.map) == {"a": 1, "\u00e9": 2} and box.dog_map["rex"] == box.dogs[0]
            for key, error in ((5, cove.WrongTypeError), (b"a", cove.WrongTypeError), ("a\0b", cove.InvalidArgumentError),
                               ("a.b", cove.InvalidArgumentError), ("$a", cove.InvalidArgumentError),
                               ("\ud800", cove.InvalidArgumentError)):
                with pytest.raises(error):
                    box.map[key] = 3                                     # type: ignore[index]
            with pytest.raises(cove.WrongTypeError):
                box.map["b"] = "x"
            with pytest.raises(cove.WrongTypeError):
                box.tags.append(1)
            with pytest.raises(cove.WrongTypeError):
                box.dogs.append("Rex")
            with pytest.raises(cove.WrongTypeError):
                box.places.append(None)
            assert dict(box.map) == {"a": 1, "\u00e9": 2} and list(box.tags) == ["a"]
            tags, nums, values = gone.tags, gone.nums, gone.map
            realm.delete(gone)
            for write in (lambda: tags.append("x"), lambda: nums.add(1), lambda: values.__setitem__("k", 1)):
                with pytest.raises(cove.InvalidatedError):
                    write()
        for write in (lambda: box.tags.append("x"), lambda: box.nums.add(1), lambda: box.map.__setitem__("k", 1)):
            with pytest.raises(cove.TransactionError):
                write()
        tags = box.tags
    with pytest.raises(cove.ClosedError):
        tags.append("x")
