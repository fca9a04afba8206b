"""A randomized differential test of change sets through Python, over many seeds: results
(filtered, sorted, distinct, limited, and with a key-path filter), a list of objects and a list
of ints with duplicates, moves and clears, a set, a map and sectioned results. Commits of another
realm handle (merged into one delivery) and of the observing realm alternate. After every
delivery each change, applied as a table view applies it (deletions at old indices, then
insertions at new ones, then modified rows read again), must give the new contents, and the
modifications of results must name exactly the rows that stayed and whose observed properties
were written since the previous delivery."""
from __future__ import annotations

import pathlib
import random
from typing import Any, Dict, List, Optional, Set

import pytest

import cove

SCHEMA = {
    "Item": {"properties": {"uid": "int", "name": "string", "score": "int"}},
    "Owner": {"properties": {"items": "Item[]", "nums": "int[]", "labels": "int<>", "scores": "int{}"}},
}
NAMES = ["a", "b", "c"]


class Seen:
    """What one observer was told since the previous check."""

    def __init__(self) -> None:
        self.changes: List[Any] = []

    def __call__(self, change: Any) -> None:
        if not change.is_initial:
            self.changes.append(change)

    def take(self) -> Any:
        assert len(self.changes) <= 1, "one call a delivery"
        change = self.changes[0] if self.changes else None
        self.changes.clear()
        assert change is None or change.error is None
        return change


def applied(change: Any, old: List[Any], new: List[Any]) -> List[Any]:
    if change is None:
        return list(old)
    for name in ("deletions", "insertions", "modifications"):
        indices = getattr(change, name)
        assert indices == sorted(set(indices)), f"{name} ascending, each once"
    for source, target in change.moves:
        assert source in change.deletions and target in change.insertions, "a move is a deletion and an insertion"
    gone = set(change.deletions)
    rows = [row for i, row in enumerate(old) if i not in gone]
    for j in change.insertions:
        rows.insert(j, new[j])
    for j in change.modifications:
        rows[j] = new[j]
    return rows


def expected_modifications(change: Any, new: List[Any], written: Set[int]) -> List[int]:
    inserted = set(change.insertions) if change else set()
    return [j for j, uid in enumerate(new) if j not in inserted and uid in written]


