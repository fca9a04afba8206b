"""Small lists, sets and maps, kept inline in their class's collection area: the file space of
many objects with a one-element collection each (through Realm.file_space()), and a seeded random
walk of edits on lists, sets and maps of ints, strings, mixed values and links that takes
collections past the inline limit (960 bytes) and back, compared after every commit with a model
in Python, with deleted link targets, cancelled writes, verify() after each round and a reopen
at the end."""
from __future__ import annotations

import pathlib
import random
import string
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import cove

MB = 1_000_000
OBJECTS = 5000

SPACE_SCHEMA = {
    "Item": {"properties": {"n": "int", "nums": "int[]", "tags": "string<>", "counts": "int{}"}},
}


def _fill(path: pathlib.Path, make: Any) -> cove.FileSpace:
    with cove.open(path, schema=SPACE_SCHEMA, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            realm.create_many("Item", (make(i) for i in range(OBJECTS)))
        space = realm.file_space()
        assert space.format_version >= 6
        realm.verify()
        return space


@pytest.mark.parametrize("prop, make", [
    ("nums", lambda i: {"n": i, "nums": [i * 7]}),
    ("tags", lambda i: {"n": i, "tags": {f"tag{i:06d}"}}),
    ("counts", lambda i: {"n": i, "counts": {"k": i}}),
])
def test_one_element_collections_take_little_space(tmp_path: pathlib.Path, prop: str, make: Any) -> None:
    plain = _fill(tmp_path / "plain.cove", lambda i: {"n": i})
    space = _fill(tmp_path / f"{prop}.cove", make)
    # Before they lived inline, each collection took a 4 KiB page: 20 MB for 5,000.
    assert space.used_bytes <= MB, space
    assert space.used_bytes - plain.used_bytes < OBJECTS * 4096 // 16, (space, plain)
    with cove.open(tmp_path / f"{prop}.cove", schema=SPACE_SCHEMA, schema_version=1) as realm:
        items = realm.objects("Item")
        assert len(items) == OBJECTS
        for item in items:
            n = item.n
            if prop == "nums":
                assert list(item.nums) == [n * 7]
            elif prop == "tags":
                assert list(item.tags) == [f"tag{n:06d}"]
            else:
                assert dict(item.counts) == {"k": n}


# -- a random walk across the inline limit ------------------------------------------------------

SCHEMA = {
    "Box": {"primaryKey": "id", "properties": {
        "id": "int",
        "ints": "int[]", "strs": "string[]", "anys": "mixed[]", "links": "Target[]",
        "int_set": "int<>", "str_set": "string<>", "any_set": "mixed<>", "link_set": "Target<>",
        "int_map": "int{}", "str_map": "string{}", "any_map": "mixed{}", "link_map": "Target{}",
    }},
    "Target": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}},
}
LISTS = ["ints", "strs", "anys", "links"]
SETS = ["int_set", "str_set", "any_set", "link_set"]
MAPS = ["int_map", "str_map", "any_map", "link_map"]
ELEMENT = {"ints": "int", "strs": "str", "anys": "any", "links": "link",
           "int_set": "int", "str_set": "str", "any_set": "any", "link_set": "link",
           "int_map": "int", "str_map": "str", "any_map": "any", "link_map": "link"}
BOXES = 4
ROUNDS = 8
COMMITS_PER_ROUND = 4
LIMIT = 960


def link(target_id: int) -> Tuple[str, int]:
    return ("Target", target_id)


def normal(value: Any) -> Any:
    """A value read from the realm as the model holds it."""
    if isinstance(value, cove.Object):
        return link(value.id)
    return value


def size_estimate(values: Any, keyed: bool) -> int:
    """About how many bytes the inline form of a collection takes (each element a length byte, a
    type tag and the payload; a key before it for sets and maps)."""
    def one(v: Any) -> int:
        if isinstance(v, str):
            return 3 + len(v.encode())
        if isinstance(v, bytes):
            return 3 + len(v)
        if isinstance(v, tuple):
            return 14
        return 10
    if isinstance(values, dict):
        return sum(2 + len(k.encode()) + one(v) for k, v in values.items())
    return sum(one(v) * (2 if keyed else 1) for v in values)


