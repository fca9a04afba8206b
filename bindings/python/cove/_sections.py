"""Sectioned results: results of objects cut into sections by a key, either the value of a key
path (``results.sectioned(by="age")``) or what a Python function says of each object
(``results.sectioned(key=lambda dog: dog.name[:1], sort="name")``).

A key function runs inside the library's reads (and deliveries) on the calling thread, through
cffi's ``extern "Python"``. An exception it raises never crosses into the library: the function
answers the library with a failing status, and the exception is raised by the Python call that
made the library run it (``len(sections)``, ``sections[i]``, ``section[j]``... or the
``deliver()``, ``refresh()`` or write that computed a change).
"""
from __future__ import annotations

import threading
import typing
import weakref
from typing import (TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Set, TypeVar, Union,
                    overload)

from ._errors import ClosedError, Error, InvalidArgumentError, Status, WrongTypeError
from ._lib import c_string, check, ffi, lib, owned, release_handle
from ._notifications import ChangeStream, observe, raise_for
from ._values import position, read_value, write_value

if TYPE_CHECKING:
    from ._notifications import NotificationToken, SectionedChange
    from ._realm import Realm
    from ._results import Results

_T = TypeVar("_T")

_OK = Status.OK
_CALLBACK_FAILED = Status.CALLBACK      # what the key function answers when it raised

AVAILABLE = hasattr(lib, "cove_results_sectioned")
"""Whether the loaded libcove has sectioned results."""


# -- the key function ----------------------------------------------------------------------------

class _KeyFunction:
    """What the library's userdata for a key function points at: the Python function, the realm
    its objects are wrapped with and, per thread, the reads now running (each a list collecting
    the exceptions the function raised during it) and the last key's byte buffers (the library
    copies them after the function returns)."""

    __slots__ = ("function", "realm", "class_name", "local", "handle", "__weakref__")

    def __init__(self, function: Callable[[Any], Any], realm: "Realm", class_name: str) -> None:
        self.function = function
        self.realm = weakref.ref(realm)
        self.class_name = class_name
        self.local = threading.local()
        self.handle: Any = None

    def frames(self) -> List[List[BaseException]]:
        frames: Optional[List[List[BaseException]]] = getattr(self.local, "frames", None)
        if frames is None:
            frames = self.local.frames = []
        return frames


# The key functions the library may still call, each with its cffi handle, until the library
# frees its userdata (when the last sectioned results, section or token using it is released).
_KEYS: Set[_KeyFunction] = set()


def _section_key(userdata: Any, obj: Any, out_key: Any) -> int:
    key_function: _KeyFunction = ffi.from_handle(userdata)
    realm = key_function.realm()
    try:
        if realm is None:
            raise ClosedError(Status.CLOSED, "the realm of these sectioned results is gone")
        wrapped = realm._wrap(lib.cove_retain(obj), key_function.class_name)   # lent: retained for Python
        value = key_function.function(wrapped)
        keep: List[Any] = []
        try:
            write_value(ffi, out_key, value, keep)
        except (ValueError, OverflowError) as exc:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"section key {value!r}: {exc}") from exc
        except Error as exc:
            raise type(exc)(exc.code, f"section key {value!r}: {exc.message}") from None
        key_function.local.keep = keep      # the library copies the bytes after this returns
        return _OK
    except BaseException as exc:  # never across the C boundary: raised by the call that read
        frames = key_function.frames()
        if frames:
            frames[-1].append(exc)
        elif realm is not None:
            realm._callback_errors.append(exc)      # a delivery: raised by deliver()/refresh()
        return _CALLBACK_FAILED


def _free_section_key(userdata: Any) -> None:
    _KEYS.discard(ffi.from_handle(userdata))


if AVAILABLE:
    ffi.def_extern(name="_cove_section_key_cb")(_section_key)
    ffi.def_extern(name="_cove_free_section_key")(_free_section_key)


