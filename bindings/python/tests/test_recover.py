"""cove.recover(damaged, out): an undamaged file salvages completely; one with a table page
damaged on disk salvages into a new file that verifies and holds every other object, the report
naming the page and the losses; an existing new file, a file that is not a Cove file and a
missing one are refused with the package's errors, nothing written."""

import pathlib

import pytest

import cove

SCHEMA = {"Item": {"primaryKey": "id", "properties": {"id": "int", "text": "string", "tags": "string[]"}}}


def _made(path: pathlib.Path) -> None:
    """3000 items in one commit: every table page in the file is one the newest version reads."""
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create_many("Item", ({"id": i, "text": "x" * 100, "tags": ["a", str(i)]} for i in range(3000)))


def _second_table_page(path: pathlib.Path) -> int:
    """The second page of the file whose page type is a table's cluster page (5)."""
    data = path.read_bytes()
    pages = [n for n in range(len(data) // 4096) if n not in (0, 8) and data[n * 4096 + 4] == 5]
    return pages[1]


def _damage(path: pathlib.Path, page: int) -> None:
    with open(path, "r+b") as f:
        f.seek(page * 4096 + 2000)
        chunk = f.read(16)
        f.seek(page * 4096 + 2000)
        f.write(bytes(b ^ 0xA5 for b in chunk))


def test_an_undamaged_file_is_recovered_whole(tmp_path: pathlib.Path) -> None:
    _made(tmp_path / "a.cove")
    report = cove.recover(tmp_path / "a.cove", tmp_path / "all.cove")
    assert isinstance(report, cove.RecoverReport)
    assert report.complete and report.version == report.newest_version
    assert report.damaged_pages == () and report.catalog_pages == () and report.version_notes == ()
    assert report.classes == {"Item": cove.RecoveredClass(3000, 0, 0, 0, 0, ())}
    with cove.open(tmp_path / "all.cove", schema=SCHEMA) as realm:
        assert len(realm.objects("Item")) == 3000
        assert list(realm.objects("Item").filter("id == 7")[0].tags) == ["a", "7"]
        assert "backlink entries match" in realm.verify()


def test_a_damaged_page_loses_only_its_objects(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.cove"
    _made(path)
    page = _second_table_page(path)
    _damage(path, page)
    report = cove.recover(path, tmp_path / "part.cove")
    item = report.classes["Item"]
    assert not report.complete
    assert report.damaged_pages == (page,) and item.damaged_pages == (page,)
    assert item.objects_lost is not None and 0 < item.objects_lost < 3000
    assert item.objects_copied == 3000 - item.objects_lost
    assert (item.collections_damaged, item.values_lost, item.links_dropped) == (0, 0, 0)
    assert any("does not check out" in note for note in report.version_notes)
    with cove.open(tmp_path / "part.cove", schema=SCHEMA) as realm:
        assert len(realm.objects("Item")) == item.objects_copied
        # The objects kept have every value; ids are the primary key, found through the rebuilt index.
        survivors = realm.objects("Item")
        assert all(list(o.tags) == ["a", str(o.id)] and o.text == "x" * 100 for o in survivors)
        assert realm.find("Item", survivors[0].id) == survivors[0]
        assert "backlink entries match" in realm.verify()


def test_what_cannot_be_recovered_is_refused(tmp_path: pathlib.Path) -> None:
    _made(tmp_path / "a.cove")
    (tmp_path / "taken.cove").write_bytes(b"x")
    with pytest.raises(cove.InvalidArgumentError, match="already exists") as raised:
        cove.recover(tmp_path / "a.cove", tmp_path / "taken.cove")
    assert isinstance(raised.value, ValueError)
    with pytest.raises(cove.InvalidArgumentError, match="damaged file itself"):
        cove.recover(tmp_path / "a.cove", tmp_path / "a.cove")
    (tmp_path / "text.cove").write_text("not a cove file\n" * 600)
    with pytest.raises(cove.CorruptError, match="not a Cove file"):
        cove.recover(tmp_path / "text.cove", tmp_path / "new.cove")
    with pytest.raises(OSError):
        cove.recover(tmp_path / "missing.cove", tmp_path / "new.cove")
    assert not (tmp_path / "new.cove").exists()
