"""One cache entry: a directory made by ``compile_model`` and ``ENTRY_FILE``, which
lists every file with its size and CRC-32 and says what was compiled.

An entry is used only when every file it lists is there with that size and CRC-32,
and no other file is: a truncated weights file, a flipped bit, a half-copied
directory all read as corrupt. CRC-32 (zlib's, about 4 GB/s here) and not a
cryptographic hash: it guards against accidents, not against someone who can write
the cache directory, and it keeps a hit on BERT-base's 420 MB of weights near a
tenth of a second.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

ENTRY_FILE = "cache-entry.json"
CHUNK = 1 << 24


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as file:
        while chunk := file.read(CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def _files(directory: Path) -> list:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() and p.name != ENTRY_FILE)


def seal(directory: Path, description: dict):
    """Write ``ENTRY_FILE`` into ``directory``: its files' sizes and checksums, and ``description``."""
    files = {name: [(directory / name).stat().st_size, _crc32(directory / name)] for name in _files(directory)}
    document = {"format": 1, "created": time.time(), "description": description, "files": files}
    (directory / ENTRY_FILE).write_text(json.dumps(document, indent=1) + "\n")


def verified(directory: Path) -> dict | None:
    """The entry's ``ENTRY_FILE`` document when every file matches it, else None
    (missing, partial or corrupt)."""
    try:
        document = json.loads((directory / ENTRY_FILE).read_text())
        files = document["files"]
        if sorted(files) != _files(directory):
            return None
        for name, (size, crc) in files.items():
            if (directory / name).stat().st_size != size or _crc32(directory / name) != crc:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return document


@dataclass
class EntryInfo:
    """What ``dnnf-cache list`` shows of an entry."""

    key: str
    path: Path
    bytes: int
    last_used: float  # seconds since the epoch: ENTRY_FILE's mtime, touched on every hit
    description: dict  # as sealed; empty when ENTRY_FILE is unreadable

    @classmethod
    def read(cls, path: Path) -> "EntryInfo":
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        try:
            description = json.loads((path / ENTRY_FILE).read_text())["description"]
            last_used = (path / ENTRY_FILE).stat().st_mtime
        except (OSError, ValueError, KeyError, TypeError):
            description, last_used = {}, path.stat().st_mtime
        return cls(path.name, path, size, last_used, description)


def touch(directory: Path):
    """Mark the entry used now (for ``prune``); a read-only cache keeps its old times."""
    try:
        os.utime(directory / ENTRY_FILE)
    except OSError:
        pass


__all__ = ["ENTRY_FILE", "EntryInfo", "seal", "touch", "verified"]
