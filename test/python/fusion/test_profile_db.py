"""The profiling database: lookups, first-writer-wins, concurrent writers, bad files."""

import multiprocessing
import sqlite3

import pytest

from dnnf_mlir.fusion.profile_db import PROFILE_DB_ENV, Measurement, ProfileDatabase, ProfileKey, default_path


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
