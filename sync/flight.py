"""One automatic sync in flight in this process, which a forced sync joins instead of making
requests beside it (docs/cursor-sync.md, "One sync")."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Flight(Generic[T]):
    """An automatic sync making its requests; `outcome` once it has ended."""

    done: threading.Event = field(default_factory=threading.Event)
    outcome: T | None = None


class Flights(Generic[T]):
    """The flight in progress, at most one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: list[Flight[T]] = []

    @contextlib.contextmanager
    def flying(self) -> Iterator[Flight[T]]:
        """A flight from now until the block ends (its `done` set then, whatever happened)."""
        flight: Flight[T] = Flight()
        with self._lock:
            self._flights[:] = [flight]
        try:
            yield flight
        finally:
            with self._lock:
                if flight in self._flights:
                    self._flights.remove(flight)
            flight.done.set()

    def joined(self, wait_s: float) -> Flight[T] | None:
        """The flight in progress, waited for (at most `wait_s`); None when there is none."""
        with self._lock:
            flight = self._flights[0] if self._flights else None
        if flight is not None:
            flight.done.wait(wait_s)
        return flight
