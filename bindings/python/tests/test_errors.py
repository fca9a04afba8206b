"""The exceptions a Python program catches: each of Cove's is also the built-in exception for
its kind of failure (AttributeError, LookupError, ValueError, OSError), the storage errors
have classes of their own, query errors share a base class, statuses have names, and messages
say what went wrong without naming a C function."""
from __future__ import annotations

import errno
import pathlib
import threading

import pytest

import cove

SCHEMA = {"Person": {"primaryKey": "name",
                     "properties": {"name": "string", "age": "int", "scores": "int{}"}}}


@pytest.fixture()
def realm(tmp_path: pathlib.Path):
    with cove.open(tmp_path / "e.cove", schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create("Person", {"name": "Ann", "age": 30})
        yield realm


def test_an_unknown_attribute_is_an_attribute_error(realm: cove.Realm) -> None:
    ann = realm.find("Person", "Ann")
    assert not hasattr(ann, "nickname")
    assert getattr(ann, "nickname", None) is None
    assert hasattr(ann, "age")
    with pytest.raises(AttributeError) as caught:
        ann.nickname
    assert isinstance(caught.value, cove.NotFoundError) and isinstance(caught.value, LookupError)
    assert "nickname" in str(caught.value) and "cove_" not in str(caught.value)
    # A missing map key stays a KeyError.
    with pytest.raises(KeyError):
        ann.scores["nope"]


def test_a_bad_argument_is_a_value_error(realm: cove.Realm) -> None:
    assert issubclass(cove.InvalidArgumentError, ValueError)
    with pytest.raises(ValueError) as caught:
        realm.objects("Person").observe(lambda change: None, key_paths=["nope"])
    assert isinstance(caught.value, cove.InvalidArgumentError)
    assert caught.value.status is cove.Status.INVALID_ARGUMENT
    assert "'nope'" in str(caught.value) and "cove_" not in str(caught.value)


def test_query_errors_share_a_base_class(realm: cove.Realm) -> None:
    with pytest.raises(cove.QueryError) as syntax:
        realm.objects("Person").filter("age >")
    assert isinstance(syntax.value, cove.QuerySyntaxError) and syntax.value.status is cove.Status.QUERY_SYNTAX
    with pytest.raises(cove.QueryError) as meaning:
        realm.objects("Person").filter("nickname == 'x'")
    assert isinstance(meaning.value, cove.InvalidQueryError)
    assert isinstance(meaning.value, cove.InvalidArgumentError) and isinstance(meaning.value, ValueError)
    assert "nickname" in meaning.value.message
    with pytest.raises(cove.InvalidQueryError):
        realm.objects("Person").filter("age == 'thirty'")
    with pytest.raises(cove.InvalidQueryError):
        realm.objects("Person").sorted("nickname")
    for e in (syntax.value, meaning.value):
        assert not str(e).startswith("cove_")


def test_a_file_that_cannot_be_opened_is_an_os_error(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "no such folder" / "x.cove"
    with pytest.raises(OSError) as caught:
        cove.open(missing, schema=SCHEMA)
    e = caught.value
    assert isinstance(e, cove.StorageIOError) and isinstance(e, cove.StorageError)
    assert e.errno == errno.ENOENT and e.strerror is not None
    assert e.filename == str(missing)
    assert e.status is cove.Status.IO


def test_storage_errors_can_be_caught_apart(tmp_path: pathlib.Path) -> None:
    # Not a Cove file.
    junk = tmp_path / "junk.cove"
    junk.write_bytes(b"not a database" * 1000)
    with pytest.raises(cove.CorruptError) as corrupt:
        cove.open(junk)
    assert corrupt.value.status is cove.Status.CORRUPT and isinstance(corrupt.value, cove.StorageError)
    # Written by a newer Cove.
    newer = tmp_path / "newer.cove"
    cove.open(newer).close()
    data = bytearray(newer.read_bytes())
    for page in (0, 8):
        data[page * 4096 + 8:page * 4096 + 12] = (99).to_bytes(4, "little")
    newer.write_bytes(bytes(data))
    with pytest.raises(cove.FormatError) as fmt:
        cove.open(newer)
    assert fmt.value.status is cove.Status.FORMAT
    # The write lock held by another thread's realm past the timeout.
    path = tmp_path / "locked.cove"
    holder = cove.open(path, schema=SCHEMA, durability="no_sync")
    holder.begin_write()
    failure: list = []

    def try_write() -> None:
        with cove.open(path, durability="no_sync", write_timeout=0.05) as other:
            try:
                other.begin_write()
            except cove.Error as e:
                failure.append(e)

    t = threading.Thread(target=try_write)
    t.start()
    t.join(30)
    holder.cancel_write()
    holder.close()
    assert failure and isinstance(failure[0], cove.LockedError) and failure[0].status is cove.Status.LOCKED


def test_statuses_have_names() -> None:
    assert cove.Status(16) is cove.Status.IO and cove.Status.OK == 0
    assert cove.InvalidArgumentError(1, "x").status is cove.Status.INVALID_ARGUMENT
    assert str(cove.ClosedError(11, "the realm is closed")) == "the realm is closed"


def test_the_status_names_are_the_headers() -> None:
    from cove._lib import ffi, lib

    for status in cove.Status:
        expected = "COVE_OK" if status is cove.Status.OK else f"COVE_ERR_{status.name}"
        assert ffi.string(lib.cove_status_name(status)).decode() == expected
    # A status given by name is kept as its number, as the library's own are.
    error = cove.WrongTypeError(cove.Status.WRONG_TYPE, "x")
    assert type(error.code) is int and error.code == 2 and error.status is cove.Status.WRONG_TYPE


def test_realm_habits_delete_first_last_count(tmp_path: pathlib.Path) -> None:
    """Realm's habits: delete(results), delete(a list or any iterable), delete_all(),
    results.first and .last, results.count()."""
    schema = {"Dog": {"properties": {"name": "string", "age": "int"}},
              "Person": {"properties": {"name": "string", "dogs": "Dog[]"}}}
    with cove.open(tmp_path / "h.cove", schema=schema, durability="no_sync") as realm:
        with realm.write():
            for i in range(6):
                realm.create("Dog", {"name": f"d{i}", "age": i})
            ann = realm.create("Person", {"name": "Ann"})
            ann.dogs.extend(realm.objects("Dog").filter("age >= 4"))
        dogs = realm.objects("Dog").sorted("age")
        assert dogs.first.name == "d0" and dogs.last.name == "d5"
        assert dogs.count() == len(dogs) == 6
        assert dogs.filter("age > 99").first is None and dogs.filter("age > 99").last is None
        with realm.write():
            realm.delete(dogs.filter("age < 2"))                 # results
        assert [d.name for d in dogs] == ["d2", "d3", "d4", "d5"]
        with realm.write():
            realm.delete(ann.dogs)                               # a live list: taken first
        assert [d.name for d in dogs] == ["d2", "d3"] and len(ann.dogs) == 0
        with realm.write():
            realm.delete([dogs[0], dogs[0]])                     # the same object twice
        assert [d.name for d in dogs] == ["d3"]
        with pytest.raises(cove.InvalidArgumentError):
            with realm.write():
                realm.delete([ann, "not an object"])
        assert ann.is_valid, "nothing was deleted when one item was not an object"
        with realm.write():
            realm.delete_all()
        assert len(realm.objects("Dog")) == 0 and len(realm.objects("Person")) == 0
        assert "Dog" in realm.schema


def test_schema_version_without_opening(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "v.cove"
    with pytest.raises(cove.NotFoundError):
        cove.schema_version(path)
    assert not path.exists()
    cove.open(path, schema=SCHEMA, schema_version=4).close()
    before = path.read_bytes()
    assert cove.schema_version(path) == 4 and cove.schema_version(str(path)) == 4
    assert path.read_bytes() == before


def test_a_second_realm_on_the_writing_thread_fails_at_once(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "w.cove"
    with cove.open(path, schema=SCHEMA, durability="no_sync") as first, \
            cove.open(path, durability="no_sync") as second:
        with first.write():
            with pytest.raises(cove.LockedError, match="this thread already holds the write lock"):
                second.begin_write()
        with second.write():
            second.create("Person", {"name": "Bob", "age": 1})


def test_ctrl_c_interrupts_wait_for_change(tmp_path: pathlib.Path) -> None:
    import os
    import signal
    import time

    # Python's own Ctrl-C handler, whatever the test runner inherited (a background job starts
    # with SIGINT ignored).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with cove.open(tmp_path / "c.cove", schema=SCHEMA, durability="no_sync") as realm:
            timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
            timer.start()
            start = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                realm.wait_for_change(30)      # long, but for Ctrl-C
            assert time.monotonic() - start < 5
            timer.join()
            assert realm.wait_for_change(0.01) is False
    finally:
        signal.signal(signal.SIGINT, previous)
