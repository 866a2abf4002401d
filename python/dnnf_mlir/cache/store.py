"""The compile cache on disk, shared by every process of the user.

    <root>/entries/<key>/   compiled models (``entry.py``), one per key (``keys.py``)
    <root>/locks/<key>      the lock of a key (``fcntl.flock``)
    <root>/tmp/<key>.*/     builds under way
    <root>/notes/<kind>/    small documents that spare a hit some work (a model's
                            digest by its stat key, its inputs by its digest)

The root is ``$DNNF_CACHE_DIR``, else ``dnnf-mlir/compiled`` in the user's cache
directory (``$XDG_CACHE_HOME`` or ``~/.cache``). A reader verifies an entry under a
shared lock; a builder takes the key's exclusive lock, looks again (someone may
have built it meanwhile), builds in ``tmp/``, seals the entry (its checksums) and
renames it into place, so no reader ever sees half an entry and two processes
compiling the same model leave one. A corrupt entry is rebuilt, never loaded. A
cache directory that cannot be written (read-only, full disk, no permission)
degrades to compiling into a temporary directory, with a ``CacheWarning``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path

from .entry import EntryInfo, seal, touch, verified

CACHE_ENV = "DNNF_CACHE_DIR"
# What a cache directory that cannot take an entry fails with.
UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT})


class CacheWarning(UserWarning):
    """The compile cache could not be used as asked; the compilation went on without it."""


def default_root() -> Path:
    """``$DNNF_CACHE_DIR``, else ``dnnf-mlir/compiled`` in the user's cache directory."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dnnf-mlir" / "compiled"


def build_uncached(build, load):
    """``(load(directory), True)`` for a ``directory`` built by ``build`` in a temporary
    directory, deleted once ``load`` returns: ``CompileCache.fetch`` without a cache."""
    with tempfile.TemporaryDirectory(prefix="dnnf-uncached-") as scratch:
        build(Path(scratch) / "entry")
        return load(Path(scratch) / "entry"), True


class CompileCache:
    def __init__(self, root: "str | os.PathLike | None" = None):
        self.root = Path(root) if root is not None else default_root()
        self.entries_dir, self.locks_dir = self.root / "entries", self.root / "locks"
        self.tmp_dir, self.notes_dir = self.root / "tmp", self.root / "notes"

    # ----- notes

    def read_note(self, kind: str, name: str) -> str | None:
        try:
            return (self.notes_dir / kind / name).read_text()
        except OSError:
            return None

    def write_note(self, kind: str, name: str, text: str):
        """Store a note atomically; a cache that cannot take it goes without (notes only save time)."""
        directory = self.notes_dir / kind
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
            with os.fdopen(fd, "w") as file:
                file.write(text)
            os.replace(tmp, directory / name)
        except OSError:
            pass

    # ----- entries

    @contextmanager
    def _lock(self, key: str, shared: bool = False, blocking: bool = True):
        """Hold the key's lock. A shared lock in a directory this process cannot write
        is not needed: no one here can change the entry."""
        path = self.locks_dir / key
        try:
            self.locks_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            if not (shared and error.errno in UNWRITABLE):
                raise
            yield
            return
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if blocking else fcntl.LOCK_NB))
            yield
        finally:
            os.close(fd)  # releases the lock

    def fetch(self, key: str, build, load, description: dict):
        """``(load(directory), built)`` for the entry ``key``, built first by
        ``build(directory)`` (which must create ``directory``) when it is missing or
        corrupt. ``load`` must take what it needs before it returns: the directory
        may go away afterwards (``prune``, or the temporary directory of a cache that
        cannot be written)."""
        entry = self.entries_dir / key
        try:
            with self._lock(key, shared=True):
                if verified(entry) is not None:
                    touch(entry)
                    return load(entry), False
            with self._lock(key):
                if verified(entry) is not None:
                    touch(entry)
                    return load(entry), False
                if entry.exists():
                    warnings.warn(f"compile cache entry {entry} is corrupt; compiling it again", CacheWarning, stacklevel=3)
                self._build(key, build, description)
                return load(entry), True
        except OSError as error:
            if error.errno not in UNWRITABLE or not self._owns(error):
                raise
            warnings.warn(f"compile cache {self.root} cannot be written ({error.strerror}); compiling without it",
                          CacheWarning, stacklevel=3)
        return build_uncached(build, load)

    def _owns(self, error: OSError) -> bool:
        """Whether ``error`` is about the cache directory (a write without a file name,
        such as a full disk, counts), not about the model or a tool."""
        if not error.filename:
            return True
        root = os.path.realpath(self.root)
        return os.path.realpath(error.filename).startswith(root + os.sep) or os.path.realpath(error.filename) == root

    def _build(self, key: str, build, description: dict):
        """Build and seal the entry in ``tmp/``, then rename it into place (key locked)."""
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        for stale in self.tmp_dir.glob(f"{key}.*"):  # left by a process that died building it
            shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=self.tmp_dir))
        try:
            build(staging / "entry")
            seal(staging / "entry", description)
            entry = self.entries_dir / key
            if entry.exists():
                entry.rename(staging / "corrupt")
            self.entries_dir.mkdir(parents=True, exist_ok=True)
            (staging / "entry").rename(entry)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def entries(self) -> list:
        """Every entry (``EntryInfo``), least recently used first."""
        if not self.entries_dir.is_dir():
            return []
        return sorted((EntryInfo.read(p) for p in self.entries_dir.iterdir() if p.is_dir()), key=lambda e: e.last_used)

    def remove(self, key: str) -> bool:
        """Delete an entry unless a process is building or loading it (then False)."""
        try:
            with self._lock(key, blocking=False):
                entry = self.entries_dir / key
                if entry.exists():
                    self.tmp_dir.mkdir(parents=True, exist_ok=True)
                    doomed = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=self.tmp_dir))
                    entry.rename(doomed / "entry")  # gone from entries/ at once, deleted below
                for stale in self.tmp_dir.glob(f"{key}.*"):
                    shutil.rmtree(stale, ignore_errors=True)
            return True
        except BlockingIOError:
            return False

    def clear(self) -> tuple:
        """Delete every entry and note; (entries deleted, entries in use and kept)."""
        removed = kept = 0
        keys = {info.key for info in self.entries()}
        building = {p.name.split(".")[0] for p in self.tmp_dir.iterdir()} if self.tmp_dir.is_dir() else set()
        for key in sorted(keys | building):
            if not self.remove(key):
                kept += key in keys
            elif key in keys:
                removed += 1
        shutil.rmtree(self.notes_dir, ignore_errors=True)
        return removed, kept

    def prune(self, max_bytes: int) -> list:
        """Delete the least recently used entries until the rest take at most
        ``max_bytes``; the entries deleted."""
        entries = self.entries()
        total = sum(e.bytes for e in entries)
        removed = []
        for info in entries:
            if total <= max_bytes:
                break
            if self.remove(info.key):
                total -= info.bytes
                removed.append(info)
        return removed


__all__ = ["CACHE_ENV", "CacheWarning", "CompileCache", "build_uncached", "default_root"]
