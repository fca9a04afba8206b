"""realm.write_copy(path): a compacted copy of the version the realm reads, with every object,
link and collection; refused over an existing file and inside a write; a copy of the version
pinned while another realm commits."""

import pathlib

import pytest

import cove

SCHEMA = {"Dog": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "tags": "string[]",
                                                       "friend": "Dog?", "scores": "double{}"}}}


def _dogs(realm: cove.Realm) -> list[tuple[str, int, list[str], str | None, dict[str, float]]]:
    return [(d.name, d.age, list(d.tags), d.friend.name if d.friend is not None else None, dict(d.scores))
            for d in realm.objects("Dog").sorted("name")]


def test_a_copy_holds_the_same_objects_in_fewer_pages(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "a.cove", schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            previous = None
            for i in range(2000):
                dog = realm.create("Dog", {"name": f"d{i:04}", "age": i % 17, "tags": ["x"] * (i % 5),
                                           "scores": {"s": i / 2}})
                if previous is not None:
                    dog.friend = previous
                previous = dog
        with realm.write():
            realm.delete(realm.objects("Dog").filter("age > 5"))
        realm.write_copy(tmp_path / "copy.cove")
        expected = _dogs(realm)
        used = realm.file_space().used_bytes
    with cove.open(tmp_path / "copy.cove", schema=SCHEMA) as copy:
        assert _dogs(copy) == expected
        assert copy.file_space().used_bytes < used
        assert "index entries match" in copy.verify()
        assert copy.find("Dog", "d0001") is not None


def test_the_copy_is_of_the_version_the_realm_reads(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "v.cove"
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create("Dog", {"name": "a", "age": 1})
        assert len(realm.objects("Dog")) == 1
        with cove.open(path, schema=SCHEMA, durability="no_sync") as other:
            with other.write():
                other.create("Dog", {"name": "b", "age": 2})
        realm.write_copy(tmp_path / "v-copy.cove")
    with cove.open(tmp_path / "v-copy.cove", schema=SCHEMA) as copy:
        assert [d.name for d in copy.objects("Dog")] == ["a"]


def test_bad_copies_are_refused(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "r.cove", schema=SCHEMA, durability="no_sync") as realm:
        with pytest.raises(cove.InvalidArgumentError, match="already exists"):
            realm.write_copy(tmp_path / "r.cove")
        with realm.write():
            with pytest.raises(cove.InvalidArgumentError, match="in a write transaction"):
                realm.write_copy(tmp_path / "w.cove")
        assert not (tmp_path / "w.cove").exists()
        with pytest.raises(cove.StorageError, match="No such file or directory"):
            realm.write_copy(tmp_path / "no" / "such" / "x.cove")
    with pytest.raises(cove.ClosedError):
        realm.write_copy(tmp_path / "closed.cove")
