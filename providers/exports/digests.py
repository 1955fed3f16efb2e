"""A compact index of 16-byte event identities: each key's position, ~30 bytes a key.

A dict of 685,000 identities costs ~120 bytes each (a key object, a value object, the slot); a
large import holds one while it reads an export and one over the store it merges into. Here the
keys are one bytearray and the slots one array of positions (open addressing, linear probing).
"""

from __future__ import annotations

from array import array
from typing import Final

KEY_BYTES: Final = 16
_EMPTY: Final = -1
_MIN_SLOTS: Final = 64


class DigestIndex:
    """Positions of 16-byte keys in the order they were added (0, 1, 2, ...)."""

    __slots__ = ("_keys", "_mask", "_slots")

    def __init__(self, expected: int = 0) -> None:
        self._keys = bytearray()
        size = _MIN_SLOTS
        while size < 2 * expected:
            size *= 2
        self._slots = array("i", [_EMPTY]) * size
        self._mask = size - 1

    def __len__(self) -> int:
        return len(self._keys) // KEY_BYTES

    def key(self, position: int) -> bytes:
        return bytes(self._keys[position * KEY_BYTES : (position + 1) * KEY_BYTES])

    def get(self, key: bytes) -> int | None:
        """The position of `key`, None when it was never added."""
        slots, keys, mask = self._slots, self._keys, self._mask
        slot = int.from_bytes(key[:8], "little") & mask
        while (found := slots[slot]) != _EMPTY:
            start = found * KEY_BYTES
            if keys[start : start + KEY_BYTES] == key:
                return found
            slot = (slot + 1) & mask
        return None

    def add(self, key: bytes) -> tuple[int, bool]:
        """(position of `key`, whether it is new): added at the end when it was not there."""
        if len(key) != KEY_BYTES:
            raise ValueError(f"a key is {KEY_BYTES} bytes")
        slots, keys, mask = self._slots, self._keys, self._mask
        slot = int.from_bytes(key[:8], "little") & mask
        while (found := slots[slot]) != _EMPTY:
            start = found * KEY_BYTES
            if keys[start : start + KEY_BYTES] == key:
                return found, False
            slot = (slot + 1) & mask
        position = len(keys) // KEY_BYTES
        slots[slot] = position
        keys += key
        if 3 * (position + 1) > 2 * len(slots):  # at most 2/3 full: probes stay short
            self._grow()
        return position, True

    def _grow(self) -> None:
        size = 2 * len(self._slots)
        slots = array("i", [_EMPTY]) * size
        mask = size - 1
        keys = self._keys
        for position in range(len(keys) // KEY_BYTES):
            start = position * KEY_BYTES
            slot = int.from_bytes(keys[start : start + 8], "little") & mask
            while slots[slot] != _EMPTY:
                slot = (slot + 1) & mask
            slots[slot] = position
        self._slots, self._mask = slots, mask
