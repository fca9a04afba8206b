"""A closed realm: every operation on it, and on the objects, collections, results, sections and
projections read from it, raises ClosedError (never a crash, never an answer from before the
close); the few that answer by design (close again, is_valid, is_closed) are checked too. The
same for a frozen realm closed while its live realm stays open."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import pytest

import cove

SCHEMA = {
    "Person": {"primaryKey": "name", "properties": {
        "name": "string", "age": "int", "dogs": "Dog[]", "tags": "string<>", "pack": "Dog<>",
        "scores": "double{}", "pet": "Dog?", "toys": "Toy[]"}},
    "Dog": {"properties": {"name": "string", "age": "int", "owners": "@links(Person.dogs)"}},
    "Toy": {"embedded": True, "properties": {"brand": "string"}},
}


class NameView(cove.Projection, root="Person"):
    name = cove.projected("name")
    dog_names = cove.projected("dogs.name")


def _populated() -> cove.Realm:
    realm = cove.open(None, schema=SCHEMA, schema_version=1)
    with realm.write():
        rex = realm.create("Dog", {"name": "rex", "age": 3})
        realm.create("Person", {"name": "ann", "age": 30, "dogs": [rex], "tags": {"a"}, "pack": [rex],
                                "scores": {"x": 1.5}, "pet": rex, "toys": [{"brand": "b"}]})
    return realm


class Handles:
    """What was read from a realm while it was open."""

    def __init__(self, realm: cove.Realm) -> None:
        self.realm = realm
        self.ann = realm.find("Person", "ann")
        self.rex = self.ann.pet
        self.dogs = self.ann.dogs
        self.tags = self.ann.tags
        self.pack = self.ann.pack
        self.scores = self.ann.scores
        self.toys = self.ann.toys
        self.people = realm.objects("Person")
        self.sections = self.people.sectioned(by="name")
        self.section = self.sections[0]
        self.view = NameView(self.ann)


def _noop(change: Any) -> None:
    pass


# (name, call): each must raise ClosedError once the realm is closed.
CALLS: List[Tuple[str, Callable[[Handles], Any]]] = [
    ("realm.version", lambda h: h.realm.version),
    ("realm.active_versions", lambda h: h.realm.active_versions),
    ("realm.in_write", lambda h: h.realm.in_write),
    ("realm.begin_write", lambda h: h.realm.begin_write()),
    ("realm.commit", lambda h: h.realm.commit()),
    ("realm.cancel_write", lambda h: h.realm.cancel_write()),
    ("realm.write", lambda h: h.realm.write().__enter__()),
    ("realm.refresh", lambda h: h.realm.refresh()),
    ("realm.deliver", lambda h: h.realm.deliver()),
    ("realm.notification_fd", lambda h: h.realm.notification_fd()),
    ("realm.wait_for_change", lambda h: h.realm.wait_for_change(0)),
    ("realm.invalidate", lambda h: h.realm.invalidate()),
    ("realm.freeze", lambda h: h.realm.freeze()),
    ("realm.verify", lambda h: h.realm.verify()),
    ("realm.schema", lambda h: h.realm.schema),
    ("realm.create", lambda h: h.realm.create("Dog", {"name": "x"})),
    ("realm.create_many", lambda h: h.realm.create_many("Dog", [{"name": "x"}])),
    ("realm.find", lambda h: h.realm.find("Person", "ann")),
    ("realm.objects", lambda h: h.realm.objects("Person")),
    ("realm.delete", lambda h: h.realm.delete(h.rex)),
    ("object.get", lambda h: h.ann.age),
    ("object.get link", lambda h: h.ann.pet),
    ("object.get list", lambda h: h.ann.dogs),
    ("object.set", lambda h: setattr(h.ann, "age", 31)),
    ("object.freeze", lambda h: h.ann.freeze()),
    ("object.thaw", lambda h: h.ann.thaw()),
    ("object.to_dict", lambda h: h.ann.to_dict()),
    ("object.observe", lambda h: h.ann.observe(_noop)),
    ("object.is_frozen", lambda h: h.ann.is_frozen),
    ("object.owners", lambda h: h.rex.owners),
    ("object as a link", lambda h: h.ann._cove_link()),
    ("list len", lambda h: len(h.dogs)),
    ("list index", lambda h: h.dogs[0]),
    ("list iterate", lambda h: list(h.dogs)),
    ("list append", lambda h: h.dogs.append(h.rex)),
    ("list insert", lambda h: h.dogs.insert(0, h.rex)),
    ("list set", lambda h: h.dogs.__setitem__(0, h.rex)),
    ("list delete", lambda h: h.dogs.__delitem__(0)),
    ("list move", lambda h: h.dogs.move(0, 0)),
    ("list clear", lambda h: h.dogs.clear()),
    ("list as_results", lambda h: h.dogs.as_results()),
    ("list freeze", lambda h: h.dogs.freeze()),
    ("list observe", lambda h: h.dogs.observe(_noop)),
    ("list is_frozen", lambda h: h.dogs.is_frozen),
    ("embedded list append", lambda h: h.toys.append({"brand": "c"})),
    ("set len", lambda h: len(h.tags)),
    ("set contains", lambda h: "a" in h.tags),
    ("set iterate", lambda h: list(h.tags)),
    ("set add", lambda h: h.tags.add("b")),
    ("set discard", lambda h: h.tags.discard("a")),
    ("set clear", lambda h: h.tags.clear()),
    ("set union", lambda h: h.tags.union(h.tags)),
    ("set is_subset", lambda h: h.tags.is_subset(h.tags)),
    ("set ==", lambda h: h.tags == h.tags),
    ("set min", lambda h: h.tags.min()),
    ("set of objects min", lambda h: h.pack.min("age")),
    ("set of objects sum", lambda h: h.pack.sum("age")),
    ("set as_results", lambda h: h.tags.as_results()),
    ("set observe", lambda h: h.tags.observe(_noop)),
    ("map len", lambda h: len(h.scores)),
    ("map get", lambda h: h.scores["x"]),
    ("map set", lambda h: h.scores.__setitem__("y", 2.0)),
    ("map delete", lambda h: h.scores.__delitem__("x")),
    ("map keys", lambda h: list(h.scores.keys())),
    ("map observe", lambda h: h.scores.observe(_noop)),
    ("results len", lambda h: len(h.people)),
    ("results index", lambda h: h.people[0]),
    ("results iterate", lambda h: list(h.people)),
    ("results filter", lambda h: h.people.filter("age > 1")),
    ("results sorted", lambda h: h.people.sorted("age")),
    ("results distinct", lambda h: h.people.distinct("age")),
    ("results min", lambda h: h.people.min("age")),
    ("results sum", lambda h: h.people.sum("age")),
    ("results average", lambda h: h.people.average("age")),
    ("results to_json", lambda h: h.people.to_json()),
    ("results explain", lambda h: h.people.explain()),
    ("results freeze", lambda h: h.people.freeze()),
    ("results observe", lambda h: h.people.observe(_noop)),
    ("results sectioned", lambda h: h.people.sectioned(by="name")),
    ("results delete_all", lambda h: h.people.delete_all()),
    ("results is_frozen", lambda h: h.people.is_frozen),
    ("sections len", lambda h: len(h.sections)),
    ("sections keys", lambda h: h.sections.keys),
    ("sections index", lambda h: h.sections[0]),
    ("sections freeze", lambda h: h.sections.freeze()),
    ("sections observe", lambda h: h.sections.observe(_noop)),
    ("section key", lambda h: h.section.key),
    ("section len", lambda h: len(h.section)),
    ("section index", lambda h: h.section[0]),
    ("section observe", lambda h: h.section.observe(_noop)),
    ("projection get", lambda h: h.view.name),
    ("projection get through a list", lambda h: list(h.view.dog_names)),
    ("projection to_dict", lambda h: h.view.to_dict()),
    ("projection observe", lambda h: h.view.observe(_noop)),
    ("projection of a closed realm's object", lambda h: NameView(h.ann).name),
]

# Frozen realms cannot write or be observed: there the refusal for being closed must still come
# first, so the same table runs on them.


def _closed(frozen: bool) -> Tuple[Handles, cove.Realm]:
    live = _populated()
    realm = live.freeze() if frozen else live
    handles = Handles(realm)
    realm.close()
    return handles, live


@pytest.mark.parametrize("frozen", [False, True], ids=["live", "frozen"])
@pytest.mark.parametrize("name,call", CALLS, ids=[name for name, _ in CALLS])
def test_operation_on_closed_realm_raises_closed(name: str, call: Callable[[Handles], Any], frozen: bool) -> None:
    handles, live = _closed(frozen)
    with pytest.raises(cove.ClosedError):
        call(handles)
    live.close()


@pytest.mark.parametrize("frozen", [False, True], ids=["live", "frozen"])
def test_answers_for_a_closed_realm(frozen: bool) -> None:
    h, live = _closed(frozen)
    h.realm.close()                                # a second close does nothing
    assert h.realm.is_closed
    assert not h.ann.is_valid and not h.rex.is_valid
    assert not h.people.is_valid and not h.dogs.is_valid
    assert "closed" in repr(h.realm)
    with pytest.raises(cove.ClosedError, match="closed"):
        h.realm.find("Person", "ann")
    # A closed frozen realm leaves its live realm as it was.
    if frozen:
        assert live.find("Person", "ann").age == 30
    live.close()


def test_closed_error_says_what_and_names_no_c_function() -> None:
    h, _ = _closed(False)
    with pytest.raises(cove.ClosedError, match="^the realm is closed") as caught:
        len(h.dogs)
    assert "cove_" not in str(caught.value) and caught.value.status is cove.Status.CLOSED
    with pytest.raises(cove.ClosedError) as caught:
        h.ann.age
    assert "cove_" not in str(caught.value)
    assert isinstance(cove.ClosedError(11, "x"), cove.Error)


def test_objects_hashed_before_a_close_keep_their_hash() -> None:
    realm = _populated()
    ann = realm.find("Person", "ann")
    by_object: Dict[Any, int] = {ann: 1}
    same = realm.find("Person", "ann")
    realm.close()
    assert by_object[ann] == 1 and ann == ann
    # An object first compared after the close is equal only to itself.
    assert same == same and same != ann


def test_a_deleted_object_makes_no_link() -> None:
    realm = _populated()
    with realm.write():
        rex = realm.find("Person", "ann").pet
        realm.delete(rex)
        with pytest.raises(cove.InvalidatedError, match="was deleted"):
            realm.find("Person", "ann").pet = rex
        with pytest.raises(cove.InvalidatedError, match="was deleted"):
            realm.find("Person", "ann").dogs.append(rex)
    realm.close()


def test_old_link_values_of_deleted_objects_read_as_none() -> None:
    realm = _populated()
    ann = realm.find("Person", "ann")
    changes: List[Any] = []
    token = ann.observe(changes.append, key_paths=["pet"])
    realm.deliver()
    with realm.write():
        realm.delete(ann.pet)
    realm.refresh()
    old = [p.old_value for c in changes if not c.deleted for p in c.properties if p.name == "pet"]
    assert old == [None]    # the dog the link named is gone: no object, and no error
    token.invalidate()
    realm.close()

