"""Migrations through Python: cove.open(..., migration=fn) with the old and new realms, renamed
properties, objects visited old and new, changed types converted, and a migration that raises
failing the open with its own exception and leaving the file as it was."""
from __future__ import annotations

import pathlib
from typing import List, Optional

import pytest

import cove

V1 = {
    "Person": {"primaryKey": "id",
               "properties": {"id": "int", "name": "string", "age": "string", "dog": "Dog?", "tags": "string[]"}},
    "Dog": {"properties": {"name": "string"}},
    "Old": {"properties": {"x": "int"}},
}
V2 = {
    "Person": {"primaryKey": "id",
               "properties": {"id": "int", "full_name": "string", "age": "int", "dog": "Dog?", "tags": "string[]",
                              "initial": "string"}},
    "Dog": {"properties": {"name": "string"}},
    "Note": {"properties": {"text": "string"}},
}


def make_v1(path: pathlib.Path) -> None:
    with cove.open(path, schema=V1, schema_version=1) as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex"})
            realm.create("Person", {"id": 1, "name": "Ann", "age": "31", "dog": rex, "tags": ["a"]})
            realm.create("Person", {"id": 2, "name": "Bob", "age": "x"})
            realm.create("Old", {"x": 7})


def test_migration(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "m.cove"
    make_v1(path)
    seen: List[object] = []

    def migrate(m: cove.Migration) -> None:
        assert m.old_version == 1
        assert m.old_realm.is_frozen and not m.new_realm.is_frozen and m.new_realm.in_write
        assert "name" in m.old_realm.schema["Person"]["properties"] and "Note" in m.new_realm.schema
        m.rename_property("Person", "name", "full_name")
        for old, new in m.enumerate("Person"):
            assert new is not None
            new.age = int(old.age) if old.age.isdigit() else -1     # a changed type converted
            new.initial = old.name[0]
            seen.append(old.id)
        olds = list(m.enumerate("Old"))                              # a class the new schema dropped
        assert [(o.x, n) for o, n in olds] == [(7, None)]
        with pytest.raises((cove.FrozenError, cove.TransactionError)):
            olds[0][0].x = 8                                         # the old realm is read-only
        assert olds[0][0].x == 7
        m.new_realm.create("Note", {"text": "migrated"})
        m.new_realm.create_many("Note", [{"text": "one"}, {"text": "two"}])
        with pytest.raises(cove.TransactionError):
            m.new_realm.commit()                                     # cove.open owns the write

    with cove.open(path, schema=V2, schema_version=2, migration=migrate) as realm:
        assert seen == [1, 2]
        ann = realm.find("Person", 1)
        assert ann.full_name == "Ann" and ann.age == 31 and ann.initial == "A"
        assert ann.dog.name == "Rex" and list(ann.tags) == ["a"]     # links and lists kept
        assert realm.find("Person", 2).age == -1
        assert "Old" not in realm.schema and "name" not in realm.schema["Person"]["properties"]
        assert realm.verify()
    with cove.open(path) as realm:
        assert realm.find("Person", 1).full_name == "Ann"


def test_migration_with_declared_classes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    make_v1(path)

    class Person(cove.Object):
        id: int = cove.Property(primary_key=True)
        full_name: str
        age: int
        dog: Optional[Dog]
        tags: cove.List[str]
        initial: str

    class Dog(cove.Object):
        name: str

    class Note(cove.Object):
        text: str

    def migrate(m: cove.Migration) -> None:
        m.rename_property(Person, "name", "full_name")
        for old, new in m.enumerate(Person):
            assert type(old) is cove.Object and isinstance(new, Person)
            new.age = len(old.age)

    with cove.open(path, schema=[Person, Dog, Note], schema_version=2, migration=migrate) as realm:
        ann = realm.find(Person, 1)
        assert isinstance(ann, Person) and ann.age == 2 and isinstance(ann.dog, Dog)


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "f.cove"
    make_v1(path)
    before = path.read_bytes()

    class Boom(Exception):
        pass

    def migrate(m: cove.Migration) -> None:
        m.rename_property("Person", "name", "full_name")
        for old, new in m.enumerate("Person"):
            new.age = 5
        m.new_realm.create("Note", {"text": "lost"})
        raise Boom("no")

    with pytest.raises(Boom, match="no") as info:
        cove.open(path, schema=V2, schema_version=2, migration=migrate)
    assert isinstance(info.value.__cause__, cove.CallbackError)
    assert path.read_bytes() == before
    with cove.open(path) as realm:
        assert "Note" not in realm.schema and realm.find("Person", 1).name == "Ann" and realm.find("Person", 1).age == "31"

    def bad_rename(m: cove.Migration) -> None:
        m.rename_property("Person", "nope", "full_name")

    with pytest.raises(cove.NotFoundError, match="nope"):          # a library error inside, as itself
        cove.open(path, schema=V2, schema_version=2, migration=bad_rename)

    def duplicate_keys(m: cove.Migration) -> None:
        m.rename_property("Person", "name", "full_name")
        for old, new in m.enumerate("Person"):
            new.id = 1 if new is not None else 0

    with pytest.raises(cove.DuplicateKeyError):
        cove.open(path, schema=V2, schema_version=2, migration=duplicate_keys)
    assert path.read_bytes() == before


def test_when_migrations_run(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "w.cove"
    calls: List[int] = []
    with cove.open(path, schema=V1, schema_version=1, migration=lambda m: calls.append(m.old_version)):
        pass
    assert calls == []                                             # never for a new file
    with cove.open(path, schema=V1, schema_version=1, migration=lambda m: calls.append(m.old_version)):
        pass
    assert calls == []                                             # nor for the same version
    with cove.open(path, schema=V1, schema_version=3, migration=lambda m: calls.append(m.old_version)):
        pass
    assert calls == [1]                                            # a higher version, even unchanged
    with pytest.raises(cove.MigrationRequiredError):
        cove.open(path, schema=V2, schema_version=4)
    with pytest.raises(cove.InvalidArgumentError, match="migration"):
        cove.open(path, schema=V2, schema_version=4, migration="yes")  # type: ignore[arg-type]


def test_migration_handle_after_the_migration(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "h.cove"
    make_v1(path)
    kept: List[cove.Migration] = []
    olds: List[cove.Object] = []

    def migrate(m: cove.Migration) -> None:
        m.rename_property("Person", "name", "full_name")
        kept.append(m)
        olds.extend(old for old, _ in m.enumerate("Dog"))

    with cove.open(path, schema=V2, schema_version=2, migration=migrate) as realm:
        with pytest.raises(cove.InvalidatedError):
            kept[0].old_version
        with pytest.raises(cove.InvalidatedError):
            kept[0].enumerate("Person")
        with pytest.raises(cove.ClosedError):
            olds[0].name                                            # the old realm is closed
        assert realm.find("Person", 1).full_name == "Ann"


def test_removing_a_class_clears_the_mixed_values_that_held_its_objects(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "m.cove"
    v1 = {"Box": {"properties": {"label": "string", "any": "mixed", "many": "mixed[]"}},
          "Gone": {"properties": {"x": "int"}}}
    with cove.open(path, schema=v1, schema_version=1) as realm:
        with realm.write():
            gone = realm.create("Gone", {"x": 1})
            keep = realm.create("Box", {"label": "keep"})
            realm.create("Box", {"label": "b", "any": gone, "many": [gone, keep, 3]})
    v2 = {"Box": v1["Box"]}
    with cove.open(path, schema=v2, schema_version=2, migration=lambda m: m.delete_data("Gone")) as realm:
        box, = [b for b in realm.objects("Box") if b.label == "b"]
        keep, = [b for b in realm.objects("Box") if b.label == "keep"]
        assert box.any is None
        assert list(box.many) == [None, keep, 3]
