"""A memo file held in memory, for the readers' `MemoFile` (the blob memo's and the agent
memo's): what it holds and how often it was saved."""

from __future__ import annotations


class InMemoryMemoFile:
    background = False  # in this process's memory: never written by a forked one

    def __init__(self, data: bytes | None = None) -> None:
        self.data = data
        self.saves = 0

    def load(self) -> bytes | None:
        return self.data

    def save(self, data: bytes) -> None:
        self.data = data
        self.saves += 1
