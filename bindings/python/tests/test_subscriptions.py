"""Flexible-sync subscriptions from Python, on files whose session starts paused against an
unreachable server: the rules for names and queries, ``unsubscribe()``, ``with
realm.subscriptions.update() as subs:`` (committed, and nothing committed when the block raises),
the set read back with its state, queries and realms refused, a wait that times out keeping its
subscription, and ``await results.subscribe()`` on asyncio. With a server (COVE_SYNC_TEST_URL,
COVE_SYNC_TEST_TOKEN; the test command starts one): a subscription downloads what another file
uploaded, and a query the server cannot answer leaves the set in error."""
from __future__ import annotations

import asyncio
import datetime
import os
import pathlib
import threading
import time
import uuid
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import cove

# `nickname` is not in the test server's schema: a query on it is refused there, not here.
SCHEMA: Dict[str, Any] = {
    "SubDog": {"primaryKey": "name",
               "properties": {"name": "string", "age": "int", "color": "string?", "toys": "string[]",
                              "nickname": "string?", "owner": "SubPerson?"}},
    "SubPerson": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "dog": "SubDog?"}},
    "RuledNote": {"primaryKey": "id", "properties": {"id": "int", "owner": "string", "text": "string"}},
}


def _open(path: pathlib.Path, url: Optional[str] = None, token: str = "t") -> cove.Realm:
    sync = cove.SyncConfig(url or "http://127.0.0.1:9", token, request_timeout=10, long_poll=2,
                           starts_connected=url is not None)
    return cove.open(path, schema=SCHEMA, schema_version=1, durability="no_sync", sync=sync)


@pytest.fixture
def realm(tmp_path: pathlib.Path) -> Iterator[cove.Realm]:
    with _open(tmp_path / "subs.cove") as opened:
        yield opened


def _entries(realm: cove.Realm) -> List[Tuple[Optional[str], str, str]]:
    return [(s.name, s.class_name, s.query) for s in realm.subscriptions]


def test_names_and_queries(realm: cove.Realm, tmp_path: pathlib.Path) -> None:
    subs = realm.subscriptions
    assert (subs.version, len(subs), subs.state, subs.error) == (0, 0, "complete", None)
    adults = realm.objects("SubDog").filter("age > 1")
    assert adults.subscribe_sync(wait_for_sync="never") is adults
    adults.subscribe_sync(wait_for_sync="never")
    assert _entries(realm) == [(None, "SubDog", "age > 1")], "an unnamed query subscribed twice is one"
    assert (subs.version, subs.state) == (1, "pending")
    # Named with an unnamed one's query: added.
    named = realm.objects("SubDog").filter("age > 1")
    named.subscribe_sync("adults", wait_for_sync="never")
    named.subscribe_sync("overOne", wait_for_sync="never")
    assert _entries(realm)[1:] == [("adults", "SubDog", "age > 1"), ("overOne", "SubDog", "age > 1")]
    named.unsubscribe()   # the last one it made
    assert [s.name for s in realm.subscriptions] == [None, "adults"]
    named.unsubscribe()
    assert len(realm.subscriptions) == 2
    # Same name, same query: nothing; a new query: updated in place.
    version = subs.version
    named.subscribe_sync("adults", wait_for_sync="on_creation", timeout=0)
    assert subs.version == version
    first = subs.find("adults")
    assert first is not None and isinstance(first.created_at, datetime.datetime)
    assert first.created_at.tzinfo is not None
    assert abs((datetime.datetime.now(datetime.timezone.utc) - first.created_at).total_seconds()) < 60
    time.sleep(0.02)
    realm.objects("SubDog").filter("age > $0", 5).subscribe_sync("adults", wait_for_sync="never")
    assert subs.version == version + 1
    after = subs[1]
    assert (after.name, after.query) == ("adults", "age > $0")
    assert after.created_at == first.created_at and after.updated_at > first.created_at
    assert subs[-1] == after
    # Sorts are left out, filters joined.
    sorted_red = adults.sorted("name").filter("color == $0", "red")
    sorted_red.subscribe_sync(wait_for_sync="never")
    assert _entries(realm)[2] == (None, "SubDog", "(age > 1) AND (color == $0)")
    sorted_red.unsubscribe()
    adults.unsubscribe()
    named.unsubscribe()
    assert _entries(realm) == [("adults", "SubDog", "age > $0")], "'adults' has another query now: it stays"
    with pytest.raises(cove.OutOfRangeError):
        subs[1]
    with pytest.raises(IndexError):
        subs[-2]
    realm.objects("SubPerson").unsubscribe()   # made none: nothing to remove
    assert len(subs) == 1
    # Persisted: another realm of the file reads the same set.
    with _open(tmp_path / "subs.cove") as again:
        assert _entries(again) == _entries(realm)
    assert f"version {subs.version}, pending, 1 subscriptions" in repr(subs)


