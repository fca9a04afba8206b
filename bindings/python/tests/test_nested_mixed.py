"""Lists and dicts held by mixed values: a list or dict stored in a mixed property (or in an
element of a list or dict of mixed values) reads back as a live NestedList or NestedDict that
writes through to the stored value, queries reach inside, links inside become None when their
target is deleted, notifications carry the old and new values, and bad input raises the right
error without changing anything."""
from __future__ import annotations

import pathlib

import pytest

import cove

SCHEMA = {
    "Box": {"properties": {"label": "string", "extra": "mixed", "many": "mixed[]", "named": "mixed{}", "bag": "mixed<>"}},
    "Dog": {"properties": {"name": "string"}},
}

SAMPLE = {"tags": ["a", "b"], "size": 3, "deep": [{"x": [1.5, None]}]}


def test_a_stored_list_or_dict_reads_back_live(realm: cove.Realm) -> None:
    with realm.write():
        box = realm.create("Box", {"label": "b", "extra": SAMPLE})
    extra = box.extra
    assert isinstance(extra, cove.NestedDict)
    assert extra == SAMPLE
    assert list(extra) == ["deep", "size", "tags"], "keys in UTF-8 order"
    assert extra["tags"] == ["a", "b"]
    assert isinstance(extra["tags"], cove.NestedList)
    assert extra["deep"][0]["x"][0] == 1.5
    with realm.write():
        extra["tags"].append("c")
        extra["deep"][0]["x"][1] = {"y": True}
        extra["new"] = [1, [2]]
        del extra["size"]
    assert box.extra == {"tags": ["a", "b", "c"], "deep": [{"x": [1.5, {"y": True}]}], "new": [1, [2]]}
    with realm.write():
        box.extra["new"][1].insert(0, 0)
        box.extra["tags"].pop()
        box.extra["tags"][0:1] = ["z", "y"]
    assert box.extra["new"] == [1, [0, 2]]
    assert box.extra["tags"] == ["z", "y", "b"]
    # A view whose collection was replaced by a scalar says so.
    tags = box.extra["tags"]
    with realm.write():
        box.extra["tags"] = 5
    with pytest.raises(cove.InvalidatedError):
        len(tags)
    # Copied whole into another object, and replaced by a scalar.
    with realm.write():
        other = realm.create("Box", {"label": "c", "extra": box.extra})
        box.extra = "plain"
    assert other.extra["new"] == [1, [0, 2]]
    assert box.extra == "plain"
    assert box.to_dict()["extra"] == "plain"
    assert other.to_dict()["extra"]["tags"] == 5
    realm.verify()


def test_objects_handed_out_by_iteration_read_and_edit_nested_values(realm: cove.Realm) -> None:
    with realm.write():
        for i in range(5):
            realm.create("Box", {"label": str(i), "extra": {"i": i, "tags": ["t"]}})
    # Iteration hands out objects that read by keys until they need a handle.
    assert sorted(box.extra["i"] for box in realm.objects("Box")) == [0, 1, 2, 3, 4]
    with realm.write():
        for box in realm.objects("Box"):
            box.extra["tags"].append(box.label)
    assert sorted(list(box.extra["tags"]) for box in realm.objects("Box")) == [["t", str(i)] for i in range(5)]


def test_elements_of_lists_and_dicts_of_mixed_hold_collections(realm: cove.Realm) -> None:
    with realm.write():
        box = realm.create("Box", {"label": "b", "many": [[1, 2], {"k": "v"}, 3], "named": {"n": [True]}})
    assert box.many[0] == [1, 2]
    assert box.many[1] == {"k": "v"}
    assert box.named["n"] == [True]
    with realm.write():
        box.many[0].append(3)
        box.named["n"].append(False)
        box.many[1]["k2"] = None
    assert list(box.many) == [[1, 2, 3], {"k": "v", "k2": None}, 3]
    assert box.named["n"] == [True, False]


def test_writes_need_a_write_and_bad_values_change_nothing(realm: cove.Realm) -> None:
    with realm.write():
        box = realm.create("Box", {"label": "b", "extra": [1]})
    with pytest.raises(cove.TransactionError):
        box.extra.append(2)
    with realm.write():
        with pytest.raises(cove.WrongTypeError):
            box.bag.add([1])
        with pytest.raises(cove.WrongTypeError):
            box.label = ["not", "a", "string"]
        with pytest.raises(cove.InvalidArgumentError):
            box.extra = {1: "an int key"}
        deep: object = 0
        for _ in range(101):
            deep = [deep]
        with pytest.raises(cove.InvalidArgumentError):
            box.extra = deep
        with pytest.raises(cove.WrongTypeError):
            box.extra.append(object())
    assert box.extra == [1]
    assert box.label == "b"


def test_queries_reach_inside(realm: cove.Realm) -> None:
    with realm.write():
        realm.create("Box", {"label": "a", "extra": SAMPLE})
        realm.create("Box", {"label": "b", "extra": ["x", 5, [9]]})
        realm.create("Box", {"label": "c", "extra": "ab"})

    def labels(query: str, *args: object) -> list[str]:
        return sorted(b.label for b in realm.objects("Box").filter(query, *args))

    assert labels("extra.tags[0] == 'a'") == ["a"]
    assert labels("extra['size'] > 2") == ["a"]
    assert labels("extra[2][0] == 9") == ["b"]
    assert labels("extra[*] == 5") == ["b"]
    assert labels("extra.@count == 3") == ["a", "b"]
    assert labels("extra.@type == 'list'") == ["b"]
    assert labels("extra.@keys == 'deep'") == ["a"]
    # A list argument stays a list of values to compare with (for IN), as before.
    assert labels("extra IN $0", ["ab", 7]) == ["c"]
    assert labels("extra[$0] == $1", "size", 3) == ["a"]


def test_links_inside_are_cleared_when_the_target_goes(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        fido = realm.create("Dog", {"name": "Fido"})
        box = realm.create("Box", {"label": "b", "extra": {"pets": [rex, fido]}})
    assert box.extra["pets"][0].name == "Rex"
    changes = []
    token = box.observe(lambda change: changes.append(change), ["extra"])
    with realm.write():
        realm.delete(rex)
    realm.deliver()
    assert box.extra["pets"][0] is None
    assert box.extra["pets"][1].name == "Fido"
    assert len(changes) >= 1
    last = changes[-1].properties[0]
    assert last.name == "extra"
    assert last.new_value["pets"][0] is None
    token.invalidate()
    realm.verify()


def test_nested_values_survive_a_reopen(path: pathlib.Path) -> None:
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            realm.create("Box", {"label": "b", "extra": SAMPLE})
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        box = realm.objects("Box")[0]
        assert box.extra == SAMPLE
        frozen = realm.freeze()
        assert frozen.objects("Box")[0].extra == SAMPLE
        frozen.close()
