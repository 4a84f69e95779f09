"""State that lives for a process, each piece owned by one object: a :class:`Setting` (one value, set for the process
or for a block) and a :class:`Memo` (values computed once per process, by key). No module keeps such state in a bare
table or a ``global``; a test reads that from the source."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Hashable


class Setting:
    """One process-wide value: ``value`` (``default`` until :meth:`set`), set for the rest of the process
    (:meth:`set`) or for a block (:meth:`within`, which restores the value before it)."""

    def __init__(self, default: Any = None):
        self._value = default

    @property
    def value(self) -> Any:
        return self._value

    def set(self, value: Any) -> Any:
        self._value = value
        return value

    @contextmanager
    def within(self, value: Any):
        before = self._value
        self._value = value
        try:
            yield value
        finally:
            self._value = before


class Memo:
    """Values computed once per process, by key: :meth:`get` computes a missing one with ``compute()``; :meth:`put`
    records one computed elsewhere; :meth:`peek` reads one without computing (None where there is none)."""

    def __init__(self):
        self._values: dict = {}

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        if key not in self._values:
            self._values[key] = compute()
        return self._values[key]

    def put(self, key: Hashable, value: Any) -> Any:
        self._values[key] = value
        return value

    def peek(self, key: Hashable) -> Any:
        return self._values.get(key)

    def clear(self) -> None:
        self._values.clear()
