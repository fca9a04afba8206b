"""Cove's value types in Python and their conversion to and from the C API's cove_value_t.

Dates are `Timestamp` (an aware UTC datetime with nanoseconds), decimals are `decimal.Decimal`
(stored as IEEE 754-2008 decimal128 in the BID encoding, little-endian, as BSON stores them),
object ids are `ObjectId`, UUIDs are `uuid.UUID`.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import operator
import os
import struct
import threading
import time
import uuid
from typing import Any, Callable, List, Optional, Tuple, Union

from ._errors import Error, InvalidArgumentError, OutOfRangeError, Status, WrongTypeError
from ._nested import MAX_NESTING, NestedDict, NestedList
from ._speedups import VALUE_SIZE, pack

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

TYPE_NULL, TYPE_INT, TYPE_BOOL, TYPE_FLOAT, TYPE_DOUBLE, TYPE_STRING, TYPE_BINARY = range(7)
TYPE_TIMESTAMP, TYPE_DECIMAL128, TYPE_OBJECT_ID, TYPE_UUID, TYPE_LINK = range(7, 12)
TYPE_LIST, TYPE_MAP = 12, 13


class Elements:
    """The elements of a list or set (`items`), or the entries of a map (`items` alternating
    key and value), going into a create in one value: written as a COVE_TYPE_LIST or
    COVE_TYPE_MAP value."""

    __slots__ = ("items", "is_map", "count")

    def __init__(self, items: List[Any], is_map: bool, count: int) -> None:
        self.items = items
        self.is_map = is_map
        self.count = count


class Timestamp(_dt.datetime):
    """A point in time with nanosecond precision: an aware UTC `datetime` with a `nanosecond`
    attribute (0-999 beyond the microseconds), as pandas' Timestamp has."""

    _nanosecond: int

    def __new__(cls, *args: Any, nanosecond: int = 0, **kwargs: Any) -> "Timestamp":
        self = super().__new__(cls, *args, **kwargs)
        if self.tzinfo is None:
            raise ValueError("a cove.Timestamp must be timezone-aware")
        if not 0 <= nanosecond <= 999:
            raise ValueError(f"nanosecond {nanosecond} is not within 0..999")
        self._nanosecond = nanosecond
        return self

    @property
    def nanosecond(self) -> int:
        return self._nanosecond

    @classmethod
    def from_parts(cls, seconds: int, nanoseconds: int) -> "Timestamp":
        """From seconds and nanoseconds since 1970-01-01 UTC, exactly: the two are added, so
        either sign of either part is read (-1 s and 999_999_999 ns is 1 ns before 1970).
        OverflowError for a time outside the years 1 to 9999 that a datetime holds."""
        total = seconds * 1_000_000_000 + nanoseconds
        # Floor division: the datetime fields count forward from the second before.
        secs, nanos = divmod(total, 1_000_000_000)
        micros, extra = divmod(nanos, 1000)
        try:
            base = _EPOCH + _dt.timedelta(seconds=secs, microseconds=micros)
        except OverflowError:
            raise OverflowError(f"the time {seconds} s {nanoseconds} ns since 1970 is outside the years 1 to "
                                "9999 that a datetime holds") from None
        return cls(base.year, base.month, base.day, base.hour, base.minute, base.second,
                   base.microsecond, tzinfo=_dt.timezone.utc, nanosecond=extra)

    @staticmethod
    def parts(value: _dt.datetime) -> Tuple[int, int]:
        """Seconds and nanoseconds since 1970 of an aware datetime, exactly, with one sign as
        Realm's Timestamp has them: 1 ns before 1970 is (0, -1), 1.5 s before is
        (-1, -500_000_000). ValueError for a naive datetime."""
        if value.tzinfo is None:
            raise ValueError("a naive datetime is ambiguous: give it a tzinfo (e.g. datetime.timezone.utc)")
        delta = value - _EPOCH
        total = (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
        total += getattr(value, "nanosecond", 0)
        # Integer division of the magnitude, truncating toward zero (a float quotient rounds
        # beyond 2**53 ns, about 104 days, and got years near 1 and 9999 wrong by a nanosecond).
        seconds, nanos = divmod(abs(total), 1_000_000_000)
        return (seconds, nanos) if total >= 0 else (-seconds, -nanos)

    def __repr__(self) -> str:
        return f"cove.Timestamp({self.isoformat()}, nanosecond={self._nanosecond})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _dt.datetime) and other.tzinfo is not None:
            return Timestamp.parts(self) == Timestamp.parts(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(Timestamp.parts(self))


class ObjectId:
    """A 12-byte object id, as BSON orders its bytes. From 24 hex digits or 12 bytes."""

    __slots__ = ("_bytes",)
    _counter = int.from_bytes(os.urandom(3), "big")
    _random = os.urandom(5)
    _lock = threading.Lock()

    def __init__(self, value: Union[str, bytes, "ObjectId", None] = None) -> None:
        if value is None:
            with ObjectId._lock:
                ObjectId._counter = (ObjectId._counter + 1) & 0xFFFFFF
                counter = ObjectId._counter
            self._bytes = struct.pack(">I", int(time.time()) & 0xFFFFFFFF) + ObjectId._random + counter.to_bytes(3, "big")
        elif isinstance(value, ObjectId):
            self._bytes = value._bytes
        elif isinstance(value, (bytes, bytearray)):
            if len(value) != 12:
                raise ValueError(f"an ObjectId is 12 bytes, got {len(value)}")
            self._bytes = bytes(value)
        elif isinstance(value, str):
            if len(value) != 24:
                raise ValueError(f"an ObjectId is 24 hex digits, got {value!r}")
            try:
                self._bytes = bytes.fromhex(value)
            except ValueError:
                raise ValueError(f"an ObjectId is 24 hex digits, got {value!r}") from None
        else:
            raise TypeError(f"ObjectId from {type(value).__name__}")

    @property
    def binary(self) -> bytes:
        return self._bytes

    def __str__(self) -> str:
        return self._bytes.hex()

    def __repr__(self) -> str:
        return f"ObjectId('{self._bytes.hex()}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectId) and other._bytes == self._bytes

    def __lt__(self, other: "ObjectId") -> bool:
        return self._bytes < other._bytes

    def __hash__(self) -> int:
        return hash(self._bytes)


# -- decimal128 (BID) ----------------------------------------------------------------------------

_BID_BIAS = 6176
_BID_MAX_COEFFICIENT = 10 ** 34 - 1


def decimal_to_bid(value: decimal.Decimal) -> bytes:
    """The 16 little-endian bytes of `value` as decimal128 (BID). Raises ValueError when it does
    not fit (more than 34 significant digits, or an exponent out of range)."""
    sign, digits, exponent = value.as_tuple()
    high_sign = 1 << 63 if sign else 0
    if exponent == "n" or exponent == "N":
        return (0).to_bytes(8, "little") + (high_sign | 0x7C00 << 48).to_bytes(8, "little")
    if exponent == "F":
        return (0).to_bytes(8, "little") + (high_sign | 0x7800 << 48).to_bytes(8, "little")
    exp = int(exponent)
    coefficient = int("".join(map(str, digits)) or "0")
    # Drop trailing zeros while the coefficient is too large or the exponent too small.
    while coefficient > _BID_MAX_COEFFICIENT and coefficient % 10 == 0:
        coefficient //= 10
        exp += 1
    while exp + _BID_BIAS < 0 and coefficient % 10 == 0 and coefficient:
        coefficient //= 10
        exp += 1
    if coefficient == 0:
        exp = max(min(exp, 6111), -6176)
    biased = exp + _BID_BIAS
    if coefficient > _BID_MAX_COEFFICIENT or not 0 <= biased <= 12287:
        raise ValueError(f"{value} does not fit a decimal128 (34 digits, exponent -6176..6111)")
    high = high_sign | (biased << 49) | (coefficient >> 64)
    low = coefficient & ((1 << 64) - 1)
    return low.to_bytes(8, "little") + high.to_bytes(8, "little")


def bid_to_decimal(data: bytes) -> decimal.Decimal:
    """The Decimal a decimal128 (BID, little-endian) holds."""
    low = int.from_bytes(data[:8], "little")
    high = int.from_bytes(data[8:16], "little")
    sign = (high >> 63) & 1
    if (high >> 58) & 0x1F == 0x1F:
        return decimal.Decimal("-NaN" if sign else "NaN")
    if (high >> 58) & 0x1F == 0x1E:
        return decimal.Decimal("-Infinity" if sign else "Infinity")
    if (high >> 61) & 0x3 == 0x3:
        # The second form: an implicit 100 prefix makes the coefficient exceed 34 digits, which
        # IEEE defines as non-canonical, read as zero.
        exponent = ((high >> 47) & 0x3FFF) - _BID_BIAS
        coefficient = 0
    else:
        exponent = ((high >> 49) & 0x3FFF) - _BID_BIAS
        coefficient = ((high & ((1 << 49) - 1)) << 64) | low
        if coefficient > _BID_MAX_COEFFICIENT:
            coefficient = 0
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return decimal.Decimal((sign, tuple(int(d) for d in str(coefficient)), exponent))


ValueLike = Union[None, bool, int, float, str, bytes, _dt.datetime, decimal.Decimal, uuid.UUID, ObjectId]


def write_value(ffi: Any, out: Any, value: Any, keep: List[Any], realm: Any = None, depth: int = 0) -> None:
    """Fills the cove_value_t `out` from a Python value. Byte buffers the C side reads are
    appended to `keep`, which the caller holds until the call returns. An object becomes a
    link for `realm` (the realm the value goes into; None: an object of any realm), and only
    when it is an object of the same file (see `check_same_file`). A list or tuple becomes a
    nested list and a dict (string keys) a nested dictionary, which a mixed value may hold."""
    if value is None:
        out.type = TYPE_NULL
    elif isinstance(value, Elements):
        items, filled, failure = pack_rows(ffi, [value.items], len(value.items), keep, realm)
        if failure is not None:
            raise failure
        out.type = TYPE_MAP if value.is_map else TYPE_LIST
        out.u.elements.items = items
        out.u.elements.count = value.count
    elif isinstance(value, bool):
        out.type = TYPE_BOOL
        out.u.boolean = value
    elif isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise OverflowError(f"{value} does not fit a 64-bit int")
        out.type = TYPE_INT
        out.u.integer = value
    elif isinstance(value, float):
        out.type = TYPE_DOUBLE
        out.u.dnum = value
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        buffer = ffi.from_buffer(data)
        keep.append((data, buffer))
        out.type = TYPE_STRING
        out.u.string.data = buffer
        out.u.string.size = len(data)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        buffer = ffi.from_buffer(data)
        keep.append((data, buffer))
        out.type = TYPE_BINARY
        out.u.binary.data = buffer
        out.u.binary.size = len(data)
    elif isinstance(value, _dt.datetime):
        seconds, nanos = Timestamp.parts(value)
        out.type = TYPE_TIMESTAMP
        out.u.timestamp.seconds = seconds
        out.u.timestamp.nanoseconds = nanos
    elif isinstance(value, decimal.Decimal):
        out.type = TYPE_DECIMAL128
        ffi.memmove(out.u.decimal128, decimal_to_bid(value), 16)
    elif isinstance(value, uuid.UUID):
        out.type = TYPE_UUID
        ffi.memmove(out.u.uuid, value.bytes, 16)
    elif isinstance(value, ObjectId):
        out.type = TYPE_OBJECT_ID
        ffi.memmove(out.u.object_id, value.binary, 12)
    elif isinstance(value, (list, tuple, dict, NestedList, NestedDict)):
        write_nested(ffi, out, value, keep, realm, depth)
    else:
        link = getattr(value, "_cove_link", None)
        if link is None:
            raise WrongTypeError(Status.WRONG_TYPE, f"cove cannot store a value of type {type(value).__name__}")
        if realm is not None:
            check_same_file(realm, value)
        class_key, object_key = link()
        out.type = TYPE_LINK
        out.u.link.class_key = class_key
        out.u.link.object_key = object_key


def write_nested(ffi: Any, out: Any, value: Any, keep: List[Any], realm: Any, depth: int) -> None:
    """Fills `out` with a nested list (a list, tuple or NestedList) or dictionary (a dict or
    NestedDict) for a mixed value: a COVE_TYPE_LIST or COVE_TYPE_MAP value whose elements
    are written as write_value writes values."""
    if depth >= MAX_NESTING:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"a value nests lists and dicts deeper than {MAX_NESTING}")
    if isinstance(value, (NestedList, NestedDict)):
        value = value._current()
    if isinstance(value, dict):
        items: List[Any] = []
        for key, element in value.items():
            if not isinstance(key, str):
                raise InvalidArgumentError(
                    Status.INVALID_ARGUMENT, f"a dict stored in a mixed value has string keys, got {type(key).__name__}")
            items.append(key)
            items.append(element)
        count = len(value)
        out.type = TYPE_MAP
    else:
        items = list(value)
        count = len(items)
        out.type = TYPE_LIST
    array = ffi.new("cove_value_t[]", max(len(items), 1))
    keep.append(array)
    for i, element in enumerate(items):
        write_value(ffi, array[i], element, keep, realm, depth + 1)
    out.u.elements.items = array
    out.u.elements.count = count


def check_same_file(realm: Any, obj: Any) -> None:
    """Refuses `obj` as a link value for `realm` unless it is an object of that realm or of
    another realm on the same file (a frozen one, another handle): object keys name objects
    only within their file, and a key taken from another file would link whatever object
    there has it."""
    owner = getattr(obj, "_realm", None)
    if owner is realm or owner is None or owner._file == realm._file:
        return
    where = owner.path if owner.path is not None else "an in-memory realm"
    here = realm.path if realm.path is not None else "an in-memory realm"
    raise InvalidArgumentError(
        Status.INVALID_ARGUMENT, f"the {obj._class_name} object belongs to another realm ({where}), not to {here}: link objects of the same realm")


def pack_rows(ffi: Any, rows: List[List[Any]], n: int, keep: List[Any],
              realm: Any = None) -> Tuple[Any, int, Optional[Exception]]:
    """The rows' values as one cove_value_t array (row-major, n per row) for a batch call.

    Values of the plain types (int, float, bool, str, bytes, None) are written in C
    (``_speedups.pack``), pointing into the rows' own objects, and so are objects of `realm`
    itself (as links); the others value by value as write_value does for `realm`, their
    buffers appended to `keep`. Returns the array, how many leading
    rows were filled completely, and the exception of the first row that could not be (None
    if all were)."""
    count = len(rows)
    if not count * n:
        return ffi.NULL, count, None
    words = bytearray(VALUE_SIZE * n * count)
    keep.append(words)
    left = pack(rows, n, words, realm)
    values = ffi.from_buffer("cove_value_t[]", words)
    for index in left:
        i, j = divmod(index, n)
        try:
            write_value(ffi, values[index], rows[i][j], keep, realm)
        except (Error, OverflowError, ValueError, TypeError) as exc:
            return values, i, exc
    return values, count, None


def read_value(ffi: Any, v: Any, resolve_link: Optional[Any] = None) -> Any:
    """The Python value of a cove_value_t; links go through `resolve_link(class_key, object_key)`."""
    # The commonest types first; cffi already gives ints, floats and bools as Python values.
    t = v.type
    if t == TYPE_INT:
        return v.u.integer
    if t == TYPE_STRING:
        s = v.u.string
        size = s.size
        return ffi.unpack(s.data, size).decode("utf-8") if size else ""
    if t == TYPE_DOUBLE:
        return v.u.dnum
    if t == TYPE_NULL:
        return None
    if t == TYPE_BOOL:
        return bool(v.u.boolean)
    if t == TYPE_FLOAT:
        return v.u.fnum
    if t == TYPE_BINARY:
        return bytes(ffi.buffer(v.u.binary.data, v.u.binary.size))
    if t == TYPE_TIMESTAMP:
        return Timestamp.from_parts(v.u.timestamp.seconds, v.u.timestamp.nanoseconds)
    if t == TYPE_DECIMAL128:
        return bid_to_decimal(bytes(ffi.buffer(v.u.decimal128, 16)))
    if t == TYPE_OBJECT_ID:
        return ObjectId(bytes(ffi.buffer(v.u.object_id, 12)))
    if t == TYPE_UUID:
        return uuid.UUID(bytes=bytes(ffi.buffer(v.u.uuid, 16)))
    if t == TYPE_LINK:
        if resolve_link is None:
            return (int(v.u.link.class_key), int(v.u.link.object_key))
        return resolve_link(int(v.u.link.class_key), int(v.u.link.object_key))
    if t == TYPE_LIST:
        items = v.u.elements.items
        return [read_value(ffi, items[i], resolve_link) for i in range(v.u.elements.count)]
    if t == TYPE_MAP:
        items = v.u.elements.items
        return {read_value(ffi, items[2 * i]): read_value(ffi, items[2 * i + 1], resolve_link)
                for i in range(v.u.elements.count)}
    raise ValueError(f"unknown cove value type {t}")


_MAX_INDEX = (1 << 63) - 1


def position(index: Any, size: Callable[[], int], what: str) -> int:
    """A position from 0 for the library, which checks the upper bound and names the valid
    range: a negative index counts from the end of ``what`` (``size()`` long)."""
    try:
        i = operator.index(index)
    except TypeError:
        raise WrongTypeError(
            Status.WRONG_TYPE, f"{what}: indices are ints or slices, got {type(index).__name__}") from None
    if i < 0:
        n = size()
        i += n
        if i < 0:
            raise OutOfRangeError(Status.OUT_OF_RANGE, f"index {index} is out of range for {what} of size {n}")
    if i > _MAX_INDEX:
        raise OutOfRangeError(Status.OUT_OF_RANGE, f"index {index} is out of range for {what}")
    return i
