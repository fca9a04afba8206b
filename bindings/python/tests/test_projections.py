"""Projections through Python: a class of projected names over a root class, reads through to
the root (transforms applied in Python, a path through a list as a live read-only sequence, a
list of the root as live results), writes of plain untransformed names inside a write, the
errors of bad declarations and writes, and observation under the projected names (old and new
values transformed, key paths as projected names, the root's deletion once) after another
handle's commits."""
from __future__ import annotations

import asyncio
import gc
import pathlib
from typing import Any, Callable, Iterator, List, Optional

import pytest

import cove
from cove import _notifications


class Person(cove.Object):
    uid: int = cove.Property(primary_key=True)
    firstName: str
    lastName: Optional[str]
    age: int
    best: Optional[Person]
    friends: cove.List[Person]
    tags: cove.Set[str]
    scores: cove.Map[int]


SCHEMA = [Person]


class PersonView(cove.Projection, root="Person"):
    name = cove.projected("firstName")
    friend_names = cove.projected("friends.firstName")
    last_caps = cove.projected("lastName", transform=str.upper)
    best_name = cove.projected("best.firstName")
    best = cove.projected("best")
    friends = cove.projected("friends")
    tags = cove.projected("tags")
    loud_friends = cove.projected("friends.firstName", transform=lambda s: s + "!")


@pytest.fixture()
def realm(path: pathlib.Path) -> Iterator[cove.Realm]:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            ann = realm.create(Person, {"uid": 1, "firstName": "Ann", "lastName": "Lee", "age": 30,
                                        "tags": ["a"], "scores": {"x": 1}})
            bob = realm.create(Person, {"uid": 2, "firstName": "Bob", "age": 20})
            cid = realm.create(Person, {"uid": 3, "firstName": "Cid", "lastName": "Ray", "age": 40})
            ann.friends.extend([bob, cid])
            ann.best = bob
        yield realm


def person(realm: cove.Realm, uid: int) -> Person:
    found = realm.find(Person, uid)
    assert found is not None
    return found


# -- reading -------------------------------------------------------------------------------------

def test_reads_go_through(realm: cove.Realm) -> None:
    ann = person(realm, 1)
    view = PersonView(ann)
    assert view.root is ann and view.realm is realm
    assert view.name == "Ann"
    assert view.last_caps == "LEE"                        # the transform runs in Python
    assert view.best_name == "Bob"
    assert isinstance(view.best, Person) and view.best.uid == 2
    friend_names = view.friend_names
    assert isinstance(friend_names, cove.ProjectedValues)
    assert list(friend_names) == ["Bob", "Cid"] and len(friend_names) == 2
    assert friend_names[0] == "Bob" and friend_names[-1] == "Cid" and friend_names[:1] == ["Bob"]
    assert friend_names == ["Bob", "Cid"] and friend_names == ("Bob", "Cid") and friend_names != ["Bob"]
    assert "Cid" in friend_names and friend_names.index("Cid") == 1
    assert list(view.loud_friends) == ["Bob!", "Cid!"]
    friends = view.friends
    assert isinstance(friends, cove.Results) and [p.firstName for p in friends] == ["Bob", "Cid"]
    assert isinstance(friends[0], Person)
    assert friends.filter("age > 30")[0].firstName == "Cid"      # live results of the list
    tags = view.tags
    assert isinstance(tags, cove.Results) and list(tags) == ["a"]
    assert view.to_dict() == {"name": "Ann", "friend_names": ["Bob", "Cid"], "last_caps": "LEE",
                              "best_name": "Bob", "best": person(realm, 2), "friends": [person(realm, 2), person(realm, 3)],
                              "tags": ["a"], "loud_friends": ["Bob!", "Cid!"]}
    assert list(PersonView.fields()) == ["name", "friend_names", "last_caps", "best_name", "best", "friends", "tags",
                                         "loud_friends"]
    assert PersonView.name.key_path == "firstName" and PersonView.last_caps.transform is str.upper
    assert "PersonView" in repr(view) and "friend_names" in repr(friend_names)

    # live: the same objects read the new values
    with realm.write():
        ann.firstName = "Anna"
        ann.lastName = None                               # None is not transformed
        ann.best = None                                   # a null link on the way reads None
        person(realm, 3).firstName = "Cyd"
        ann.friends.append(ann)
        ann.tags.add("b")
    assert view.name == "Anna" and view.last_caps is None and view.best_name is None and view.best is None
    assert list(friend_names) == ["Bob", "Cyd", "Anna"] and len(friend_names) == 3
    assert len(friends) == 3 and sorted(tags) == ["a", "b"]
    with pytest.raises(cove.OutOfRangeError):
        friend_names[3]
    with pytest.raises(IndexError):
        friend_names[-4]
    with realm.write():
        ann.friends.clear()
    assert list(friend_names) == [] and len(friend_names) == 0


