"""Cove's Python package and Python's sqlite3 module on the same Person objects, one run:
realm.create_many against executemany for the bulk load, and primary-key lookups reading all
four fields (realm.find against a SELECT by id). Prints a Markdown table, then how a Cove lookup
splits between find and each attribute read (beside the same library call made through cffi:
the read itself calls the library from C, cove/_speedups.c), and how create_many splits between
the library calls it makes and the binding around them.

BENCH_PY_OBJECTS (200000) and BENCH_PY_LOOKUPS (100000) change the sizes."""
import os
import random
import sqlite3
import tempfile
import time

import cove
from cove import _realm
from cove._lib import ffi, lib

N = int(os.environ.get("BENCH_PY_OBJECTS", "200000"))
L = int(os.environ.get("BENCH_PY_LOOKUPS", "100000"))
NAMES = [f"person-{i}-" + "x" * (i % 13) for i in range(1000)]
SCHEMA = {"Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}}}


def rows():
    return [{"id": i, "name": NAMES[i % 1000], "age": i % 90, "score": i * 0.5} for i in range(N)]


def main() -> None:
    rnd = random.Random(42)
    order = [rnd.randrange(N) for _ in range(L)]
    data = rows()
    with tempfile.TemporaryDirectory() as d:
        realm = cove.open(os.path.join(d, "people.cove"), schema=SCHEMA, schema_version=1)
        t = time.perf_counter()
        with realm.write():
            realm.create_many("Person", data)
        cove_insert = time.perf_counter() - t
        t = time.perf_counter()
        total = 0
        for k in order:
            p = realm.find("Person", k)
            total += p.id + len(p.name) + p.age + int(p.score)
        cove_lookup = time.perf_counter() - t
        # Where a lookup's time goes: find alone, one attribute read, and the library call that
        # read makes as a call through cffi would make it.
        t = time.perf_counter()
        for k in order:
            realm.find("Person", k)
        find_only = time.perf_counter() - t
        p = realm.find("Person", order[0])
        t = time.perf_counter()
        for _ in range(L):
            p.age
        attribute = time.perf_counter() - t
        out = ffi.new("cove_value_t*")
        handle = p._handle
        t = time.perf_counter()
        for _ in range(L):
            lib.cove_object_get(handle, b"age", out)
        library_call = time.perf_counter() - t
        realm.close()
        # Where create_many's time goes: the same load into a second file, the library calls it
        # makes (one per batch) timed apart from the binding around them.
        inside = [0.0]

        class TimedLibrary:
            def __getattr__(self, name: str) -> object:
                return getattr(lib, name)

            def cove_object_create_many(self, *args: object) -> int:
                t0 = time.perf_counter()
                try:
                    return lib.cove_object_create_many(*args)
                finally:
                    inside[0] += time.perf_counter() - t0

        split = cove.open(os.path.join(d, "split.cove"), schema=SCHEMA, schema_version=1)
        _realm.lib = TimedLibrary()  # type: ignore[assignment]
        try:
            with split.write():
                t = time.perf_counter()
                split.create_many("Person", data)
                create_many_only = time.perf_counter() - t
        finally:
            _realm.lib = lib
        create_many_library = inside[0]
        split.close()

        db = sqlite3.connect(os.path.join(d, "people.db"))
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL, score REAL NOT NULL)")
        tuples = [(r["id"], r["name"], r["age"], r["score"]) for r in data]
        t = time.perf_counter()
        with db:
            db.executemany("INSERT INTO person VALUES (?, ?, ?, ?)", tuples)
        sqlite_insert = time.perf_counter() - t
        t = time.perf_counter()
        total2 = 0
        for k in order:
            i, name, age, score = db.execute("SELECT id, name, age, score FROM person WHERE id = ?", (k,)).fetchone()
            total2 += i + len(name) + age + int(score)
        sqlite_lookup = time.perf_counter() - t
        db.close()
        assert total == total2

    def us(seconds: float, n: int) -> str:
        return f"{seconds / n * 1e6:.2f} µs"

    print("| Python workload | Cove | sqlite3 | Cove/sqlite3 |")
    print("|---|--:|--:|--:|")
    print(f"| {N} objects: create_many vs executemany (per object) | {us(cove_insert, N)} | {us(sqlite_insert, N)} | {cove_insert / sqlite_insert:.2f}× |")
    print(f"| {L} primary-key lookups, 4 fields (per lookup) | {us(cove_lookup, L)} | {us(sqlite_lookup, L)} | {cove_lookup / sqlite_lookup:.2f}× |")
    print()
    print("| Where a Cove lookup's time goes (per call) | Cove |")
    print("|---|--:|")
    print(f"| realm.find alone | {us(find_only, L)} |")
    print(f"| one attribute read (p.age) | {us(attribute, L)} |")
    print(f"| … its library call (cove_object_get) made through cffi instead | {us(library_call, L)} |")
    print()
    print("| Where create_many's time goes (per object, without the commit) | Cove |")
    print("|---|--:|")
    print(f"| create_many | {us(create_many_only, N)} |")
    print(f"| … the library calls it makes (cove_object_create_many) | {us(create_many_library, N)} |")
    print(f"| … the binding around them | {us(create_many_only - create_many_library, N)} |")


if __name__ == "__main__":
    main()
