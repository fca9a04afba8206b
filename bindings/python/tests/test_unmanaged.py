"""Unmanaged objects, as realm-swift's: calling a declared class makes an object that belongs
to no realm and holds plain Python values; realm.add() creates it, with the unmanaged objects it
links to, and the same Python objects then read and write the realm."""
from __future__ import annotations

from typing import Any, Optional

import pytest

import cove


class Address(cove.EmbeddedObject):
    city: str
    street: Optional[str] = None


class Toy(cove.Object):
    id: int = cove.Property(primary_key=True)
    brand: str


class Person(cove.Object):
    name: str
    best: Optional["Dog"]
    dogs = cove.LinkingObjects("Dog", "owner")


class Dog(cove.Object):
    name: str
    age: int = 1
    nickname: Optional[str]
    owner: Optional[Person]
    toys: cove.List[Toy]
    tags: cove.Set[str]
    scores: cove.Map[float]
    home: Optional[Address]
    homes: cove.List[Address]
    places: cove.Map[Address]


class Keeper(cove.Object):
    id: int = cove.Property(primary_key=True)
    dog: Optional[Dog]


CLASSES = [Address, Toy, Person, Dog, Keeper]


@pytest.fixture
def realm() -> Any:
    with cove.open(None, schema=CLASSES) as r:
        yield r


def test_an_unmanaged_object_holds_plain_values() -> None:
    dog = Dog(name="Rex", toys=(Toy(id=1, brand="A"),), tags=["a", "a"])
    assert not dog.is_managed and dog.realm is None and dog.is_valid and not dog.is_frozen
    assert dog.class_name == "Dog" and not dog.is_embedded and Address(city="x").is_embedded
    assert dog.name == "Rex" and dog.age == 1 and dog.nickname is None and dog.owner is None
    assert isinstance(dog.toys, list) and dog.toys[0].brand == "A"
    assert dog.tags == {"a"} and dog.scores == {} and dog.homes == []
    dog.age = 4
    dog.scores["x"] = 2.0
    dog["nickname"] = "R"
    assert dog.age == 4 and dog["scores"] == {"x": 2.0} and dog.nickname == "R"
    assert Person(name="Ann").dogs == []                # nothing links to it
    assert repr(dog) == "<Dog (unmanaged)>"
    assert dog == dog and dog != Dog(name="Rex") and hash(dog) == hash(dog)
    assert dog.to_dict()["toys"][0] is dog.toys[0]
    assert Dog(name="a", home=Address(city="Oslo")).to_dict()["home"] == {"city": "Oslo", "street": None}


def test_unmanaged_errors() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Dog(name="Rex", colour="brown")
    with pytest.raises(cove.InvalidArgumentError, match="backlinks"):
        Person(name="Ann", dogs=[])
    with pytest.raises(TypeError, match="not a declared class"):
        cove.Object(name="x")
    dog = Dog()
    with pytest.raises(cove.NotFoundError, match="'Dog.name' of the unmanaged object has no value yet"):
        dog.name
    assert getattr(dog, "name", "?") == "?" and not hasattr(dog, "colour")
    with pytest.raises(AttributeError):
        dog.colour = "brown"
    with pytest.raises(cove.WrongTypeError, match="list 'toys' of class 'Dog' takes an iterable"):
        dog.toys = 3
    with pytest.raises(cove.InvalidArgumentError, match="unmanaged"):
        dog.freeze()
    with pytest.raises(cove.InvalidArgumentError, match="unmanaged"):
        dog.observe(lambda change: None)


def test_add_makes_the_same_object_managed(realm: cove.Realm) -> None:
    dog = Dog(name="Rex", tags={"good"})
    with realm.write():
        assert realm.add(dog) is dog
        assert dog.is_managed and dog.realm is realm and isinstance(dog.toys, cove.List)
        assert dog.name == "Rex" and dog.age == 1 and set(dog.tags) == {"good"}
        dog.age = 5                                     # a write to the realm now
        dog.tags.add("old")
    assert realm.objects(Dog)[0].age == 5 and realm.objects(Dog)[0] == dog
    assert set(realm.objects(Dog)[0].tags) == {"good", "old"}
    with pytest.raises(cove.TransactionError):
        dog.age = 6
    assert repr(dog) == "<Dog 0>"


def test_add_outside_a_write(realm: cove.Realm) -> None:
    dog = Dog(name="Rex")
    with pytest.raises(cove.TransactionError, match="outside a write"):
        realm.add(dog)
    assert not dog.is_managed and len(realm.objects(Dog)) == 0


