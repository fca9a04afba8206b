"""Cove's Python package and Python's sqlite3 module on the same Person objects, one run:
realm.create_many against executemany for the bulk load, primary-key lookups reading all four
fields (realm.find against a SELECT by id), and iterating them all reading one field. Prints a
Markdown table, then how a Cove lookup splits between find and each attribute read (beside the
same library call made through cffi: the read itself calls the library from C,
cove/_speedups.c), and how create_many splits between the library calls it makes and the
binding around them.

Then the binding's common operations one at a time against their sqlite3 counterparts, on
BENCH_PY_OPS (20000) objects in one file of each: iterating every object reading one field,
creating one object per call (with a link; with four plain values; with its key only, then three
attribute sets, which is timed against the create with four values too), setting one field of an
object in hand, following a link, and appending to, adding to, storing in and iterating a list, a
set and a map (sqlite3: rows of child tables keyed by the owner's id, indexed).

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


M = int(os.environ.get("BENCH_PY_OPS", "20000"))
OPS_SCHEMA = {
    "Person": {"primaryKey": "id", "properties": {
        "id": "int", "name": "string", "age": "int", "score": "double", "dog": "Dog?",
        "tags": "string[]", "nums": "int<>", "scores": "double{}"}},
    "Dog": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}},
    "Plain": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}},
    "Later": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "age": "int", "score": "double"}},
    "Listed": {"properties": {"name": "string", "n": "int", "nums": "int[]"}},
    "Unlisted": {"properties": {"name": "string", "n": "int"}},
}
OPS_SQL = [
    "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, dog INTEGER)",
    "CREATE TABLE dog (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL)",
    "CREATE TABLE later (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL)",
    "CREATE TABLE tag (person INTEGER, value TEXT)",
    "CREATE INDEX tag_person ON tag(person)",
    "CREATE TABLE num (person INTEGER, value INTEGER, UNIQUE (person, value))",
    "CREATE TABLE kv (person INTEGER, key TEXT, value REAL, PRIMARY KEY (person, key))",
    "CREATE TABLE listed (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)",
    "CREATE TABLE listed_num (owner INTEGER, pos INTEGER, value INTEGER)",
    "CREATE INDEX listed_num_owner ON listed_num(owner, pos)",
]


def timed(body) -> float:
    t = time.perf_counter()
    body()
    return time.perf_counter() - t


def operations(d: str) -> tuple:
    """(label, count, Cove seconds, sqlite3 seconds) for each common operation, and the seconds
    of Cove's creates with four values and with the key then three sets, and of create_many with
    and without a two-element list."""
    rows = []
    realm = cove.open(os.path.join(d, "ops.cove"), schema=OPS_SCHEMA, schema_version=1, durability="no_sync")
    db = sqlite3.connect(os.path.join(d, "ops.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    for sql in OPS_SQL:
        db.execute(sql)

    def cove_create() -> None:
        with realm.write():
            dog = realm.create("Dog", {"id": 0, "name": "Rex"})
            for i in range(M):
                realm.create("Person", {"id": i, "name": NAMES[i % 1000], "age": i % 90, "score": i * 0.5, "dog": dog})

    def sqlite_create() -> None:
        db.execute("BEGIN")
        db.execute("INSERT INTO dog VALUES (0, 'Rex')")
        for i in range(M):
            db.execute("INSERT INTO person VALUES (?, ?, ?, ?, 0)", (i, NAMES[i % 1000], i % 90, i * 0.5))
        db.execute("COMMIT")

    rows.append(("create one object per call, with a link (per object)", M, timed(cove_create), timed(sqlite_create)))

    def cove_create_plain() -> None:
        with realm.write():
            for i in range(M):
                realm.create("Plain", {"id": i, "name": NAMES[i % 1000], "age": i % 90, "score": i * 0.5})

    def sqlite_create_plain() -> None:
        db.execute("BEGIN")
        for i in range(M):
            db.execute("INSERT INTO plain VALUES (?, ?, ?, ?)", (i, NAMES[i % 1000], i % 90, i * 0.5))
        db.execute("COMMIT")

    four = timed(cove_create_plain)
    rows.append(("create one object per call, four values (per object)", M, four, timed(sqlite_create_plain)))

    def cove_create_then_set() -> None:
        with realm.write():
            for i in range(M):
                o = realm.create("Later", {"id": i})
                o.name = NAMES[i % 1000]
                o.age = i % 90
                o.score = i * 0.5

    def sqlite_create_then_set() -> None:
        db.execute("BEGIN")
        for i in range(M):
            db.execute("INSERT INTO later (id) VALUES (?)", (i,))
            db.execute("UPDATE later SET name = ? WHERE id = ?", (NAMES[i % 1000], i))
            db.execute("UPDATE later SET age = ? WHERE id = ?", (i % 90, i))
            db.execute("UPDATE later SET score = ? WHERE id = ?", (i * 0.5, i))
        db.execute("COMMIT")

    then_set = timed(cove_create_then_set)
    rows.append(("create with the key, then three attribute sets, one write (per object)", M, then_set,
                 timed(sqlite_create_then_set)))
    people = list(realm.objects("Person"))

    def cove_iterate() -> None:
        assert sum(p.age for p in realm.objects("Person")) >= 0

    def sqlite_iterate() -> None:
        assert sum(age for (age,) in db.execute("SELECT age FROM person")) >= 0

    rows.append(("iterate every object reading one field (per object)", M, timed(cove_iterate), timed(sqlite_iterate)))

    def cove_set() -> None:
        with realm.write():
            for p in people:
                p.age = p.id % 80

    def sqlite_set() -> None:
        db.execute("BEGIN")
        for i in range(M):
            db.execute("UPDATE person SET age = ? WHERE id = ?", (i % 80, i))
        db.execute("COMMIT")

    rows.append(("set one field of an object in hand, one write (per set)", M, timed(cove_set), timed(sqlite_set)))

    def cove_link() -> None:
        assert all(p.dog.name for p in people)

    def sqlite_link() -> None:
        assert all(db.execute("SELECT name FROM dog WHERE id = ?", (0,)).fetchone()[0] for _ in range(M))

    rows.append(("follow a link and read one field (per object)", M, timed(cove_link), timed(sqlite_link)))
    owner = people[0]

    def cove_append() -> None:
        with realm.write():
            tags, nums, scores = owner.tags, owner.nums, owner.scores
            for i in range(M):
                tags.append(NAMES[i % 1000])
                nums.add(i)
                scores[NAMES[i % 1000]] = i * 0.5

    def sqlite_append() -> None:
        db.execute("BEGIN")
        for i in range(M):
            db.execute("INSERT INTO tag VALUES (0, ?)", (NAMES[i % 1000],))
            db.execute("INSERT OR IGNORE INTO num VALUES (0, ?)", (i,))
            db.execute("INSERT OR REPLACE INTO kv VALUES (0, ?, ?)", (NAMES[i % 1000], i * 0.5))
        db.execute("COMMIT")

    rows.append(("list append + set add + map store, one write (per three)", M, timed(cove_append), timed(sqlite_append)))

    # Objects with a two-element list, loaded in one call: Cove's create_many with the lists in
    # the rows, SQLite's executemany of the parents and of the child rows.
    def cove_listed() -> None:
        with realm.write():
            realm.create_many("Listed", ({"name": NAMES[i % 1000], "n": i, "nums": [i, i + 1]} for i in range(M)))

    def cove_unlisted() -> None:
        with realm.write():
            realm.create_many("Unlisted", ({"name": NAMES[i % 1000], "n": i} for i in range(M)))

    def sqlite_listed() -> None:
        db.execute("BEGIN")
        db.executemany("INSERT INTO listed VALUES (?, ?, ?)", ((i, NAMES[i % 1000], i) for i in range(M)))
        db.executemany("INSERT INTO listed_num VALUES (?, ?, ?)",
                       ((i, p, i + p) for i in range(M) for p in range(2)))
        db.execute("COMMIT")

    listed, unlisted = timed(cove_listed), timed(cove_unlisted)
    rows.append(("create_many with a two-element list in each row (per object)", M, listed, timed(sqlite_listed)))

    def cove_collections() -> None:
        assert len(list(owner.tags)) + len(list(owner.nums)) + len(list(owner.scores.items())) > 0

    def sqlite_collections() -> None:
        n = 0
        for table, columns in (("tag", "value"), ("num", "value"), ("kv", "key, value")):
            n += len(db.execute(f"SELECT {columns} FROM {table} WHERE person = 0").fetchall())
        assert n > 0

    count = M + M + len(owner.scores)
    rows.append(("iterate a list, a set and a map of the owner (per element)", count, timed(cove_collections),
                 timed(sqlite_collections)))
    realm.close()
    db.close()
    return rows, four, then_set, listed, unlisted


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
        t = time.perf_counter()
        assert sum(p.age for p in realm.objects("Person")) >= 0
        cove_iterate = time.perf_counter() - t
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
        t = time.perf_counter()
        assert sum(age for (age,) in db.execute("SELECT age FROM person")) >= 0
        sqlite_iterate = time.perf_counter() - t
        db.close()
        assert total == total2
        ops, four, then_set, listed, unlisted = operations(d)

    def us(seconds: float, n: int) -> str:
        return f"{seconds / n * 1e6:.2f} µs"

    print("| Python workload | Cove | sqlite3 | Cove/sqlite3 |")
    print("|---|--:|--:|--:|")
    print(f"| {N} objects: create_many vs executemany (per object) | {us(cove_insert, N)} | {us(sqlite_insert, N)} | {cove_insert / sqlite_insert:.2f}× |")
    print(f"| {L} primary-key lookups, 4 fields (per lookup) | {us(cove_lookup, L)} | {us(sqlite_lookup, L)} | {cove_lookup / sqlite_lookup:.2f}× |")
    print(f"| {N} objects iterated reading one field (per object) | {us(cove_iterate, N)} | {us(sqlite_iterate, N)} | {cove_iterate / sqlite_iterate:.2f}× |")
    for label, count, a, b in ops:
        print(f"| {label}, {count} | {us(a, count)} | {us(b, count)} | {a / b:.2f}× |")
    print()
    print("| Cove against Cove (per object) | Cove | ratio |")
    print("|---|--:|--:|")
    print(f"| create with the key, then three attribute sets | {us(then_set, M)} | {then_set / four:.2f}× |")
    print(f"| … against one create with the four values | {us(four, M)} | 1.00× |")
    print(f"| create_many with a two-element list in each row | {us(listed, M)} | {listed / unlisted:.2f}× |")
    print(f"| … against the same rows without the list | {us(unlisted, M)} | 1.00× |")
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
