"""Cove: an embedded object database with live queries.

    import cove
    with cove.open("app.cove") as realm:
        with realm.write():
            ...
"""
from __future__ import annotations

from ._errors import (
    CallbackError,
    ClosedError,
    CorruptError,
    DuplicateKeyError,
    Error,
    FrozenError,
    InternalError,
    InvalidArgumentError,
    InvalidQueryError,
    InvalidatedError,
    LockedError,
    MigrationRequiredError,
    FormatError,
    NoSpaceError,
    NotFoundError,
    OutOfRangeError,
    QueryError,
    QuerySyntaxError,
    ReadOnlyError,
    SchemaError,
    Status,
    StorageError,
    StorageIOError,
    SyncError,
    TooManyVersionsError,
    TransactionError,
    WrongThreadError,
    DecryptionError,
    WrongTypeError,
)
from ._lib import ffi as _ffi
from ._lib import lib as _lib
from ._collections import List, Map, Set
from ._declare import LinkingObjects, Property
from ._migration import Migration
from ._nested import NestedDict, NestedList
from ._notifications import (ChangeStream, CollectionChange, MapChange, NotificationToken, ObjectChange,
                             PropertyChange, SectionedChange)
from ._object import EmbeddedObject, Object
from ._projection import ProjectedProperty, ProjectedValues, Projection, projected
from ._realm import (Durability, FileSpace, Realm, RecoveredClass, Recovery, RecoverReport, compact, open, recover,
                     schema_version)
from ._results import Results
from ._sections import ResultsSection, SectionedResults
from ._subscriptions import Subscription, SubscriptionSet, SubscriptionState, SubscriptionUpdate, WaitForSync
from ._sync import ClientReset, CompensatingWrite, SyncConfig, SyncConnection, SyncProgress, SyncSession, SyncState
from ._values import ObjectId, Timestamp

__version__: str = _ffi.string(_lib.cove_version_string()).decode()
"""The version of the loaded libcove."""

__all__ = [
    "open", "Realm", "Migration", "Object", "EmbeddedObject", "Results", "List", "Set", "Map", "Property", "LinkingObjects",
    "NotificationToken", "CollectionChange", "MapChange", "ObjectChange", "PropertyChange", "ChangeStream",
    "SectionedResults", "ResultsSection", "SectionedChange", "Projection", "projected", "ProjectedProperty",
    "ProjectedValues", "NestedList", "NestedDict",
    "ObjectId", "Timestamp", "Error", "InvalidArgumentError", "WrongTypeError", "NotFoundError",
    "OutOfRangeError", "TransactionError", "InvalidatedError", "FrozenError", "ReadOnlyError",
    "ClosedError", "SchemaError", "MigrationRequiredError", "DuplicateKeyError",
    "QuerySyntaxError", "StorageError", "TooManyVersionsError", "CallbackError", "InternalError",
    "QueryError", "InvalidQueryError", "StorageIOError", "NoSpaceError", "CorruptError", "LockedError",
    "FormatError", "WrongThreadError", "DecryptionError", "Status", "schema_version", "compact", "Durability", "Recovery", "FileSpace",
    "recover", "RecoverReport", "RecoveredClass",
    "SyncConfig", "SyncSession", "SyncProgress", "CompensatingWrite", "ClientReset", "SyncState", "SyncConnection", "SyncError",
    "Subscription", "SubscriptionSet", "SubscriptionState", "SubscriptionUpdate", "WaitForSync",
    "__version__",
]