@pytest.mark.parametrize("seed", range(12))
def test_every_change_applies_and_names_exactly_the_modified_rows(tmp_path: pathlib.Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "random.cove"
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm, \
            cove.open(path, durability="no_sync") as other:
        next_uid = 0
        with realm.write():
            for _ in range(6):
                realm.create("Item", {"uid": next_uid, "name": rng.choice(NAMES), "score": rng.randrange(5)})
                next_uid += 1
            owner = realm.create("Owner", {})
        items = realm.objects("Item")
        views = {
            "filtered": (items.filter("score > 1"), None),
            "sorted": (items.sorted("score"), None),
            "distinct": (items.distinct("name"), None),
            "limited": (items.filter("score < 4 SORT(score DESC) LIMIT(3)"), None),
            "key paths [name]": (items.sorted("uid"), ["name"]),
        }
        seen = {name: Seen() for name in list(views) + ["items", "nums", "labels", "scores", "sections"]}
        tokens = [results.observe(seen[name], key_paths=paths) for name, (results, paths) in views.items()]
        tokens += [owner.items.observe(seen["items"]), owner.nums.observe(seen["nums"]),
                   owner.labels.observe(seen["labels"]), owner.scores.observe(seen["scores"])]
        sections = items.sectioned(by="name")
        tokens.append(sections.observe(seen["sections"]))
        realm.deliver()

        def contents() -> Dict[str, Any]:
            now: Dict[str, Any] = {name: [o.uid for o in results] for name, (results, _) in views.items()}
            now["items"] = [o.uid for o in owner.items]
            now["nums"] = list(owner.nums)
            now["labels"] = list(owner.labels)
            now["scores"] = dict(owner.scores)
            now["sections"] = [(s.key, [o.uid for o in s]) for s in sections]
            return now

        old = contents()
        for round_ in range(25):
            by_other = rng.randrange(3) != 0
            writer = other if by_other else realm
            written: Dict[str, Set[int]] = {"name": set(), "score": set()}
            for _ in range(1 + rng.randrange(3) if by_other else 1):
                writer.refresh()
                with writer.write():
                    all_items = list(writer.objects("Item").sorted("uid"))
                    w_owner = writer.objects("Owner")[0]
                    for _ in range(1 + rng.randrange(5)):
                        op = rng.randrange(12)
                        if op == 0:
                            writer.create("Item", {"uid": next_uid, "name": rng.choice(NAMES), "score": rng.randrange(5)})
                            next_uid += 1
                        elif op == 1 and len(all_items) > 2:
                            doomed = all_items.pop(rng.randrange(len(all_items)))
                            for props in written.values():
                                props.discard(doomed.uid)
                            writer.delete(doomed)
                        elif op in (2, 3) and all_items:
                            item = rng.choice(all_items)
                            prop = rng.choice(["name", "score"])
                            setattr(item, prop, rng.choice(NAMES) if prop == "name" else rng.randrange(5))
                            written[prop].add(item.uid)
                        elif op == 4 and all_items:
                            w_owner.items.insert(rng.randrange(len(w_owner.items) + 1), rng.choice(all_items))
                        elif op == 5 and len(w_owner.items) > 1:
                            w_owner.items.move(rng.randrange(len(w_owner.items)), rng.randrange(len(w_owner.items)))
                        elif op == 6:
                            w_owner.nums.insert(rng.randrange(len(w_owner.nums) + 1), rng.randrange(3))
                        elif op == 7 and w_owner.nums:
                            choice = rng.randrange(4)
                            if choice == 0:
                                del w_owner.nums[rng.randrange(len(w_owner.nums))]
                            elif choice == 1:
                                w_owner.nums.move(rng.randrange(len(w_owner.nums)), rng.randrange(len(w_owner.nums)))
                            elif choice == 2:
                                w_owner.nums[rng.randrange(len(w_owner.nums))] = rng.randrange(3)
                            else:
                                w_owner.nums.clear()
                        elif op == 8:
                            w_owner.labels.add(rng.randrange(6))
                        elif op == 9 and w_owner.labels:
                            w_owner.labels.discard(rng.choice(list(w_owner.labels)))
                        elif op == 10:
                            w_owner.scores[rng.choice(NAMES)] = rng.randrange(3)
                        elif op == 11 and w_owner.scores:
                            del w_owner.scores[rng.choice(list(w_owner.scores.keys()))]
            realm.deliver()
            new = contents()
            context = f"seed {seed} round {round_}"
            for name, (_, paths) in views.items():
                change = seen[name].take()
                assert applied(change, old[name], new[name]) == new[name], f"{context}: {name}: {change}"
                observed = written["name"] if paths == ["name"] else written["name"] | written["score"]
                got = change.modifications if change else []
                assert got == expected_modifications(change, new[name], observed), f"{context}: {name}: {change}"
            for name in ("items", "nums", "labels"):
                change = seen[name].take()
                assert applied(change, old[name], new[name]) == new[name], f"{context}: {name}: {change}"
            change = seen["scores"].take()
            if change is not None:
                assert set(change.deletions) == set(old["scores"]) - set(new["scores"]), context
                assert set(change.insertions) == set(new["scores"]) - set(old["scores"]), context
            else:
                assert set(old["scores"]) == set(new["scores"]), context
            change = seen["sections"].take()
            rows = [list(r) for _, r in old["sections"]]
            if change is not None:
                for s, r in sorted(change.deletions, reverse=True):
                    del rows[s][r]
                for s in sorted(change.sections_to_delete, reverse=True):
                    del rows[s]
                for s in sorted(change.sections_to_insert):
                    rows.insert(s, list(new["sections"][s][1]))
                for s, r in sorted(change.insertions):
                    rows[s].insert(r, new["sections"][s][1][r])
            assert rows == [r for _, r in new["sections"]], f"{context}: sections: {change}"
            old = new
        for token in tokens:
            token.invalidate()
