"""The profiling database: lookups, first-writer-wins, concurrent writers, bad files; the
convolution schemes dnnf-tune measured, in a table of their own."""

import multiprocessing
import sqlite3

import pytest

from dnnf_mlir.fusion.profile_db import (
    PROFILE_DB_ENV, Measurement, ProfileDatabase, ProfileKey, SchemeKey, SchemeTiming, default_path,
)


def key(i: int, cpu: str = "znver5") -> ProfileKey:
    return ProfileKey(ops="ecg.matmul+ecg.add", candidate=f"candidate {i} : tensor<{i}x8xf32>", target="host", cpu=cpu)


def test_lookup_counts_hits_and_misses_and_keys_include_the_cpu(tmp_path):
    db = ProfileDatabase(tmp_path / "p.sqlite3")
    assert db.lookup(key(1)) is None
    db.store(key(1), Measurement(fused_us=5.0, separate_us=7.0))
    assert db.lookup(key(1)) == Measurement(5.0, 7.0)
    assert db.lookup(key(1, cpu="x86-64-v3")) is None
    assert (db.hits, db.misses) == (1, 2)
    assert db.lookup(key(1)).fuse and not Measurement(8.0, 7.0).fuse


def test_first_stored_measurement_wins_and_persists(tmp_path):
    path = tmp_path / "p.sqlite3"
    first = ProfileDatabase(path)
    assert first.store(key(2), Measurement(1.0, 2.0)) == Measurement(1.0, 2.0)
    # A second compile that measured the same candidate gets the stored answer.
    assert ProfileDatabase(path).store(key(2), Measurement(9.0, 2.0)) == Measurement(1.0, 2.0)
    first.close()
    reopened = ProfileDatabase(path)
    assert len(reopened) == 1 and reopened.lookup(key(2)) == Measurement(1.0, 2.0)


def _writer(path: str, worker: int, count: int):
    db = ProfileDatabase(path)
    for i in range(count):
        # Half the keys are shared by every worker, half are the worker's own.
        shared = i % 2 == 0
        stored = db.store(key(i if shared else 1000 * (worker + 1) + i), Measurement(float(worker), 10.0))
        assert stored.separate_us == 10.0
        db.lookup(key(i))


def test_concurrent_processes_write_one_valid_database(tmp_path):
    path = str(tmp_path / "p.sqlite3")
    workers, count = 4, 100
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_writer, args=(path, w, count)) for w in range(workers)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(120)
    assert [p.exitcode for p in processes] == [0] * workers
    db = ProfileDatabase(path)
    assert len(db) == count // 2 + workers * (count // 2)
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # Every shared key holds one worker's whole answer.
    assert {db.lookup(key(i)).fused_us for i in range(0, count, 2)} <= {float(w) for w in range(workers)}


def test_unusable_file_degrades_to_memory_with_a_warning(tmp_path):
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is not a database" * 100)
    with pytest.warns(UserWarning, match="unusable"):
        db = ProfileDatabase(corrupt)
    db.store(key(3), Measurement(1.0, 1.0))
    assert db.lookup(key(3)) == Measurement(1.0, 1.0)
    assert corrupt.read_bytes().startswith(b"this is not a database")


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(PROFILE_DB_ENV, str(tmp_path / "x.sqlite3"))
    assert default_path() == tmp_path / "x.sqlite3"
    monkeypatch.delenv(PROFILE_DB_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_path() == tmp_path / "dnnf-mlir" / "fusion-profile.sqlite3"


def scheme(convolution: str = "1x64x58x58 * 64x64x3x3 -> 1x64x56x56", cpu: str = "znver5", threads: int = 1):
    return SchemeKey(convolution=convolution, target="host", cpu=cpu, threads=threads)


def test_scheme_timings_round_trip_keyed_by_convolution_cpu_and_threads(tmp_path):
    path = tmp_path / "p.sqlite3"
    db = ProfileDatabase(path)
    assert db.lookup_scheme(scheme()) is None
    assert db.store_scheme(scheme(), SchemeTiming(direct_us=90.0, winograd_us=60.0)) == SchemeTiming(90.0, 60.0)
    # The first stored timing wins, as for fusion candidates.
    assert db.store_scheme(scheme(), SchemeTiming(50.0, 60.0)) == SchemeTiming(90.0, 60.0)
    db.store_scheme(scheme(threads=2), SchemeTiming(40.0, 45.0))
    db.store_scheme(scheme("1x8x22x22 * 16x8x3x3 -> 1x16x20x20"), SchemeTiming(7.0, 8.0))
    db.close()
    reopened = ProfileDatabase(path)
    assert reopened.lookup_scheme(scheme()).winograd and not reopened.lookup_scheme(scheme(threads=2)).winograd
    assert reopened.lookup_scheme(scheme(cpu="x86-64-v3")) is None
    assert reopened.scheme_choices("host", "znver5", 1) == [
        ("1x64x58x58 * 64x64x3x3 -> 1x64x56x56", True), ("1x8x22x22 * 16x8x3x3 -> 1x16x20x20", False)]
    assert reopened.scheme_choices("host", "znver5", 2) == [("1x64x58x58 * 64x64x3x3 -> 1x64x56x56", False)]
    assert reopened.scheme_choices("host", "x86-64-v3", 1) == []
    assert len(reopened) == 0  # the fusion candidates' table is apart


def test_a_tie_keeps_the_direct_convolution():
    assert not SchemeTiming(direct_us=10.0, winograd_us=10.0).winograd


def test_a_database_made_before_the_scheme_table_gains_it(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE latency (key TEXT PRIMARY KEY, ops TEXT NOT NULL, target TEXT NOT NULL, cpu TEXT NOT "
                "NULL, fused_us REAL NOT NULL, separate_us REAL NOT NULL, candidate TEXT NOT NULL, measured_at REAL "
                "NOT NULL)")
    old.execute("INSERT INTO latency VALUES (?, 'ops', 'host', 'znver5', 1.0, 2.0, 'c', 0.0)", (key(4).digest,))
    old.commit()
    old.close()
    db = ProfileDatabase(path)
    assert len(db) == 1 and db.lookup(key(4)) == Measurement(1.0, 2.0)  # kept
    assert db.store_scheme(scheme(), SchemeTiming(3.0, 2.0)) == SchemeTiming(3.0, 2.0)


def test_an_unusable_file_keeps_scheme_timings_in_memory(tmp_path):
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"not a database" * 100)
    with pytest.warns(UserWarning, match="unusable"):
        db = ProfileDatabase(corrupt)
    assert db.store_scheme(scheme(), SchemeTiming(3.0, 2.0)) == SchemeTiming(3.0, 2.0)
    assert db.scheme_choices("host", "znver5", 1) == [("1x64x58x58 * 64x64x3x3 -> 1x64x56x56", True)]
