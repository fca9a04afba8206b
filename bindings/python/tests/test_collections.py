"""Lists, sets, maps and embedded objects through Python: the collection protocols, Realm's set
algebra and aggregates, assignments that replace contents, embedded objects created from dicts,
persistence, links leaving collections when their target is deleted, and the exception raised
for each kind of bad input."""
from __future__ import annotations

import collections.abc
import datetime as dt
import decimal
import pathlib
import threading

import pytest

import cove

SCHEMA = {
    "Person": {"primaryKey": "name",
               "properties": {"name": "string", "dogs": "Dog[]", "best": "Dog?", "friends": "Person<>"}},
    "Dog": {"properties": {"name": "string", "age": "int", "owner": "Person?", "toys": "Toy[]",
                           "tags": "string<>", "scores": "double{}", "home": "Address?",
                           "nums": "int[]", "maybe": "int?[]", "ints": "int<>", "other_ints": "int<>",
                           "prices": "decimal128<>", "days": "date<>", "mates": "Dog<>",
                           "by_name": "Dog{}", "toy_box": "Toy{}", "anything": "mixed[]"}},
    "Toy": {"embedded": True, "properties": {"brand": "string", "price": "double", "parts": "Part[]"}},
    "Part": {"embedded": True, "properties": {"label": "string"}},
    "Address": {"embedded": True, "properties": {"city": "string", "street": "string?"}},
}


def make_dog(realm: cove.Realm, **values: object) -> cove.Object:
    with realm.write():
        return realm.create("Dog", {"name": "Rex", **values})


# -- lists ---------------------------------------------------------------------------------------

def test_list_is_a_live_mutable_sequence(realm: cove.Realm) -> None:
    dog = make_dog(realm)
    nums = dog.nums
    assert isinstance(nums, cove.List) and isinstance(nums, collections.abc.MutableSequence)
    assert len(nums) == 0 and list(nums) == []
    with realm.write():
        nums.append(1)
        nums.extend([2, 3, 4])
        nums.insert(0, 0)
        nums.insert(-1, 35)        # before the last, as list.insert
        assert list(nums) == [0, 1, 2, 3, 35, 4]
        del nums[4]
        nums[-1] = 40
        assert nums[0] == 0 and nums[-1] == 40 and nums[-5] == 0
        assert nums[1:3] == [1, 2] and nums[::-1] == [40, 3, 2, 1, 0] and nums[10:] == []
        nums[1:3] = [10, 20, 30]   # a slice of another length
        assert list(nums) == [0, 10, 20, 30, 3, 40]
        nums[::2] = [7, 8, 9]
        assert list(nums) == [7, 10, 8, 30, 9, 40]
        del nums[::2]
        assert list(nums) == [10, 30, 40]
        nums.move(0, 2)
        assert list(nums) == [30, 40, 10]
        nums.move(-1, 0)
        assert list(nums) == [10, 30, 40]
        nums.reverse()
        assert list(nums) == [40, 30, 10]
        assert nums.pop() == 10 and nums.pop(0) == 40
        nums.remove(30)
        assert len(nums) == 0
        nums += [5, 6, 5]
        nums.extend(nums)          # reads before it writes
        assert nums.count(5) == 4 and nums.index(6) == 1 and 6 in nums and 7 not in nums
        assert nums == [5, 6, 5, 5, 6, 5] and nums != [5]
        nums.clear()
        assert nums == []
    # another handle of the same property sees the same list
    with realm.write():
        dog.nums = [1, 2]
    assert dog.nums == nums == [1, 2]
    assert "Dog.nums" in repr(nums)


