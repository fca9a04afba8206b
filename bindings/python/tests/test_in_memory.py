"""cove.open(None, in_memory_identifier=...): realms of one identifier share their data and
notifications, another identifier is another database, the data is gone with the last realm."""

import pytest

import cove

SCHEMA = {"Note": {"properties": {"text": "string"}}}


def test_realms_of_one_identifier_share_their_data() -> None:
    a = cove.open(None, schema=SCHEMA, in_memory_identifier="py-notes")
    b = cove.open(None, schema=SCHEMA, in_memory_identifier="py-notes")
    other = cove.open(None, schema=SCHEMA, in_memory_identifier="py-other")
    with a.write():
        a.create("Note", {"text": "hello"})
    b.refresh()
    assert [n.text for n in b.objects("Note")] == ["hello"]
    assert len(other.objects("Note")) == 0
    a.close()
    assert len(b.objects("Note")) == 1
    b.close()
    other.close()
    with cove.open(None, schema=SCHEMA, in_memory_identifier="py-notes") as again:
        assert len(again.objects("Note")) == 0


def test_bad_identifiers_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(cove.InvalidArgumentError, match="identifier is empty"):
        cove.open(None, schema=SCHEMA, in_memory_identifier="")
    with pytest.raises(cove.InvalidArgumentError, match="replaces the path"):
        cove.open(tmp_path / "x.cove", schema=SCHEMA, in_memory_identifier="x")