class Walk:
    """The realm, a model of every box's collections and the random choices."""

    def __init__(self, realm: cove.Realm, rng: random.Random) -> None:
        self.realm = realm
        self.rng = rng
        self.model: Dict[int, Dict[str, Any]] = {}
        self.targets: Dict[int, cove.Object] = {}
        self.next_target = 0
        self.goals: Dict[Tuple[int, str], int] = {}
        self.largest: Dict[Tuple[int, str], int] = {}
        self.crossings = 0        # collections seen above the limit, then below half of it
        self.commits = 0

    # values ---------------------------------------------------------------------------------

    def text(self) -> str:
        return "".join(self.rng.choice(string.ascii_letters) for _ in range(self.rng.randint(0, 60)))

    def value(self, kind: str) -> Any:
        rng = self.rng
        if kind == "int":
            return rng.randint(-10**12, 10**12)
        if kind == "str":
            return self.text()
        if kind == "link":
            return link(rng.choice(list(self.targets)))
        choice = rng.randrange(6)
        if choice == 0:
            return rng.randint(-1000, 1000)
        if choice == 1:
            return self.text()
        if choice == 2:
            return None
        if choice == 3 and self.targets:
            return link(rng.choice(list(self.targets)))
        if choice == 4:
            return rng.randint(-1000, 1000) + 0.5
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 20)))

    def key(self) -> str:
        return "k" + str(self.rng.randrange(200)) + "x" * self.rng.randrange(12)

    def stored(self, value: Any) -> Any:
        """A model value as it is written to the realm."""
        if isinstance(value, tuple):
            return self.targets[value[1]]
        return value

    # edits ----------------------------------------------------------------------------------

    def new_target(self, model: Dict[int, Dict[str, Any]]) -> None:
        tid = self.next_target
        self.next_target += 1
        self.targets[tid] = self.realm.create("Target", {"id": tid, "name": f"t{tid}"})

    def delete_target(self, model: Dict[int, Dict[str, Any]]) -> None:
        if len(self.targets) <= 2:
            return
        tid = self.rng.choice(list(self.targets))
        self.realm.delete(self.targets.pop(tid))
        gone = link(tid)
        for box in model.values():
            box["links"] = [v for v in box["links"] if v != gone]
            box["anys"] = [None if v == gone else v for v in box["anys"]]
            box["link_set"].discard(gone)
            box["any_set"].discard(gone)
            for name in ("link_map", "any_map"):
                box[name] = {k: (None if v == gone else v) for k, v in box[name].items()}

    def edit(self, box_id: int, name: str, model: Dict[str, Any]) -> None:
        """One random edit of collection `name` of box `box_id`, in the realm and in `model`,
        growing it while it is below its goal size and shrinking it above."""
        rng = self.rng
        box = self.realm.find("Box", box_id)
        assert box is not None
        coll = getattr(box, name)
        current = model[name]
        grow = len(current) < self.goals[(box_id, name)]
        kind = ELEMENT[name]
        if kind == "link" and not self.targets:
            return
        if name in LISTS:
            op = rng.random()
            if (grow and op < 0.7) or not current:
                v = self.value(kind)
                at = rng.randint(0, len(current))
                coll.insert(at, self.stored(v))
                current.insert(at, v)
            elif op < 0.8:
                at = rng.randrange(len(current))
                v = self.value(kind)
                coll[at] = self.stored(v)
                current[at] = v
            elif op < 0.9:
                src, dst = rng.randrange(len(current)), rng.randrange(len(current))
                coll.move(src, dst)
                current.insert(dst, current.pop(src))
            else:
                at = rng.randrange(len(current))
                del coll[at]
                del current[at]
        elif name in SETS:
            if (grow and rng.random() < 0.8) or not current:
                v = self.value(kind)
                coll.add(self.stored(v))
                current.add(v)
            else:
                v = rng.choice(sorted(current, key=repr)) if rng.random() < 0.9 else self.value(kind)
                coll.discard(self.stored(v))
                current.discard(v)
        else:
            if (grow and rng.random() < 0.8) or not current:
                k, v = self.key(), self.value(kind)
                if kind == "link" and rng.random() < 0.1:
                    v = None
                coll[k] = self.stored(v)
                current[k] = v
            else:
                k = rng.choice(sorted(current))
                if rng.random() < 0.3:
                    v = self.value(kind)
                    coll[k] = self.stored(v)
                    current[k] = v
                else:
                    del coll[k]
                    del current[k]

    # checks ---------------------------------------------------------------------------------

    def compare(self, where: str) -> None:
        for box_id, expected in self.model.items():
            box = self.realm.find("Box", box_id)
            assert box is not None
            for name in LISTS:
                got = [normal(v) for v in getattr(box, name)]
                assert got == expected[name], f"{where}: box {box_id} {name}"
            for name in SETS:
                got_list = [normal(v) for v in getattr(box, name)]
                assert len(got_list) == len(expected[name]), f"{where}: box {box_id} {name} size"
                assert set(got_list) == expected[name], f"{where}: box {box_id} {name}"
                if name in ("int_set", "str_set"):
                    assert got_list == sorted(got_list), f"{where}: box {box_id} {name} order"
            for name in MAPS:
                coll = getattr(box, name)
                got_map = {k: normal(v) for k, v in coll.items()}
                assert got_map == expected[name], f"{where}: box {box_id} {name}"
                assert list(coll) == sorted(expected[name]), f"{where}: box {box_id} {name} key order"
            for name in LISTS + SETS + MAPS:
                size = size_estimate(expected[name], name in SETS)
                key = (box_id, name)
                if size > LIMIT:
                    self.largest[key] = size
                elif size < LIMIT // 2 and self.largest.pop(key, 0) > LIMIT:
                    self.crossings += 1


