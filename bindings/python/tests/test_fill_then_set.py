"""Objects created with their primary key and then filled attribute by attribute in the same write
(more of them than a table keeps pending), against the same objects created with all their
values: the same values inside and after the write, primary-key lookups, index queries,
backlinks, collections, embedded objects and change sets delivered, and a file that verifies."""
from __future__ import annotations

import pathlib
import random
from typing import Any, Dict, List

import cove

SCHEMA = {
    "Person": {"primaryKey": "id",
               "properties": {"id": "int", "name": "string", "age": "int", "score": "double?",
                              "dog": "Dog?", "tags": "string[]", "home": "Address?"},
               "indexed": ["age", "name"]},
    "Dog": {"properties": {"name": "string", "owners": "@links(Person.dog)"}},
    "Address": {"embedded": True, "properties": {"city": "string"}},
}

PEOPLE = 2600


def planned(rng: random.Random) -> List[Dict[str, Any]]:
    ids = list(range(0, PEOPLE * 2, 2))
    rng.shuffle(ids)
    return [{"id": i, "name": f"p{rng.randrange(40)}", "age": rng.randrange(30),
             "score": None if rng.randrange(3) == 0 else rng.randrange(100) / 4,
             "dog": rng.randrange(3), "tags": [f"t{rng.randrange(5)}" for _ in range(rng.randrange(3))],
             "home": None if rng.randrange(2) else f"city{rng.randrange(4)}"} for i in ids]


def holds(o: Any, p: Dict[str, Any], dogs: List[Any]) -> bool:
    return (o.id == p["id"] and o.name == p["name"] and o.age == p["age"] and o.score == p["score"]
            and o.dog == (dogs[p["dog"]] if p["dog"] < 2 else None) and list(o.tags) == p["tags"]
            and (o.home.city if o.home is not None else None) == p["home"])


def make(path: pathlib.Path, people: List[Dict[str, Any]], filled: bool) -> Any:
    realm = cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync")
    seen: List[Any] = []
    token = realm.objects("Person").observe(seen.append)
    realm.deliver()
    rng = random.Random(5)
    with realm.write():
        dogs = [realm.create("Dog", {"name": n}) for n in ("rex", "fido")]
        made = []
        for p in people:
            dog = dogs[p["dog"]] if p["dog"] < 2 else None
            home = {"city": p["home"]} if p["home"] is not None else None
            if filled:
                o = realm.create("Person", {"id": p["id"]})
                o.name = p["name"]
                if rng.randrange(4) == 0:
                    o.age = 99                                  # set twice
                o.age = p["age"]
                o.score = p["score"]
                o.dog = dog
                o.tags = p["tags"]
                o.home = home
            else:
                o = realm.create("Person", {"id": p["id"], "name": p["name"], "age": p["age"], "score": p["score"],
                                            "dog": dog, "tags": p["tags"], "home": home})
            assert holds(o, p, dogs)                            # read back at once
            if rng.randrange(50) == 0:                          # an earlier object: the pending ones written
                j = rng.randrange(len(made) + 1)
                assert holds((made + [o])[j], people[j], dogs)
            made.append(o)
        assert len(realm.objects("Person").filter("age == 7")) == sum(p["age"] == 7 for p in people)
        assert len(dogs[0].owners) == sum(p["dog"] == 0 for p in people)
    realm.refresh()
    token.invalidate()
    return realm, dogs, seen


def test_filled_objects_match_objects_created_with_their_values(tmp_path: pathlib.Path) -> None:
    people = planned(random.Random(11))
    filled, filled_dogs, filled_seen = make(tmp_path / "filled.cove", people, True)
    whole, whole_dogs, whole_seen = make(tmp_path / "whole.cove", people, False)
    try:
        for seen in (filled_seen, whole_seen):
            assert len(seen) == 2 and seen[0].is_initial
            assert len(seen[1].insertions) == PEOPLE
            assert seen[1].modifications == [] and seen[1].deletions == []
        for p in people:
            a, b = filled.find("Person", p["id"]), whole.find("Person", p["id"])
            assert holds(a, p, filled_dogs) and holds(b, p, whole_dogs)
            assert filled.find("Person", p["id"] + 1) is None
        for query, arg in [("age == $0", 7), ("age == $0", 99), ("name == $0", "p3"), ("score == $0", None)]:
            a = [o.id for o in filled.objects("Person").filter(query, arg)]
            b = [o.id for o in whole.objects("Person").filter(query, arg)]
            assert a == b
        assert len(filled.objects("Person").filter("age == 99")) == 0
        for fd, wd in zip(filled_dogs, whole_dogs):
            assert [o.id for o in fd.owners] == [o.id for o in wd.owners]
        filled.verify()
        whole.verify()
    finally:
        filled.close()
        whole.close()
