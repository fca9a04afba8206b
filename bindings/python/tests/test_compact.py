"""cove.compact(path) and open(..., should_compact_on_launch=...): a sparse file compacted in
place when no other handle has it open; left alone while a realm has it open or when declined;
an exception from the callback leaves the file and is raised again."""

import pathlib

import pytest

import cove

SCHEMA = {"Item": {"primaryKey": "id", "properties": {"id": "int", "text": "string"}}}


def _sparse(path: pathlib.Path) -> None:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create_many("Item", ({"id": i, "text": "x" * 250} for i in range(6000)))
        with realm.write():
            realm.delete(realm.objects("Item").filter("id >= 100"))


def test_compact_shrinks_a_file_no_one_has_open(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.cove"
    _sparse(path)
    before = path.stat().st_size
    asked: list[tuple[int, int]] = []
    assert cove.compact(path, lambda total, used: asked.append((total, used)) is None)
    assert len(asked) == 1 and asked[0][1] * 2 < asked[0][0] <= before
    assert path.stat().st_size < before // 2
    with cove.open(path, schema=SCHEMA) as realm:
        assert len(realm.objects("Item")) == 100
        assert not cove.compact(path), "another handle has it open"
        assert "live" in realm.verify()


def test_declined_and_failing_callbacks_leave_the_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "b.cove"
    _sparse(path)
    before = path.stat().st_size
    assert not cove.compact(path, lambda total, used: False)

    def broken(total: int, used: int) -> bool:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        cove.compact(path, broken)
    assert path.stat().st_size == before


def test_should_compact_on_launch(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "c.cove"
    _sparse(path)
    before = path.stat().st_size
    with cove.open(path, schema=SCHEMA, should_compact_on_launch=lambda total, used: total > 2 * used) as realm:
        assert path.stat().st_size < before // 2
        assert len(realm.objects("Item")) == 100
    with pytest.raises(cove.InvalidArgumentError, match="should_compact_on_launch"):
        cove.open(path, schema=SCHEMA, should_compact_on_launch=3)  # type: ignore[arg-type]


def _compact_forever(path: str) -> None:
    step = 0
    while True:
        step += 1
        with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
            with realm.write():
                realm.delete(realm.objects("Item"))
                realm.create_many("Item", ({"id": i, "text": f"{step}" * 40} for i in range(step % 7 * 300 + 1)))
        cove.compact(path)


def test_a_process_killed_while_compacting_leaves_a_whole_file(tmp_path: pathlib.Path) -> None:
    """SIGKILL at random moments of open, write, close, compact: the file always opens, verifies
    and holds the objects of one step, all with that step's text."""
    import multiprocessing
    import os
    import random
    import signal
    import time

    path = str(tmp_path / "k.cove")
    ctx = multiprocessing.get_context("spawn")
    rng = random.Random(37)
    for _ in range(4):
        child = ctx.Process(target=_compact_forever, args=(path,))
        child.start()
        time.sleep(0.5 + rng.random() * 0.7)
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
            assert "live" in realm.verify()
            texts = {item.text for item in realm.objects("Item")}
            assert len(texts) <= 1, "one step's objects"
            if texts:
                step = int(next(iter(texts))[: len(next(iter(texts))) // 40])
                assert len(realm.objects("Item")) == step % 7 * 300 + 1
