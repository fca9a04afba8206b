"""A writer killed (SIGKILL) at a random moment while its commits move a list between its two
forms, inline in the class's collection area and a B+tree of its own: the file reopens whole,
verify() passes, and the list is exactly what the last committed write left."""

import multiprocessing
import os
import pathlib
import random
import signal
import time

import cove

SCHEMA = {"Box": {"primaryKey": "id", "properties": {"id": "int", "step": "int", "words": "string[]",
                                                       "tags": "string<>"}}}


def _pattern(step: int) -> list[str]:
    # 0 to 59 words of about 28 bytes: from empty, through inline, to well past the inline
    # limit (960 bytes) and back, as the step goes on.
    return [f"w{step}-{j}-" + "x" * 20 for j in range((step * 7) % 60)]


def _writer(path: str, start: int) -> None:
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        box = realm.find("Box", 1)
        step = start
        while True:
            step += 1
            wanted = _pattern(step)
            with realm.write():
                words = box.words
                while len(words) > len(wanted):
                    del words[len(words) - 1]
                for i in range(len(words)):
                    words[i] = wanted[i]
                for w in wanted[len(words):]:
                    words.append(w)
                box.tags.clear()
                for w in wanted[: step % 40]:
                    box.tags.add(w)
                box.step = step


def test_a_writer_killed_while_lists_switch_forms(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "forms.cove")
    with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
        with realm.write():
            realm.create("Box", {"id": 1, "step": 0})
    ctx = multiprocessing.get_context("spawn")
    rng = random.Random(34)
    last = 0
    for _ in range(4):
        child = ctx.Process(target=_writer, args=(path, last))
        child.start()
        time.sleep(0.6 + rng.random() * 0.6)
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        assert child.exitcode == -signal.SIGKILL
        with cove.open(path, schema=SCHEMA, durability="no_sync") as realm:
            realm.verify()
            box = realm.find("Box", 1)
            step = box.step
            assert step >= last
            assert list(box.words) == _pattern(step), f"step {step}"
            assert sorted(box.tags) == sorted(_pattern(step)[: step % 40])
        last = step
    assert last > 20, "the writers committed enough steps to switch forms many times"
