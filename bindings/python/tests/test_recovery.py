"""realm.recovery: a file whose last commit has a page that no longer holds what the commit wrote
opens at the version before, and says which version it discarded, which it opened and which
page failed; an intact file says nothing."""
from __future__ import annotations

import gc
import pathlib

import cove

SCHEMA = {"Item": {"properties": {"n": "int", "text": "string"}}}
PAGE = 4096


def add(path: pathlib.Path, numbers: range) -> int:
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        assert realm.recovery is None
        with realm.write():
            realm.create_many("Item", [{"n": i, "text": f"item {i}"} for i in numbers])
        version = realm.version
    gc.collect()   # the realm's handles go, so the next open is the file's first again
    return version


def test_a_damaged_page_of_the_last_commit_is_reported(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "r.cove"
    kept = add(path, range(100))
    before = path.read_bytes()
    lost = add(path, range(100, 2100))
    after = bytearray(path.read_bytes())

    def changed(p: int) -> bool:
        was = before[p * PAGE:(p + 1) * PAGE] or bytes(PAGE)
        return p not in (0, 8) and after[p * PAGE:(p + 1) * PAGE] != was

    page = max(p for p in range(len(after) // PAGE) if changed(p))
    for i in range(16):
        after[page * PAGE + 2000 + i] ^= 0xA5
    path.write_bytes(bytes(after))

    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        recovery = realm.recovery
        assert recovery is not None
        assert (recovery.discarded_version, recovery.opened_version) == (lost, kept)
        assert f"page {page} " in recovery.reason
        assert len(realm.objects("Item")) == 100
        assert isinstance(recovery, cove.Recovery)
        space = realm.file_space()
        assert isinstance(space, cove.FileSpace) and space.format_version == 6
        assert space.total_bytes <= len(after) and 0 < space.used_bytes < space.total_bytes  # of the version opened
        assert space.free_bytes == space.total_bytes - space.used_bytes
