"""Required values of declared classes: a new object that is not given a value for a property
that is neither optional, nor a collection, link or backlinks, nor given a default is refused
with InvalidArgumentError naming the property, by create, create_many and add; dict schemas
keep the zero values. And declared defaults reaching the objects a file already has when an
open adds their property."""
from __future__ import annotations

import pathlib
from typing import Any, List, Optional

import pytest

import cove


class Owner(cove.Object):
    name: str = cove.Property(primary_key=True)
    pets: cove.List["Pet"]


class Pet(cove.Object):
    name: str
    age: int
    kind: str = "dog"
    nickname: Optional[str]
    owner: Optional[Owner]
    tags: cove.Set[str]
    owners = cove.LinkingObjects("Owner", "pets")


class Keyed(cove.Object):
    id: int = cove.Property(primary_key=True)
    label: str


@pytest.fixture
def realm() -> Any:
    with cove.open(None, schema=[Owner, Pet, Keyed]) as r:
        yield r


def test_create_names_the_missing_value(realm: cove.Realm) -> None:
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match=r"^missing value for property 'Pet.age'$"):
            realm.create(Pet, {"name": "Rex"})
        with pytest.raises(ValueError, match=r"missing values for properties 'Pet.name' and 'Pet.age'"):
            realm.create(Pet, {})
        # optional, defaulted, collection, link and backlinks properties are not required
        rex = realm.create(Pet, {"name": "Rex", "age": 3})
        assert rex.kind == "dog" and rex.nickname is None and rex.owner is None and len(rex.tags) == 0
        # the C path (a plan made by the creates above) refuses the same
        for _ in range(3):
            with pytest.raises(cove.InvalidArgumentError, match="'Pet.age'"):
                realm.create(Pet, {"name": "Max"})
        assert len(realm.objects(Pet)) == 1
        # by name too: the class is declared in this realm; and a dict for a link
        with pytest.raises(cove.InvalidArgumentError, match="'Pet.age'"):
            realm.create("Pet", {"name": "Max"})
        with pytest.raises(cove.InvalidArgumentError, match="'Pet.name'"):
            realm.create(Owner, {"name": "Ann", "pets": [{"age": 1}]})


def test_the_primary_key_keeps_its_own_rule(realm: cove.Realm) -> None:
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match="primary key 'id': give its value"):
            realm.create(Keyed, {"label": "x"})


def test_update_checks_new_objects_only(realm: cove.Realm) -> None:
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError, match=r"missing value for property 'Keyed.label'"):
            realm.create(Keyed, {"id": 1}, update=True)
        assert realm.find(Keyed, 1) is None
        realm.create(Keyed, {"id": 1, "label": "one"})
        realm.create(Keyed, {"id": 1}, update=True)          # an update gives what changes
        assert realm.find(Keyed, 1).label == "one"


def test_outside_a_write_the_transaction_error_comes_first(realm: cove.Realm) -> None:
    with pytest.raises(cove.TransactionError):
        realm.create(Pet, {"name": "Rex"})


def test_create_many_names_the_object(realm: cove.Realm) -> None:
    rows = [{"name": "a", "age": 1}, {"name": "b", "age": 2}, {"name": "c"}, {"name": "d", "age": 4}]
    with realm.write():
        with pytest.raises(cove.InvalidArgumentError,
                           match=r"^create_many: object 2 of the input: missing value for property 'Pet.age'$"):
            realm.create_many(Pet, rows)
        assert sorted(p.name for p in realm.objects(Pet)) == ["a", "b"]      # the ones before it
        realm.cancel_write()
    with realm.write():
        # rows with the same keys go through C after the first: the first is checked
        with pytest.raises(cove.InvalidArgumentError, match="object 0 of the input"):
            realm.create_many(Pet, [{"name": "x"}] * 5)
        assert len(realm.objects(Pet)) == 0
        assert realm.create_many(Pet, [{"name": str(i), "age": i} for i in range(2000)]) == 2000
        # with update=True, a row that updates an existing object need not be whole
        realm.create_many(Keyed, [{"id": 1, "label": "one"}, {"id": 2, "label": "two"}])
        assert realm.create_many(Keyed, [{"id": 1}, {"id": 2, "label": "deux"}], update=True) == 2
        assert realm.find(Keyed, 2).label == "deux" and realm.find(Keyed, 1).label == "one"
        with pytest.raises(cove.InvalidArgumentError, match="object 1 of the input: missing value for property 'Keyed.label'"):
            realm.create_many(Keyed, [{"id": 1}, {"id": 3}], update=True)