def test_a_path_through_a_link_and_a_map(realm: cove.Realm) -> None:
    class Deep(cove.Projection, root=Person):             # the root as a declared class
        best_friends = cove.projected("best.friends.firstName")
        score_values = cove.projected("scores")

    with realm.write():
        person(realm, 2).friends.append(person(realm, 3))
    view = Deep(person(realm, 1))
    assert list(view.best_friends) == ["Cid"]
    assert list(view.score_values) == [1]


def test_inheritance_and_plain_attributes(realm: cove.Realm) -> None:
    class Named(cove.Projection, root="Person"):
        name = cove.projected("firstName")

        @property
        def greeting(self) -> str:
            return f"Hello {self.name}"

    class Aged(Named):                                    # inherits root and names
        age = cove.projected("age", transform=lambda a: a // 10 * 10)

    view = Aged(person(realm, 1))
    assert view.name == "Ann" and view.age == 30 and view.greeting == "Hello Ann"
    assert list(Aged.fields()) == ["name", "age"]
    with pytest.raises(AttributeError):
        view.nickname = "A"                              # type: ignore[attr-defined]


# -- writing -------------------------------------------------------------------------------------

def test_writes_go_through_inside_a_write(realm: cove.Realm) -> None:
    ann = person(realm, 1)
    view = PersonView(ann)
    with realm.write():
        view.name = "Anne"
        view.best = person(realm, 3)                      # a to-one link of the root
    assert ann.firstName == "Anne" and view.name == "Anne" and view.best_name == "Cid"
    with pytest.raises(cove.TransactionError):
        view.name = "Outside"
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match="transform"):
            view.last_caps = "X"                          # a transformed name is read-only
        with pytest.raises(cove.InvalidArgumentError):
            view.best_name = "X"                          # a path through a link
        with pytest.raises(cove.InvalidArgumentError):
            view.friend_names = ["X"]
        with pytest.raises(cove.InvalidArgumentError):
            view.friends = []                             # a list: not a plain property
        with pytest.raises(cove.WrongTypeError):
            view.name = 3                                 # the property's type still holds
        with pytest.raises(AttributeError):
            del view.name
    assert ann.lastName == "Lee" and len(ann.friends) == 2


# -- bad declarations and roots ------------------------------------------------------------------

def test_bad_declarations(realm: cove.Realm) -> None:
    ann = person(realm, 1)

    class Unknown(cove.Projection, root="Person"):
        nope = cove.projected("nope")

    with pytest.raises(cove.InvalidArgumentError, match="nope"):
        Unknown(ann)

    class UnknownStep(cove.Projection, root="Person"):
        deep = cove.projected("best.nope")

    with pytest.raises(cove.InvalidArgumentError):
        UnknownStep(ann)

    class NoRoot(cove.Projection):
        name = cove.projected("firstName")

    with pytest.raises(TypeError, match="root"):
        NoRoot(ann)

    class DogView(cove.Projection, root="Dog"):
        name = cove.projected("name")

    with pytest.raises(cove.WrongTypeError, match="Dog"):
        DogView(ann)                                      # an object of another class
    with pytest.raises(cove.WrongTypeError):
        PersonView("Ann")                                 # type: ignore[arg-type]
    with pytest.raises(cove.WrongTypeError):
        cove.projected(3)                                 # type: ignore[arg-type]
    with pytest.raises(cove.InvalidArgumentError):
        cove.projected("")
    with pytest.raises(cove.WrongTypeError):
        cove.projected("firstName", transform="upper")

    with realm.write():
        realm.delete(person(realm, 3))
        doomed = person(realm, 2)
        view = PersonView(doomed)
        realm.delete(doomed)
    with pytest.raises(cove.InvalidatedError):
        view.name
    with pytest.raises(cove.InvalidatedError):
        PersonView(doomed)


