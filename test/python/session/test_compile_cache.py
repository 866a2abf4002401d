"""The compile cache: hits, misses, corrupt entries, a cache that cannot be written,
two processes compiling the same model at once, dnnf-cache, and dnnf-compile's use of it.

Every case compiles a small model (about a second); numerics are compared with
onnxruntime at rtol 1e-5, atol 1e-6 (one 16-term matmul and element-wise ops: only
summation order and FMA contraction differ).
"""

import errno
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from tiny_models import matmul_relu

from dnnf_mlir import InferenceSession
from dnnf_mlir.cache import ENTRY_FILE, CacheWarning, CompileCache
from dnnf_mlir.cache import store

RTOL, ATOL = 1e-5, 1e-6
X = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)


def check(session):
    want = onnxruntime.InferenceSession(matmul_relu().SerializeToString(), providers=["CPUExecutionProvider"])
    for got, expected in zip(session.run(None, {"x": X}), want.run(None, {"x": X})):
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "tiny.onnx"
    path.write_bytes(matmul_relu(batch=4).SerializeToString())
    return path


def new_session(model, cache_dir):
    """A session made with warnings turned into errors: a clean hit or miss warns of nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return InferenceSession(model, cache_dir=cache_dir)


def the_entry(cache_dir) -> Path:
    (entry,) = (Path(cache_dir) / "entries").iterdir()
    return entry


def test_miss_then_hit(model, tmp_path):
    cache = tmp_path / "cache"
    first = new_session(model, cache)
    assert first.compilations == 1
    start = time.perf_counter()
    second = new_session(model, cache)
    assert second.compilations == 0, "a second session compiled again"
    assert time.perf_counter() - start < 1.0
    check(second)
    assert not list((cache / "tmp").iterdir()), "a build left its staging directory"


def test_other_options_and_shapes_miss(model, tmp_path):
    cache = tmp_path / "cache"
    new_session(model, cache)
    assert InferenceSession(model, cache_dir=cache, fusion="none").compilations == 1
    assert InferenceSession(model, cache_dir=cache, rewrite=False).compilations == 1
    symbolic = InferenceSession(matmul_relu(), cache_dir=cache)  # another model: its batch is symbolic
    symbolic.run(None, {"x": X})
    assert symbolic.compilations == 1
    assert len(CompileCache(cache).entries()) == 4


@pytest.mark.parametrize("damage", ["truncate weights.bin", "flip a byte of the library", "drop the seal"])
def test_corrupt_entry_is_rebuilt_not_loaded(model, tmp_path, damage):
    # Built by another process: the damage is done in place, and a library this
    # process had loaded would change under its feet (and the loader would hand the
    # stale one back for the same path).
    cache = tmp_path / "cache"
    built = run_python(MAKE_SESSION, model, cache)
    assert built.returncode == 0, built.stderr
    entry = the_entry(cache)
    if damage == "truncate weights.bin":
        path = entry / "weights.bin"
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "flip a byte of the library":
        path = entry / "libdnnf_model.so"
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        (entry / ENTRY_FILE).unlink()
    with pytest.warns(CacheWarning, match="is corrupt; compiling it again"):
        session = InferenceSession(model, cache_dir=cache)
    assert session.compilations == 1
    check(session)
    assert new_session(model, cache).compilations == 0  # the rebuilt entry is sound


def test_full_disk_compiles_without_the_cache(model, tmp_path, monkeypatch):
    def no_space(directory, description):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "seal", no_space)
    cache = tmp_path / "cache"
    with pytest.warns(CacheWarning, match="cannot be written .No space left on device.; compiling without it"):
        session = InferenceSession(model, cache_dir=cache)
    check(session)
    assert not list((cache / "entries").glob("*")) and not list((cache / "tmp").iterdir())


def run_python(code: str, *args, read_only_root=False) -> subprocess.CompletedProcess:
    """``code`` in a new Python; ``read_only_root`` takes away root's power to write
    where the permissions say no (CAP_DAC_OVERRIDE), as an ordinary user has it."""
    command = [sys.executable, "-c", code, *map(str, args)]
    if read_only_root and os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override", *command]
    return subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


MAKE_SESSION = "import sys; from dnnf_mlir import InferenceSession; InferenceSession(sys.argv[1], cache_dir=sys.argv[2])"

READ_ONLY_SESSION = """
import sys, warnings, numpy as np
from dnnf_mlir import InferenceSession
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    session = InferenceSession(sys.argv[1], cache_dir=sys.argv[2])
print(session.compilations, [str(w.message) for w in caught])
np.save(sys.argv[3], session.run(None, {"x": np.ones((4, 16), np.float32)})[0])
"""


def test_read_only_cache_directory(model, tmp_path):
    """Empty and read-only: compiled without it, with a warning, nothing written. Holding
    the entry and read-only: a plain hit."""
    empty, full = tmp_path / "empty", tmp_path / "full"
    want = new_session(model, full).run(None, {"x": np.ones((4, 16), np.float32)})[0]
    for directory in (empty, full):
        directory.mkdir(exist_ok=True)
        for path in [directory, *directory.rglob("*")]:
            if path.is_dir():
                path.chmod(0o555)
    try:
        for directory, compilations, warned in ((empty, 1, True), (full, 0, False)):
            result = run_python(READ_ONLY_SESSION, model, directory, tmp_path / "y.npy", read_only_root=True)
            assert result.returncode == 0, result.stderr
            count, messages = result.stdout.strip().split(" ", 1)
            assert int(count) == compilations
            assert ("cannot be written" in messages) == warned, messages
            np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)
        assert not list(empty.iterdir())
    finally:
        for path in (empty, full, *full.rglob("*")):
            if path.is_dir():
                path.chmod(0o755)


RACER = """
import sys, time, numpy as np
from pathlib import Path
from dnnf_mlir import InferenceSession
go = Path(sys.argv[3])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.01)
session = InferenceSession(sys.argv[1], cache_dir=sys.argv[2])
np.save(sys.argv[4], session.run(None, {"x": np.ones((4, 16), np.float32)})[0])
print(session.compilations)
"""


def test_two_processes_compiling_at_once(model, tmp_path):
    """Both start compiling the same model at the same moment: one compiles, the
    other waits for it and loads its entry; one entry is left, nothing half-written."""
    cache, go = tmp_path / "cache", tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, model, cache, go, tmp_path / f"y{i}.npy"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(2)
    ]
    for racer in racers:
        assert racer.stdout.readline().strip() == "ready"
    go.touch()
    results = [racer.communicate() for racer in racers]
    for racer, (out, err) in zip(racers, results):
        assert racer.returncode == 0, err
    assert sorted(int(out.split()[-1]) for out, _ in results) == [0, 1]
    np.testing.assert_array_equal(np.load(tmp_path / "y0.npy"), np.load(tmp_path / "y1.npy"))
    assert len(CompileCache(cache).entries()) == 1
    assert not list((cache / "tmp").iterdir())
    assert new_session(model, cache).compilations == 0


def dnnf(tool: str, *args, cache=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    if cache is not None:
        env["DNNF_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-m", f"dnnf_mlir.tools.{tool}", *map(str, args)],
                          capture_output=True, text=True, env=env)


def test_dnnf_cache_list_prune_clear(model, tmp_path):
    cache = tmp_path / "cache"
    new_session(model, cache)
    InferenceSession(model, cache_dir=cache, fusion="none")
    listing = dnnf("cache", "list", cache=cache)
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.count("tiny [x=4x16] host") == 2 and "fusion=none" in listing.stdout
    assert "2 entries" in listing.stdout
    older, newer = CompileCache(cache).entries()  # least recently used first
    pruned = dnnf("cache", "--cache-dir", cache, "prune", "--max-size", str(newer.bytes))
    assert pruned.returncode == 0 and "deleted 1 entries" in pruned.stdout, pruned.stdout + pruned.stderr
    assert [e.key for e in CompileCache(cache).entries()] == [newer.key]
    bad = dnnf("cache", "prune", "--max-size", "lots", cache=cache)
    assert bad.returncode == 1
    assert bad.stderr == "dnnf-cache: error: --max-size expects a size such as 500M or 2G, got 'lots'\n"
    cleared = dnnf("cache", "clear", cache=cache)
    assert cleared.returncode == 0 and "deleted 1 entries" in cleared.stdout
    assert CompileCache(cache).entries() == []
    assert new_session(model, cache).compilations == 1


def test_dnnf_compile_uses_the_cache(model, tmp_path):
    cache = tmp_path / "cache"
    first = dnnf("compile", model, "-o", tmp_path / "a", "--no-profile", cache=cache)
    assert first.returncode == 0, first.stderr
    assert "from the compile cache" not in first.stdout
    second = dnnf("compile", model, "-o", tmp_path / "b", "--no-profile", cache=cache)
    assert second.returncode == 0, second.stderr
    assert "from the compile cache" in second.stdout
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["inputs"][0]["shape"] == [4, 16]
    assert not (tmp_path / "b" / ENTRY_FILE).exists()
    run = dnnf("run", tmp_path / "b", "--check")
    assert run.returncode == 0 and "ok output 0 vs float64" in run.stdout, run.stdout + run.stderr
    fresh = dnnf("compile", model, "-o", tmp_path / "c", "--no-profile", "--no-cache", cache=tmp_path / "other")
    assert fresh.returncode == 0 and "from the compile cache" not in fresh.stdout
    assert not (tmp_path / "other").exists()
    # The session finds what dnnf-compile stored (same options: threads=1, no profiling).
    assert InferenceSession(model, cache_dir=cache, threads=1).compilations == 0