def _reading(key_function: Optional[_KeyFunction], call: Callable[[], int]) -> None:
    """Runs a library read of sectioned results; raises the first exception the key function
    raised during it (the library's CallbackError as its cause), else the read's failure."""
    if key_function is None:
        check(call())
        return
    frames = key_function.frames()
    frame: List[BaseException] = []
    frames.append(frame)
    try:
        status = call()
    finally:
        frames.pop()
    raise_for(status, frame)


# -- sectioned results ---------------------------------------------------------------------------

class ResultsSection(typing.Sequence[_T]):
    """One section of sectioned results: the rows whose key is ``key``, a live ``Sequence``.
    It follows its key, not its position: after later commits it reads the rows that have its
    key then, and is empty while none has. Rows are objects (instances of their declared class
    where there is one); indices may be negative; a slice gives a list; iterating goes over the
    rows as they were when the iteration began."""

    __slots__ = ("_parent", "_handle", "_key", "__weakref__")

    _parent: "SectionedResults[_T]"
    _handle: Any
    _key: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("sections come from sectioned results: sections[i]")

    @classmethod
    def _make(cls, parent: "SectionedResults[_T]", handle: Any) -> "ResultsSection[_T]":
        self: ResultsSection[_T] = object.__new__(cls)
        self._parent = parent
        self._handle = owned(handle)
        out = ffi.new("cove_value_t*")
        check(lib.cove_section_key(handle, out))
        self._key = read_value(ffi, out[0], parent.realm._resolve_link)
        return self

    @property
    def key(self) -> Any:
        """The section's key: the key path's value, or what the key function returned. Raises
        ClosedError once the realm is closed."""
        self._parent.realm._h()
        return self._key

    @property
    def sectioned(self) -> "SectionedResults[_T]":
        """The sectioned results the section belongs to."""
        return self._parent

    @property
    def is_frozen(self) -> bool:
        return self._parent.is_frozen

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        self._parent._read(lambda: lib.cove_section_count(self._handle, out))
        return int(out[0])

    def _get(self, i: int) -> _T:
        out = ffi.new("cove_object_t**")
        self._parent._read(lambda: lib.cove_section_get_object(self._handle, i, out))
        return typing.cast(_T, self._parent.realm._wrap(out[0], self._parent._class_name))

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> List[_T]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            return [self._get(i) for i in range(*index.indices(len(self)))]
        return self._get(position(index, self.__len__, f"the section {self._key!r}"))

    def __iter__(self) -> Iterator[_T]:
        return iter([self._get(i) for i in range(len(self))])

    def __repr__(self) -> str:
        try:
            size = len(self)
        except Exception:
            return f"<cove.ResultsSection {self._key!r} (invalid)>"
        return f"<cove.ResultsSection {self._key!r} ({size} row{'' if size == 1 else 's'})>"

    def observe(self, callback: Callable[["SectionedChange"], Any],
                key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` with a ``cove.SectionedChange`` of this key's rows only:
        the initial call, then their deletions, insertions and modifications as ``(0, row)``
        paths. The section is always there for its observer: when no row has the key any more
        its rows are deletions, when rows have it again they are insertions
        (``sections_to_delete`` and ``sections_to_insert`` stay empty). ``key_paths`` and errors
        as ``SectionedResults.observe``."""
        return observe("cove_section_observe", self._handle, self._parent.realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[SectionedChange]":
        """``async for change in section.changes():`` as ``SectionedResults.changes()``."""
        return ChangeStream(self._parent.realm, lambda append: self.observe(append, key_paths), initial=True)


class SectionedResults(typing.Sequence[ResultsSection[_T]]):
    """Results of objects cut into sections by a key: a live, lazy ``Sequence`` of
    ``cove.ResultsSection``, ordered by key (null first, numbers by value, strings by their UTF-8
    bytes; descending with ``ascending=False`` when sectioned ``by`` a key path). Rows within a
    section keep the results' order.

    ``len(sections)`` is the number of sections (keys some row has), ``sections[i]`` a section
    (negative indices count from the end; a slice gives a list), ``sections.keys`` the keys in
    order. Every read sees the realm's current version; frozen sectioned results
    (``freeze()``) keep theirs and may be read from any thread.
    """

    __slots__ = ("_realm", "_source", "_handle", "_finalizer", "_key_path", "_ascending", "_key_function",
                 "_function", "_class_name", "__weakref__")

    _realm: "Realm"
    _source: "Results[_T]"          # the results given to the library
    _handle: Any
    _finalizer: Any
    _key_path: Optional[str]
    _ascending: bool
    _key_function: Optional[_KeyFunction]
    _function: Optional[Callable[[Any], Any]]
    _class_name: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("sectioned results come from results.sectioned(by=key_path) or results.sectioned(key=function)")

    @classmethod
    def _make(cls, source: "Results[_T]", key_path: Optional[str], ascending: bool,
              function: Optional[Callable[[Any], Any]]) -> "SectionedResults[_T]":
        if not AVAILABLE:
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT, "this libcove has no sectioned results (cove_results_sectioned)")
        self: SectionedResults[_T] = object.__new__(cls)
        self._realm = source.realm
        self._source = source
        self._key_path = key_path
        self._ascending = ascending
        self._function = function
        self._key_function = None
        self._class_name = source.class_name or ""
        out = ffi.new("cove_sectioned_results_t**")
        if function is None:
            assert key_path is not None
            check(lib.cove_results_sectioned(source._h(), c_string(key_path, "the key path"), ascending, out))
        else:
            key_function = _KeyFunction(function, source.realm, self._class_name)
            key_function.handle = ffi.new_handle(key_function)
            _KEYS.add(key_function)
            try:
                check(lib.cove_results_sectioned_by(source._h(), lib._cove_section_key_cb, key_function.handle,
                                                    lib._cove_free_section_key, out))
            except BaseException:
                _KEYS.discard(key_function)     # a failed call never frees the userdata
                raise
            self._key_function = key_function
        self._handle = out[0]
        self._finalizer = weakref.finalize(self, release_handle, out[0])
        return self

    def _read(self, call: Callable[[], int]) -> None:
        _reading(self._key_function, call)

    # -- state ---------------------------------------------------------------------------------

    @property
    def realm(self) -> "Realm":
        """The realm the sections read (for frozen ones, the frozen realm of their version)."""
        return self._realm

    @property
    def results(self) -> "Results[_T]":
        """The results the sections are cut from (before the sort by the key path)."""
        return self._source

    @property
    def key_path(self) -> Optional[str]:
        """The key path the sections are cut by, or None for a key function."""
        return self._key_path

    @property
    def ascending(self) -> bool:
        """Whether sections go in ascending key order."""
        return self._ascending

    @property
    def is_frozen(self) -> bool:
        """Whether the sections keep one version (from ``freeze()`` or a frozen realm)."""
        return self._realm.is_frozen

    @property
    def is_valid(self) -> bool:
        """False once the realm is closed, or the owner of the list or set they read deleted."""
        return self._source.is_valid

    # -- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        out = ffi.new("size_t*")
        self._read(lambda: lib.cove_sectioned_count(self._handle, out))
        return int(out[0])

    def _section(self, i: int) -> "ResultsSection[_T]":
        out = ffi.new("cove_section_t**")
        self._read(lambda: lib.cove_sectioned_get_section(self._handle, i, out))
        return ResultsSection._make(self, out[0])

    @overload
    def __getitem__(self, index: int) -> "ResultsSection[_T]": ...
    @overload
    def __getitem__(self, index: slice) -> "List[ResultsSection[_T]]": ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            return [self._section(i) for i in range(*index.indices(len(self)))]
        return self._section(position(index, self.__len__, "sections"))

    def __iter__(self) -> Iterator["ResultsSection[_T]"]:
        # The sections as they are when iter() is called.
        return iter([self._section(i) for i in range(len(self))])

    @property
    def keys(self) -> List[Any]:
        """The section keys, in section order."""
        return [section.key for section in self]

    def __repr__(self) -> str:
        by = f"by {self._key_path}" if self._key_path is not None else "by a key function"
        state = " frozen" if self._realm._frozen else ""
        try:
            size = len(self)
        except Exception:
            return f"<cove.SectionedResults of {self._source._label} {by}{state} (invalid)>"
        return f"<cove.SectionedResults of {self._source._label} {by}{state} ({size} section{'' if size == 1 else 's'})>"

    # -- versions ------------------------------------------------------------------------------

    def freeze(self) -> "SectionedResults[_T]":
        """Frozen sectioned results: the results frozen at the realm's current version,
        sectioned the same way (by the same key path or key function), readable from any thread
        (not inside a write). Frozen sectioned results return themselves."""
        if self.is_frozen:
            return self
        return SectionedResults._make(self._source.freeze(), self._key_path, self._ascending, self._function)

    def thaw(self, realm: Optional["Realm"] = None) -> Optional["SectionedResults[_T]"]:
        """Live sectioned results of the same results and key over a live realm of the same file
        at its current version: ``realm``, by default the one they were frozen from. None when
        the owner of the list or set they read no longer exists there. Live sectioned results
        return themselves."""
        if not self.is_frozen:
            return self
        thawed = self._source.thaw(realm)
        if thawed is None:
            return None
        return SectionedResults._make(thawed, self._key_path, self._ascending, self._function)

    # -- notifications -------------------------------------------------------------------------

    def observe(self, callback: Callable[["SectionedChange"], Any],
                key_paths: Optional[Sequence[str]] = None) -> "NotificationToken":
        """Calls ``callback(change)`` with a ``cove.SectionedChange``: once with the initial
        state (``is_initial``) at the next ``realm.deliver()``, ``refresh()`` or write, then after
        each commit (of any realm of the file, in any process) that changed the sections:
        ``deletions`` (old ``(section, row)`` paths), ``insertions`` and ``modifications`` (new
        paths), ``sections_to_delete`` (old positions) and ``sections_to_insert`` (new ones).

        ``key_paths`` as for ``Results.observe``: None observes the objects deeply, a list only
        those properties, ``[]`` only rows coming and going; a change of the key path the
        sections are cut by always counts. With a key function, list the properties it reads (or
        leave None): a key changed by a commit that changed nothing observed shows at the next
        change that is. An exception the key function raises while a change is computed is
        raised by the ``deliver()``, ``refresh()`` or write that computed it, and the callback
        gets a change whose ``error`` says so (the last call). Raises FrozenError for frozen
        sectioned results, TransactionError inside a write, InvalidArgumentError for a key path
        that names no property."""
        return observe("cove_sectioned_observe", self._handle, self._realm, self, callback, key_paths)

    def changes(self, key_paths: Optional[Sequence[str]] = None) -> "ChangeStream[SectionedChange]":
        """``async for change in sections.changes():`` the changes ``observe()`` would report,
        the initial one first, as an asyncio iterator on the realm's notification descriptor
        (as ``Results.changes()``). It ends when the realm closes or after an error."""
        return ChangeStream(self._realm, lambda append: self.observe(append, key_paths), initial=True)


def sectioned(results: "Results[_T]", by: Optional[str], ascending: bool, key: Optional[Callable[[_T], Any]],
              sort: Any) -> SectionedResults[_T]:
    """``Results.sectioned``: checks the arguments and makes the sectioned results."""
    if (by is None) == (key is None):
        raise InvalidArgumentError(
            Status.INVALID_ARGUMENT, "sectioned() takes a key path (by='age') or a key function (key=...), one of them")
    source = results if sort is None else results.sorted(sort)
    if by is not None:
        if not isinstance(by, str):
            raise WrongTypeError(Status.WRONG_TYPE, f"sectioned(by=...) is a key path, got {type(by).__name__}")
        return SectionedResults._make(source, by, bool(ascending), None)
    if not callable(key):
        raise WrongTypeError(
            Status.WRONG_TYPE, f"sectioned(key=...) is a function of one object, got {type(key).__name__}")
    if not ascending:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, "sectioned(key=...) orders sections by ascending key: "
                                                            "return a key that sorts the other way, or section by a key path")
    return SectionedResults._make(source, None, True, key)
