"""The first slice through Python: opening and reopening files, the error cases of opening,
transactions, versions, freezing and the exception classes."""
from __future__ import annotations

import pathlib

import pytest

import cove


def test_version_matches_library() -> None:
    assert cove.__version__.count(".") == 2


def test_create_reopen(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "slice.cove"
    with cove.open(path) as realm:
        assert path.exists()
        assert pathlib.Path(str(path) + ".lock").exists()
        start = realm.version
        with realm.write():
            assert realm.in_write
        assert not realm.in_write
        assert realm.version == start + 1
        assert realm.verify()
    with cove.open(str(path)) as realm:
        assert realm.version == start + 1


def test_not_a_cove_file_is_corrupt(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("a text file, not a database\n" * 500)
    with pytest.raises(cove.StorageError) as info:
        cove.open(path)
    assert info.value.code == 18  # COVE_ERR_CORRUPT
    assert "not a Cove file" in info.value.message
    assert path.read_text().startswith("a text file")  # nothing was written to it


def test_newer_format_is_refused(tmp_path: pathlib.Path) -> None:
    """A file whose meta slots (pages 0 and 8) carry a newer format version (bytes 8..12) is
    refused with COVE_ERR_FORMAT and left as it was."""
    path = tmp_path / "newer.cove"
    cove.open(path).close()
    data = bytearray(path.read_bytes())
    for page in (0, 8):
        data[page * 4096 + 8:page * 4096 + 12] = (99).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(cove.StorageError) as info:
        cove.open(path)
    assert info.value.code == 22  # COVE_ERR_FORMAT
    assert "format version 99" in info.value.message
    assert path.read_bytes() == bytes(data)


MAGIC = b"COVEDB\0\0"
FORMAT4_REALM = pathlib.Path(__file__).resolve().parents[3] / "Tests/Corpus/file/realm-every-kind-format4.cove"


def slot_pages(path: pathlib.Path) -> list[int]:
    """The pages among 0, 1 and 8 that start with the meta slots' magic."""
    data = path.read_bytes()
    return [page for page in (0, 1, 8) if data[page * 4096:page * 4096 + 8] == MAGIC]


def test_file_of_an_older_format(tmp_path: pathlib.Path) -> None:
    """A realm written before format 5 (meta slots at pages 0 and 1) opens and verifies; its
    commits keep that layout, and what they wrote is there after a reopen. A new file's slots
    are pages 0 and 8."""
    path = tmp_path / "format4.cove"
    path.write_bytes(FORMAT4_REALM.read_bytes())
    assert slot_pages(path) == [0, 1]
    with cove.open(path) as realm:
        realm.verify()
        assert realm.find("Counter", 3).n == -1
        with realm.write():
            realm.create("Counter", {"id": 1000, "n": 7})
    assert slot_pages(path) == [0, 1]
    with cove.open(path) as realm:
        assert realm.find("Counter", 1000).n == 7
        realm.verify()

    new = tmp_path / "new.cove"
    cove.open(new).close()
    assert slot_pages(new) == [0, 8]


def test_missing_directory_is_io_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "x.cove"
    with pytest.raises(cove.StorageError) as info:
        cove.open(path)
    assert info.value.code == 16  # COVE_ERR_IO
    assert "x.cove" in info.value.message


def test_transaction_errors(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "t.cove", durability="no_sync") as realm:
        with pytest.raises(cove.TransactionError):
            realm.commit()
        realm.begin_write()
        with pytest.raises(cove.TransactionError, match="already"):
            realm.begin_write()
        with pytest.raises(cove.TransactionError):
            realm.refresh()
        realm.cancel_write()
        before = realm.version
        with pytest.raises(RuntimeError):
            with realm.write():
                raise RuntimeError("boom")
        assert not realm.in_write
        assert realm.version == before


def test_refresh_sees_other_handle(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "r.cove"
    with cove.open(path, durability="no_sync") as a, cove.open(path, durability="no_sync") as b:
        v = a.version
        with b.write():
            pass
        assert a.version == v
        assert a.refresh() is True
        assert a.version == v + 1
        assert a.refresh() is False


def test_freeze(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "f.cove"
    with cove.open(path, durability="no_sync") as realm:
        frozen = realm.freeze()
        assert frozen.is_frozen and not realm.is_frozen
        v = frozen.version
        with realm.write():
            pass
        assert frozen.version == v
        assert realm.active_versions >= 2
        with pytest.raises(cove.FrozenError):
            frozen.begin_write()
        with pytest.raises(cove.FrozenError):
            frozen.refresh()
        frozen.close()
        assert realm.active_versions == 1
        realm.begin_write()
        with pytest.raises(cove.TransactionError):
            realm.freeze()
        realm.cancel_write()


def test_invalidate_releases_the_pinned_version(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "inv.cove"
    with cove.open(path, durability="no_sync") as a, cove.open(path, durability="no_sync") as b:
        v = a.version
        with b.write():
            pass
        assert b.active_versions == 2  # a still pins v
        a.invalidate()
        assert b.active_versions == 1
        assert a.version == v + 1  # the next read pins the newest
        a.begin_write()
        with pytest.raises(cove.TransactionError):
            a.invalidate()
        a.cancel_write()


def test_read_only(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ro.cove"
    cove.open(path).close()
    with cove.open(path, read_only=True) as realm:
        with pytest.raises(cove.ReadOnlyError):
            realm.begin_write()


def test_in_memory() -> None:
    with cove.open(None) as realm:
        v = realm.version
        with realm.write():
            pass
        assert realm.version == v + 1
        assert realm.path is None


def test_closed_realm() -> None:
    realm = cove.open(None)
    realm.close()
    realm.close()  # idempotent
    assert realm.is_closed
    with pytest.raises(cove.ClosedError):
        realm.begin_write()


def test_bad_arguments() -> None:
    with pytest.raises(cove.InvalidArgumentError, match="durability"):
        cove.open(None, durability="sometimes")
    with pytest.raises(cove.InvalidArgumentError, match="empty"):
        cove.open("")
    with pytest.raises(cove.InvalidArgumentError):
        cove.open(None, max_active_versions=-1)


def test_exception_hierarchy() -> None:
    assert issubclass(cove.OutOfRangeError, IndexError)
    assert issubclass(cove.StorageError, cove.Error)
    err = cove.StorageError(18, "bad")
    assert err.code == 18 and err.message == "bad" and str(err) == "bad"
