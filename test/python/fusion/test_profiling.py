"""The profiling oracle decides Table 3's yellow cells from the profiling database:
a miss compiles and times the candidate and stores the answer, a hit uses it, and
the answer (not the conservative default) decides the plan."""

from pathlib import Path

import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import CodegenError
from dnnf_mlir.fusion import fuse_module, profiling
from dnnf_mlir.fusion.profile_db import Measurement, ProfileDatabase
from dnnf_mlir.fusion.profiling import ProfilingOracle
from dnnf_mlir.tools import profile as profile_tool
from dnnf_mlir.tools.common import ToolError

MODEL = Path(__file__).resolve().parents[3] / "test" / "tools" / "dnnf-run" / "Inputs" / "gelu_mlp.onnxtxt"

# MatMul -> Add -> Expand: the Add and the Expand fuse (G), then the MatMul before them
# is a yellow cell with a One-to-Many side, which the conservative oracle rejects.
YELLOW = """
func.func @y(%x: tensor<16x8xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %0 = "ecg.mat_mul"(%x, %w) : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %1 = "ecg.add"(%0, %b) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = "ecg.expand"(%1) {shape = array<i64: 2, 16, 32>} : (tensor<16x32xf32>) -> tensor<2x16x32xf32>
  return %2 : tensor<2x16x32xf32>
}
"""


def fused_ops(oracle) -> list:
    """The ops of each ecg.fused op of YELLOW fused with ``oracle``."""
    with dnnf_mlir.make_context():
        module = ir.Module.parse(YELLOW)
        fuse_module(module, "dnnf", oracle)
        body = module.body.operations[0].regions[0].blocks[0].operations
        return [[o.operation.name for o in op.opview.body_ops[:-1]] for op in body if op.operation.name == "ecg.fused"]


def test_a_miss_is_measured_and_stored_then_hits(tmp_path):
    database = ProfileDatabase(tmp_path / "p.sqlite3")
    first = ProfilingOracle(database)
    plan = fused_ops(first)
    assert (first.measured, database.misses, len(database)) == (1, 1, 1)
    (ops, target, cpu, measurement), = database.entries()
    assert ops == "ecg.add ecg.expand | ecg.mat_mul" and target == "host" and cpu == first.target.cpu_name
    assert measurement.fused_us > 0 and measurement.separate_us > 0
    second = ProfilingOracle(database)
    assert fused_ops(second) == plan and (second.measured, database.hits) == (0, 1)
    assert ("ecg.mat_mul" in plan[0]) == measurement.fuse


@pytest.mark.parametrize("fused_us, separate_us, takes_matmul", [(1.0, 2.0, True), (2.0, 1.0, False)])
def test_the_measurement_decides(tmp_path, monkeypatch, fused_us, separate_us, takes_matmul):
    monkeypatch.setattr(profiling, "measure", lambda *args: Measurement(fused_us, separate_us))
    plan = fused_ops(ProfilingOracle(ProfileDatabase(tmp_path / "p.sqlite3")))
    expected = ["ecg.mat_mul", "ecg.add", "ecg.expand"] if takes_matmul else ["ecg.add", "ecg.expand"]
    assert plan == [expected]


def test_a_candidate_that_cannot_be_built_falls_back_to_the_conservative_decision(tmp_path, monkeypatch):
    def fail(*args):
        raise CodegenError("cannot build it")

    monkeypatch.setattr(profiling, "measure", fail)
    database = ProfileDatabase(tmp_path / "p.sqlite3")
    with pytest.warns(UserWarning, match="not measured"):
        plan = fused_ops(ProfilingOracle(database))
    assert plan == [["ecg.add", "ecg.expand"]] and len(database) == 0


def test_other_targets_are_not_measured(tmp_path):
    oracle = ProfilingOracle(ProfileDatabase(tmp_path / "p.sqlite3"), target="aarch64")
    assert fused_ops(oracle) == [["ecg.add", "ecg.expand"]] and oracle.measured == 0


def test_a_cpu_this_machine_cannot_run_uses_the_database_and_otherwise_the_default(tmp_path, monkeypatch, caplog,
                                                                                    cpu_above_host):
    """Compiling for a CPU above this one never runs its code here: a miss is decided
    conservatively (one warning says so), a stored measurement for that CPU decides."""
    def never(*args):
        raise AssertionError("measured code this CPU cannot run")

    monkeypatch.setattr(profiling, "measure", never)
    database = ProfileDatabase(tmp_path / "p.sqlite3")
    oracle = ProfilingOracle(database, "host", cpu_above_host.cpu)
    with caplog.at_level("WARNING", logger="dnnf_mlir.fusion"):
        assert fused_ops(oracle) == [["ecg.add", "ecg.expand"]]
        fused_ops(oracle)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and f"cannot run code for host ({cpu_above_host.cpu})" in warned[0]
    assert (oracle.measured, len(database), database.misses) == (0, 0, 2)

    # The same candidate measured on a machine with that CPU (stored as the oracle
    # asks for it): that entry decides here.
    class MeasuredElsewhere:
        def decide(self, block_ops, op, cell):
            oracle.database.store(oracle.candidate_key(block_ops, op, cell)[1], Measurement(1.0, 2.0))
            return oracle.decide(block_ops, op, cell)

    assert fused_ops(MeasuredElsewhere()) == [["ecg.mat_mul", "ecg.add", "ecg.expand"]]
    assert (oracle.measured, len(database)) == (0, 1)


def test_dnnf_profile_refuses_a_cpu_it_cannot_measure(tmp_path, cpu_above_host):
    with pytest.raises(ToolError, match=f"cannot run code for host \\({cpu_above_host.cpu}\\), which needs"):
        profile_tool.main(["--cpu", cpu_above_host.cpu, "--profile-db", str(tmp_path / "p.sqlite3"), str(MODEL)])
