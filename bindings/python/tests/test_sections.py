"""Sectioned results through Python: sections by a key path (ascending and descending, rows
ordered by a sort) and by a key function (its exceptions raised by the read or delivery that ran
it, never across the library), sections as live sequences of declared objects, change sets by
index path after another handle's commits (rows moving between sections, sections inserted and
deleted), one section observed by its key, freeze and thaw, the errors of bad input, `async for`
over changes(), and a randomized check that each delivered change set, applied to the old
sections as a table view applies it, gives the new sections."""
from __future__ import annotations

import asyncio
import gc
import pathlib
import random
import threading
from typing import Any, Callable, Iterator, List, Optional, Tuple

import pytest

import cove
from cove import _notifications, _sections


class Person(cove.Object):
    uid: int = cove.Property(primary_key=True)
    firstName: str
    lastName: Optional[str]
    age: int
    city: Optional[str]
    friends: cove.List[Person]
    tags: cove.List[str]


SCHEMA = [Person]
PEOPLE = [(1, "Ann", 30), (2, "Bob", 20), (3, "Amy", 20), (4, "Cid", 30), (5, "Bea", 40)]


@pytest.fixture()
def realm(path: pathlib.Path) -> Iterator[cove.Realm]:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            for uid, name, age in PEOPLE:
                realm.create(Person, {"uid": uid, "firstName": name, "age": age, "lastName": name.lower()})
        yield realm


def person(realm: cove.Realm, uid: int) -> Person:
    found = realm.find(Person, uid)
    assert found is not None
    return found


def names(sections: cove.SectionedResults[Any]) -> List[List[str]]:
    return [[p.firstName for p in section] for section in sections]


# -- reading -------------------------------------------------------------------------------------

def test_sections_by_a_key_path(realm: cove.Realm) -> None:
    people = realm.objects(Person)
    by_age = people.sectioned(by="age", ascending=True)
    assert isinstance(by_age, cove.SectionedResults)
    assert by_age.keys == [20, 30, 40]
    assert len(by_age) == 3
    assert names(by_age) == [["Bob", "Amy"], ["Ann", "Cid"], ["Bea"]]   # rows keep the results' order
    first = by_age[0]
    assert isinstance(first, cove.ResultsSection)
    assert first.key == 20 and len(first) == 2
    assert isinstance(first[0], Person) and first[0].firstName == "Bob"
    assert first[-1].firstName == "Amy" and [p.firstName for p in first[0:1]] == ["Bob"]
    assert by_age[-1].key == 40 and by_age[-3].key == 20
    assert [s.key for s in by_age[1:]] == [30, 40]
    assert by_age.key_path == "age" and by_age.ascending and not by_age.is_frozen and by_age.is_valid
    assert by_age.results is people and first.sectioned is by_age
    assert "3 sections" in repr(by_age) and "20" in repr(first)

    descending = people.sectioned(by="age", ascending=False)
    assert descending.keys == [40, 30, 20]
    assert names(descending) == [["Bea"], ["Ann", "Cid"], ["Bob", "Amy"]]

    # sort orders the rows within each section
    by_age_name = people.sectioned(by="age", sort="firstName")
    assert names(by_age_name) == [["Amy", "Bob"], ["Ann", "Cid"], ["Bea"]]
    by_age_name_desc = people.sectioned(by="age", sort=[("firstName", False)])
    assert names(by_age_name_desc) == [["Bob", "Amy"], ["Cid", "Ann"], ["Bea"]]

    # a null key is a key like another, first
    with realm.write():
        person(realm, 2).city = "Oslo"
    by_city = people.filter("age < 35").sectioned(by="city")
    assert by_city.keys == [None, "Oslo"]
    assert names(by_city) == [["Ann", "Amy", "Cid"], ["Bob"]]


