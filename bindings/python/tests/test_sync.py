"""Sync from Python: ``cove.SyncConfig`` refuses settings out of range and arguments of the wrong
type; ``cove.open(..., sync=...)`` refuses a URL, a token or a schema that cannot sync;
``realm.sync`` is None for a realm that does not sync; a paused session, waits that time out
(without holding the GIL), waits refused inside a write; an unreachable server keeps writes
queued. With a server (COVE_SYNC_TEST_URL and COVE_SYNC_TEST_TOKEN, COVE_SYNC_TEST_TOKEN_OTHER for
a second user; the test command starts one): two files sync an object both ways, and a token the
server refuses stops the session with a SyncError."""
from __future__ import annotations

import math
import os
import pathlib
import random
import threading
import time
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

import cove

# The schema of the Swift client's tests: files of every test sync through one server.
SCHEMA: Dict[str, Any] = {
    "Dog": {"primaryKey": "name",
            "properties": {"name": "string", "age": "int", "weight": "double?", "owner": "Person?",
                           "tags": "string[]", "friends": "Dog[]", "toys": "string<>", "scores": "int{}"}},
    "Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}},
}
UNREACHABLE = "http://127.0.0.1:9"


def _config(url: str = UNREACHABLE, token: str = "t", connected: bool = False) -> cove.SyncConfig:
    return cove.SyncConfig(url, token, request_timeout=5, long_poll=2, starts_connected=connected)


def _open(path: pathlib.Path, sync: Optional[cove.SyncConfig], schema: Any = None) -> cove.Realm:
    return cove.open(path, schema=SCHEMA if schema is None else schema, schema_version=1, durability="no_sync",
                     sync=sync)


def _session(realm: cove.Realm) -> cove.SyncSession:
    session = realm.sync
    assert session is not None
    return session


def _state(session: cove.SyncSession) -> cove.SyncState:
    """The session's state now (a call, which a type checker does not narrow as it does
    ``session.state`` after a comparison)."""
    return session.state


def test_the_config_keeps_its_settings_and_hides_its_token() -> None:
    config = cove.SyncConfig("https://sync.example.com", "secret-token")
    assert (config.url, config.token, config.trusted_certificates, config.request_timeout, config.long_poll,
            config.changesets_per_transaction, config.starts_connected) == \
        ("https://sync.example.com", "secret-token", None, 30.0, 25, 1000, True)
    assert config.client_reset == "recover"
    assert cove.SyncConfig("https://sync.example.com", "t", client_reset="manual") != \
        cove.SyncConfig("https://sync.example.com", "t")
    other = cove.SyncConfig("https://sync.example.com", "secret-token", trusted_certificates=pathlib.Path("ca.pem"),
                            request_timeout=2, long_poll=0, changesets_per_transaction=1, starts_connected=False)
    assert other.trusted_certificates == "ca.pem" and other.request_timeout == 2.0 and other.long_poll == 0
    assert config == cove.SyncConfig("https://sync.example.com", "secret-token") and config != other
    assert hash(config) == hash(cove.SyncConfig("https://sync.example.com", "secret-token"))
    assert "secret-token" not in repr(config) and "https://sync.example.com" in repr(config)
    with pytest.raises(AttributeError, match="immutable"):
        config.url = "http://elsewhere"


@pytest.mark.parametrize("settings, match", [
    ({"request_timeout": 0}, "request timeout of 0.0 s: expected more than 0 and at most 3600"),
    ({"request_timeout": 3601}, "at most 3600"),
    ({"request_timeout": math.nan}, "nan s"),
    ({"long_poll": -1}, "long poll of -1 s: expected 0 to 60"),
    ({"long_poll": 61}, "expected 0 to 60"),
    ({"long_poll": 1 << 40}, "long_poll 1099511627776: expected 0 to 60 seconds"),
    ({"changesets_per_transaction": 0}, "0 changesets per transaction: expected 1 to 100000"),
    ({"changesets_per_transaction": 100_001}, "expected 1 to 100000"),
    ({"trusted_certificates": ""}, "pem_path is empty"),
    ({"client_reset": "later"}, "client_reset 'later': expected 'recover', 'discard' or 'manual'"),
])
def test_settings_out_of_range_are_refused(settings: Dict[str, Any], match: str) -> None:
    with pytest.raises(cove.InvalidArgumentError, match=match) as caught:
        cove.SyncConfig(UNREACHABLE, "t", **settings)
    assert isinstance(caught.value, ValueError) and not caught.value.message.startswith("cove_")


@pytest.mark.parametrize("args, settings, match", [
    ((None, "t"), {}, "url is a str, got NoneType"),
    ((UNREACHABLE, b"t"), {}, "token is a str, got bytes"),
    ((UNREACHABLE, "t"), {"request_timeout": "5"}, "request_timeout is a number of seconds, got str"),
    ((UNREACHABLE, "t"), {"long_poll": 2.5}, "long_poll is an int, got float"),
    ((UNREACHABLE, "t"), {"changesets_per_transaction": True}, "changesets_per_transaction is an int, got bool"),
    ((UNREACHABLE, "t"), {"starts_connected": 1}, "starts_connected is a bool, got int"),
])
def test_arguments_of_the_wrong_type_are_refused(args: Tuple[Any, Any], settings: Dict[str, Any], match: str) -> None:
    with pytest.raises(cove.WrongTypeError, match=match):
        cove.SyncConfig(*args, **settings)


