"""Threads and a live realm: while one thread writes, another thread's use of the realm raises
WrongThreadError and changes nothing; an idle realm moves to the thread that uses it (as a
thread pool hands work around); frozen copies are read from any thread."""
from __future__ import annotations

import pathlib
import threading
from typing import Any, Callable, List

import pytest

import cove

SCHEMA = {"Dog": {"properties": {"name": "string", "age": "int"}}}


def on_another_thread(body: Callable[[], Any]) -> List[Any]:
    """`body`'s result (or exception) on a thread of its own."""
    out: List[Any] = []

    def run() -> None:
        try:
            out.append(body())
        except BaseException as exc:   # reported to the caller
            out.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out


def test_a_writing_realm_refuses_other_threads(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "t.cove", schema=SCHEMA, schema_version=1) as realm:
        with realm.write():
            rex = realm.create("Dog", {"name": "Rex", "age": 3})
        frozen = realm.objects("Dog").freeze()
        with realm.write():
            rex.age = 4
            got = on_another_thread(lambda: len(realm.objects("Dog")))
            assert isinstance(got[0], cove.WrongThreadError)
            assert "write transaction on another thread" in str(got[0])

            def write_there() -> None:
                rex.age = 9

            assert isinstance(on_another_thread(write_there)[0], cove.WrongThreadError)
            assert on_another_thread(lambda: [d.name for d in frozen]) == [["Rex"]]
        assert rex.age == 4


def test_an_idle_realm_moves_between_threads(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "t.cove", schema=SCHEMA, schema_version=1) as realm:
        def add() -> int:
            with realm.write():
                realm.create("Dog", {"name": "Max", "age": 1})
            return len(realm.objects("Dog"))

        assert on_another_thread(add) == [1]
        assert on_another_thread(add) == [2]
        assert len(realm.objects("Dog")) == 2
        # Raised from a write on another thread, the error cancels that write like any other.
        with pytest.raises(cove.WrongThreadError):
            with realm.write():
                realm.create("Dog", {"name": "Kept out", "age": 5})
                raise on_another_thread(lambda: realm.objects("Dog")[0].name)[0]
        assert len(realm.objects("Dog")) == 2
        assert issubclass(cove.WrongThreadError, cove.Error) and cove.Status.WRONG_THREAD == 24
