"""Notifications through Python: the initial call at the first delivery, change sets of results
with exact indices after commits of another realm handle of the same file, filters that follow
only the properties they read, exact key-path filters
per callback, list moves, set and map changes, object changes with old and new values and one
deletion, tokens (inside their own callback, twice, as context managers, garbage-collected, on
another thread),
exceptions of callbacks raised by the call that ran them, the registration errors, the
notification descriptor, wait_for_change, and `async for` over changes()."""
from __future__ import annotations

import asyncio
import gc
import pathlib
import select
import sys
import random
import threading
import time
from typing import Any, Callable, Iterator, List, Tuple

import pytest

import cove
from cove import _notifications

SCHEMA = {
    "Person": {"primaryKey": "name",
               "properties": {"name": "string", "age": "int", "city": "string?", "dog": "Dog?",
                              "tags": "string[]", "dogs": "Dog[]", "labels": "string<>", "scores": "int{}"}},
    "Dog": {"properties": {"name": "string", "age": "int"}},
}


@pytest.fixture()
def realm(path: pathlib.Path) -> Iterator[cove.Realm]:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex", "age": 3})
            realm.create("Person", {"name": "Ann", "age": 30, "city": "Oslo", "dog": rex,
                                    "tags": ["a", "b", "c", "d"], "labels": ["x"], "scores": {"a": 1, "b": 2}})
            realm.create("Person", {"name": "Bob", "age": 25})
            realm.create("Person", {"name": "Cleo", "age": 41})
            realm.create("Person", {"name": "Dan", "age": 35})
        yield realm


