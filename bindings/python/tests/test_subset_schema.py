"""A realm opened with some of the file's classes, as Realm's object types: the others stay in the
file untouched and out of sight, deleting an object clears links to it from them, and a
migration's delete_data deletes a class's objects or takes a class out of the file."""
from __future__ import annotations

import pathlib

import pytest

import cove

FULL = {
    "Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "pet": "Pet?"}},
    "Pet": {"properties": {"name": "string", "owners": "@links(Person.pet)"}},
    "Note": {"properties": {"text": "string"}},
}
PETS_ONLY = {"Pet": {"properties": {"name": "string"}}}
NOTES_ONLY = {"Note": {"properties": {"text": "string"}}}


def seed(path: pathlib.Path) -> None:
    with cove.open(path, schema=FULL, schema_version=1) as realm:
        with realm.write():
            for i in range(6):
                pet = realm.create("Pet", {"name": f"pet{i}"})
                realm.create("Person", {"id": i, "name": f"n{i}", "pet": pet})
                realm.create("Note", {"text": f"note{i}"})


def test_classes_left_out_stay_untouched(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.cove"
    seed(path)
    with cove.open(path, schema=NOTES_ONLY, schema_version=1) as notes:
        assert list(notes.schema) == ["Note"]
        with pytest.raises(cove.NotFoundError):
            notes.objects("Person")
        with notes.write():
            notes.create("Note", {"text": "added"})
        assert len(notes.objects("Note")) == 7
    with cove.open(path, schema=FULL, schema_version=1) as realm:
        assert len(realm.objects("Person")) == 6
        assert realm.find("Person", 3).pet.name == "pet3"


def test_deleting_clears_links_from_classes_out_of_sight(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.cove"
    seed(path)
    with cove.open(path, schema=PETS_ONLY, schema_version=1) as pets:
        with pets.write():
            pets.delete(pets.objects("Pet").filter("name == 'pet2'"))
    with cove.open(path, schema=FULL, schema_version=1) as realm:
        assert realm.find("Person", 2).pet is None
        assert realm.find("Person", 1).pet.name == "pet1"


def test_delete_data(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.cove"
    seed(path)
    seen = []

    def migrate(m: cove.Migration) -> None:
        seen.append(m.delete_data("Person"))       # left out: goes from the file
        seen.append(m.delete_data("Note"))         # kept: its objects go
        with pytest.raises(cove.NotFoundError):
            m.delete_data("Nothing")

    without_person = {"Pet": {"properties": {"name": "string"}}, "Note": {"properties": {"text": "string"}}}
    with cove.open(path, schema=without_person, schema_version=2, migration=migrate) as realm:
        assert seen == [True, True]
        assert len(realm.objects("Note")) == 0 and len(realm.objects("Pet")) == 6
    with cove.open(path, schema=FULL, schema_version=3) as realm:
        assert len(realm.objects("Person")) == 0


def test_a_class_left_out_must_still_fit(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.cove"
    seed(path)

    def migrate(m: cove.Migration) -> None:
        m.delete_data("Pet")                       # Person, left out, links to it

    with pytest.raises(cove.SchemaError, match="Pet"):
        cove.open(path, schema=NOTES_ONLY, schema_version=2, migration=migrate)
    with cove.open(path, schema=FULL, schema_version=1) as realm:
        assert len(realm.objects("Pet")) == 6
