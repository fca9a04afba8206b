"""Lists and dictionaries held by mixed values, as live collections.

A mixed property (or an element of a list or dict of mixed values) may hold a list or a dict of
mixed values, nested to any depth. Reading one gives a NestedList or NestedDict: a view of the
collection at its place (the property, then the positions and keys leading to it) that reads the
stored value each time, as the object's other properties are read, and writes by storing the
property's whole value again with the change made. Writes need a write transaction, as any write.
"""

from collections import abc
from typing import Any, Callable, Dict, Iterator, List, MutableMapping, MutableSequence, Tuple, Union, overload

from ._errors import InvalidArgumentError, InvalidatedError, Status

Getter = Callable[[], Any]
Setter = Callable[[Any], None]
Step = Union[int, str]

# The deepest nesting the library stores.
MAX_NESTING = 100


def wrap(value: Any, get: Getter, put: Setter, label: str) -> Any:
    """`value` as read from a mixed place: a NestedList or NestedDict over the place for a list
    or a dict (get reads the place's whole value, put stores it), anything else as it is."""
    if type(value) is list:
        return NestedList(get, put, (), label)
    if type(value) is dict:
        return NestedDict(get, put, (), label)
    return value


def plain(value: Any) -> Any:
    """A NestedList or NestedDict as a plain list or dict (copied, at every depth)."""
    if isinstance(value, _Nested):
        return value._current()
    return value


class _Nested:
    __slots__ = ("_get_root", "_put_root", "_path", "_label")

    def __init__(self, get: Getter, put: Setter, path: Tuple[Step, ...], label: str) -> None:
        self._get_root = get
        self._put_root = put
        self._path = path
        self._label = label

    _kind: type = object

    def _walk(self, root: Any) -> Any:
        value = root
        for step in self._path:
            try:
                value = value[step]
            except (IndexError, KeyError, TypeError):
                value = None
                break
        if type(value) is not self._kind:
            raise InvalidatedError(
                Status.INVALIDATED, f"{self._label}: the {self._kind.__name__} it showed is no longer there")
        return value

    def _current(self) -> Any:
        """The collection's value now, plain (a fresh copy)."""
        return self._walk(self._get_root())

    def _edit(self, change: Callable[[Any], Any]) -> Any:
        """Reads the whole value, makes `change` to this collection in it, and stores it."""
        root = self._get_root()
        result = change(self._walk(root))
        self._put_root(root)
        return result

    def __repr__(self) -> str:
        try:
            return f"cove.{type(self).__name__}({self._label}, {self._current()!r})"
        except Exception:
            return f"cove.{type(self).__name__}({self._label}, invalid)"

    def _child(self, step: Step, value: Any) -> Any:
        path = self._path + (step,)
        label = f"{self._label}[{step!r}]"
        if type(value) is list:
            return NestedList(self._get_root, self._put_root, path, label)
        if type(value) is dict:
            return NestedDict(self._get_root, self._put_root, path, label)
        return value


class NestedList(_Nested, MutableSequence[Any]):
    """A list held by a mixed value: a live view that reads and writes the stored value."""

    __slots__ = ()
    _kind = list

    def __len__(self) -> int:
        return len(self._current())

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> List[Any]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        current = self._current()
        if isinstance(index, slice):
            return current[index]
        if index < 0:
            index += len(current)
        return self._child(index, current[index])

    @overload
    def __setitem__(self, index: int, value: Any) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: abc.Iterable[Any]) -> None: ...

    def __setitem__(self, index: Union[int, slice], value: Any) -> None:
        stored = [plain(v) for v in value] if isinstance(index, slice) else plain(value)

        def change(target: List[Any]) -> None:
            target[index] = stored
        self._edit(change)

    def __delitem__(self, index: Union[int, slice]) -> None:
        def change(target: List[Any]) -> None:
            del target[index]
        self._edit(change)

    def insert(self, index: int, value: Any) -> None:
        stored = plain(value)
        self._edit(lambda target: target.insert(index, stored))

    def append(self, value: Any) -> None:
        stored = plain(value)
        self._edit(lambda target: target.append(stored))

    def extend(self, values: abc.Iterable[Any]) -> None:
        stored = [plain(v) for v in values]
        self._edit(lambda target: target.extend(stored))

    def clear(self) -> None:
        self._edit(lambda target: target.clear())

    def __iter__(self) -> Iterator[Any]:
        current = self._current()
        return iter([self._child(i, v) for i, v in enumerate(current)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, NestedList)):
            return bool(self._current() == [plain(v) for v in other])
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]



class NestedDict(_Nested, MutableMapping[str, Any]):
    """A dictionary (string keys) held by a mixed value: a live view that reads and writes the
    stored value. Its keys come in the order of their UTF-8 bytes."""

    __slots__ = ()
    _kind = dict

    def __len__(self) -> int:
        return len(self._current())

    def __getitem__(self, key: str) -> Any:
        return self._child(key, self._current()[key])

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{self._label}: keys are strings, got {type(key).__name__}")
        stored = plain(value)

        def change(target: Dict[str, Any]) -> None:
            target[key] = stored
        self._edit(change)

    def __delitem__(self, key: str) -> None:
        def change(target: Dict[str, Any]) -> None:
            del target[key]
        self._edit(change)

    def clear(self) -> None:
        self._edit(lambda target: target.clear())

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._current()))

    def __contains__(self, key: object) -> bool:
        return bool(key in self._current())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, NestedDict)):
            return bool(self._current() == {k: plain(v) for k, v in other.items()})
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