def test_initial_call_at_first_deliver(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person").sorted("name")
    seen = recorder()
    token = people.observe(seen)
    assert seen.changes == []                      # nothing until a delivery
    realm.deliver()
    assert seen.changes == [cove.CollectionChange(is_initial=True)]
    realm.deliver()
    assert realm.refresh() is False
    assert len(seen.changes) == 1                  # nothing changed since
    assert isinstance(token, cove.NotificationToken) and token.is_valid
    token.invalidate()


def test_token_invalidated_on_another_thread(realm: cove.Realm, commit: Callable[..., None],
                                             recorder: Callable[[], Any]) -> None:
    """A token invalidated on another thread: the realm's next delivery calls nothing."""
    seen = recorder()
    token = realm.objects("Person").observe(seen)
    realm.deliver()
    assert len(seen.changes) == 1
    thread = threading.Thread(target=token.invalidate)
    thread.start()
    thread.join()
    assert not token.is_valid
    commit(lambda r: r.create("Person", {"name": "Eve", "age": 22}))
    assert realm.refresh() is True
    realm.deliver()
    assert len(seen.changes) == 1


def test_change_indices_after_another_handles_commit(realm: cove.Realm, commit: Callable[..., None],
                                                     recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person").sorted("name")            # Ann Bob Cleo Dan
    seen = recorder()
    token = people.observe(seen)
    realm.deliver()

    def change(r: cove.Realm) -> None:
        r.delete(r.find("Person", "Bob"))                      # old index 1
        r.create("Person", {"name": "Eve", "age": 20})         # Ann Cleo Dan Eve: new index 3
        r.find("Person", "Cleo").age = 42                      # old index 2, new index 1
    commit(change)
    assert seen.changes[1:] == []                              # not before this realm refreshes
    assert realm.refresh() is True
    assert [p.name for p in people] == ["Ann", "Cleo", "Dan", "Eve"]
    change_set = seen.last
    assert len(seen.changes) == 2
    assert not change_set.is_initial
    assert change_set.deletions == [1]
    assert change_set.insertions == [3]
    assert change_set.modifications == [1]
    assert change_set.modifications_old == [2]
    assert change_set.moves == [] and not change_set.cleared and not change_set.root_deleted
    assert change_set.error is None

    # Two commits before a delivery merge into one change; a net no-op delivers nothing.
    commit(lambda r: r.create("Person", {"name": "Fay", "age": 1}))
    commit(lambda r: r.delete(r.find("Person", "Fay")))
    calls = len(seen.changes)
    realm.refresh()
    assert len(seen.changes) == calls
    token.invalidate()


def test_a_filter_follows_only_the_properties_it_reads(realm: cove.Realm, commit: Callable[..., None],
                                                       recorder: Callable[[], Any]) -> None:
    # Results in key order: Cleo (41) matches at first.
    results = realm.objects("Person").filter("age >= 40 OR city == 'Rome'")
    seen = recorder()
    with results.observe(seen):
        realm.deliver()
        assert [p.name for p in results] == ["Cleo"]
        # The filter's second property brings Bob in.
        commit(lambda r: setattr(r.find("Person", "Bob"), "city", "Rome"))
        realm.refresh()
        assert [p.name for p in results] == ["Bob", "Cleo"]
        assert (seen.last.insertions, seen.last.deletions, seen.last.modifications) == ([0], [], [])
        # A list the filter does not read: Cleo is modified and stays.
        commit(lambda r: r.find("Person", "Cleo").tags.append("t"))
        realm.refresh()
        assert (seen.last.insertions, seen.last.deletions, seen.last.modifications) == ([], [], [1])
        # The same write outside the results delivers nothing.
        calls = len(seen.changes)
        commit(lambda r: r.find("Person", "Dan").tags.append("t"))
        realm.refresh()
        assert len(seen.changes) == calls
        # The first property takes Cleo out.
        commit(lambda r: setattr(r.find("Person", "Cleo"), "age", 20))
        realm.refresh()
        assert [p.name for p in results] == ["Bob"]
        assert (seen.last.insertions, seen.last.deletions, seen.last.modifications) == ([], [1], [])


def test_filtered_results_and_a_local_commit(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    adults = realm.objects("Person").filter("age >= $0", 30).sorted("age")   # Ann 30, Dan 35, Cleo 41
    seen = recorder()
    with adults.observe(seen):
        realm.deliver()
        # A sort key written moves the row: a deletion and an insertion, not a modification.
        with realm.write():
            realm.find("Person", "Ann").age = 50                # Dan 35, Cleo 41, Ann 50
        realm.deliver()
        assert (seen.last.deletions, seen.last.insertions, seen.last.modifications) == ([0], [2], [])
        with realm.write():
            realm.find("Person", "Ann").age = 30                # Ann 30, Dan 35, Cleo 41
        with realm.write():
            realm.find("Person", "Bob").age = 31                # enters at index 1
            realm.find("Person", "Cleo").age = 29               # leaves from index 2
        realm.deliver()
        assert (seen.last.insertions, seen.last.deletions, seen.last.modifications) == ([1], [2], [])
        assert [p.name for p in adults] == ["Ann", "Bob", "Dan"]


def test_key_path_filters_are_exact_per_callback(realm: cove.Realm, commit: Callable[..., None],
                                                 recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person").sorted("name")            # Ann Bob Cleo Dan
    every, city, dog_name, none = recorder(), recorder(), recorder(), recorder()
    tokens = [people.observe(every), people.observe(city, key_paths=["city"]),
              people.observe(dog_name, key_paths=["dog.name"]), people.observe(none, key_paths=[])]
    realm.deliver()
    assert all(len(r.changes) == 1 and r.last.is_initial for r in (every, city, dog_name, none))

    commit(lambda r: setattr(r.find("Person", "Ann"), "age", 31))
    realm.refresh()
    assert every.last.modifications == [0]
    assert [len(r.changes) for r in (city, dog_name, none)] == [1, 1, 1]

    commit(lambda r: setattr(r.find("Person", "Bob"), "city", "Rome"))
    realm.refresh()
    assert every.last.modifications == [1] and city.last.modifications == [1]
    assert [len(r.changes) for r in (dog_name, none)] == [1, 1]

    commit(lambda r: setattr(r.objects("Dog")[0], "name", "Max"))   # Ann's dog
    realm.refresh()
    assert every.last.modifications == [0] and dog_name.last.modifications == [0]
    assert [len(r.changes) for r in (city, none)] == [2, 1]

    commit(lambda r: setattr(r.objects("Dog")[0], "age", 4))        # not on the path
    realm.refresh()
    assert every.last.modifications == [0]
    assert [len(r.changes) for r in (city, dog_name, none)] == [2, 2, 1]

    commit(lambda r: r.create("Person", {"name": "Bea", "age": 1}))  # every callback hears rows
    realm.refresh()
    for r in (every, city, dog_name, none):
        assert (r.last.insertions, r.last.deletions, r.last.modifications) == ([1], [], [])
    for token in tokens:
        token.invalidate()


def test_key_path_naming_no_property_fails(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    with pytest.raises(cove.InvalidArgumentError, match="nope"):
        realm.objects("Person").observe(recorder(), key_paths=["dog.nope"])
    with pytest.raises(cove.WrongTypeError):
        realm.objects("Person").observe(recorder(), key_paths="name")       # a str, not a list
    with pytest.raises(cove.WrongTypeError):
        realm.objects("Person").observe("not callable")                     # type: ignore[arg-type]


def test_list_moves_and_clear(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    tags = realm.find("Person", "Ann").tags                     # a b c d
    seen = recorder()
    token = tags.observe(seen)
    realm.deliver()
    assert seen.last.is_initial

    def change(r: cove.Realm) -> None:
        there = r.find("Person", "Ann").tags
        there.move(0, 3)                                        # b c d a
        there.insert(1, "x")                                    # b x c d a
        there[2] = "C"                                          # b x C d a
        del there[3]                                            # b x C a
    commit(change)
    realm.refresh()
    assert list(tags) == ["b", "x", "C", "a"]
    assert seen.last.moves == [(0, 3)]
    assert seen.last.deletions == [0, 3]                        # the moved element too
    assert seen.last.insertions == [1, 3]
    assert seen.last.modifications == [2] and seen.last.modifications_old == [2]
    assert not seen.last.cleared

    commit(lambda r: r.find("Person", "Ann").tags.clear())
    realm.refresh()
    assert seen.last.cleared and seen.last.deletions == [0, 1, 2, 3]
    token.invalidate()


def test_list_owner_deleted_once(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    seen = recorder()
    token = realm.find("Person", "Ann").tags.observe(seen)
    realm.deliver()
    commit(lambda r: r.delete(r.find("Person", "Ann")))
    realm.refresh()
    assert seen.last.root_deleted and seen.last.deletions == [0, 1, 2, 3]
    commit(lambda r: r.create("Person", {"name": "Ann", "tags": ["z"]}))
    realm.refresh()
    assert len(seen.changes) == 2
    token.invalidate()


def test_set_changes(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    labels = realm.find("Person", "Ann").labels                # x
    seen = recorder()
    with labels.observe(seen):
        realm.deliver()
        commit(lambda r: r.find("Person", "Ann").labels.add("a"))
        realm.refresh()
        assert (seen.last.insertions, seen.last.deletions, seen.last.moves) == ([0], [], [])


def test_map_changes_by_key(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    scores = realm.find("Person", "Ann").scores                # a: 1, b: 2
    seen = recorder()
    token = scores.observe(seen)
    realm.deliver()
    assert seen.changes == [cove.MapChange(is_initial=True)]

    def change(r: cove.Realm) -> None:
        there = r.find("Person", "Ann").scores
        del there["a"]
        there["c"] = 3
        there["b"] = 5
    commit(change)
    realm.refresh()
    assert isinstance(seen.last, cove.MapChange)
    assert seen.last.deletions == ["a"]
    assert seen.last.insertions == ["c"]
    assert seen.last.modifications == ["b"] == seen.last.modifications_old
    assert not seen.last.root_deleted and seen.last.error is None
    token.invalidate()


def test_object_changes_old_and_new_values(realm: cove.Realm, commit: Callable[..., None],
                                           recorder: Callable[[], Any]) -> None:
    ann = realm.find("Person", "Ann")
    seen = recorder()
    token = ann.observe(seen)
    realm.deliver()
    assert seen.changes == []                                   # no initial call for objects

    def change(r: cove.Realm) -> None:
        there = r.find("Person", "Ann")
        there.city = "Rome"
        there.age = 31
    commit(change)
    realm.refresh()
    assert len(seen.changes) == 1
    assert not seen.last.deleted and seen.last.error is None
    assert [(p.name, p.old_value, p.new_value) for p in seen.last.properties] == [
        ("age", 30, 31), ("city", "Oslo", "Rome")]              # schema order

    commit(lambda r: setattr(r.find("Person", "Ann"), "age", 31))   # the same value
    realm.refresh()
    assert [(p.name, p.old_value, p.new_value) for p in seen.last.properties] == [("age", 31, 31)]

    commit(lambda r: setattr(r.objects("Dog")[0], "name", "Max"))  # along the link
    realm.refresh()
    [dog_change] = seen.last.properties
    assert dog_change.name == "dog"
    assert dog_change.new_value == realm.objects("Dog")[0]

    commit(lambda r: r.find("Person", "Ann").tags.append("e"))      # a list: no values
    realm.refresh()
    assert [(p.name, p.old_value, p.new_value) for p in seen.last.properties] == [("tags", None, None)]

    commit(lambda r: r.delete(r.find("Person", "Ann")))
    realm.refresh()
    assert seen.last == cove.ObjectChange(deleted=True)
    calls = len(seen.changes)
    commit(lambda r: r.create("Person", {"name": "Ann", "age": 1}))
    realm.refresh()
    assert len(seen.changes) == calls                           # the deletion is reported once
    token.invalidate()


def test_object_key_paths(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    ann = realm.find("Person", "Ann")
    city, deletion, dog = recorder(), recorder(), recorder()
    tokens = [ann.observe(city, key_paths=["city"]), ann.observe(deletion, key_paths=[]),
              ann.observe(dog, key_paths=["dog.name"])]
    commit(lambda r: setattr(r.objects("Dog")[0], "age", 9))
    realm.refresh()
    assert dog.changes == []
    commit(lambda r: setattr(r.objects("Dog")[0], "name", "Max"))
    realm.refresh()
    assert [p.name for p in dog.last.properties] == ["dog"]     # reported as the link's change
    assert city.changes == []
    commit(lambda r: setattr(r.find("Person", "Ann"), "age", 2))
    realm.refresh()
    assert city.changes == [] and deletion.changes == []
    commit(lambda r: setattr(r.find("Person", "Ann"), "city", None))
    realm.refresh()
    assert [(p.name, p.old_value, p.new_value) for p in city.last.properties] == [("city", "Oslo", None)]
    assert deletion.changes == []
    commit(lambda r: r.delete(r.find("Person", "Ann")))
    realm.refresh()
    assert deletion.changes == [cove.ObjectChange(deleted=True)]
    for token in tokens:
        token.invalidate()


def test_error_stops_the_observation(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    results = realm.find("Person", "Ann").tags.as_results()
    seen = recorder()
    token = results.observe(seen)
    realm.deliver()
    with realm.write():
        realm.delete(realm.find("Person", "Ann"))               # the results' list goes away
    realm.deliver()
    assert len(seen.changes) == 2 and seen.last.error
    with realm.write():
        realm.create("Person", {"name": "Zed"})
    realm.deliver()
    assert len(seen.changes) == 2
    token.invalidate()


def test_tokens(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person")
    live = len(_notifications._LIVE)
    seen: List[Any] = []
    holder: List[cove.NotificationToken] = []

    def once(change: Any) -> None:
        seen.append(change)
        holder[0].invalidate()                                  # inside its own callback
    holder.append(people.observe(once))
    realm.deliver()
    commit(lambda r: r.create("Person", {"name": "Eve"}))
    realm.refresh()
    assert len(seen) == 1 and seen[0].is_initial
    assert not holder[0].is_valid
    holder[0].invalidate()                                      # twice: harmless
    assert len(_notifications._LIVE) == live                    # its user data was freed

    with people.observe(recorder()) as token:
        assert len(_notifications._LIVE) == live + 1
    assert not token.is_valid and len(_notifications._LIVE) == live

    dropped = recorder()
    people.observe(dropped)                                     # the token is not kept
    gc.collect()
    realm.deliver()
    assert dropped.changes == [] and len(_notifications._LIVE) == live

    # A token that outlives its realm is still released cleanly.
    kept = recorder()
    token = people.observe(kept)
    realm.close()
    token.invalidate()
    assert len(_notifications._LIVE) == live


def test_callback_exception_is_raised_by_deliver(realm: cove.Realm, other: cove.Realm, commit: Callable[..., None],
                                                 recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person")
    calm = recorder()

    class Boom(Exception):
        pass

    def boom(change: Any) -> None:
        raise Boom("first")

    def bang(change: Any) -> None:
        raise KeyError("second")
    tokens = [people.observe(boom), people.observe(calm), people.observe(bang)]
    with pytest.raises(Boom, match="first") as info:
        realm.deliver()
    assert len(calm.changes) == 1                               # the other callbacks still ran
    if sys.version_info >= (3, 11):
        assert any("KeyError" in note for note in info.value.__notes__)
    realm.deliver()                                             # nothing pending: nothing raised

    commit(lambda r: r.create("Person", {"name": "Eve"}))
    with pytest.raises(Boom):
        realm.refresh()
    assert len(calm.changes) == 2

    # A write delivers before it starts: the exception comes out of write(), and no write is open.
    commit(lambda r: r.create("Person", {"name": "Fay"}))
    with pytest.raises(Boom):
        with realm.write():
            pytest.fail("the write's body must not run")
    assert not realm.in_write
    tokens[0].invalidate()
    tokens[2].invalidate()
    with realm.write():
        realm.create("Person", {"name": "Gus"})
    realm.deliver()
    assert len(calm.changes) == 4
    tokens[1].invalidate()


def test_nested_calls_and_begin_write(realm: cove.Realm, commit: Callable[..., None],
                                      recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person")
    calls: List[Any] = []
    later = recorder()
    tokens: List[cove.NotificationToken] = []

    def nested(change: Any) -> None:
        calls.append(change)
        realm.deliver()                                         # inside a callback: returns at once
        if len(tokens) == 1:
            tokens.append(people.observe(later))                # first called by the next delivery
        raise ValueError(f"call {len(calls)}")
    tokens.append(people.observe(nested))
    with pytest.raises(ValueError, match="call 1"):
        realm.deliver()
    assert len(calls) == 1 and later.changes == []
    realm.deliver()
    assert later.changes == [cove.CollectionChange(is_initial=True)]

    commit(lambda r: r.create("Person", {"name": "Eve"}))
    with pytest.raises(ValueError, match="call 2"):
        realm.begin_write()                                     # delivered first; the write is cancelled
    assert not realm.in_write
    assert later.last.insertions == [4]
    for token in tokens:
        token.invalidate()
    realm.begin_write()
    realm.cancel_write()


def test_registration_errors(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    people = realm.objects("Person")
    ann = realm.find("Person", "Ann")
    with realm.write():
        with pytest.raises(cove.TransactionError):
            people.observe(recorder())
        with pytest.raises(cove.TransactionError):
            ann.observe(recorder())
        with pytest.raises(cove.TransactionError):
            realm.deliver()
    with pytest.raises(cove.FrozenError):
        people.freeze().observe(recorder())
    with pytest.raises(cove.FrozenError):
        ann.tags.freeze().observe(recorder())
    with pytest.raises(cove.FrozenError):
        realm.freeze().notification_fd()
    with realm.write():
        realm.delete(ann)
    with pytest.raises(cove.InvalidatedError):
        ann.observe(recorder())
    realm.close()
    with pytest.raises(cove.ClosedError):
        realm.deliver()


def _readable(fd: int, timeout: float) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


def test_notification_fd(realm: cove.Realm, commit: Callable[..., None]) -> None:
    fd = realm.notification_fd()
    assert fd == realm.notification_fd() and fd >= 0
    assert not _readable(fd, 0)
    commit(lambda r: r.create("Person", {"name": "Eve"}))
    assert _readable(fd, 10)
    assert realm.refresh() is True                              # advances and drains
    assert not _readable(fd, 0.05)


def test_wait_for_change(realm: cove.Realm, commit: Callable[..., None]) -> None:
    start = time.monotonic()
    assert realm.wait_for_change(timeout=0.1) is False
    assert time.monotonic() - start >= 0.09
    assert realm.wait_for_change(0) is False
    with pytest.raises(cove.InvalidArgumentError):
        realm.wait_for_change(-1)

    def writer() -> None:
        time.sleep(0.1)
        commit(lambda r: r.create("Person", {"name": "Eve"}))
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert realm.wait_for_change(timeout=30) is True       # the GIL is released meanwhile
    finally:
        thread.join()
    assert realm.wait_for_change(0) is True                     # until the realm advances
    assert realm.refresh() is True
    assert realm.wait_for_change(0) is False
    with realm.write():
        with pytest.raises(cove.TransactionError):
            realm.wait_for_change(0)


def test_async_changes(realm: cove.Realm, commit: Callable[..., None]) -> None:
    people = realm.objects("Person").sorted("name")            # Ann Bob Cleo Dan

    async def consume() -> List[cove.CollectionChange]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, commit, lambda r: r.create("Person", {"name": "Bea"}))
        received = []
        async for change in people.changes():
            received.append(change)
            if len(received) == 2:
                break
        return received

    async def main() -> List[cove.CollectionChange]:
        return await asyncio.wait_for(consume(), timeout=30)
    received = asyncio.run(main())
    assert received[0] == cove.CollectionChange(is_initial=True)
    assert received[1].insertions == [1] and received[1].deletions == []
    assert realm._watch is None or not realm._watch.reading    # the reader is gone


def test_async_changes_of_an_object_and_a_thread_writer(realm: cove.Realm, commit: Callable[..., None]) -> None:
    ann = realm.find("Person", "Ann")
    first_seen = threading.Event()

    def writer() -> None:
        time.sleep(0.05)
        commit(lambda r: setattr(r.find("Person", "Ann"), "age", 50))
        if first_seen.wait(30):
            commit(lambda r: r.delete(r.find("Person", "Ann")))

    async def consume() -> List[cove.ObjectChange]:
        thread = threading.Thread(target=writer)
        thread.start()
        received = []
        try:
            async for change in ann.changes():                 # ends after the deletion
                received.append(change)
                first_seen.set()
        finally:
            first_seen.set()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
        return received

    received = asyncio.run(asyncio.wait_for(consume(), timeout=30))
    assert [[(p.name, p.old_value, p.new_value) for p in c.properties] for c in received] == [[("age", 30, 50)], []]
    assert received[-1] == cove.ObjectChange(deleted=True)


def test_async_changes_end_when_the_realm_closes(realm: cove.Realm) -> None:
    scores = realm.find("Person", "Ann").scores
    live = len(_notifications._LIVE)

    async def consume() -> List[cove.MapChange]:
        asyncio.get_running_loop().call_later(0.05, realm.close)
        return [change async for change in scores.changes()]

    received = asyncio.run(asyncio.wait_for(consume(), timeout=30))
    assert received == [cove.MapChange(is_initial=True)]
    gc.collect()
    assert len(_notifications._LIVE) == live


def test_change_sets_ready_when_the_descriptor_wakes(realm: cove.Realm, path: pathlib.Path,
                                                     recorder: Callable[[], Any]) -> None:
    """A writer thread commits random changes; this thread waits on the descriptor (readable once
    the realm's notification thread has computed the change sets), refreshes, and each change
    set turns the old rows into the new ones, which a fresh query confirms."""
    rng = random.Random(5)
    query = "age > 30 SORT(age DESC, name ASC)"
    people = realm.objects("Person").filter(query)
    seen = recorder()
    token = people.observe(seen, key_paths=["age"])
    realm.deliver()
    rows = [p.name for p in people]
    go, done = threading.Event(), threading.Event()
    stop = False

    def writer() -> None:
        with cove.open(path, durability="no_sync") as mine:
            serial = 0
            while True:
                go.wait()
                go.clear()
                if stop:
                    return
                mine.refresh()
                with mine.write():
                    everyone = list(mine.objects("Person"))
                    for _ in range(1 + rng.randrange(4)):
                        action = rng.randrange(4)
                        if action == 0 or not everyone:
                            serial += 1
                            mine.create("Person", {"name": f"w{serial}", "age": rng.randrange(60)})
                        elif action == 1:
                            victim = everyone.pop(rng.randrange(len(everyone)))
                            mine.delete(victim)
                        else:
                            everyone[rng.randrange(len(everyone))].age = rng.randrange(60)
                done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    fd = realm.notification_fd()
    try:
        for round in range(25):
            seen.changes.clear()
            done.clear()
            go.set()
            assert done.wait(30)
            assert _readable(fd, 30), f"round {round}"
            realm.refresh()
            new = [p.name for p in people]
            assert new == [p.name for p in realm.objects("Person").filter(query)]
            if seen.changes:
                assert len(seen.changes) == 1
                change = seen.changes[0]
                rebuilt = [name for i, name in enumerate(rows) if i not in set(change.deletions)]
                for i in change.insertions:
                    rebuilt.insert(i, new[i])
                assert rebuilt == new, f"round {round}"
            else:
                assert rows == new, f"round {round}"
            rows = new
    finally:
        stop = True
        go.set()
        thread.join()
    token.invalidate()


def test_many_deletes_in_random_order(realm: cove.Realm, commit: Callable[..., None],
                                      recorder: Callable[[], Any]) -> None:
    """One write deletes objects in random key order, and deletes objects it created itself
    (newest first): the change set of the results in key order names exactly the rows that went
    and came."""
    with realm.write():
        for i in range(200):
            realm.create("Person", {"name": f"p{i:03}", "age": i})
    people = realm.objects("Person")                           # key order
    seen = recorder()
    with people.observe(seen):
        realm.deliver()
        before = [p.name for p in people]
        rng = random.Random(41)
        gone = rng.sample([f"p{i:03}" for i in range(199)], 80)

        def change(r: cove.Realm) -> None:
            for name in gone:
                r.delete(r.find("Person", name))
            for round in range(3):
                r.delete(r.find("Person", "p199" if round == 0 else f"new{round - 1}"))
                r.create("Person", {"name": f"new{round}", "age": 1})
        commit(change)
        assert realm.refresh() is True
        after = [p.name for p in people]
        assert after[-1] == "new2" and len(after) == len(before) - 80
        change_set = seen.last
        assert change_set.deletions == [i for i, name in enumerate(before) if name not in after]
        assert change_set.insertions == [i for i, name in enumerate(after) if name not in before]
        assert change_set.modifications == []


def test_initial_call_waits_for_a_write_begun_at_once(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    """A write begun before the first delivery leaves the initial call for the next one, which
    shows the state after the write; no change follows for that write."""
    people = realm.objects("Person")
    seen = recorder()
    token = people.observe(seen)
    with realm.write():
        realm.create("Person", {"name": "Eve", "age": 22})
    assert seen.changes == []
    realm.deliver()
    assert len(seen.changes) == 1 and seen.last.is_initial and len(people) == 5
    realm.deliver()
    assert len(seen.changes) == 1
    token.invalidate()


def test_a_set_of_objects_hears_of_their_links(tmp_path: pathlib.Path, recorder: Callable[[], Any]) -> None:
    """A set of objects reports a modification when an object it holds, or one those link to,
    is written, an equal value included."""
    schema = {"Vet": {"properties": {"name": "string"}},
              "Dog": {"properties": {"name": "string", "vet": "Vet?"}},
              "Owner": {"properties": {"pets": "Dog<>"}}}
    with cove.open(tmp_path / "s.cove", schema=schema, durability="no_sync") as r:
        with r.write():
            vet = r.create("Vet", {"name": "V"})
            dog = r.create("Dog", {"name": "Rex", "vet": vet})
            owner = r.create("Owner", {})
            owner.pets.add(dog)
        seen = recorder()
        token = owner.pets.observe(seen)
        r.deliver()
        with r.write():
            dog.name = "Rex"                                  # equal value
        r.deliver()
        assert seen.last.modifications == [0]
        with r.write():
            vet.name = "V"                                    # an object the element links to
        r.deliver()
        assert len(seen.changes) == 3 and seen.last.modifications == [0]
        token.invalidate()
