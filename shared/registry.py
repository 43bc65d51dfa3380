"""One registry idiom for every name -> thing table (corpus formats, generation modes and
backends, audit measures and filters, models, converters, surrogate providers, ...).

A table is a :class:`Registry`. Entries add themselves with ``add`` or the ``register``
decorator; the built-in entries are loaded by the table's ``builtins`` function on first
lookup, with plain imports (so the import graph sees them), never by module names in strings.
A lookup of an unknown name raises the table's error type naming what was asked for, the
allowed names and the fix.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from shared.errors import ConfigError, ToolkitError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names -> entries of one kind (``what``), e.g. ``Registry[CorpusFormat]("corpus format")``.

    ``builtins`` imports the modules whose entries register themselves; it runs once, on the
    first lookup. ``error`` is the exception type an unknown name raises, ``fix`` its advice.
    """

    def __init__(
        self,
        what: str,
        *,
        builtins: Callable[[], object] | None = None,
        error: type[ToolkitError] = ConfigError,
        fix: str = "use one of them",
    ) -> None:
        self.what = what
        self._entries: dict[str, T] = {}
        self._builtins = builtins
        self._ready = builtins is None
        self._loading = threading.RLock()
        self._error = error
        self._fix = fix

    def _load(self) -> None:
        """Run ``builtins`` once. Another thread's first lookup waits until it has run (the
        demo fetched two models in two threads, and one found an empty model table); a lookup
        from inside ``builtins`` itself sees what is registered so far, as before."""
        if self._ready:
            return
        with self._loading:
            if self._builtins is not None:
                load, self._builtins = self._builtins, None
                try:
                    load()
                finally:
                    self._ready = True

    def add(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Register ``entry`` under ``name``; a different entry under a taken name needs
        ``replace=True`` (registering the same entry again is harmless)."""
        existing = self._entries.get(name)
        if existing is not None and existing is not entry and existing != entry and not replace:
            raise ValueError(
                f"{self.what} {name!r} is already registered with another entry; "
                "fix: pick another name or pass replace=True"
            )
        self._entries[name] = entry
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def decorate(entry: T) -> T:
            return self.add(name, entry)

        return decorate

    def get(self, name: str, *, setting: str = "") -> T:
        """The entry ``name``; the table's error naming ``setting`` (``[generation] mode``),
        the allowed names and the fix otherwise."""
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            where = (
                f"{setting} = {name!r} is not a {self.what}"
                if setting
                else (f"unknown {self.what} {name!r}")
            )
            raise self._error(f"{where}; allowed: {self.names()}; fix: {self._fix}") from None

    def remove(self, name: str) -> None:
        """Forget ``name`` (a plug-in that a test registered); no error when absent."""
        self._entries.pop(name, None)

    @contextlib.contextmanager
    def scoped(self) -> Iterator[Registry[T]]:
        """The table as it is now comes back on exit (what a test registered is forgotten)."""
        self._load()
        saved = dict(self._entries)
        try:
            yield self
        finally:
            self._entries.clear()
            self._entries.update(saved)

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def entries(self) -> dict[str, T]:
        """A copy of the table in registration order (built-ins in their loader's order)."""
        self._load()
        return dict(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._entries)
