# Types of the C module _speedups.c: the binding's per-value hot paths.
from typing import Any, Iterator, List, Optional, Tuple

MISS: object
DONE: object
FULL: object
VALUE_SIZE: int

class Accessor:
    name: str
    encoded: bytes
    def __init__(self, name: str) -> None: ...
    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any: ...

def find_int(realm: int, class_name: bytes, key: int) -> Optional[int]: ...
def take(iterator: Iterator[Any], keys: Tuple[str, ...], rows: List[List[Any]], limit: int) -> Any: ...
def pack(rows: List[List[Any]], n: int, buffer: Any) -> List[int]: ...