def test_updates(realm: cove.Realm) -> None:
    subs = realm.subscriptions
    with subs.update() as u:
        u.append("SubDog", "age > $0", 2, name="a")
        u.append("SubPerson")
        u.append("SubDog", "age > 9")
        u.append("SubDog", "age > 9")
        assert len(realm.subscriptions) == 3 and subs.version == 0, "reads show the update; nothing committed"
        with pytest.raises(cove.InvalidArgumentError, match="already in progress"):
            with subs.update():
                pass
    assert subs.version == 1
    assert _entries(realm) == [("a", "SubDog", "age > $0"), (None, "SubPerson", "TRUEPREDICATE"),
                               (None, "SubDog", "age > 9")]
    # A block that raises commits nothing.
    with pytest.raises(KeyError):
        with subs.update() as u:
            u.remove_all()
            assert len(subs) == 0
            raise KeyError("stop")
    assert len(subs) == 3 and subs.version == 1
    # Nothing changed: no version.
    with subs.update() as u:
        u.append("SubPerson")
    assert subs.version == 1
    with subs.update() as u:
        with pytest.raises(cove.NotFoundError, match="no subscription is named 'zz'"):
            u.remove("zz")
        u.append("SubDog", "age < $0", 3, name="b")
        u.remove_all("SubDog", unnamed_only=True)
        assert [s.name for s in subs] == ["a", None, "b"]
        u.remove("a")
    assert subs.version == 2 and [s.name for s in subs] == [None, "b"]
    with subs.update() as u:
        u.remove_all("SubDog")
        assert _entries(realm) == [(None, "SubPerson", "TRUEPREDICATE")]
        u.remove_all(unnamed_only=True)
    assert subs.version == 3 and len(subs) == 0
    # Arguments as filter takes them; a list argument becomes a list literal.
    with subs.update() as u:
        u.append("SubDog", "color IN $0", ["red", "blue"], name="colors")
    assert subs[0].query.startswith("color IN {")
    # Refused: an unknown class, a bad name or argument.
    with subs.update() as u:
        with pytest.raises(cove.InvalidArgumentError, match="no such class"):
            u.append("Cat")
        with pytest.raises(cove.InvalidArgumentError, match="a class is named by a string"):
            u.append(3)
        with pytest.raises(cove.InvalidArgumentError, match="name is empty"):
            u.append("SubDog", name="")
        with pytest.raises(cove.WrongTypeError):
            u.append("SubDog", "age > $0", object())


@pytest.mark.parametrize("query, message", [("age > 1 SORT(name ASC)", "SORT"), ("owner.name == 'x'", "key path"),
                                            ("toys.@count > 1", "not allowed")])
def test_queries_subscriptions_do_not_take(realm: cove.Realm, query: str, message: str) -> None:
    with pytest.raises((cove.InvalidArgumentError, cove.QuerySyntaxError), match=message.replace(".", r"\.")):
        realm.objects("SubDog").filter(query).subscribe_sync(wait_for_sync="never")
    with realm.subscriptions.update() as u:
        with pytest.raises((cove.InvalidArgumentError, cove.QuerySyntaxError), match=message.replace(".", r"\.")):
            u.append("SubDog", query)
    assert realm.subscriptions.version == 0


