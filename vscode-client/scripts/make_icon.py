"""Writes media/icon.png: the 128x128 marketplace icon (a flame on a dark rounded square).

Drawn from shapes with 4x4 supersampling and written with zlib, so it needs only the standard
library and gives the same bytes on every run: `python3 scripts/make_icon.py`.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
SAMPLES = 4
BACKGROUND = (30, 30, 46)
OUTER = (245, 124, 32)
INNER = (255, 214, 74)
OUT = Path(__file__).resolve().parent.parent / "media" / "icon.png"


def rounded_square(x: float, y: float, radius: float = 0.22) -> bool:
    """(x, y) in [0, 1]: inside a square with rounded corners."""
    dx = max(radius - x, 0.0, x - (1 - radius))
    dy = max(radius - y, 0.0, y - (1 - radius))
    return dx * dx + dy * dy <= radius * radius


def flame(x: float, y: float, cx: float, base: float, r: float, height: float) -> bool:
    """A teardrop: a circle of radius r centred above `base`, narrowing to a tip `height` up."""
    cy = base - r
    if (x - cx) ** 2 + (y - cy) ** 2 <= r * r:
        return True
    tip = cy - height
    if tip <= y <= cy:
        t = (cy - y) / height  # 0 at the circle's centre, 1 at the tip
        half = r * math.pow(1 - t, 1.4)
        bend = 0.06 * math.sin(t * math.pi) * (1 if cx < 0.5 else -1)
        return abs(x - cx - bend) <= half
    return False


def pixel(px: int, py: int) -> tuple[int, int, int, int]:
    counts = {"bg": 0, "outer": 0, "inner": 0}
    for sy in range(SAMPLES):
        for sx in range(SAMPLES):
            x = (px + (sx + 0.5) / SAMPLES) / SIZE
            y = (py + (sy + 0.5) / SAMPLES) / SIZE
            if not rounded_square(x, y):
                continue
            if flame(x, y, 0.5, 0.84, 0.23, 0.52):
                inner = flame(x, y, 0.5, 0.82, 0.12, 0.30)
                counts["inner" if inner else "outer"] += 1
            else:
                counts["bg"] += 1
    total = SAMPLES * SAMPLES
    covered = sum(counts.values())
    if covered == 0:
        return (0, 0, 0, 0)
    rgb = [
        round(
            (counts["bg"] * BACKGROUND[i] + counts["outer"] * OUTER[i] + counts["inner"] * INNER[i])
            / covered
        )
        for i in range(3)
    ]
    return (rgb[0], rgb[1], rgb[2], round(255 * covered / total))


def png(rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    raw = b"".join(b"\x00" + row for row in rows)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    rows = [b"".join(bytes(pixel(x, y)) for x in range(SIZE)) for y in range(SIZE)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(png(rows))
    print(f"make_icon: {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
