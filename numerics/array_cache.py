"""A small per-process LRU cache of derived arrays, bounded by their total bytes.

The one instance every page shares is ``annotator.caches.cache``; its keys say what a
value was derived from (a run's version, units' fingerprint, a project's label revision),
so nothing kept is ever stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class ArrayCache:
    """A small per-process LRU cache of derived arrays, bounded by their total bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key, compute: Callable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
        value = compute()
        size = getattr(value, "nbytes", 0)
        with self._lock:
            if key not in self._items and size <= self.max_bytes:
                self._items[key] = (value, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _old, (_value, old_size) = self._items.popitem(last=False)
                    self._bytes -= old_size
        return value

    def peek(self, key):
        """The value kept under ``key``, or None (nothing is computed)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
        return None

    def put(self, key, value) -> None:
        """Keep ``value`` under ``key``, replacing what was there."""
        size = getattr(value, "nbytes", 0)
        with self._lock:
            if key in self._items:
                self._bytes -= self._items.pop(key)[1]
            if size <= self.max_bytes:
                self._items[key] = (value, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _old, (_value, old_size) = self._items.popitem(last=False)
                    self._bytes -= old_size

    def discard(self, predicate: Callable[[tuple], bool]) -> int:
        """Drop every entry whose key satisfies ``predicate``; how many were dropped."""
        with self._lock:
            keys = [key for key in self._items if predicate(key)]
            for key in keys:
                _value, size = self._items.pop(key)
                self._bytes -= size
        return len(keys)

    def __contains__(self, key) -> bool:
        return key in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
