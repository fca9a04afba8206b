"""Fixtures the test modules share: a realm file's path, a realm of the module's schema, a
second handle of the same file with a way to commit through it, and callbacks that record the
changes they receive.

``realm`` and ``other`` open the test module's ``SCHEMA`` (a dict or a list of declared classes).
A module whose tests want another realm defines a ``realm`` fixture of its own, which takes the
place of this one for its tests (and for ``other`` and ``commit``): one that opens ``path``
itself, or one that takes this ``realm`` and adds data to it."""
from __future__ import annotations

import pathlib
from typing import Any, Callable, Iterator, List

import pytest

import cove


@pytest.fixture
def path(tmp_path: pathlib.Path) -> pathlib.Path:
    """The test's realm file (made by the first open)."""
    return tmp_path / "test.cove"


@pytest.fixture
def realm(request: pytest.FixtureRequest, path: pathlib.Path) -> Iterator[cove.Realm]:
    """A realm of the module's SCHEMA at schema version 1, at `path`."""
    with cove.open(path, schema=request.module.SCHEMA, schema_version=1, durability="no_sync") as opened:
        yield opened


@pytest.fixture
def other(request: pytest.FixtureRequest, path: pathlib.Path, realm: cove.Realm) -> Iterator[cove.Realm]:
    """A second handle of `realm`'s file, with the same schema: its commits reach `realm` as
    another process's would."""
    version = cove.schema_version(path)
    with cove.open(path, schema=request.module.SCHEMA, schema_version=version, durability="no_sync") as opened:
        yield opened


Change = Callable[[cove.Realm], Any]


@pytest.fixture
def commit(other: cove.Realm) -> Callable[[Change], None]:
    """``commit(change)``: brings `other` to the newest version, then runs ``change(other)`` in a
    write of it."""
    def run(change: Change) -> None:
        other.refresh()
        with other.write():
            change(other)

    return run


class Recorder:
    """A callback that keeps every change it receives."""

    def __init__(self) -> None:
        self.changes: List[Any] = []

    def __call__(self, change: Any) -> None:
        self.changes.append(change)

    @property
    def last(self) -> Any:
        return self.changes[-1]

    def values(self) -> List[Any]:
        """The last object change's properties as (name, old value, new value)."""
        return [(p.name, p.old_value, p.new_value) for p in self.last.properties]


@pytest.fixture
def recorder() -> Callable[[], Recorder]:
    """``recorder()``: a new Recorder, a callback that keeps every change it receives."""
    return Recorder