def test_list_bad_input(realm: cove.Realm) -> None:
    dog = make_dog(realm, nums=[1, 2, 3])
    nums = dog.nums
    with pytest.raises(cove.OutOfRangeError, match="out of range") as info:
        nums[3]
    assert isinstance(info.value, IndexError) and info.value.code == 4
    with pytest.raises(IndexError):
        nums[-4]
    with realm.write():
        with pytest.raises(cove.OutOfRangeError):
            nums[5] = 1
        with pytest.raises(cove.OutOfRangeError):
            del nums[3]
        with pytest.raises(cove.OutOfRangeError):
            nums.insert(4, 1)          # out of range rather than clamped
        with pytest.raises(cove.OutOfRangeError):
            nums.insert(-5, 1)
        with pytest.raises(cove.OutOfRangeError):
            nums.move(0, 3)
        with pytest.raises(cove.WrongTypeError, match="int"):
            nums.append("four")
        with pytest.raises(cove.WrongTypeError):
            nums[0] = "x"
        with pytest.raises(cove.WrongTypeError, match="cannot be null|null"):
            nums.append(None)          # "int[]" is not optional
        dog.maybe = [1, None]          # "int?[]" is
        assert list(dog.maybe) == [1, None]
        with pytest.raises(cove.WrongTypeError, match="cannot store a value of type"):
            nums.append(object())
        with pytest.raises(TypeError):
            nums["a"]                  # type: ignore[call-overload]
        with pytest.raises(cove.WrongTypeError, match="iterable"):
            dog.nums = 5
        with pytest.raises(cove.WrongTypeError, match="iterable"):
            dog.nums = "123"
        with pytest.raises(ValueError, match="extended slice"):
            nums[::2] = [1]
        with pytest.raises(TypeError):
            cove.List()
    assert list(nums) == [1, 2, 3]
    for write in (lambda: nums.append(4), lambda: nums.insert(0, 1), lambda: nums.__setitem__(0, 9),
                  lambda: nums.__delitem__(0), nums.clear, lambda: nums.move(0, 1), lambda: nums.extend([]),
                  lambda: nums.__delitem__(slice(5, 6)), nums.reverse):
        with pytest.raises(cove.TransactionError, match="outside a write"):
            write()
    with realm.write():
        realm.delete(dog)
        with pytest.raises(cove.InvalidatedError):
            nums.append(1)
    with pytest.raises(cove.InvalidatedError):
        len(nums)
    with pytest.raises(cove.InvalidatedError):
        nums[0]
    with pytest.raises(cove.InvalidatedError):
        dog.nums
    assert not nums.is_valid


