"""The machine's roofline: measured with vectors, cached per CPU, refreshed on demand."""

import json
from pathlib import Path

import pytest

from dnnf_mlir import roofline as roofline_module
from dnnf_mlir.codegen.cpu.features import VNNI_FEATURE
from dnnf_mlir.codegen.cpu.target import host_target
from dnnf_mlir.roofline import Roofline, cpu_key, machine_roofline
from dnnf_mlir.tools import roofline as roofline_tool
from dnnf_mlir.tools.common import ToolError


def _clock_ghz() -> "float | None":
    """The clock /proc/cpuinfo reports (x86 does; many Arm kernels do not)."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.partition(":")[2]) / 1e3
    return None


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "roofline.json"
    monkeypatch.setenv(roofline_module.ROOFLINE_ENV, str(path))
    return path


def test_measured_once_then_cached_then_refreshed(cache, monkeypatch):
    first = machine_roofline()
    entries = json.loads(cache.read_text())
    assert list(entries) == [cpu_key()]
    # Vector FMAs: above what two scalar FMA pipes could do at the nominal clock (4
    # FLOP per cycle), which a scalar or latency-bound loop would not reach.
    clock = _clock_ghz()
    if clock is not None:  # without a reported clock, the cache checks below still run
        assert first.fma_gflops > 4 * clock
    assert first.lanes >= 4
    # Byte dot products: vpdpbusd does four multiply-adds an i32 lane where an FMA does
    # one an f32 lane (Zen 4: 4x), vpmaddubsw + vpmaddwd two (2x); above 1.5x either way.
    if VNNI_FEATURE in host_target().features:
        assert first.int8_instruction.startswith("vpdpbusd")
    if first.int8_instruction:
        assert first.int8_gops > 1.5 * first.fma_gflops
        assert f"int8 peak {first.int8_gops:.1f} GOP/s per core ({first.int8_instruction})" in first.describe()
    else:
        assert first.int8_gops == 0.0 and "no int8 dot product" in first.describe()
    assert all(0.5 < gbs < 2000 for gbs in first.triad_gbs.values())
    assert "1" in first.triad_gbs

    def no_measuring():
        raise AssertionError("measured again although cached")

    monkeypatch.setattr(roofline_module, "measure", no_measuring)
    assert machine_roofline() == first
    monkeypatch.undo()
    monkeypatch.setenv(roofline_module.ROOFLINE_ENV, str(cache))
    refreshed = machine_roofline(refresh=True)
    assert refreshed.measured_at > first.measured_at
    assert json.loads(cache.read_text())[cpu_key()]["measured_at"] == refreshed.measured_at


@pytest.mark.skipif(bool(host_target("x86-64-v3").missing_features()), reason="needs an AVX2 (x86-64-v3) host")
def test_code_for_a_lower_cpu_has_its_own_figures(cache, monkeypatch):
    """An artifact built with --cpu x86-64-v3 is judged against 8-lane FMAs, not the
    host's widest vectors: its own entry, measured with its own vectors."""
    monkeypatch.delenv("DNNF_CPU", raising=False)
    native, avx2 = machine_roofline(), machine_roofline(cpu="x86-64-v3")
    assert avx2.lanes == 8 and native.lanes == host_target().lanes(32)
    assert avx2.int8_instruction == "vpmaddubsw + vpmaddwd + vpaddd ymm (AVX2)"  # no VNNI in x86-64-v3
    entries = json.loads(cache.read_text())
    assert set(entries) == {cpu_key(), cpu_key("x86-64-v3")}
    if host_target().cpu_name != "x86-64-v3":
        assert cpu_key("x86-64-v3") == cpu_key() + " | code for x86-64-v3"
        assert avx2.code_cpu == "x86-64-v3" and "code for x86-64-v3" in avx2.describe()
    assert native.code_cpu == "" and machine_roofline() == native


def test_kernels_judged_by_arithmetic_intensity():
    machine = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0, "2": 30.0}, measured_at=0)
    assert machine.ridge() == 5.0
    # 1 GFLOP over 10 MB in 20 ms: intensity 100, compute-bound at 50 GFLOP/s = half the peak.
    assert machine.judge(1e9, 1e7, 0.02) == pytest.approx(("compute", 0.5))
    # 10 MFLOP over 100 MB in 10 ms: intensity 0.1, memory-bound at 10 GB/s = half of 20 GB/s.
    assert machine.judge(1e7, 1e8, 0.01) == pytest.approx(("memory", 0.5))
    # Two threads: twice the peak, the 2-thread bandwidth; 4 threads use the largest measured.
    assert machine.judge(1e7, 1e8, 0.01, threads=2) == pytest.approx(("memory", 1 / 3))
    assert machine.bandwidth_gbs(4) == 30.0
    # A floor of 30 ns per call: 64 bytes (3.2 ns at 20 GB/s) in 66.4 ns reach half of floor + bandwidth.
    assert machine.judge(16, 64, 66.4e-9, floor=30e-9) == pytest.approx(("memory", 0.5))
    assert machine.judge(2e4, 64, 460e-9, floor=30e-9) == pytest.approx(("compute", 0.5))  # 200 ns of FMAs


def test_byte_dot_products_judged_by_the_int8_peak():
    machine = Roofline("znver4", "test CPU", 16, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0,
                       int8_gops=400.0, int8_instruction="vpdpbusd zmm (AVX512-VNNI)")
    # 4 GOP of byte dot products in 20 ms: 10 ms at the int8 peak, half of it; against the
    # FMA peak it would have been 200%.
    assert machine.judge(4e9, 1e7, 0.02, int8_flops=4e9) == pytest.approx(("int8", 0.5))
    # Mixed: 1 GFLOP of f32 (10 ms) and 2 GOP of int8 (5 ms) in 30 ms; the f32 part is the longer.
    assert machine.judge(3e9, 1e7, 0.03, int8_flops=2e9) == pytest.approx(("compute", 0.5))
    # The int8 peak makes 4 GOP over 300 MB memory-bound: 10 ms of dot products, 15 ms of bytes.
    assert machine.judge(4e9, 3e8, 0.03, int8_flops=4e9) == pytest.approx(("memory", 0.5))
    assert machine.judge(4e9, 3e8, 0.08) == pytest.approx(("compute", 0.5))  # the same FLOPs as f32
    # A CPU without a byte dot product: int8 FLOPs judged by the FMA peak.
    plain = Roofline("x", "test CPU", 4, fma_gflops=100.0, triad_gbs={"1": 20.0}, measured_at=0)
    assert plain.judge(4e9, 1e7, 0.08, int8_flops=4e9) == pytest.approx(("compute", 0.5))


def test_tool_shows_the_cached_figures(cache, capsys):
    assert roofline_tool.main(["--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown == json.loads(cache.read_text())[cpu_key()]
    assert roofline_tool.main([]) == 0
    assert "GFLOP/s per core" in capsys.readouterr().out
    with pytest.raises(ToolError, match="unknown CPU 'bogus'"):
        roofline_tool.main(["--cpu", "bogus"])