def test_sections_by_a_key_function(realm: cove.Realm) -> None:
    seen: List[Any] = []

    def first_letter(p: Person) -> str:
        seen.append(p)
        return p.firstName[:1]
    by_letter = realm.objects(Person).sectioned(key=first_letter, sort=[("firstName", True)])
    assert seen == []                                   # lazy: keyed at the first read
    assert by_letter.keys == ["A", "B", "C"]
    assert names(by_letter) == [["Amy", "Ann"], ["Bea", "Bob"], ["Cid"]]
    assert seen and all(isinstance(p, Person) for p in seen)
    assert by_letter.key_path is None and "key function" in repr(by_letter)

    # keys of every kind Cove stores, ordered as SORT orders them: null first, numbers by value
    def mixed(p: Person) -> Any:
        return {1: None, 2: 2.5, 3: 2, 4: "b", 5: True}[p.uid]
    by_mixed = realm.objects(Person).sectioned(key=mixed)
    keys = by_mixed.keys
    assert keys[0] is None and set(map(repr, keys)) == {"None", "2.5", "2", "'b'", "True"}
    assert keys.index(2) < keys.index(2.5)

    # an object key
    with realm.write():
        ann = person(realm, 1)
        for uid in (2, 3):
            person(realm, uid).friends.append(ann)
    by_friend = realm.objects(Person).filter("friends.@count > 0").sectioned(key=lambda p: p.friends[0])
    assert by_friend.keys == [ann] and isinstance(by_friend[0].key, Person)

    # without a sort the rows keep the results' order
    by_parity = realm.objects(Person).sectioned(key=lambda p: p.uid % 2)
    assert by_parity.keys == [0, 1]
    assert [[p.uid for p in s] for s in by_parity] == [[2, 4], [1, 3, 5]]


def test_sections_are_live_and_follow_their_key(realm: cove.Realm) -> None:
    by_age = realm.objects(Person).sectioned(by="age")
    thirty = by_age[1]
    rows = iter(thirty)                                   # the rows when iteration began
    with realm.write():
        person(realm, 2).age = 30                         # Bob leaves 20 for 30
        person(realm, 5).age = 20                         # 40 goes away
        realm.create(Person, {"uid": 6, "firstName": "Dan", "age": 10})   # 10 comes first
        assert by_age.keys == [10, 20, 30]                # a write in progress is seen
    assert [p.firstName for p in rows] == ["Ann", "Cid"]
    assert thirty.key == 30 and [p.firstName for p in thirty] == ["Ann", "Bob", "Cid"]
    assert by_age.keys == [10, 20, 30]
    with realm.write():
        for uid in (1, 2, 4):
            person(realm, uid).age = 31
    assert len(thirty) == 0 and list(thirty) == []         # no row has the key now
    with pytest.raises(cove.OutOfRangeError):
        thirty[0]
    with realm.write():
        person(realm, 4).age = 30
    assert [p.firstName for p in thirty] == ["Cid"]


def test_sectioned_results_of_a_list_and_of_backlinks(realm: cove.Realm) -> None:
    with realm.write():
        ann = person(realm, 1)
        ann.friends.extend([person(realm, uid) for uid in (5, 2, 3)])
    sections = ann.friends.as_results().sectioned(by="age")
    assert sections.keys == [20, 40] and names(sections) == [["Bob", "Amy"], ["Bea"]]
    assert isinstance(sections[0][0], Person)


# -- bad input -----------------------------------------------------------------------------------

