"""Writers in several processes on one file: their commits interleave without loss, and a process
killed while it holds the write lock does not stop the others (the next writer notices that the
holder's process is gone and takes the lock). A process with limited address space opens and
writes a realm."""

import multiprocessing
import os
import pathlib
import resource
import signal
import time

import pytest

import cove

SCHEMA = {"Item": {"primaryKey": "id", "properties": {"id": "int", "by": "int"}}}


def _writer(path: str, worker: int, count: int) -> None:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        for i in range(count):
            with realm.write():
                realm.create("Item", {"id": worker * 100_000 + i, "by": worker})


def _hold_the_lock(path: str, ready: str) -> None:
    realm = cove.open(path, schema=SCHEMA, durability="no_sync")
    realm.begin_write()
    realm.create("Item", {"id": -1, "by": -1})
    pathlib.Path(ready).touch()
    time.sleep(60)


def _context() -> "multiprocessing.context.BaseContext":
    # A fresh interpreter per child: the library's threads and locks are not forked.
    return multiprocessing.get_context("spawn")


def test_writers_in_three_processes(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "w.cove")
    cove.open(path, schema=SCHEMA, durability="no_sync").close()
    ctx = _context()
    workers = [ctx.Process(target=_writer, args=(path, w, 60)) for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    with cove.open(path, schema=SCHEMA) as realm:
        items = realm.objects("Item")
        assert len(items) == 180
        for w in range(3):
            assert len(items.filter("by == $0", w)) == 60
        realm.verify()


def test_a_writer_killed_holding_the_lock_does_not_stop_others(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "k.cove")
    ready = str(tmp_path / "ready")
    cove.open(path, schema=SCHEMA, durability="no_sync").close()
    child = _context().Process(target=_hold_the_lock, args=(path, ready))
    child.start()
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(ready):
            assert time.monotonic() < deadline, "the child never took the write lock"
            time.sleep(0.01)
        with cove.open(path, schema=SCHEMA, durability="no_sync", write_timeout=0.05) as realm:
            with pytest.raises(cove.StorageError) as info:
                realm.begin_write()
            assert info.value.code == 19  # COVE_ERR_LOCKED
            assert str(child.pid) in info.value.message
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
    assert child.exitcode == -signal.SIGKILL
    with cove.open(path, schema=SCHEMA, durability="no_sync", write_timeout=5) as realm:
        with realm.write():
            realm.create("Item", {"id": 1, "by": 0})
        assert realm.find("Item", -1) is None, "the killed writer's object is gone"
        assert realm.find("Item", 1) is not None
        realm.verify()


def _limited_writer(path: str) -> None:
    # 16 GiB of address space (ulimit -v): less than the 256 GiB the file's mapping reserves by
    # default, which the open then halves until it fits.
    resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create("Item", {"id": 1, "by": 7})
        realm.verify()
    with cove.open(path, schema=SCHEMA) as realm:
        assert realm.find("Item", 1)["by"] == 7


def test_a_process_with_limited_address_space_opens_and_writes(tmp_path: pathlib.Path) -> None:
    process = _context().Process(target=_limited_writer, args=(str(tmp_path / "limited.cove"),))
    process.start()
    process.join(60)
    assert process.exitcode == 0


def test_a_commit_of_another_process_is_delivered_when_the_descriptor_wakes(tmp_path: pathlib.Path) -> None:
    """The descriptor becomes readable after another process commits, and deliver() then calls
    back with that commit's changes (the realm advances first, as Realm's autorefresh does)."""
    import select

    path = str(tmp_path / "n.cove")
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        items = realm.objects("Item").sorted("id")
        seen = []
        token = items.observe(seen.append)
        realm.deliver()
        assert len(seen) == 1 and seen[0].is_initial
        fd = realm.notification_fd()
        child = _context().Process(target=_writer, args=(path, 7, 3))
        child.start()
        child.join(60)
        assert child.exitcode == 0
        deadline = time.monotonic() + 30
        while len(seen) == 1 and time.monotonic() < deadline:
            readable, _, _ = select.select([fd], [], [], 1.0)
            if readable:
                realm.deliver()
        assert len(seen) == 2, "the other process's commits were delivered"
        assert seen[1].insertions == [0, 1, 2] and seen[1].deletions == []
        assert [item.id for item in items] == [700_000, 700_001, 700_002]
        assert select.select([fd], [], [], 0)[1:] == ([], []) and not select.select([fd], [], [], 0)[0]
        token.invalidate()