@pytest.mark.parametrize("url, token, match", [
    ("ftp://example.com", "t", "sync URL 'ftp://example.com': expected http:// or https:// and a host"),
    ("http://", "t", "expected http:// or https:// and a host"),
    ("http://example.com", "", "the sync token is empty"),
    ("http://example.com", "a b", "the sync token has characters a bearer token cannot have"),
])
def test_open_refuses_a_url_or_token_that_cannot_sync(tmp_path: pathlib.Path, url: str, token: str, match: str) -> None:
    with pytest.raises(cove.InvalidArgumentError, match=match):
        _open(tmp_path / "bad.cove", cove.SyncConfig(url, token, starts_connected=False))


def test_open_refuses_a_schema_or_realm_that_cannot_sync(tmp_path: pathlib.Path) -> None:
    sync = _config()
    with pytest.raises(cove.SchemaError, match="has no primary key"):
        _open(tmp_path / "a.cove", sync, {"A": {"properties": {"x": "int"}}})
    with pytest.raises(cove.SchemaError, match="embedded"):
        _open(tmp_path / "b.cove", sync, {"A": {"primaryKey": "id", "properties": {"id": "int", "e": "E?"}},
                                          "E": {"embedded": True, "properties": {"x": "int"}}})
    with pytest.raises(cove.InvalidArgumentError, match="needs a file it can write"):
        cove.open(None, schema=SCHEMA, sync=sync)
    with pytest.raises(cove.WrongTypeError, match="sync is a cove.SyncConfig, got dict"):
        cove.open(tmp_path / "c.cove", schema=SCHEMA, sync={"url": UNREACHABLE})  # type: ignore[arg-type]


def test_a_realm_that_does_not_sync_has_no_session(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "plain.cove", schema=SCHEMA) as realm:
        assert realm.sync is None
    with pytest.raises(cove.ClosedError):
        realm.sync
    with _open(tmp_path / "synced.cove", _config()) as realm:
        session = _session(realm)
        frozen = realm.freeze()
        assert frozen.sync is None
        frozen.close()
    # A session kept past its realm's close answers ClosedError.
    with pytest.raises(cove.ClosedError):
        session.state
    assert "closed" in repr(session)


