"""Writes the realm seeds of the file-parser fuzzer's corpus (Tests/Corpus/file/realm-*.cove):
small files whose catalogs hold every kind of thing the object layer stores, so that the fuzzer's
mutations reach the decoders of tables, clusters, indexes, backlinks, collections (inline in a
collection area and in trees of their own) and history records; and the same realm encrypted with
FUZZ_KEY (realm-every-kind-encrypted.cove), which the fuzzer opens with that key. The seeds of
earlier formats (realm-every-kind-format4.cove, -format5.cove) were written by earlier builds and
are kept. Run from the repository's root with the Python package installed:

    python Tests/Corpus/make-realm-seeds.py
"""
from __future__ import annotations

import datetime as dt
import decimal
import pathlib
import tempfile
import uuid

import cove

SCHEMA = {
    "Person": {"primaryKey": "name", "indexed": ["age"],
               "properties": {"name": "string", "age": "int", "dogs": "Dog[]", "best": "Dog?",
                              "friends": "Person<>", "nick": "string?"}},
    "Dog": {"properties": {"name": "string", "weight": "double?", "good": "bool", "born": "date?",
                           "tag": "objectId?", "id": "uuid?", "price": "decimal128?", "photo": "data?",
                           "ratio": "float", "any": "mixed", "toys": "Toy[]", "tags": "string<>",
                           "scores": "double{}", "home": "Address?", "maybe": "int?[]",
                           "anything": "mixed[]", "owners": "@links(Person.dogs)"}},
    "Toy": {"embedded": True, "properties": {"brand": "string", "price": "double"}},
    "Address": {"embedded": True, "properties": {"city": "string", "street": "string?"}},
    "Counter": {"primaryKey": "id", "properties": {"id": "int", "n": "int"}},
}


# The key the fuzzer opens an encrypted input with (Sources/cove-fuzz-file: fuzzKey).
FUZZ_KEY = bytes(range(64))


def write_seed(path: pathlib.Path, key: "bytes | None" = None) -> None:
    with cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync", encryption_key=key) as realm:
        with realm.write():
            rex = realm.create("Dog", {
                "name": "Rex ü", "weight": 12.5, "good": True,
                "born": cove.Timestamp(2020, 5, 17, 12, 30, 1, 250, tzinfo=dt.timezone.utc, nanosecond=7),
                "tag": cove.ObjectId("0123456789abcdef01234567"), "id": uuid.UUID(int=42),
                "price": decimal.Decimal("19.99"), "photo": b"\x00\x01\xff" * 20, "ratio": 2,
                "any": "mixed!", "tags": ["a", "b"], "scores": {"x": 1.5, "y": -2.0},
                "maybe": [1, None, 3], "anything": [1, "two", 3.0, None],
                "home": {"city": "Oslo", "street": None},
                "toys": [{"brand": "Acme", "price": 3.5}, {"brand": "Zed", "price": 1.0}]})
            # Mixed values holding nested lists and dictionaries, a link among them.
            fido = realm.create("Dog", {"name": "Fido", "any": {"k": [1, {"x": None}], "$t": "s"}, "tags": ["c"],
                                        "anything": [[1.5, [True]], {"rex": rex}]})
            ann = realm.create("Person", {"name": "Ann", "age": 41, "dogs": [rex, fido], "best": rex})
            bob = realm.create("Person", {"name": "Bob", "age": 29, "dogs": [fido], "friends": [ann],
                                          "nick": "b" * 300})
            ann.friends.add(bob)
            rex.any = bob
            for i in range(40):
                realm.create("Counter", {"id": i, "n": i * i})
        with realm.write():
            realm.find("Counter", 3).n = -1
            realm.delete(realm.find("Counter", 5))
            fido.tags.add("d")
            fido.scores["z"] = 0.25
            # Small collections are kept inline (format 6); one past the inline limit is a tree
            # of its own, so that the seed holds both forms.
            realm.create("Dog", {"name": "Many", "tags": [f"tag {i:03d}" for i in range(120)]})


def used_bytes(path: pathlib.Path) -> int:
    """The bytes of the pages the newest meta slot counts (the file grows in larger steps): the
    slot with the higher version (offset 16) gives the page count (offset 32). The slots are
    pages 0 and 8 (pages 0 and 1 in files made before format 5)."""
    data = path.read_bytes()
    slots = [data[page * 4096:(page + 1) * 4096] for page in (0, 1, 8)]
    slots = [slot for slot in slots if slot[:8] == b"COVEDB\0\0"]
    newest = max(slots, key=lambda slot: int.from_bytes(slot[16:24], "little"))
    return int.from_bytes(newest[32:40], "little") * 4096


def main() -> None:
    out = pathlib.Path("Tests/Corpus/file") / "realm-every-kind.cove"
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "seed.cove"
        write_seed(path)
        out.write_bytes(path.read_bytes()[:used_bytes(path)])
        print("wrote", out, out.stat().st_size, "bytes")
        sealed = pathlib.Path(d) / "sealed.cove"
        write_seed(sealed, FUZZ_KEY)
        with cove.open(sealed, encryption_key=FUZZ_KEY, read_only=True) as realm:
            pages = realm.file_space().total_bytes // 4096
        out = out.with_name("realm-every-kind-encrypted.cove")
        # An encrypted page takes 4160 bytes on the disk.
        out.write_bytes(sealed.read_bytes()[:pages * 4160])
        print("wrote", out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
