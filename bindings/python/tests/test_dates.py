"""Dates at the edges through Python: datetime.min and datetime.max, the years 1 and 9999,
microseconds and nanoseconds around and before 1970, and cove.Timestamp with nanoseconds near
whole seconds convert exactly both ways, with seconds and nanoseconds of one sign as Realm's
Timestamp has them; they are stored, read back, sorted and found by date literals and by
arguments. Naive datetimes are refused, as the package documents."""
from __future__ import annotations

import datetime as dt
from typing import List, Tuple

import pytest

import cove

UTC = dt.timezone.utc
T = cove.Timestamp
SCHEMA = {"Event": {"properties": {"n": "int", "at": "date?", "days": "date[]", "any": "mixed"}}}

# (the date, its seconds and nanoseconds since 1970), in time order
EDGES: List[Tuple[dt.datetime, Tuple[int, int]]] = [
    (dt.datetime.min.replace(tzinfo=UTC), (-62135596800, 0)),
    (T(1, 1, 1, tzinfo=UTC, nanosecond=1), (-62135596799, -999999999)),
    (dt.datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=UTC), (-62135596799, -999999000)),
    (dt.datetime(1900, 1, 1, 0, 0, 0, 500000, tzinfo=UTC), (-2208988799, -500000000)),
    (dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), (-1, 0)),
    (dt.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC), (0, -999999000)),
    (dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), (0, -1000)),
    (T(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC, nanosecond=999), (0, -1)),
    (dt.datetime(1970, 1, 1, tzinfo=UTC), (0, 0)),
    (T(1970, 1, 1, tzinfo=UTC, nanosecond=1), (0, 1)),
    (dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), (0, 1000)),
    (T(1970, 1, 1, 0, 0, 0, 999999, tzinfo=UTC, nanosecond=999), (0, 999999999)),
    (dt.datetime(9999, 1, 1, tzinfo=UTC), (253370764800, 0)),
    (dt.datetime.max.replace(tzinfo=UTC), (253402300799, 999999000)),
    (T(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC, nanosecond=999), (253402300799, 999999999)),
]
IDS = [str(parts) for _, parts in EDGES]


def one_sign(parts: Tuple[int, int]) -> bool:
    seconds, nanos = parts
    return abs(nanos) < 1_000_000_000 and not (seconds > 0 > nanos or seconds < 0 < nanos)


@pytest.mark.parametrize("value,parts", EDGES, ids=IDS)
def test_parts_are_exact_and_of_one_sign(value: dt.datetime, parts: Tuple[int, int]) -> None:
    assert T.parts(value) == parts and one_sign(parts)
    back = T.from_parts(*parts)
    assert back == value and T.parts(back) == parts
    assert back.nanosecond == getattr(value, "nanosecond", 0)
    fields = ("year", "month", "day", "hour", "minute", "second", "microsecond")
    assert [getattr(back, f) for f in fields] == [getattr(value, f) for f in fields]   # not only the instant


@pytest.mark.parametrize("given,parts", [
    ((-1, 999_999_999), (0, -1)),             # the sum is read: 1 ns before 1970
    ((0, -1), (0, -1)),
    ((-1, -1), (-1, -1)),
    ((1, -1), (0, 999_999_999)),
    ((0, -999_999_999), (0, -999_999_999)),
    ((-2, -500_000_000), (-2, -500_000_000)),
    ((-1, -1_000_000_000), (-2, 0)),          # a whole second of nanoseconds carries
    ((5, 2_000_000_001), (7, 1)),
], ids=str)
def test_from_parts_normalises_to_one_sign(given: Tuple[int, int], parts: Tuple[int, int]) -> None:
    t = T.from_parts(*given)
    assert T.parts(t) == parts and one_sign(parts)
    assert t == T.from_parts(*parts)


def test_other_time_zones_and_naive_datetimes() -> None:
    plus_one = dt.timezone(dt.timedelta(hours=1))
    assert T.parts(dt.datetime(1, 1, 1, 1, tzinfo=plus_one)) == (-62135596800, 0)
    assert T.parts(dt.datetime(1970, 1, 1, 0, 59, 59, 999999, tzinfo=plus_one)) == (0, -1000)
    with pytest.raises(ValueError, match="naive datetime"):
        T.parts(dt.datetime(1969, 12, 31, 23, 59, 59))
    with pytest.raises(ValueError, match="naive"):
        T.parts(dt.datetime.max)
    with pytest.raises(ValueError, match="timezone-aware"):
        T(2000, 1, 1)


def test_times_a_datetime_cannot_hold_raise_overflow() -> None:
    for seconds, nanos in ((253402300800, 0), (-62135596801, 0), (-62135596800, -1), (2**62, 0)):
        with pytest.raises(OverflowError, match="outside the years 1 to 9999"):
            T.from_parts(seconds, nanos)
    # A time zone can put an aware datetime of the year 1 before it: it has parts, but no datetime.
    early = dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    with pytest.raises(OverflowError):
        T.from_parts(*T.parts(early))


def test_edges_stored_and_read_back(realm: cove.Realm) -> None:
    with realm.write():
        for n, (value, _) in enumerate(EDGES):
            realm.create("Event", {"n": n, "at": value, "days": [value, value], "any": value})
    realm.refresh()
    for event in realm.objects("Event"):
        value, parts = EDGES[event.n]
        for read in (event.at, event.days[1], event.any):
            assert isinstance(read, T) and read == value and T.parts(read) == parts
            assert read.nanosecond == getattr(value, "nanosecond", 0)
    # Time order is the order of the parts.
    assert [e.n for e in realm.objects("Event").sorted("at")] == list(range(len(EDGES)))
    assert realm.objects("Event").min("at") == EDGES[0][0]
    assert T.parts(realm.objects("Event").max("at")) == EDGES[-1][1]


def test_edges_found_by_literals_and_arguments(realm: cove.Realm) -> None:
    with realm.write():
        for n, (value, _) in enumerate(EDGES):
            realm.create("Event", {"n": n, "at": value})
    events = realm.objects("Event")

    def found(query: str, *args: object) -> List[int]:
        return [e.n for e in events.filter(query, *args).sorted("n")]

    for n, (value, (seconds, nanos)) in enumerate(EDGES):
        assert found("at == $0", value) == [n]
        assert found(f"at == T{seconds}:{nanos}") == [n]
    assert found("at == 1969-12-31@23:59:59:999999000") == [6]
    assert found("at == 1969-12-31@23:59:59:999999999") == [7]     # read as (0, -1)
    assert found("at == 9999-12-31@23:59:59:999999000") == [13]
    assert found("at == 9999-12-31T23:59:59:999999999") == [14]
    assert found("at < 1970-01-01@00:00:00") == list(range(8))
    assert found("at > T0:0 AND at < T1:0") == [9, 10, 11]
    assert found("at < T-1:0") == [0, 1, 2, 3]
    assert found("at BETWEEN {$0, $1}", dt.datetime.min.replace(tzinfo=UTC), T.from_parts(0, -1)) == list(range(8))
