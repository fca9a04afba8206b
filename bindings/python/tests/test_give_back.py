"""Free pages at the end of the file given back at commit: a realm emptied of its objects shrinks
at the writes that follow, reports its space right, and reopens with what it holds."""
from __future__ import annotations

import os
import pathlib

import cove

SCHEMA = {"Note": {"primaryKey": "id", "properties": {"id": "int", "text": "string"}}}


def test_an_emptied_file_shrinks(path: pathlib.Path) -> None:
    with cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            realm.create_many("Note", ({"id": i, "text": "n" * 400} for i in range(8000)))
        full = os.path.getsize(path)
        assert full > 3_000_000
        with realm.write():
            realm.delete(realm.objects("Note"))
        for i in range(3):
            with realm.write():
                realm.create("Note", {"id": i, "text": "kept"})
        emptied = os.path.getsize(path)
        assert emptied < full // 8
        space = realm.file_space()
        assert space.total_bytes == emptied
        assert space.used_bytes <= space.total_bytes
        realm.verify()
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        assert sorted(n.id for n in realm.objects("Note")) == [0, 1, 2]
        with realm.write():
            realm.create_many("Note", ({"id": 100 + i, "text": "again"} for i in range(500)))
        assert len(realm.objects("Note")) == 503
