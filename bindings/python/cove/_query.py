"""Query arguments from Python: scalars go to the library as they are; a list, tuple or set
argument, which the C API cannot take, becomes a list literal of scalar arguments.

``filter("age IN $0", [1, 2, 3])`` is sent as ``filter("age IN {$1, $2, $3}", None, 1, 2, 3)``: the
elements are appended after the caller's arguments and every ``$0`` that stands as a token of its
own (not inside a quoted string, not part of a longer name such as ``$0x`` or ``a$0``) is replaced
by the literal. ``%@`` and ``%K`` are numbered in order first, as the library numbers them. A query
the rewrite cannot keep meaning the same (``$n`` mixed with ``%@``, an argument number past the
caller's arguments) is sent unchanged with None in place of each list, so that the library reports
the problem with the caller's own text.
"""
from __future__ import annotations

import collections.abc
import re
from typing import Any, List, NamedTuple, Sequence, Tuple

from ._errors import Error, InvalidArgumentError, Status
from ._lib import ffi
from ._values import write_value

__all__ = ["bind_arguments", "argument_array", "is_list_argument", "argument_tokens", "ArgumentToken"]

_NUMBERED = re.compile(r"\$(K?)([0-9]+)")
_IDENTIFIER_ESCAPES = frozenset(" \t\r\ntrn")


class ArgumentToken(NamedTuple):
    start: int
    end: int
    kind: str        # "$" ($n), "$K" ($Kn), "%@" or "%K"
    number: int      # the argument's number; -1 for %@ and %K


def is_list_argument(value: Any) -> bool:
    """Whether a query argument is a list of values (a list literal once bound)."""
    if isinstance(value, (str, bytes, bytearray, memoryview, collections.abc.Mapping)):
        return False
    return isinstance(value, (collections.abc.Sequence, collections.abc.Set))


def _starts_identifier(c: str) -> bool:
    return not c.isascii() or c.isalpha() or c in "_$"


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _continues_identifier(c: str) -> bool:
    return _starts_identifier(c) or _is_digit(c) or c == "-"


def argument_tokens(query: str) -> List[ArgumentToken]:
    """The argument tokens of a query in order, found as the library's lexer finds them: strings
    skipped, identifiers read whole (letters, digits, ``_``, ``-``, ``$``, non-ASCII characters and
    backslash-escaped whitespace), numbers read with what is glued to them."""
    tokens: List[ArgumentToken] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c == "'" or c == '"':
            i += 1
            while i < n and query[i] != c:
                i += 2 if query[i] == "\\" else 1
            i += 1
        elif c == "%" and i + 1 < n and query[i + 1] in "@K":
            tokens.append(ArgumentToken(i, i + 2, "%" + query[i + 1], -1))
            i += 2
        elif _starts_identifier(c):
            start = i
            escaped = False
            while i < n:
                if _continues_identifier(query[i]):
                    i += 1
                elif query[i] == "\\" and i + 1 < n and query[i + 1] in _IDENTIFIER_ESCAPES:
                    escaped = True
                    i += 2
                else:
                    break
            match = None if escaped else _NUMBERED.fullmatch(query, start, i)
            if match is not None and len(match.group(2)) <= 9:
                tokens.append(ArgumentToken(start, i, "$" + match.group(1), int(match.group(2))))
        elif _is_digit(c) or c == "." and i + 1 < n and _is_digit(query[i + 1]):
            # A number and anything glued to it (the library rejects "5$0" as a number).
            i += 1
            while i < n and (query[i] == "." or _continues_identifier(query[i]) and query[i] != "-"):
                i += 1
        else:
            i += 1
    return tokens


def bind_arguments(query: str, args: Sequence[Any]) -> Tuple[str, List[Any], List[str]]:
    """The query text and the scalar arguments to send, and how to name each argument in a
    message ("$1", "element 2 of $0")."""
    values = list(args)
    labels = [f"${i}" for i in range(len(values))]
    lists = [i for i, value in enumerate(values) if is_list_argument(value)]
    if not lists:
        return query, values, labels
    placeholders = [None if i in lists else value for i, value in enumerate(values)]
    tokens = argument_tokens(query)
    numbered = [t for t in tokens if t.kind in ("$", "$K")]
    positional = [t for t in tokens if t.kind in ("%@", "%K")]
    if numbered and positional:
        return query, placeholders, labels
    if positional:
        tokens = [ArgumentToken(t.start, t.end, "$" if t.kind == "%@" else "$K", k) for k, t in enumerate(positional)]
    if any(t.number >= len(values) for t in tokens):
        return query, placeholders, labels
    flat = placeholders
    literals = {}
    for i in lists:
        names = []
        for k, element in enumerate(values[i]):
            names.append(f"${len(flat)}")
            labels.append(f"element {k} of ${i}")
            flat.append(element)
        literals[i] = "{" + ", ".join(names) + "}"
    parts: List[str] = []
    position = 0
    for t in tokens:
        if t.kind == "$" and t.number in literals:
            replacement = literals[t.number]
        elif positional:
            replacement = f"{t.kind}{t.number}"
        else:
            continue
        parts.append(query[position:t.start])
        parts.append(replacement)
        position = t.end
    parts.append(query[position:])
    return "".join(parts), flat, labels


def argument_array(values: Sequence[Any], labels: Sequence[str], realm: Any) -> Tuple[Any, List[Any]]:
    """The cove_value_t array of query arguments and the buffers to keep while the call reads
    them. A value that cannot be converted raises naming the argument."""
    keep: List[Any] = []
    if not values:
        return ffi.NULL, keep
    array = ffi.new("cove_value_t[]", len(values))
    keep.append(array)
    for i, value in enumerate(values):
        try:
            write_value(ffi, array[i], value, keep, realm)
        except Error as exc:
            raise type(exc)(exc.code, f"query argument {labels[i]}: {exc.message}") from None
        except (ValueError, OverflowError) as exc:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"query argument {labels[i]}: {exc}") from exc
    return array, keep