def test_add_a_graph(realm: cove.Realm) -> None:
    ann = Person(name="Ann")
    toy = Toy(id=1, brand="A")
    home = Address(city="Oslo")
    rex = Dog(name="Rex", owner=ann, toys=[toy, Toy(id=2, brand="B"), toy], home=home,
              homes=[Address(city="Rome"), Address(city="Lima", street="Main")], places={"work": Address(city="Bern")})
    ann.best = rex                                      # a cycle: Ann -> Rex -> Ann
    with realm.write():
        realm.add(rex)
    assert all(o.is_managed for o in (ann, toy, home, rex))
    assert len(realm.objects(Person)) == 1 and len(realm.objects(Toy)) == 2
    assert rex.owner == ann and ann.best == rex and list(ann.dogs) == [rex]
    assert [t.id for t in rex.toys] == [1, 2, 1] and rex.toys[0] == toy
    assert rex.home == home and home.city == "Oslo" and isinstance(home, Address)
    assert [h.city for h in rex.homes] == ["Rome", "Lima"] and rex.homes[1].street == "Main"
    assert rex.places["work"].city == "Bern"
    with realm.write():
        home.street = "High"                            # the embedded object is the realm's now
    assert realm.objects(Dog)[0].home.street == "High"


def test_add_links_to_managed_objects(realm: cove.Realm) -> None:
    with realm.write():
        ann = realm.create(Person, {"name": "Ann"})
        rex = realm.add(Dog(name="Rex", owner=ann))
        assert rex.owner == ann
        # an unmanaged object given to a managed one is added, as in realm-swift
        max_ = Dog(name="Max")
        ann.best = max_
        assert max_.is_managed and ann.best == max_
        toy = Toy(id=7, brand="T")
        rex.toys.append(toy)
        assert toy.is_managed and realm.find(Toy, 7) == toy
        bob = realm.create(Person, {"name": "Bob", "best": Dog(name="Fido")})
        assert bob.best is not None and bob.best.name == "Fido"


def test_add_update(realm: cove.Realm) -> None:
    with realm.write():
        realm.add(Toy(id=1, brand="A"))
        with pytest.raises(cove.DuplicateKeyError):
            realm.add(Toy(id=1, brand="B"))
        toy = realm.add(Toy(id=1, brand="C"), update=True)
        assert toy.is_managed and toy.brand == "C" and len(realm.objects(Toy)) == 1
        with pytest.raises(cove.InvalidArgumentError, match="no primary key"):
            realm.add(Dog(name="Max"), update=True)
        # the objects it links to are updated by primary key, or created when they have none
        owner = Keeper(id=1, dog=Dog(name="Rex", toys=[Toy(id=1, brand="D"), Toy(id=2, brand="E")]))
        realm.add(owner, update=True)
        assert toy.brand == "D" and len(realm.objects(Toy)) == 2 and len(realm.objects(Dog)) == 1
        realm.add(Keeper(id=1, dog=Dog(name="Max")), update=True)
        assert owner.dog is not None and owner.dog.name == "Max" and len(realm.objects(Keeper)) == 1


def test_add_required_values(realm: cove.Realm) -> None:
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match=r"^missing value for property 'Dog.name'$"):
            realm.add(Dog(age=3))
        with pytest.raises(cove.InvalidArgumentError, match="missing value for property 'Toy.brand'"):
            realm.add(Dog(name="Rex", toys=[Toy(id=1)]))
        with pytest.raises(cove.InvalidArgumentError, match="primary key 'id': give its value"):
            realm.add(Toy(brand="A"))


def test_add_managed_objects(realm: cove.Realm, tmp_path: Any) -> None:
    with realm.write():
        rex = realm.create(Dog, {"name": "Rex"})
        assert realm.add(rex) is rex and len(realm.objects(Dog)) == 1
    with cove.open(tmp_path / "other.cove", schema=CLASSES) as other:
        with other.write():
            with pytest.raises(cove.InvalidArgumentError, match="belongs to another realm"):
                other.add(rex)
            with pytest.raises(cove.InvalidArgumentError, match="embedded class"):
                other.add(Address(city="Oslo"))


def test_add_many(realm: cove.Realm) -> None:
    dogs = [Dog(name=str(i)) for i in range(3)]
    with realm.write():
        added = realm.add(dogs)
        assert added == dogs and all(d.is_managed for d in dogs)
        assert realm.add(realm.objects(Dog)) == dogs        # the realm's own: left as they are
        with pytest.raises(cove.InvalidArgumentError, match="takes cove.Objects, got int"):
            realm.add([Dog(name="x"), 3])
        with pytest.raises(cove.InvalidArgumentError, match="realm.create"):
            realm.add({"name": "x"})                        # type: ignore[call-overload]
    assert len(realm.objects(Dog)) == 3
