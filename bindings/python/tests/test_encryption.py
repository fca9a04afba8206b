"""Encrypted files from Python: ``cove.open(..., encryption_key=...)``; nothing of the data in
the file in the clear; DecryptionError for a wrong key, no key, or a key for a plain file, and
nothing changed; InvalidArgumentError for a key not of 64 bytes; a changed byte is a clean error,
never other data; ``write_copy`` adds, changes and removes a key; ``compact``,
``should_compact_on_launch`` and ``recover`` take the key; an in-memory identifier with a key;
two realms on one encrypted file see each other's commits."""

import os
import pathlib

import pytest

import cove

SCHEMA = {"Note": {"primaryKey": "id", "properties": {"id": "int", "text": "string", "tags": "string[]"}}}
KEY = bytes((i * 11 + 3) & 0xFF for i in range(64))
OTHER = bytes((i * 29 + 1) & 0xFF for i in range(64))


def _fill(realm: cove.Realm, n: int, start: int = 0, pad: int = 0) -> None:
    with realm.write():
        realm.create_many("Note", ({"id": i, "text": f"hidden words {i}" + "." * pad, "tags": ["a", f"t{i % 5}"]}
                                   for i in range(start, start + n)))


def _open(path: pathlib.Path, key: "bytes | None" = KEY) -> cove.Realm:
    return cove.open(path, schema=SCHEMA, durability="no_sync", encryption_key=key)


def test_an_encrypted_file_round_trips_and_hides_its_data(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.cove"
    with _open(path) as realm:
        _fill(realm, 800)
    raw = path.read_bytes()
    assert b"hidden words" not in raw and b"COVEDB" not in raw
    assert b"hidden words" not in (tmp_path / "a.cove.lock").read_bytes()
    with _open(path) as realm:
        assert len(realm.objects("Note")) == 800
        note = realm.find("Note", 42)
        assert note is not None and note["text"] == "hidden words 42"
        assert len(realm.objects("Note").filter("tags CONTAINS 't3'")) == 160
        assert "live" in realm.verify()


def test_wrong_missing_and_unexpected_keys(tmp_path: pathlib.Path) -> None:
    sealed, plain = tmp_path / "sealed.cove", tmp_path / "plain.cove"
    with _open(sealed) as realm:
        _fill(realm, 10)
    with _open(plain, None) as realm:
        _fill(realm, 10)
    with pytest.raises(cove.DecryptionError, match="does not open"):
        _open(sealed, OTHER)
    with pytest.raises(cove.DecryptionError, match="is encrypted"):
        _open(sealed, None)
    with pytest.raises(cove.DecryptionError, match="not encrypted"):
        _open(plain, KEY)
    with pytest.raises(cove.InvalidArgumentError, match="64 bytes, not 10"):
        _open(tmp_path / "new.cove", b"0123456789")
    with pytest.raises(cove.InvalidArgumentError, match="64 bytes"):
        _open(tmp_path / "new.cove", "a text key")  # type: ignore[arg-type]
    assert not (tmp_path / "new.cove").exists()
    assert issubclass(cove.DecryptionError, cove.StorageError) and cove.Status.DECRYPTION == 25
    with _open(sealed) as realm:
        assert len(realm.objects("Note")) == 10


def test_a_changed_byte_is_a_clean_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.cove"
    with _open(path) as realm:
        _fill(realm, 300)
    original = path.read_bytes()
    outcomes = {"refused": 0, "older": 0, "same": 0}
    for page in range(len(original) // 4160):
        image = bytearray(original)
        image[page * 4160 + 2000] ^= 0x21
        changed = tmp_path / "changed.cove"
        changed.write_bytes(bytes(image))
        try:
            with _open(changed) as realm:
                texts = sorted(o["text"] for o in realm.objects("Note"))
                realm.verify()
        except cove.CorruptError:
            outcomes["refused"] += 1
            continue
        finally:
            if os.path.exists(str(changed) + ".lock"):
                os.remove(str(changed) + ".lock")
        if texts:
            assert texts == sorted(f"hidden words {i}" for i in range(300))
            outcomes["same"] += 1
        else:
            outcomes["older"] += 1
    assert outcomes["refused"] + outcomes["older"] > 0, outcomes


def test_copies_add_change_and_remove_the_key(tmp_path: pathlib.Path) -> None:
    with _open(tmp_path / "a.cove") as realm:
        _fill(realm, 200)
        realm.write_copy(tmp_path / "rekeyed.cove", encryption_key=OTHER)
        realm.write_copy(tmp_path / "plain.cove")
        with pytest.raises(cove.InvalidArgumentError, match="64 bytes"):
            realm.write_copy(tmp_path / "short.cove", encryption_key=b"short")
    assert b"hidden words" in (tmp_path / "plain.cove").read_bytes()
    assert b"hidden words" not in (tmp_path / "rekeyed.cove").read_bytes()
    with _open(tmp_path / "rekeyed.cove", OTHER) as realm:
        assert len(realm.objects("Note")) == 200
    with _open(tmp_path / "plain.cove", None) as realm:
        realm.write_copy(tmp_path / "sealed.cove", encryption_key=KEY)
    with _open(tmp_path / "sealed.cove") as realm:
        assert len(realm.objects("Note").filter("text == 'hidden words 5'")) == 1


def _sparse(path: pathlib.Path) -> None:
    """6,000 notes of which 100 are left, spread over the file."""
    with _open(path) as realm:
        _fill(realm, 6000, pad=300)
        with realm.write():
            for i in range(6000):
                if i % 60:
                    realm.delete(realm.find("Note", i))


def test_compact_recover_and_in_memory_take_the_key(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.cove"
    _sparse(path)
    before = path.stat().st_size
    with pytest.raises(cove.DecryptionError):
        cove.compact(path)
    assert cove.compact(path, encryption_key=KEY)
    assert path.stat().st_size < before // 2
    assert b"hidden words" not in path.read_bytes()
    asked = []
    with cove.open(path, schema=SCHEMA, encryption_key=KEY,
                   should_compact_on_launch=lambda total, used: asked.append(total) is None) as realm:
        assert len(realm.objects("Note")) == 100
    assert asked
    with pytest.raises(cove.DecryptionError):
        cove.recover(path, tmp_path / "saved.cove")
    report = cove.recover(path, tmp_path / "saved.cove", encryption_key=KEY)
    assert report.complete and report.classes["Note"].objects_copied == 100
    assert b"hidden words" not in (tmp_path / "saved.cove").read_bytes()
    with _open(tmp_path / "saved.cove") as realm:
        assert len(realm.objects("Note")) == 100
    name = f"sealed-{os.getpid()}"
    with cove.open(None, schema=SCHEMA, in_memory_identifier=name, encryption_key=KEY) as first:
        _fill(first, 5)
        with cove.open(None, schema=SCHEMA, in_memory_identifier=name, encryption_key=KEY) as second:
            assert len(second.objects("Note")) == 5


def test_two_realms_on_one_encrypted_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "shared.cove"
    with _open(path) as writer, _open(path) as reader:
        results = reader.objects("Note").filter("tags CONTAINS 't1'")
        for round_ in range(6):
            _fill(writer, 100, start=round_ * 100)
            reader.refresh()
            assert len(results) == 20 * (round_ + 1)
        with writer.write():
            writer.delete(writer.objects("Note").filter("id < 300"))
        reader.refresh()
        assert len(results) == 60
        assert "live" in reader.verify()