def test_bad_arguments(realm: cove.Realm) -> None:
    people = realm.objects(Person)
    with pytest.raises(cove.InvalidArgumentError, match="nope"):
        people.sectioned(by="nope")
    with pytest.raises(cove.InvalidArgumentError):
        people.sectioned(by="friends.age")                # reaches a collection
    with pytest.raises(cove.InvalidArgumentError):
        people.sectioned(by="tags")
    with pytest.raises(cove.InvalidArgumentError):
        people.sectioned()                                # neither
    with pytest.raises(cove.InvalidArgumentError):
        people.sectioned(by="age", key=lambda p: 1)       # both
    with pytest.raises(cove.WrongTypeError):
        people.sectioned(by=3)                            # type: ignore[arg-type]
    with pytest.raises(cove.WrongTypeError):
        people.sectioned(key="age")                       # type: ignore[arg-type]
    with pytest.raises(cove.InvalidArgumentError, match="ascending"):
        people.sectioned(key=lambda p: 1, ascending=False)
    with pytest.raises(cove.InvalidArgumentError):
        people.sectioned(key=lambda p: 1, sort="nope")
    with realm.write():
        person(realm, 1).tags.extend(["x", "y"])
    values = person(realm, 1).tags.as_results()
    with pytest.raises(cove.WrongTypeError):
        values.sectioned(by="self")
    with pytest.raises(cove.WrongTypeError):
        values.sectioned(key=lambda v: v)
    with pytest.raises(TypeError):
        cove.SectionedResults()
    with pytest.raises(TypeError):
        cove.ResultsSection()


def test_out_of_range(realm: cove.Realm) -> None:
    by_age = realm.objects(Person).sectioned(by="age")
    with pytest.raises(cove.OutOfRangeError):
        by_age[3]
    with pytest.raises(IndexError):                       # OutOfRangeError is an IndexError
        by_age[-4]
    with pytest.raises(cove.OutOfRangeError):
        by_age[1 << 70]
    with pytest.raises(cove.WrongTypeError):
        by_age["0"]                                       # type: ignore[call-overload]
    with pytest.raises(cove.OutOfRangeError):
        by_age[0][2]
    with pytest.raises(IndexError):
        by_age[0][-3]
    assert by_age[5:] == [] and by_age[0][5:] == []
    assert len(list(reversed(by_age))) == 3               # the Sequence mixins work


def test_key_function_exceptions_come_out_of_the_read(realm: cove.Realm) -> None:
    class Boom(Exception):
        pass

    def key(p: Person) -> int:
        if p.firstName == "Cid":
            raise Boom("no key for Cid")
        return p.age
    sections = realm.objects(Person).sectioned(key=key)
    for read in (lambda: len(sections), lambda: sections[0], lambda: sections.keys, lambda: list(sections)):
        with pytest.raises(Boom, match="no key for Cid") as info:
            read()
        assert isinstance(info.value.__cause__, cove.CallbackError)     # the library's status
    with realm.write():
        person(realm, 4).firstName = "Cyd"
    assert sections.keys == [20, 30, 40]
    section = sections[1]
    with realm.write():
        person(realm, 4).firstName = "Cid"
        with pytest.raises(Boom):
            len(section)                                  # a section's read runs the key function
        with pytest.raises(Boom):
            section[0]
    assert section.key == 30

    # a key Cove cannot store fails the read as the function raising would
    odd = realm.objects(Person).sectioned(key=lambda p: object())
    with pytest.raises(cove.WrongTypeError, match="section key"):
        len(odd)
    huge = realm.objects(Person).sectioned(key=lambda p: 1 << 80)
    with pytest.raises(cove.InvalidArgumentError, match="section key"):
        len(huge)

    # reading the same sectioned results from inside their key function is refused
    holder: List[Any] = []
    nested = realm.objects(Person).sectioned(key=lambda p: len(holder[0]))
    holder.append(nested)
    with pytest.raises(cove.InvalidArgumentError):
        len(nested)
    # and a key function may read other results
    counted = realm.objects(Person).sectioned(key=lambda p: len(realm.objects(Person).filter("age == $0", p.age)))
    assert counted.keys == [1, 2]
    assert realm._callback_errors == []                   # nothing left behind