def test_list_of_links(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        max_ = realm.create("Dog", {"name": "Max"})
        ann = realm.create("Person", {"name": "Ann", "dogs": [rex, max_, rex]})
        assert [d.name for d in ann.dogs] == ["Rex", "Max", "Rex"]
        assert ann.dogs[0] == rex and isinstance(ann.dogs[1], cove.Object)
        ann.dogs.append({"name": "Fido"})       # a dict creates the linked object
        assert ann.dogs[-1].name == "Fido"
        with pytest.raises(cove.WrongTypeError, match="Dog"):
            ann.dogs.append(ann)                # a Person into Dog[]
        with pytest.raises(cove.WrongTypeError):
            ann.dogs.append(3)
        with pytest.raises(cove.Error):
            ann.dogs.append(None)               # lists of links hold no nulls
        realm.delete(rex)                       # leaves the list (both places)
        assert [d.name for d in ann.dogs] == ["Max", "Fido"]
    # verify() checks the list's backlink entries (Max once, Fido once) against the list.
    assert "2 backlink entries match their links" in realm.verify()


def test_list_freeze(realm: cove.Realm) -> None:
    dog = make_dog(realm, nums=[1, 2])
    frozen = dog.nums.freeze()
    assert frozen.is_frozen and not dog.nums.is_frozen
    assert frozen.freeze() is frozen
    with realm.write():
        dog.nums.append(3)
        with pytest.raises(cove.TransactionError):
            dog.nums.freeze()                   # not inside a write
    assert list(frozen) == [1, 2] and list(dog.nums) == [1, 2, 3]
    with pytest.raises(cove.FrozenError):
        frozen.append(4)
    seen = []
    thread = threading.Thread(target=lambda: seen.extend(frozen))
    thread.start()
    thread.join()
    assert seen == [1, 2]
    with realm.write():
        ann = realm.create("Person", {"name": "Ann", "dogs": [dog]})
    dogs = ann.dogs.freeze()
    with realm.write():
        ann.dogs.append({"name": "Max"})
        realm.delete(dog)
    assert [d.name for d in dogs] == ["Rex"] and dogs[0].realm.is_frozen   # links read in the snapshot
    assert [d.name for d in ann.dogs] == ["Max"]


def test_mixed_list(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        when = cove.Timestamp(2021, 1, 2, tzinfo=dt.timezone.utc, nanosecond=5)
        rex.anything = [1, "two", 3.5, None, b"\x00", when, decimal.Decimal("1.5"), rex, True]
        assert list(rex.anything) == [1, "two", 3.5, None, b"\x00", when, decimal.Decimal("1.5"), rex, True]
        rex.anything.append({"a": [1]})       # a dict is a nested value of a mixed element
        assert rex.anything[-1] == {"a": [1]}
        with pytest.raises(cove.WrongTypeError):
            rex.anything.append(object())     # no Cove type for it


def test_mixed_values_let_go_of_a_deleted_object(tmp_path: pathlib.Path) -> None:
    schema = {"Box": {"properties": {"any": "mixed", "many": "mixed[]", "bag": "mixed<>", "named": "mixed{}"}},
              "Dog": {"properties": {"name": "string", "home": "Address?"}},
              "Address": {"embedded": True, "properties": {"city": "string"}}}
    with cove.open(tmp_path / "m.cove", schema=schema, schema_version=1, durability="no_sync") as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex"})
            fido = realm.create("Dog", {"name": "Fido", "home": {"city": "Oslo"}})
            box = realm.create("Box", {"any": rex, "many": [rex, fido, rex], "named": {"r": rex, "f": fido}})
            box.bag.add(rex)
            box.bag.add(1)
            with pytest.raises(cove.InvalidArgumentError, match="embedded Address"):
                box.any = fido.home            # an embedded object belongs to its parent alone
            with pytest.raises(cove.InvalidArgumentError, match="embedded Address"):
                box.many.append(fido.home)
            realm.delete(rex)
            assert box.any is None
            assert list(box.many) == [None, fido, None]
            assert set(box.bag) == {1}
            assert dict(box.named) == {"r": None, "f": fido}


# -- sets ----------------------------------------------------------------------------------------

def test_set_is_a_live_mutable_set(realm: cove.Realm) -> None:
    dog = make_dog(realm)
    tags = dog.tags
    assert isinstance(tags, cove.Set) and isinstance(tags, collections.abc.MutableSet)
    with realm.write():
        tags.add("b")
        tags.add("a")
        tags.add("b")
        tags.add("c")
        assert list(tags) == ["a", "b", "c"] and len(tags) == 3   # value order
        assert "a" in tags and "z" not in tags and 5 not in tags and None not in tags
        tags.discard("c")
        tags.discard("zz")
        tags.remove("b")
        with pytest.raises(KeyError):
            tags.remove("b")
        assert tags == {"a"} and tags != {"b"}
        assert tags | {"x"} == {"a", "x"} and isinstance(tags | {"x"}, set)
        assert tags.pop() == "a" and len(tags) == 0
        with pytest.raises(KeyError):
            tags.pop()
        dog.tags = {"q", "r"}
        assert tags == {"q", "r"}
        tags.clear()
        assert len(tags) == 0
    assert "Dog.tags" in repr(tags)


def test_set_algebra(realm: cove.Realm) -> None:
    with realm.write():
        a = realm.create("Dog", {"name": "A", "ints": [1, 2, 3]})
        b = realm.create("Dog", {"name": "B", "ints": [3, 4]})
        a.ints.union(b.ints)
        assert list(a.ints) == [1, 2, 3, 4]
        a.ints.minus(b.ints)
        assert list(a.ints) == [1, 2]
        a.ints.union([3, 4, 5])
        a.ints.intersect(b.ints)
        assert list(a.ints) == [3, 4]
        a.ints.assign([9, 8])
        assert list(a.ints) == [8, 9]
        a.ints.assign(b.ints)                 # setSet
        assert list(a.ints) == [3, 4]
        a.ints |= {1}
        a.ints -= b.ints
        assert list(a.ints) == [1]
        a.ints |= b.ints
        a.ints &= [1, 3.0, 7]                 # any iterable; 3.0 equals 3
        assert list(a.ints) == [1, 3]
        a.ints -= (1,)
        assert list(a.ints) == [3]
        assert a.ints.is_subset(b.ints) and a.ints.is_subset([3, 7]) and not b.ints.is_subset(a.ints)
        assert a.ints.intersects(b.ints) and a.ints.intersects([3]) and not a.ints.intersects([4])
        a.ints = b.ints                       # assignment of a set of the realm
        assert a.ints == b.ints
        a.ints.intersect(a.ints)              # the same handle
        assert list(a.ints) == [3, 4]
        a.other_ints = [4, 5]
        assert a.ints.intersects(a.other_ints)
        with pytest.raises(cove.WrongTypeError):
            a.ints.union(a.tags)              # int<> and string<>
        with pytest.raises(cove.WrongTypeError):
            a.ints |= ["x"]
        with pytest.raises(cove.WrongTypeError):
            a.ints.union(5)                   # type: ignore[arg-type]
        assert a.ints != a.tags
    with pytest.raises(cove.TransactionError):
        a.ints.union(b.ints)
    for op in (a.ints.union, a.ints.intersect, a.ints.minus, a.ints.assign):
        with pytest.raises(cove.TransactionError, match="outside a write"):
            op([])                            # refused even when it would change nothing
    with pytest.raises(cove.TransactionError):
        a.ints |= set()


def test_set_aggregates(realm: cove.Realm) -> None:
    day = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    with realm.write():
        dog = realm.create("Dog", {"name": "Rex"})
        assert dog.ints.min() is None and dog.ints.max() is None and dog.ints.average() is None
        assert dog.ints.sum() == 0
        dog.ints = [3, 1, 2]
        assert dog.ints.min() == 1 and dog.ints.max() == 3 and dog.ints.sum() == 6
        assert dog.ints.average() == 2.0 and isinstance(dog.ints.average(), float)
        dog.prices = [decimal.Decimal("1.25"), decimal.Decimal("2.75")]
        assert dog.prices.sum() == decimal.Decimal("4.00") and dog.prices.average() == decimal.Decimal("2.00")
        dog.days = [day, day + dt.timedelta(days=2)]
        assert dog.days.min() == day and dog.days.max() == day + dt.timedelta(days=2)
        assert isinstance(dog.days.min(), cove.Timestamp)
        dog.tags = ["a"]
        with pytest.raises(cove.WrongTypeError):
            dog.tags.sum()                    # strings are not numbers


def test_set_of_objects_aggregates_a_property(realm: cove.Realm) -> None:
    with realm.write():
        dog = realm.create("Dog", {"name": "Rex"})
        mates = dog.mates
        assert mates.min("age") is None and mates.max("age") is None and mates.average("age") is None
        assert mates.sum("age") == 0
        mates.union([realm.create("Dog", {"name": n, "age": a}) for n, a in (("A", 3), ("B", 8), ("C", 4))])
        assert mates.min("age") == 3 and mates.max("age") == 8 and mates.sum("age") == 15
        assert mates.average("age") == 5.0 and isinstance(mates.average("age"), float)
        mates.pop()                           # Results take the same property
    assert mates.sum("age") == mates.as_results().sum("age")
    frozen = mates.freeze()
    assert frozen.max("age") == mates.max("age")


def test_set_aggregate_errors(realm: cove.Realm) -> None:
    dog = make_dog(realm, ints=[1, 2])
    with realm.write():
        dog.mates.add(realm.create("Dog", {"name": "A", "age": 3}))
    for aggregate in ("min", "max", "sum", "average"):
        with pytest.raises(cove.InvalidArgumentError, match=f"{aggregate} of .*mates.*needs a property name"):
            getattr(dog.mates, aggregate)()
        with pytest.raises(cove.InvalidArgumentError, match="has no property 'weight'"):
            getattr(dog.mates, aggregate)("weight")
        with pytest.raises(cove.WrongTypeError, match="string"):
            getattr(dog.mates, aggregate)("name")          # not a number (nor, for min and max, comparable)
        with pytest.raises(cove.InvalidArgumentError, match="a set of values takes no property name, got 'age'"):
            getattr(dog.ints, aggregate)("age")
        with pytest.raises(cove.WrongTypeError):
            getattr(dog.mates, aggregate)(3)               # a name is text
    assert dog.ints.min() == 1 and dog.ints.sum() == 3     # values: no name
    with realm.write():
        realm.delete(dog)
    with pytest.raises(cove.InvalidatedError):
        dog.mates.min("age")


def test_set_bad_input(realm: cove.Realm) -> None:
    dog = make_dog(realm, ints=[1])
    ints = dog.ints
    with realm.write():
        with pytest.raises(cove.WrongTypeError, match="int"):
            ints.add("one")
        with pytest.raises(cove.WrongTypeError):
            ints.add(None)
        with pytest.raises(cove.WrongTypeError, match="iterable"):
            dog.ints = 3
    for write in (lambda: ints.add(2), lambda: ints.discard(1), lambda: ints.discard(5), ints.clear,
                  lambda: ints.remove(1)):
        with pytest.raises(cove.TransactionError):
            write()
    with realm.write():
        realm.delete(dog)
        with pytest.raises(cove.InvalidatedError):
            ints.add(2)
        with pytest.raises(cove.InvalidatedError):
            ints.union([2])
    with pytest.raises(cove.InvalidatedError):
        list(ints)
    with pytest.raises(cove.InvalidatedError):
        ints.min()


def test_set_of_links(realm: cove.Realm) -> None:
    with realm.write():
        a = realm.create("Dog", {"name": "A"})
        b = realm.create("Dog", {"name": "B"})
        c = realm.create("Dog", {"name": "C"})
        a.mates = [b, c, b]
        assert len(a.mates) == 2 and b in a.mates and a not in a.mates
        ann = realm.create("Person", {"name": "Ann"})
        assert ann not in a.mates             # another class: not held
        with pytest.raises(cove.WrongTypeError):
            a.mates.add(ann)
        realm.delete(b)                       # leaves the set
        assert list(a.mates) == [c]
    frozen = a.mates.freeze()
    assert frozen.is_frozen and [d.name for d in frozen] == ["C"]


# -- maps ----------------------------------------------------------------------------------------

def test_map_is_a_live_mutable_mapping(realm: cove.Realm) -> None:
    dog = make_dog(realm)
    scores = dog.scores
    assert isinstance(scores, cove.Map) and isinstance(scores, collections.abc.MutableMapping)
    with realm.write():
        scores["b"] = 2.5
        scores["a"] = 1                       # an int into a double map
        scores["ü"] = 3.0
        assert list(scores) == ["a", "b", "ü"] and len(scores) == 3   # key order
        assert list(scores.items()) == [("a", 1.0), ("b", 2.5), ("ü", 3.0)]
        assert list(scores.values()) == [1.0, 2.5, 3.0] and list(scores.keys()) == ["a", "b", "ü"]
        assert scores["a"] == 1.0 and scores.get("zz") is None and scores.get("zz", 7) == 7
        assert "a" in scores and "zz" not in scores and 5 not in scores
        del scores["ü"]
        assert scores.pop("b") == 2.5 and scores == {"a": 1.0}
        scores.update({"c": 4.0}, d=5.0)
        assert scores.setdefault("c", 9.0) == 4.0
        dog.scores = {"x": 1.0}
        assert dict(scores) == {"x": 1.0}
        scores.clear()
        assert len(scores) == 0
    assert "Dog.scores" in repr(scores)


def test_map_bad_input(realm: cove.Realm) -> None:
    dog = make_dog(realm, scores={"a": 1.0})
    scores = dog.scores
    with pytest.raises(KeyError):
        scores["missing"]
    with pytest.raises(KeyError):
        scores[5]                             # type: ignore[index]
    with realm.write():
        with pytest.raises(KeyError):
            del scores["missing"]
        with pytest.raises(cove.WrongTypeError, match="double"):
            scores["b"] = "high"
        with pytest.raises(cove.WrongTypeError, match="string keys"):
            scores[5] = 1.0                   # type: ignore[index]
        with pytest.raises(cove.InvalidArgumentError):
            scores["a.b"] = 1.0               # '.' is refused, as in Realm
        with pytest.raises(cove.InvalidArgumentError):
            scores["$a"] = 1.0
        with pytest.raises(cove.InvalidArgumentError, match="NUL"):
            scores["a\0b"] = 1.0
        with pytest.raises(cove.WrongTypeError, match="mapping"):
            dog.scores = [1.0]
    for write in (lambda: scores.__setitem__("b", 2.0), lambda: scores.__delitem__("a"), scores.clear):
        with pytest.raises(cove.TransactionError):
            write()
    with realm.write():
        dog.scores = {}
    with pytest.raises(cove.TransactionError):
        scores.clear()                        # even when empty
    with realm.write():
        realm.delete(dog)
        with pytest.raises(cove.InvalidatedError):
            scores["a"] = 1.0
    with pytest.raises(cove.InvalidatedError):
        len(scores)
    with pytest.raises(cove.InvalidatedError):
        scores["a"]


def test_map_of_links_keeps_the_key_when_the_target_goes(realm: cove.Realm) -> None:
    with realm.write():
        a = realm.create("Dog", {"name": "A"})
        b = realm.create("Dog", {"name": "B"})
        a.by_name = {"b": b, "none": None}
        assert a.by_name["b"] == b and a.by_name["none"] is None
        realm.delete(b)
        assert dict(a.by_name) == {"b": None, "none": None}
    frozen = a.by_name.freeze()
    assert frozen.is_frozen and dict(frozen) == {"b": None, "none": None}


# -- embedded objects ----------------------------------------------------------------------------

def test_embedded_objects_from_dicts(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex", "home": {"city": "Oslo"},
                                   "toys": [{"brand": "A", "price": 2, "parts": [{"label": "wheel"}]}],
                                   "toy_box": {"red": {"brand": "R"}}})
        assert isinstance(rex.home, cove.EmbeddedObject) and rex.home.city == "Oslo" and rex.home.street is None
        assert rex.home.is_embedded and not rex.is_embedded
        toy = rex.toys[0]
        assert isinstance(toy, cove.EmbeddedObject) and toy.brand == "A" and toy.price == 2.0
        assert toy.parts[0].label == "wheel"  # nested dicts, recursively
        assert rex.toy_box["red"].brand == "R"
        rex.toys.append({"brand": "B"})
        rex.toys.insert(0, {"brand": "Z"})
        rex.toys[1] = {"brand": "A2"}         # replaces (the old one is deleted)
        assert not toy.is_valid
        assert [t.brand for t in rex.toys] == ["Z", "A2", "B"]
        rex.toys.move(0, 2)
        rex.toys.reverse()                    # by moves: the objects stay the same
        assert [t.brand for t in rex.toys] == ["Z", "B", "A2"]
        rex.toys[0] = rex.toys[2]             # an embedded object is copied
        assert [t.brand for t in rex.toys] == ["A2", "B", "A2"]
        popped = rex.toys.pop()
        assert popped == {"brand": "A2", "price": 0.0, "parts": []}
        rex.toy_box["blue"] = {"brand": "Bl"}
        old_red = rex.toy_box["red"]
        rex.toy_box["red"] = {"brand": "R2"}
        assert not old_red.is_valid and rex.toy_box["red"].brand == "R2"
        old_home = rex.home
        rex.home = {"city": "Bergen", "street": "Main"}
        assert not old_home.is_valid and rex.home.city == "Bergen"
        rex.home.city = "Tromsø"              # an embedded object's properties are written in place
        assert rex.home.city == "Tromsø"
        rex.home = rex.home                   # a copy of itself
        assert rex.home.city == "Tromsø" and rex.home.street == "Main"
        rex.toys = [{"brand": "X"}, {"brand": "Y"}]
        assert [t.brand for t in rex.toys] == ["X", "Y"]
        other = realm.create("Dog", {"name": "Other", "toys": rex.toys, "home": rex.home})
        assert [t.brand for t in other.toys] == ["X", "Y"] and other.home.city == "Tromsø"
        assert other.toys[0] != rex.toys[0]   # copies, not shared
        rex.home = None                       # deletes it
        assert rex.home is None
        assert rex.to_dict()["toys"] == [{"brand": "X", "price": 0.0, "parts": []},
                                         {"brand": "Y", "price": 0.0, "parts": []}]


def test_embedded_bad_input(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex"})
        with pytest.raises(cove.WrongTypeError, match="embedded Toy"):
            rex.toys.append("a toy")
        with pytest.raises(cove.WrongTypeError, match="embedded"):
            rex.toys.append(None)
        with pytest.raises(cove.WrongTypeError, match="embedded Address"):
            rex.home = 5
        with pytest.raises(cove.WrongTypeError, match="Address objects, got an object of Toy"):
            rex.home = realm.create("Dog", {"name": "X", "toys": [{}]}).toys[0]
        with pytest.raises(cove.NotFoundError, match="no property 'colour'"):
            rex.home = {"city": "Oslo", "colour": "red"}
        with pytest.raises(cove.WrongTypeError):
            rex.toys.append({"brand": 5})
        with pytest.raises(cove.InvalidArgumentError):
            realm.create("Toy", {"brand": "A"})   # embedded objects live in an owner
        with pytest.raises(cove.OutOfRangeError):
            rex.toys[3] = {"brand": "A"}
    with pytest.raises(cove.TransactionError):
        rex.toys.append({"brand": "A"})
    with pytest.raises(cove.TransactionError):
        rex.home = {"city": "Oslo"}
    with pytest.raises(cove.TransactionError):
        rex.toy_box["a"] = {"brand": "A"}


def test_embedded_objects_are_deleted_with_their_owner(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex", "home": {"city": "Oslo"}, "toys": [{"brand": "A", "parts": [{}]}],
                                   "toy_box": {"k": {"brand": "K"}}})
        home, toy, part, boxed = rex.home, rex.toys[0], rex.toys[0].parts[0], rex.toy_box["k"]
        realm.delete(rex)
    for obj, name in ((home, "city"), (toy, "brand"), (part, "label"), (boxed, "brand")):
        assert not obj.is_valid
        with pytest.raises(cove.InvalidatedError):
            obj[name]


def test_set_of_embedded_objects_is_refused() -> None:
    schema = {"Toy": {"embedded": True, "properties": {"brand": "string"}},
              "Dog": {"properties": {"toys": "Toy<>"}}}
    with pytest.raises(cove.SchemaError, match="sets cannot hold embedded objects"):
        cove.open(None, schema=schema, schema_version=1)


def test_create_and_update_with_collections(realm: cove.Realm) -> None:
    with realm.write():
        rex = realm.create("Dog", {"name": "Rex", "tags": ["x"], "toys": [{"brand": "A"}], "home": {"city": "Oslo"},
                                   "scores": {"a": 1.0}})
        ann = realm.create("Person", {"name": "Ann", "dogs": [rex], "best": {"name": "Max"}})
        assert ann.best.name == "Max"
        same = realm.create("Person", {"name": "Ann", "dogs": [rex, {"name": "Fido"}],
                                       "friends": [{"name": "Bob"}]}, update=True)
        assert same == ann and [d.name for d in ann.dogs] == ["Rex", "Fido"]
        assert ann.best.name == "Max"         # not given: kept
        assert [f.name for f in ann.friends] == ["Bob"]
        again = realm.create("Person", {"name": "Ann", "friends": [{"name": "Bob", "dogs": [rex]}]}, update=True)
        assert again == ann and [d.name for d in realm.find("Person", "Bob").dogs] == ["Rex"]
        with pytest.raises(cove.DuplicateKeyError):
            realm.create("Person", {"name": "Zed", "friends": [{"name": "Bob"}]})


def test_collections_persist_across_reopen(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "p.cove"
    with cove.open(path, schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex", "nums": [3, 1, 2], "tags": ["b", "a"], "scores": {"x": 1.5},
                                       "toys": [{"brand": "A", "parts": [{"label": "p"}]}], "home": {"city": "Oslo"},
                                       "toy_box": {"k": {"brand": "K"}}})
            realm.create("Person", {"name": "Ann", "dogs": [rex, rex]})
    with cove.open(path) as realm:
        ann = realm.find("Person", "Ann")
        rex = ann.dogs[0]
        assert ann.dogs[1] == rex and len(ann.dogs) == 2
        assert list(rex.nums) == [3, 1, 2] and list(rex.tags) == ["a", "b"] and dict(rex.scores) == {"x": 1.5}
        assert rex.toys[0].brand == "A" and rex.toys[0].parts[0].label == "p"
        assert rex.home.city == "Oslo" and rex.toy_box["k"].brand == "K"
        assert realm.verify()