def test_arguments_realms_and_writes_refused(realm: cove.Realm) -> None:
    dogs = realm.objects("SubDog")
    with pytest.raises(cove.InvalidArgumentError, match="wait_for_sync"):
        dogs.subscribe_sync(wait_for_sync="sometimes")   # type: ignore[arg-type]
    with pytest.raises(cove.InvalidArgumentError, match="timeout"):
        dogs.subscribe_sync(timeout=-1)
    with pytest.raises(cove.WrongTypeError):
        dogs.subscribe_sync(timeout="soon")   # type: ignore[arg-type]
    with pytest.raises(cove.WrongTypeError):
        dogs.subscribe_sync(name=3)   # type: ignore[arg-type]
    with realm.write():
        rex = realm.create("SubDog", {"name": "rex", "age": 3})
    with pytest.raises(cove.InvalidArgumentError, match="only results of a class's objects"):
        rex.toys.as_results().subscribe_sync(wait_for_sync="never")
    with realm.write():
        with pytest.raises(cove.TransactionError, match="inside a write"):
            dogs.subscribe_sync(wait_for_sync="never")
        with pytest.raises(cove.TransactionError, match="inside a write"):
            with realm.subscriptions.update():
                pass
        with pytest.raises(cove.TransactionError):
            realm.subscriptions.version
    # The update's commit refused by a write begun since: nothing committed, the update over.
    with pytest.raises(cove.TransactionError):
        with realm.subscriptions.update() as u:
            u.append("SubDog")
            realm.begin_write()
    realm.cancel_write()
    assert realm.subscriptions.version == 0
    frozen = realm.freeze()
    with pytest.raises(cove.FrozenError):
        frozen.subscriptions.version
    frozen.close()
    with cove.open(None, schema=SCHEMA) as plain:
        with pytest.raises(cove.InvalidArgumentError, match="synced realm"):
            plain.objects("SubDog").subscribe_sync()
        with pytest.raises(cove.InvalidArgumentError, match="synced realm"):
            len(plain.subscriptions)
        plain.objects("SubDog").unsubscribe()   # nothing to remove
    realm.close()
    with pytest.raises(cove.ClosedError):
        realm.subscriptions


def test_a_wait_that_times_out_keeps_the_subscription(realm: cove.Realm) -> None:
    sevens = realm.objects("SubDog").filter("age == 7")
    with pytest.raises(cove.SyncError, match=r"within 0\.2 s"):
        sevens.subscribe_sync("sevens", wait_for_sync="always", timeout=0.2)
    assert _entries(realm) == [("sevens", "SubDog", "age == 7")]
    sevens.subscribe_sync("sevens", timeout=0.1)   # on_creation: it exists, no wait
    with pytest.raises(cove.SyncError):
        realm.subscriptions.wait(timeout=0.1)
    with pytest.raises(cove.SyncError):
        realm.subscriptions.wait(1, timeout=0)
    with pytest.raises(cove.InvalidArgumentError, match="version 2"):
        realm.subscriptions.wait(2, timeout=0)
    with pytest.raises(cove.InvalidArgumentError):
        realm.subscriptions.wait(timeout=math_nan())


def math_nan() -> float:
    return float("nan")


def test_a_wait_leaves_the_realm_to_its_thread(realm: cove.Realm) -> None:
    """While another thread waits, this one keeps using the realm."""
    errors: List[BaseException] = []

    def wait() -> None:
        try:
            realm.subscriptions.wait(1, timeout=1.0)
        except cove.SyncError:
            pass
        except BaseException as exc:   # pragma: no cover
            errors.append(exc)

    realm.objects("SubDog").subscribe_sync(wait_for_sync="never")
    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.2)
    with realm.write():
        realm.create("SubDog", {"name": "meanwhile", "age": 1})
    assert len(realm.objects("SubDog")) == 1
    waiter.join()
    assert not errors