def test_a_transform_that_raises(realm: cove.Realm) -> None:
    class Broken(cove.Projection, root="Person"):
        age = cove.projected("age", transform=lambda a: 1 // 0)

    with pytest.raises(ZeroDivisionError):
        Broken(person(realm, 1)).age


def test_frozen_roots(realm: cove.Realm, recorder: Callable[[], Any]) -> None:
    ann = person(realm, 1)
    frozen_view = PersonView(person(realm.freeze(), 1))
    with realm.write():
        ann.firstName = "Anna"
    assert frozen_view.name == "Ann" and list(frozen_view.friend_names) == ["Bob", "Cid"]
    with pytest.raises(cove.FrozenError):
        frozen_view.observe(recorder())


# -- observing -----------------------------------------------------------------------------------

def test_changes_under_projected_names(realm: cove.Realm, commit: Callable[..., None],
                                       recorder: Callable[[], Any]) -> None:
    view = PersonView(person(realm, 1))
    every, name_only, deletion = recorder(), recorder(), recorder()
    tokens = [view.observe(every), view.observe(name_only, key_paths=["name"]),
              view.observe(deletion, key_paths=[])]
    realm.deliver()
    assert every.changes == []                            # no initial call

    commit(lambda r: [setattr(person(r, 1), "firstName", "Anna"), setattr(person(r, 1), "lastName", "Li")])
    realm.refresh()
    assert every.values() == [("name", "Ann", "Anna"), ("last_caps", "LEE", "LI")]   # transformed
    assert name_only.values() == [("name", "Ann", "Anna")]

    commit(lambda r: setattr(person(r, 1), "lastName", "Lo"))
    realm.refresh()
    assert every.values() == [("last_caps", "LI", "LO")]
    assert len(name_only.changes) == 1                    # a name not observed

    commit(lambda r: setattr(person(r, 1), "age", 31))   # projected by no name
    realm.refresh()
    assert len(every.changes) == 2

    # through the path: a friend's first name, not a friend's age
    commit(lambda r: setattr(person(r, 3), "firstName", "Cyd"))
    realm.refresh()
    names = [p.name for p in every.last.properties]
    assert "friend_names" in names and "loud_friends" in names and "name" not in names
    by_name = {p.name: p for p in every.last.properties}
    assert by_name["friend_names"].old_value is None and by_name["friend_names"].new_value is None
    calls = len(every.changes)
    commit(lambda r: setattr(person(r, 3), "age", 41))
    realm.refresh()
    assert len(every.changes) == calls

    commit(lambda r: setattr(person(r, 2), "firstName", "Bo"))   # best and a friend
    realm.refresh()
    assert ("best_name", "Bob", "Bo") in every.values()

    commit(lambda r: setattr(person(r, 1), "lastName", None))
    realm.refresh()
    assert every.values() == [("last_caps", "LO", None)]

    assert deletion.changes == [] and len(name_only.changes) == 1
    commit(lambda r: r.delete(person(r, 1)))
    realm.refresh()
    for r in (every, name_only, deletion):
        assert r.last == cove.ObjectChange(deleted=True) and r.last.is_final
    calls = [len(r.changes) for r in (every, name_only, deletion)]
    commit(lambda r: r.create(Person, {"uid": 1, "firstName": "Ann", "age": 1}))
    realm.refresh()
    assert [len(r.changes) for r in (every, name_only, deletion)] == calls   # the deletion is reported once
    for token in tokens:
        token.invalidate()


def test_observe_errors(realm: cove.Realm, commit: Callable[..., None], recorder: Callable[[], Any]) -> None:
    view = PersonView(person(realm, 1))
    with pytest.raises(cove.InvalidArgumentError):
        view.observe(recorder(), key_paths=["firstName"])  # a key path, not a projected name
    with pytest.raises(cove.WrongTypeError):
        view.observe(recorder(), key_paths="name")         # a str, not a list
    with pytest.raises(cove.WrongTypeError):
        view.observe("not callable")                       # type: ignore[arg-type]
    with realm.write():
        with pytest.raises(cove.TransactionError):
            view.observe(recorder())

    # a transform that raises during a delivery is raised by the call that delivered
    class Fragile(cove.Projection, root="Person"):
        last = cove.projected("lastName", transform=lambda s: s if s != "Boom" else 1 // 0)

    fragile = Fragile(person(realm, 1))
    token = fragile.observe(recorder())
    commit(lambda r: setattr(person(r, 1), "lastName", "Boom"))
    with pytest.raises(ZeroDivisionError):
        realm.refresh()
    token.invalidate()

    with realm.write():
        realm.delete(person(realm, 1))
    with pytest.raises(cove.InvalidatedError):
        view.observe(recorder())


def test_tokens_keep_what_they_need(realm: cove.Realm, commit: Callable[..., None],
                                    recorder: Callable[[], Any]) -> None:
    gc.collect()
    live = len(_notifications._LIVE)
    seen = recorder()
    token = PersonView(person(realm, 1)).observe(seen, key_paths=["name"])   # the view is not kept
    gc.collect()
    commit(lambda r: setattr(person(r, 1), "firstName", "Anna"))
    realm.refresh()
    assert seen.values() == [("name", "Ann", "Anna")]
    with token:
        pass
    assert len(_notifications._LIVE) == live


def test_async_changes(realm: cove.Realm, commit: Callable[..., None]) -> None:
    view = PersonView(person(realm, 1))

    async def consume() -> List[cove.ObjectChange]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, commit, lambda r: setattr(person(r, 1), "firstName", "Anna"))
        loop.call_later(0.2, commit, lambda r: r.delete(person(r, 1)))
        return [change async for change in view.changes(key_paths=["name"])]   # ends with the deletion

    received = asyncio.run(asyncio.wait_for(consume(), timeout=30))
    assert [[(p.name, p.old_value, p.new_value) for p in c.properties] for c in received] == [
        [("name", "Ann", "Anna")], []]
    assert received[-1].deleted