def empty_box() -> Dict[str, Any]:
    box: Dict[str, Any] = {name: [] for name in LISTS}
    box.update({name: set() for name in SETS})
    box.update({name: {} for name in MAPS})
    return box


def copy_model(model: Dict[int, Dict[str, Any]]) -> Dict[int, Dict[str, Any]]:
    return {b: {n: (list(v) if isinstance(v, list) else set(v) if isinstance(v, set) else dict(v))
                for n, v in box.items()} for b, box in model.items()}


def test_random_edits_across_the_inline_limit(tmp_path: pathlib.Path) -> None:
    rng = random.Random(960)
    path = tmp_path / "walk.cove"
    realm = cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync")
    walk = Walk(realm, rng)
    with realm.write():
        for _ in range(6):
            walk.new_target(walk.model)
        for b in range(BOXES):
            realm.create("Box", {"id": b})
            walk.model[b] = empty_box()
    names = LISTS + SETS + MAPS
    for round_ in range(ROUNDS):
        # Each round sets every collection a goal size: small, near the limit or well past it.
        for b in range(BOXES):
            for name in names:
                walk.goals[(b, name)] = rng.choice([0, 2, 8, 40, 80, 120])
        for commit in range(COMMITS_PER_ROUND):
            pending = copy_model(walk.model)
            saved_targets = dict(walk.targets)
            saved_next = walk.next_target
            realm.begin_write()
            for _ in range(rng.randint(300, 600)):
                r = rng.random()
                if r < 0.01:
                    walk.new_target(pending)
                elif r < 0.015:
                    walk.delete_target(pending)
                else:
                    b = rng.randrange(BOXES)
                    name = rng.choice(names)
                    walk.edit(b, name, pending[b])
            if rng.random() < 0.1:
                # A cancelled write leaves every collection (and the inline area) as it was.
                realm.cancel_write()
                walk.targets = {t: realm.find("Target", t) for t in saved_targets}  # type: ignore[misc]
                walk.next_target = saved_next
                walk.compare(f"round {round_} commit {commit} (cancelled)")
                continue
            realm.commit()
            walk.commits += 1
            walk.model = pending
            walk.compare(f"round {round_} commit {commit}")
        realm.verify()
    realm.close()
    # The collections crossed the limit both ways.
    print(f"{walk.crossings} crossings, {walk.commits} commits")
    assert walk.crossings >= 5, walk.crossings
    with cove.open(path, schema=SCHEMA, schema_version=1) as reopened:
        walk.realm = reopened
        walk.compare("after reopen")
        reopened.verify()