def test_awaited_subscribe(realm: cove.Realm) -> None:
    async def main() -> List[Any]:
        threes = realm.objects("SubDog").filter("age == 3")
        got: List[Any] = []
        assert await threes.subscribe(wait_for_sync="never") is threes
        got.append(len(realm.subscriptions))
        started = time.monotonic()
        try:
            await threes.subscribe("threes", timeout=0.2)
        except cove.SyncError as exc:
            got.append(("timed out", "within 0.2 s" in str(exc), time.monotonic() - started < 5))
        # The loop runs while the wait does.
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        with pytest.raises(cove.SyncError):
            await threes.subscribe("threes", wait_for_sync="always", timeout=0.3)
        ticker.cancel()
        got.append(ticks > 5)
        with pytest.raises(cove.InvalidArgumentError):
            await realm.objects("SubDog").filter("age > 1 SORT(name ASC)").subscribe()
        with pytest.raises(cove.InvalidArgumentError):
            await threes.subscribe(wait_for_sync="later")   # type: ignore[arg-type]
        # Closed during the wait.
        fours = realm.objects("SubDog").filter("age == 4")
        task = asyncio.ensure_future(fours.subscribe(wait_for_sync="always"))
        await asyncio.sleep(0.1)
        realm.close()
        with pytest.raises(cove.ClosedError):
            await task
        return got

    got = asyncio.run(asyncio.wait_for(main(), timeout=30))
    assert got == [1, ("timed out", True, True), True]
    from cove import _subscriptions
    assert not _subscriptions._LIVE, "every callback's user data was freed"


# -- with the test command's server -------------------------------------------------------------------

@pytest.fixture
def server() -> Iterator[Tuple[str, str]]:
    url, token = os.environ.get("COVE_SYNC_TEST_URL"), os.environ.get("COVE_SYNC_TEST_TOKEN")
    if not url or not token:
        pytest.fail("no sync server given (COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN): the test command starts one; "
                    "by hand, eval \"$(.ci/sync-server.sh start /tmp/cove-sync)\" first")
    yield url, token


def test_with_the_server(tmp_path: pathlib.Path, server: Tuple[str, str]) -> None:
    url, token = server
    name = f"py-sub-{uuid.uuid4()}"
    with _open(tmp_path / "a.cove", url, token) as writer:
        with writer.write():
            writer.create("SubDog", {"name": name, "age": 41})
        session = writer.sync
        assert session is not None
        session.wait_for_upload(15)
    with _open(tmp_path / "b.cove", url, token) as reader:
        mine = reader.objects("SubDog").filter("name == $0", name)
        mine.subscribe_sync("mine", wait_for_sync="always", timeout=20)
        assert len(mine) == 1
        assert reader.subscriptions.state == "complete"

        async def refused() -> None:
            await reader.objects("SubDog").filter("nickname == 'x'").subscribe(timeout=20)

        with pytest.raises(cove.SyncError, match="refused"):
            asyncio.run(refused())
        assert reader.subscriptions.state == "error" and reader.subscriptions.error


def test_writes_the_server_refuses_are_undone_and_reported(tmp_path: pathlib.Path, server: Tuple[str, str]) -> None:
    url, token = server
    note = int.from_bytes(os.urandom(7), "big")
    with _open(tmp_path / "n.cove", url, token) as realm:
        # Classes with read rules reach a file through its subscriptions.
        realm.objects("RuledNote").subscribe_sync(timeout=20)
        with realm.write():
            realm.create("RuledNote", {"id": note, "owner": "bob", "text": "not mine"})
        session = realm.sync
        assert session is not None
        session.wait_for_upload(20)
        session.wait_for_download(20)
        realm.refresh()
        assert realm.find("RuledNote", note) is None, "the server's delete undid it"
        assert session.compensating_writes == [
            cove.CompensatingWrite("RuledNote", note, session.compensating_writes[0].reason)]
        assert "write rule" in session.compensating_writes[0].reason
        assert session.compensating_write_count == 1
