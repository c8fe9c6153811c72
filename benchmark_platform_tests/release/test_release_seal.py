"""The pure parts of a release: split assignment, sealing, PNG canary chunks."""

from __future__ import annotations

import struct
import zlib

import pytest

from benchmark_platform.release.bundle import png_with_canary
from benchmark_platform.release.seal import DEV, TEST, new_key, seal, split_of, unseal


def test_split_is_stable_and_close_to_the_share():
    ids = [f"item{i:05d}" for i in range(4000)]
    splits = [split_of(i, seed=7, test_share=0.3) for i in ids]
    assert splits == [split_of(i, seed=7, test_share=0.3) for i in ids]
    assert 0.27 < splits.count(TEST) / len(ids) < 0.33
    assert {split_of(i, seed=7, test_share=0.0) for i in ids} == {DEV}
    # a larger share only moves dev items into test, never the reverse
    assert all(split_of(i, 7, 0.5) == TEST for i, s in zip(ids, splits, strict=True) if s == TEST)


def test_sealing_is_deterministic_and_needs_the_right_key():
    key = new_key()
    first, second = seal(b"secret rows", key, "CANARY-X", "items.parquet"), seal(b"secret rows", key, "CANARY-X", "t")
    assert first == seal(b"secret rows", key, "CANARY-X", "items.parquet")  # a rebuild gives the same bytes
    assert b"CANARY-X" in first and b"secret rows" not in first and key.encode() not in first
    assert unseal(first, key) == unseal(second, key) == b"secret rows"
    with pytest.raises(ValueError, match="does not open"):
        unseal(first, new_key())
    with pytest.raises(ValueError, match="not a Fernet key"):
        seal(b"x", "not-a-key", "C", "x")


def test_png_canary_chunk_keeps_the_file_a_valid_png():
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\x00"))
        + chunk(b"IEND", b"")
    )
    marked = png_with_canary(png, "CANARY-Y")
    position, kinds = 8, []
    while position < len(marked):  # walk the chunks and check every CRC
        (length,) = struct.unpack(">I", marked[position : position + 4])
        kind, data = marked[position + 4 : position + 8], marked[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", marked[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + data)
        kinds.append(kind)
        position += 12 + length
    assert kinds == [b"IHDR", b"tEXt", b"IDAT", b"IEND"]
    assert b"canary\x00CANARY-Y" in marked
    with pytest.raises(ValueError):
        png_with_canary(b"GIF89a", "C")