def test_key_function_exception_during_delivery(realm: cove.Realm, commit: Callable[..., None],
                                                recorder: Callable[[], Any]) -> None:
    failing = {"on": False}

    def key(p: Person) -> int:
        if failing["on"] and p.uid == 2:
            raise KeyError("uid 2")
        return p.age
    sections = realm.objects(Person).sectioned(key=key)
    seen, calm = recorder(), recorder()
    token = sections.observe(seen)
    other_token = realm.objects(Person).sectioned(by="age").observe(calm)
    realm.deliver()
    assert seen.changes == [cove.SectionedChange(is_initial=True)]
    failing["on"] = True
    commit(lambda r: setattr(person(r, 1), "age", 31))
    with pytest.raises(KeyError, match="uid 2") as info:
        realm.refresh()
    assert seen.last.error and seen.last.is_final        # the observation ends with an error
    assert calm.last.sections_to_insert == [2] and calm.last.deletions == [(1, 0)]   # others still ran
    failing["on"] = False
    calls = len(seen.changes)
    commit(lambda r: setattr(person(r, 1), "age", 32))
    realm.refresh()
    assert len(seen.changes) == calls
    token.invalidate()
    other_token.invalidate()


def test_observe_errors(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    sections = realm.objects(Person).sectioned(by="age")
    frozen = sections.freeze()
    with pytest.raises(cove.FrozenError):
        frozen.observe(recorder())
    with pytest.raises(cove.FrozenError):
        frozen[0].observe(recorder())
    with pytest.raises(cove.InvalidArgumentError, match="nope"):
        sections.observe(recorder(), key_paths=["nope"])
    with pytest.raises(cove.WrongTypeError):
        sections.observe(recorder(), key_paths="age")     # a str, not a list
    with pytest.raises(cove.WrongTypeError):
        sections.observe("not callable")                  # type: ignore[arg-type]
    with realm.write():
        with pytest.raises(cove.TransactionError):
            sections.observe(recorder())
        with pytest.raises(cove.TransactionError):
            sections[0].observe(recorder())
        with pytest.raises(cove.TransactionError):
            sections.freeze()                             # freezing inside a write
    realm.close()
    with pytest.raises(cove.ClosedError):
        len(sections)


# -- changes -------------------------------------------------------------------------------------

def test_change_sets_after_another_handles_commits(realm: cove.Realm, commit: Callable[..., None],
                                                   recorder: Callable[[], Any]) -> None:
    by_age = realm.objects(Person).sectioned(by="age")   # 20: Bob Amy | 30: Ann Cid | 40: Bea
    seen, names_only = recorder(), recorder()
    token = by_age.observe(seen)
    filtered = by_age.observe(names_only, key_paths=["firstName"])
    realm.deliver()
    assert seen.changes == [cove.SectionedChange(is_initial=True)]

    def change(r: cove.Realm) -> None:
        person(r, 2).age = 30                             # Bob moves from 20 to 30
        r.delete(person(r, 5))                            # 40 goes away
        r.create(Person, {"uid": 6, "firstName": "Dan", "age": 50})   # 50 comes
        person(r, 1).lastName = "A."                      # Ann modified in place
    commit(change)
    assert len(seen.changes) == 1                         # not before this realm refreshes
    assert realm.refresh() is True
    assert by_age.keys == [20, 30, 50] and names(by_age) == [["Amy"], ["Ann", "Bob", "Cid"], ["Dan"]]
    c = seen.last
    assert not c.is_initial and c.error is None and not c.is_final
    assert c.sections_to_delete == [2] and c.sections_to_insert == [2]
    assert c.deletions == [(0, 0)]
    assert c.insertions == [(1, 1)]
    assert c.modifications == [(1, 0)]
    # key paths: lastName is not observed, but the key path's change always counts
    assert names_only.last.modifications == [] and names_only.last.insertions == [(1, 1)]

    # a section deleted and one inserted at the front
    commit(lambda r: [setattr(person(r, 3), "age", 10), setattr(person(r, 6), "age", 30)])
    realm.refresh()
    c = seen.last
    assert by_age.keys == [10, 30]
    assert (c.sections_to_delete, c.sections_to_insert) == ([0, 2], [0])
    assert c.insertions == [(1, 3)] and c.deletions == [] and c.modifications == []

    # two commits before a delivery merge; a net no-op delivers nothing
    calls = len(seen.changes)
    commit(lambda r: r.create(Person, {"uid": 7, "firstName": "Eve", "age": 99}))
    commit(lambda r: r.delete(person(r, 7)))
    realm.refresh()
    assert len(seen.changes) == calls
    token.invalidate()
    filtered.invalidate()


def test_change_sets_of_a_key_function(realm: cove.Realm, commit: Callable[..., None],
                                       recorder: Callable[[], Any]) -> None:
    by_letter = realm.objects(Person).sectioned(key=lambda p: p.firstName[:1], sort="firstName")
    seen = recorder()                                     # A: Amy Ann | B: Bea Bob | C: Cid
    with by_letter.observe(seen, key_paths=["firstName"]):
        realm.deliver()
        commit(lambda r: setattr(person(r, 2), "firstName", "Abe"))   # Bob -> A, first
        realm.refresh()
        assert names(by_letter) == [["Abe", "Amy", "Ann"], ["Bea"], ["Cid"]]
        assert seen.last.deletions == [(1, 1)] and seen.last.insertions == [(0, 0)]
        commit(lambda r: setattr(person(r, 1), "age", 3))             # not observed
        realm.refresh()
        assert len(seen.changes) == 2
        commit(lambda r: setattr(person(r, 4), "firstName", "Dot"))   # C goes, D comes
        realm.refresh()
        assert seen.last.sections_to_delete == [2] and seen.last.sections_to_insert == [2]
        assert by_letter.keys == ["A", "B", "D"]


def test_one_section_observed_by_its_key(realm: cove.Realm, commit: Callable[..., None],
                                         recorder: Callable[[], Any]) -> None:
    by_age = realm.objects(Person).sectioned(by="age")
    thirty = by_age[1]                                    # Ann Cid
    seen = recorder()
    token = thirty.observe(seen)
    realm.deliver()
    assert seen.changes == [cove.SectionedChange(is_initial=True)]
    commit(lambda r: [setattr(person(r, 2), "age", 30), setattr(person(r, 1), "city", "Rome")])
    realm.refresh()                                       # Bob arrives, Ann changes; 20 is untouched
    assert seen.last.insertions == [(0, 1)] and seen.last.modifications == [(0, 0)]
    calls = len(seen.changes)
    commit(lambda r: setattr(person(r, 3), "city", "Oslo"))         # another section only
    realm.refresh()
    assert len(seen.changes) == calls
    commit(lambda r: [setattr(person(r, uid), "age", 31) for uid in (1, 2, 4)])
    realm.refresh()
    # For its observer the section stays: its rows are deleted, and come back as rows.
    assert seen.last.sections_to_delete == [] and seen.last.deletions == [(0, 0), (0, 1), (0, 2)]
    commit(lambda r: setattr(person(r, 4), "age", 30))
    realm.refresh()
    assert seen.last.sections_to_insert == [] and seen.last.insertions == [(0, 0)]
    assert [p.firstName for p in thirty] == ["Cid"]
    token.invalidate()


def test_freeze_and_thaw(realm: cove.Realm, commit: Callable[..., None]) -> None:
    by_age = realm.objects(Person).sectioned(by="age", ascending=False)
    frozen = by_age.freeze()
    assert frozen.is_frozen and frozen.freeze() is frozen and by_age.thaw() is by_age
    assert frozen.keys == [40, 30, 20] and frozen.ascending is False
    by_letter = realm.objects(Person).sectioned(key=lambda p: p.firstName[:1], sort="firstName")
    frozen_letters = by_letter.freeze()
    commit(lambda r: [r.delete(person(r, 5)), setattr(person(r, 2), "firstName", "Zed")])
    realm.refresh()
    assert by_age.keys == [30, 20]
    assert frozen.keys == [40, 30, 20]                    # its version stays
    assert names(frozen_letters) == [["Amy", "Ann"], ["Bea", "Bob"], ["Cid"]]
    assert isinstance(frozen_letters[0][0], Person)
    assert by_letter.keys == ["A", "C", "Z"]

    # frozen sections read on several threads at once, the key function running on each
    results: List[Any] = []
    errors: List[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                results.append((frozen_letters.keys, names(frozen_letters), frozen.keys))
        except BaseException as exc:
            errors.append(exc)
    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == (["A", "B", "C"], [["Amy", "Ann"], ["Bea", "Bob"], ["Cid"]], [40, 30, 20]) for r in results)

    thawed = frozen_letters.thaw()
    assert thawed is not None and not thawed.is_frozen
    assert thawed.keys == ["A", "C", "Z"] and thawed.realm is realm
    assert frozen.thaw(realm).keys == [30, 20]           # type: ignore[union-attr]
    with pytest.raises(cove.InvalidArgumentError):
        frozen.thaw(frozen.realm)                        # into a frozen realm

    # the list's owner deleted: nothing to thaw into
    with realm.write():
        person(realm, 1).friends.append(person(realm, 4))
    of_list = person(realm, 1).friends.as_results().sectioned(by="age").freeze()
    with realm.write():
        realm.delete(person(realm, 1))
    assert of_list.thaw() is None


def test_key_functions_are_freed(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    gc.collect()
    keys, live = len(_sections._KEYS), len(_notifications._LIVE)
    sections = realm.objects(Person).sectioned(key=lambda p: p.age)
    section = sections[0]
    frozen = sections.freeze()
    token = section.observe(recorder())
    assert len(_sections._KEYS) == keys + 2               # the live and the frozen sectioned results
    del sections, frozen
    gc.collect()
    assert len(_sections._KEYS) == keys + 1               # the section and the token keep the live one
    token.invalidate()
    del section, token
    gc.collect()
    assert len(_sections._KEYS) == keys and len(_notifications._LIVE) == live
    with pytest.raises(cove.WrongTypeError):
        realm.find(Person, 1).tags.as_results().sectioned(key=lambda v: v)   # type: ignore[union-attr]
    assert len(_sections._KEYS) == keys                   # a failed call frees nothing twice


def test_async_changes(realm: cove.Realm, commit: Callable[..., None]) -> None:
    by_age = realm.objects(Person).sectioned(by="age")

    async def consume() -> Tuple[List[cove.SectionedChange], List[cove.SectionedChange]]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, commit, lambda r: r.create(Person, {"uid": 9, "firstName": "Ida", "age": 30}))
        received = []
        async for change in by_age.changes():
            received.append(change)
            if len(received) == 2:
                break
        section_changes = by_age[1].changes()
        first = [await section_changes.__anext__()]
        await section_changes.aclose()
        return received, first

    received, first = asyncio.run(asyncio.wait_for(consume(), timeout=30))
    assert received[0] == cove.SectionedChange(is_initial=True)
    assert received[1].insertions == [(1, 2)]
    assert first == [cove.SectionedChange(is_initial=True)]


# -- a randomized check --------------------------------------------------------------------------

def apply(change: cove.SectionedChange, old: List[List[Any]], new: List[List[Any]]) -> List[List[Any]]:
    """Applies a change set to the old sections as a table view does: rows deleted from the end
    (old paths), sections deleted, sections inserted whole, rows inserted (new paths), modified
    rows reloaded."""
    sections = [list(rows) for rows in old]
    for s, r in sorted(change.deletions, reverse=True):
        del sections[s][r]
    for i in sorted(change.sections_to_delete, reverse=True):
        del sections[i]
    for j in sorted(change.sections_to_insert):
        sections.insert(j, list(new[j]))
    for s, r in sorted(change.insertions):
        sections[s].insert(r, new[s][r])
    for s, r in change.modifications:
        sections[s][r] = new[s][r]
    return sections


@pytest.mark.parametrize("by_key_function", [False, True])
def test_randomized_change_sets_reproduce_the_new_sections(realm: cove.Realm, commit: Callable[..., None],
                                                           by_key_function: bool, recorder: Callable[[], Any]) -> None:
    rng = random.Random(99 + by_key_function)
    with realm.write():
        realm.objects(Person).delete_all()
        for uid in range(30):
            realm.create(Person, {"uid": uid, "firstName": f"p{uid}", "age": rng.randrange(6)})
    live = realm.objects(Person).filter("age < 5")
    if by_key_function:
        # Sorted by a property no commit changes: see the test below for a modified row that
        # moves in the sorted results but keeps its place in its section.
        sections = live.sectioned(key=lambda p: p.age % 3, sort="uid")
    else:
        sections = live.sectioned(by="age")
    watched_key = sections.keys[1]
    watched = sections[1]

    def snapshot() -> Tuple[List[Any], List[List[Tuple[int, str]]]]:
        return sections.keys, [[(p.uid, p.firstName) for p in section] for section in sections]

    def rows_of(key: Any, state: Tuple[List[Any], List[List[Tuple[int, str]]]]) -> List[Tuple[int, str]]:
        return state[1][state[0].index(key)] if key in state[0] else []

    received, section_received = recorder(), recorder()
    tokens = [sections.observe(received), watched.observe(section_received)]
    realm.deliver()
    current = snapshot()
    next_uid = 100
    for round in range(80):
        def change(r: cove.Realm) -> None:
            nonlocal next_uid
            people = list(r.objects(Person))
            for _ in range(1 + rng.randrange(4)):
                op = rng.randrange(5)
                if op == 0 or not people:
                    r.create(Person, {"uid": next_uid, "firstName": f"n{round}", "age": rng.randrange(6)})
                    next_uid += 1
                    continue
                p = people[rng.randrange(len(people))]
                if not p.is_valid:
                    continue
                if op == 1:
                    r.delete(p)
                elif op == 2:
                    p.firstName = f"{p.firstName[:1]}{rng.randrange(100)}"
                else:
                    p.age = rng.randrange(6)
        commit(change)
        received.changes.clear()
        section_received.changes.clear()
        realm.refresh()
        new = snapshot()
        assert len(received.changes) <= 1, f"round {round}"
        if received.changes:
            c = received.changes[0]
            assert c.error is None
            keys = list(current[0])
            for i in sorted(c.sections_to_delete, reverse=True):
                del keys[i]
            for j in sorted(c.sections_to_insert):
                keys.insert(j, new[0][j])
            assert keys == new[0], f"round {round}: {c}"
            assert apply(c, current[1], new[1]) == new[1], f"round {round}: {c}"
        else:
            assert new == current, f"round {round}: changed without a change set"

        old_rows, new_rows = rows_of(watched_key, current), rows_of(watched_key, new)
        assert len(section_received.changes) <= 1
        if section_received.changes:
            c = section_received.changes[0]
            if c.sections_to_delete == [0]:
                assert new_rows == []
            elif c.sections_to_insert == [0]:
                assert old_rows == [] and new_rows
            else:
                assert apply(c, [old_rows], [new_rows]) == [new_rows], f"round {round}: {c}"
        else:
            assert new_rows == old_rows
        assert list((p.uid, p.firstName) for p in watched) == new_rows
        current = new
    for token in tokens:
        token.invalidate()


def test_a_modified_row_that_keeps_its_place_in_its_section(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    with realm.write():
        realm.objects(Person).delete_all()
        a = realm.create(Person, {"uid": 1, "firstName": "a", "age": 0})
        realm.create(Person, {"uid": 2, "firstName": "b", "age": 1})
        c = realm.create(Person, {"uid": 3, "firstName": "c", "age": 0})
    sections = realm.objects(Person).sectioned(key=lambda p: p.age, sort="firstName")   # 0: a c | 1: b
    seen = recorder()
    with sections.observe(seen):
        realm.deliver()
        with realm.write():
            c.firstName = "a0"                            # before b in the results, still second in 0
        realm.deliver()
        assert names(sections) == [["a", "a0"], ["b"]]
        assert seen.last.modifications == [(0, 1)]
    assert a.is_valid
