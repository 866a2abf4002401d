"""The profiling database: measured latencies of fusion candidates and of convolution
schemes, kept across runs.

DNNFusion decides the yellow cells of its Table 3 (legal, profit unknown) by
measuring: latency(block + op) against latency(block) + latency(op), on the machine
the code is for. Measuring takes a compile and a few runs, so each answer is stored
in SQLite, keyed by the candidate (its op kinds, shapes and attributes, as the
canonical text of the fused candidate), the target and the CPU. The file lives in the
user's cache directory (``$DNNF_PROFILE_DB`` overrides it) and is shared by every
compile on the machine: two compiles may write at once (WAL journal, a busy timeout;
the first answer stored for a key is the one every reader uses, so they agree). A
database that cannot be opened (read-only directory, corrupt file) degrades to one
in memory, with a warning: decisions are still made, just not remembered.

A second table holds what ``dnnf-tune`` measured of each Winograd-eligible convolution
(``SchemeKey``: its shapes and epilogue, the thread count, the target and the CPU): the
direct and the Winograd time, which ``dnnf-winograd`` (mode auto) reads instead of its rule.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PROFILE_DB_ENV = "DNNF_PROFILE_DB"
# Seconds a writer waits for another compile's transaction before giving up.
BUSY_TIMEOUT = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS latency (
    key TEXT PRIMARY KEY,
    ops TEXT NOT NULL,
    target TEXT NOT NULL,
    cpu TEXT NOT NULL,
    fused_us REAL NOT NULL,
    separate_us REAL NOT NULL,
    candidate TEXT NOT NULL,
    measured_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS conv_scheme (
    key TEXT PRIMARY KEY,
    convolution TEXT NOT NULL,
    target TEXT NOT NULL,
    cpu TEXT NOT NULL,
    threads INTEGER NOT NULL,
    direct_us REAL NOT NULL,
    winograd_us REAL NOT NULL,
    measured_at REAL NOT NULL
)
"""


def default_path() -> Path:
    """``$DNNF_PROFILE_DB``, else ``fusion-profile.sqlite3`` in the user's cache directory."""
    if os.environ.get(PROFILE_DB_ENV):
        return Path(os.environ[PROFILE_DB_ENV])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dnnf-mlir" / "fusion-profile.sqlite3"


def _digest(*fields) -> str:
    """The table key of a measurement: a hash of what it depends on."""
    return hashlib.sha256("\0".join(map(str, fields)).encode()).hexdigest()


@dataclass(frozen=True)
class ProfileKey:
    """What a measurement depends on: the candidate, the target, the CPU."""

    ops: str  # op kinds, readable: "ecg.matmul+ecg.add | ecg.transpose"
    candidate: str  # canonical text of the candidate (op kinds, types, attributes)
    target: str
    cpu: str

    @property
    def digest(self) -> str:
        return _digest(self.candidate, self.target, self.cpu)


@dataclass(frozen=True)
class Measurement:
    """Latencies in microseconds: the candidate as one kernel, and as two."""

    fused_us: float
    separate_us: float

    @property
    def fuse(self) -> bool:
        """The paper's test: fuse when one kernel is no slower than the two."""
        return self.fused_us <= self.separate_us


@dataclass(frozen=True)
class SchemeKey:
    """What a convolution scheme's time depends on: the convolution (``winograd_choice.
    convolution_signature``: shapes, epilogue), the threads, the target, the CPU."""

    convolution: str
    target: str
    cpu: str
    threads: int

    @property
    def digest(self) -> str:
        return _digest(self.convolution, self.target, self.cpu, self.threads)


@dataclass(frozen=True)
class SchemeTiming:
    """Latencies in microseconds of one convolution computed directly and by Winograd."""

    direct_us: float
    winograd_us: float

    @property
    def winograd(self) -> bool:
        """Winograd only when measured faster (a tie keeps the direct, exact convolution)."""
        return self.winograd_us < self.direct_us


class ProfileDatabase:
    """Stored measurements, with the hits and misses of this run counted."""

    def __init__(self, path: "str | os.PathLike | None" = None):
        self.path = Path(path) if path is not None else default_path()
        self.hits = 0
        self.misses = 0
        self._connection = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(_SCHEMA)
            return connection
        except (OSError, sqlite3.Error) as error:
            warnings.warn(f"profiling database {self.path} unusable ({error}); measurements are not kept", stacklevel=3)
            self.path = Path(":memory:")
            connection = sqlite3.connect(":memory:", isolation_level=None)
            connection.executescript(_SCHEMA)
            return connection

    def lookup(self, key: ProfileKey) -> Optional[Measurement]:
        """The stored measurement of ``key``, counted as a hit or a miss."""
        row = self._connection.execute(
            "SELECT fused_us, separate_us FROM latency WHERE key = ?", (key.digest,)
        ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return Measurement(*row)

    def store(self, key: ProfileKey, measurement: Measurement) -> Measurement:
        """Store ``measurement`` unless another compile stored ``key`` first; returns
        the stored one (so that concurrent compiles decide alike)."""
        self._connection.execute(
            "INSERT OR IGNORE INTO latency VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key.digest, key.ops, key.target, key.cpu, measurement.fused_us, measurement.separate_us,
             key.candidate, time.time()),
        )
        row = self._connection.execute(
            "SELECT fused_us, separate_us FROM latency WHERE key = ?", (key.digest,)
        ).fetchone()
        return Measurement(*row)

    def __len__(self) -> int:
        return self._connection.execute("SELECT COUNT(*) FROM latency").fetchone()[0]

    def entries(self) -> list:
        """(ops, target, cpu, Measurement) of every stored entry, oldest first."""
        rows = self._connection.execute(
            "SELECT ops, target, cpu, fused_us, separate_us FROM latency ORDER BY measured_at"
        ).fetchall()
        return [(ops, target, cpu, Measurement(fused, separate)) for ops, target, cpu, fused, separate in rows]

    def lookup_scheme(self, key: SchemeKey) -> Optional[SchemeTiming]:
        """The stored timing of the convolution ``key``, or None."""
        row = self._connection.execute(
            "SELECT direct_us, winograd_us FROM conv_scheme WHERE key = ?", (key.digest,)).fetchone()
        return None if row is None else SchemeTiming(*row)

    def store_scheme(self, key: SchemeKey, timing: SchemeTiming) -> SchemeTiming:
        """Store ``timing`` unless ``key`` has one (the first stored wins, as for
        fusion candidates); returns the stored one."""
        self._connection.execute(
            "INSERT OR IGNORE INTO conv_scheme VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key.digest, key.convolution, key.target, key.cpu, key.threads, timing.direct_us, timing.winograd_us,
             time.time()),
        )
        return self.lookup_scheme(key)

    def scheme_choices(self, target: str, cpu: str, threads: int) -> list:
        """(convolution, Winograd or not) of every stored timing for ``target``, ``cpu``
        and ``threads``, sorted: what decides the code (the compile cache keys it)."""
        rows = self._connection.execute(
            "SELECT convolution, direct_us, winograd_us FROM conv_scheme WHERE target = ? AND cpu = ? AND threads = ? "
            "ORDER BY convolution", (target, cpu, threads)).fetchall()
        return [(convolution, SchemeTiming(direct, winograd).winograd) for convolution, direct, winograd in rows]

    def close(self):
        self._connection.close()


__all__ = ["BUSY_TIMEOUT", "PROFILE_DB_ENV", "Measurement", "ProfileDatabase", "ProfileKey", "SchemeKey", "SchemeTiming",
           "default_path"]