def test_dict_schemas_keep_the_zero_values() -> None:
    schema = {"Pet": {"properties": {"name": "string", "age": "int"}}}
    with cove.open(None, schema=schema) as realm:
        with realm.write():
            pet = realm.create("Pet", {})
            assert pet.name == "" and pet.age == 0
            assert realm.create_many("Pet", [{"name": "a"}, {}]) == 2


def test_a_declared_class_on_a_dict_schema_requires_only_what_the_file_has() -> None:
    schema = {"Pet": {"properties": {"name": "string", "kind": "string"}}}
    with cove.open(None, schema=schema) as realm:
        with realm.write():
            pet = realm.create(Pet, {"name": "Rex"})         # no 'age' in this file
            assert pet.kind == "dog"
            with pytest.raises(cove.InvalidArgumentError, match="'Pet.name'"):
                realm.create(Pet, {})


# -- declared defaults when an open adds their property ----------------------------------------

def _make_v1(path: pathlib.Path) -> None:
    class Dog(cove.Object, class_name="Dog"):
        name: str

    with cove.open(path, schema=[Dog], schema_version=1) as realm:
        with realm.write():
            realm.add([Dog(name="Rex"), Dog(name="Max")])


class DogV2(cove.Object, class_name="Dog"):
    name: str
    nickname: str = "none"
    weight: float = cove.Property(default=1.5)
    tags: cove.List[str] = cove.Property(default=["new"])
    legs: int                       # no default: the zero of its type


def _names(realm: cove.Realm, prop: str) -> List[Any]:
    return [getattr(d, prop) for d in realm.objects(DogV2).sorted("name")]


def test_an_added_property_gives_existing_objects_its_default(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    _make_v1(path)
    with cove.open(path, schema=[DogV2], schema_version=2) as realm:
        assert _names(realm, "nickname") == ["none", "none"]
        assert _names(realm, "weight") == [1.5, 1.5]
        assert [list(t) for t in _names(realm, "tags")] == [["new"], ["new"]]
        assert _names(realm, "legs") == [0, 0]
    assert cove.schema_version(path) == 2


def test_the_migration_function_sees_the_defaults_and_may_change_them(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    _make_v1(path)
    seen: List[str] = []

    def migrate(m: cove.Migration) -> None:
        for _, new in m.enumerate(DogV2):
            assert new is not None
            seen.append(new.nickname)
            if new.name == "Rex":
                new.nickname = "rexy"

    with cove.open(path, schema=[DogV2], schema_version=2, migration=migrate) as realm:
        assert seen == ["none", "none"]
        assert _names(realm, "nickname") == ["none", "rexy"]


def test_a_failing_migration_leaves_the_file_without_the_defaults(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    _make_v1(path)

    def migrate(m: cove.Migration) -> None:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        cove.open(path, schema=[DogV2], schema_version=2, migration=migrate)
    assert cove.schema_version(path) == 1
    with cove.open(path) as realm:
        assert "nickname" not in realm.schema["Dog"]["properties"]
        assert len(realm.objects("Dog")) == 2


def test_a_change_that_needs_a_migration_still_needs_one(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    _make_v1(path)

    class Retyped(cove.Object, class_name="Dog"):
        name: int
        nickname: str = "none"

    with pytest.raises(cove.MigrationRequiredError, match="'Dog.name' changed from string to int"):
        cove.open(path, schema=[Retyped], schema_version=2)
    assert cove.schema_version(path) == 1


def test_defaults_do_not_touch_objects_at_the_same_version_or_new_files(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "d.cove"
    with cove.open(path, schema=[DogV2], schema_version=2) as realm:
        with realm.write():
            realm.create(DogV2, {"name": "Rex", "nickname": "r", "legs": 4})
    with cove.open(path, schema=[DogV2], schema_version=2) as realm:
        assert _names(realm, "nickname") == ["r"]
    with cove.open(path, schema=[DogV2], schema_version=3) as realm:   # nothing added
        assert _names(realm, "nickname") == ["r"]
