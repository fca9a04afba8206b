"""Lists, sets and maps in their two forms, inline in the class's collection area and a B+tree of
their own. A writer killed (SIGKILL) at a random moment while its commits move a list between the
forms: the file reopens whole, verify() passes, and the list is exactly what the last committed
write left. A file of format 5, whose collections are all trees, is read as it is and its
collections move inline as they are written."""

import importlib.util
import multiprocessing
import os
import pathlib
import random
import shutil
import signal
import time
import types

import pytest

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


def _seed_module() -> types.ModuleType:
    script = pathlib.Path(__file__).resolve().parents[3] / "Tests" / "Corpus" / "make-realm-seeds.py"
    spec = importlib.util.spec_from_file_location("make_realm_seeds", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_format_5_file_is_read_and_its_collections_move_inline(tmp_path: pathlib.Path) -> None:
    seeds = _seed_module()
    corpus = pathlib.Path(seeds.__file__).parent / "file"
    path = tmp_path / "old.cove"
    shutil.copy(corpus / "realm-every-kind-format5.cove", path)
    with cove.open(path, schema=seeds.SCHEMA, schema_version=1) as realm:
        assert realm.file_space().format_version == 5
        assert "; 0 inline collections" in realm.verify()
        fido = realm.objects("Dog").filter("name == 'Fido'")[0]
        rex = realm.objects("Dog").filter("name BEGINSWITH 'Rex'")[0]
        assert sorted(fido.tags) == ["c", "d"]
        assert list(rex.anything) == [1, "two", 3.0, None]
        with realm.write():
            fido.tags.add("e")
            rex.scores["w"] = 3.0
        assert realm.file_space().format_version == 6
        assert "; 2 inline collections" in realm.verify()
        assert sorted(fido.tags) == ["c", "d", "e"]
        assert dict(rex.scores) == {"w": 3.0, "x": 1.5, "y": -2.0}
        assert list(rex.anything) == [1, "two", 3.0, None], "an unwritten tree stays as it was"


BATCH = {"Thing": {"properties": {"n": "int", "nums": "int[]", "tags": "string<>", "counts": "int{}"}},
         "Keyed": {"primaryKey": "id", "properties": {"id": "int", "nums": "int[]", "counts": "double{}"}}}


def test_create_many_takes_lists_sets_and_maps_whole(tmp_path: pathlib.Path) -> None:
    with cove.open(tmp_path / "batch.cove", schema=BATCH, durability="no_sync") as realm:
        with realm.write():
            realm.create_many("Thing", [{"n": i, "nums": [i, i + 1], "tags": {"b", "a"}, "counts": {"x": i}}
                                        for i in range(500)])
            realm.create_many("Thing", [{"n": -1, "nums": list(range(400))}])       # past the inline limit
            realm.create_many("Keyed", [{"id": 1, "nums": [1, 2, 3], "counts": {"a": 1.5}}])
            realm.create_many("Keyed", [{"id": 1, "nums": [9], "counts": {}}], update=True)
        things = realm.objects("Thing")
        assert len(things) == 501
        assert list(things.filter("n == 7")[0].nums) == [7, 8]
        assert sorted(things.filter("n == 7")[0].tags) == ["a", "b"]
        assert dict(things.filter("n == 7")[0].counts) == {"x": 7}
        assert len(things.filter("n == -1")[0].nums) == 400
        keyed = realm.find("Keyed", 1)
        assert list(keyed.nums) == [9] and dict(keyed.counts) == {}
        assert "; 1501 inline collections" in realm.verify()  # 500 x 3, and the keyed list
        with realm.write():
            with pytest.raises(cove.WrongTypeError) as info:
                realm.create_many("Thing", [{"n": 1000, "nums": ["x"]}])
            assert "'nums'" in str(info.value)
            with pytest.raises(cove.WrongTypeError):
                realm.create_many("Thing", [{"n": 1001, "counts": [1, 2]}])
        assert len(realm.objects("Thing").filter("n >= 1000")) == 0, "a refused row leaves nothing"