def test_a_paused_session(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "paused.cove"
    with _open(path, _config()) as realm:
        session = _session(realm)
        assert _state(session) == "paused" and session.connection == "disconnected"
        assert session.progress == cove.SyncProgress(0, 0, 0, 0)
        assert session.last_error is None
        with realm.write():
            realm.create("Person", {"id": 1, "name": "Ann"})
        with pytest.raises(cove.SyncError, match="the upload did not finish within 0.0 s") as caught:
            session.wait_for_upload(0)
        assert caught.value.status is cove.Status.SYNC and caught.value.code == 26
        with pytest.raises(cove.SyncError, match="the download did not finish within 0.1 s"):
            session.wait_for_download(timeout=0.1)
        for bad in (-1, math.inf, math.nan):
            with pytest.raises(cove.InvalidArgumentError, match="is not a finite number of seconds"):
                session.wait_for_upload(bad)
        with pytest.raises(cove.WrongTypeError, match="timeout is a number of seconds"):
            session.wait_for_download("1")  # type: ignore[arg-type]
        with realm.write():
            with pytest.raises(cove.TransactionError, match="refused inside a write transaction"):
                session.wait_for_upload(1)
        session.resume()
        assert _state(session) == "active"
        session.pause()
        session.pause()
        assert _state(session) == "paused"
        # A second realm of the file shares the session.
        with _open(path, _config()) as second:
            _session(second).resume()
            assert _state(session) == "active"
            session.pause()
            assert _state(_session(second)) == "paused"
        assert _state(session) == "paused"
        assert "paused" in repr(session)


def test_a_wait_lets_other_threads_run(tmp_path: pathlib.Path) -> None:
    ticks = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    with _open(tmp_path / "gil.cove", _config()) as realm:
        with realm.write():
            realm.create("Person", {"id": 1, "name": "Ann"})
        counter = threading.Thread(target=count)
        counter.start()
        try:
            before = ticks[0]
            with pytest.raises(cove.SyncError):
                _session(realm).wait_for_upload(0.5)
            during = ticks[0] - before
        finally:
            stop.set()
            counter.join()
    assert during > 20, f"the counting thread ran {during} times during a wait of 0.5 s"


def _last_error_soon(session: cove.SyncSession) -> Optional[str]:
    """The session's last error, waiting up to 10 s for one to come."""
    deadline = time.monotonic() + 10
    while (message := session.last_error) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return message


def test_an_unreachable_server_keeps_writes_queued(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "unreachable.cove"
    with _open(path, _config(connected=True)) as realm:
        with realm.write():
            realm.create("Person", {"id": 1, "name": "Ann"})
        session = _session(realm)
        with pytest.raises(cove.SyncError, match="the upload did not finish within 0.5 s"):
            session.wait_for_upload(0.5)
        message = _last_error_soon(session)
        assert message is not None and "cannot reach the sync server http://127.0.0.1:9" in message
        assert session.state == "active" and session.connection != "connected"
        assert session.progress.uploaded_version == 0
    # The write is in the file, still queued: the next session counts it as not uploaded.
    with _open(path, _config()) as realm:
        ann = realm.find("Person", 1)
        assert ann is not None and ann["name"] == "Ann"
        progress = _session(realm).progress
        assert progress.local_version == 1 and progress.uploaded_version == 0


@pytest.fixture
def server() -> Iterator[Tuple[str, str, str]]:
    """The sync server the test command started: (url, token, a second user's token)."""
    url, token = os.environ.get("COVE_SYNC_TEST_URL"), os.environ.get("COVE_SYNC_TEST_TOKEN")
    if not url or not token:
        pytest.fail("no sync server given (COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN): the test command starts one; "
                    "by hand, eval \"$(.ci/sync-server.sh start /tmp/cove-sync)\" first")
    yield url, token, os.environ.get("COVE_SYNC_TEST_TOKEN_OTHER") or token


def test_two_files_sync_through_the_server(tmp_path: pathlib.Path, server: Tuple[str, str, str]) -> None:
    url, token, other = server
    name = f"rex-py-{random.getrandbits(64):x}"
    with _open(tmp_path / "a.cove", _config(url, token, True)) as a, \
            _open(tmp_path / "b.cove", _config(url, other, True)) as b:
        with a.write():
            a.create("Dog", {"name": name, "age": 3, "tags": [name]})
        a_sync, b_sync = _session(a), _session(b)
        a_sync.wait_for_upload(30)
        progress = a_sync.progress
        assert progress.local_version >= 1 and progress.uploaded_version == progress.local_version
        assert a_sync.state == "active" and a_sync.connection == "connected"
        b_sync.wait_for_download(timeout=30)
        b.refresh()
        rex = b.find("Dog", name)
        assert rex is not None and rex["age"] == 3 and list(rex["tags"]) == [name]
        # And back.
        with b.write():
            rex["age"] = 4
        b_sync.wait_for_upload(30)
        a_sync.wait_for_download(30)
        a.refresh()
        mine = a.find("Dog", name)
        assert mine is not None and mine["age"] == 4
        assert a_sync.state == "active" and a_sync.connection == "connected" and a_sync.last_error is None
        assert b_sync.progress.uploaded_version == b_sync.progress.local_version


def test_an_older_copy_recovers_what_it_had_not_uploaded(tmp_path: pathlib.Path, server: Tuple[str, str, str]) -> None:
    url, token, _ = server
    name = f"rex-py-{random.getrandbits(64):x}"
    with _open(tmp_path / "other.cove", _config(url, token, True)) as other:
        _session(other).wait_for_download(30)
        with _open(tmp_path / "a.cove", _config(url, token, True)) as a:
            with a.write():
                a.create("Dog", {"name": name, "age": 3, "tags": ["a"]})
            _session(a).wait_for_upload(30)
            a.write_copy(tmp_path / "backup.cove")
            with a.write():
                found = a.find("Dog", name)
                assert found is not None
                found["tags"].append("b")
            _session(a).wait_for_upload(30)
        # The copy put back writes before it reaches the server: the server holds a changeset of
        # its id that it did not make.
        with _open(tmp_path / "backup.cove", _config(url, token, False)) as restored:
            with restored.write():
                rex = restored.find("Dog", name)
                assert rex is not None
                rex["age"] = 7
                rex["tags"].append("c")
            session = _session(restored)
            session.resume()
            session.wait_for_upload(30)
            assert session.client_reset_count == 1
            reason = session.last_client_reset
            assert reason is not None and "older copy" in reason
        _session(other).wait_for_download(30)
        other.refresh()
        seen = other.find("Dog", name)
        assert seen is not None and seen["age"] == 7 and sorted(seen["tags"]) == ["a", "b", "c"]


def test_a_wrong_token_stops_the_session(tmp_path: pathlib.Path, server: Tuple[str, str, str]) -> None:
    url = server[0]
    with _open(tmp_path / "refused.cove", _config(url, "not-a-token", True)) as realm:
        with realm.write():
            realm.create("Person", {"id": 1, "name": "Ann"})
        session = _session(realm)
        with pytest.raises(cove.SyncError, match="the sync session stopped.*refused"):
            session.wait_for_upload(20)
        assert session.state == "inactive" and session.connection == "disconnected"
        message = session.last_error
        assert message is not None and "unauthorized" in message
        # A stopped session stays stopped.
        session.resume()
        assert session.state == "inactive"
        with pytest.raises(cove.SyncError, match="the sync session stopped"):
            session.wait_for_download(1)
