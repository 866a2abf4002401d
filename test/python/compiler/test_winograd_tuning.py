"""dnnf-tune and what it decides: dnnf-winograd (mode auto) takes the scheme measured on
the target's CPU and thread count from the profiling database, else its cost model;
the compile says which decided, the compile cache keys the choices, and a CPU this
machine cannot run is never measured.

The model: Conv 8 -> 48 channels + ReLU, then Conv 48 -> 48 + ReLU, 3x3, padding 1, at
20x20. The cost model takes the direct convolution for the first (8 channels) and
Winograd for the second (48 channels, 25 tiles): a planted measurement saying the
opposite tells the two sources apart.
"""

import json
import subprocess
import sys

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper, save

from dnnf_mlir import InferenceSession
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.linalg_queries import linalg_ops
from dnnf_mlir.codegen.winograd_cost import prefers_winograd
from dnnf_mlir.compiler import CompileOptions, compile_model
from dnnf_mlir.compiler.options import TUNED_FIELD
from dnnf_mlir.context import make_context
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.fusion import fuse_module
from dnnf_mlir.fusion.profile_db import PROFILE_DB_ENV, ProfileDatabase, SchemeTiming
from dnnf_mlir.rewriting import rewrite_module
from dnnf_mlir.tools import tune
from dnnf_mlir.tools.common import ToolError
from dnnf_mlir.transforms.pipeline import build_pass_manager
from dnnf_mlir.winograd_tuning import tuning_cases

RNG = np.random.default_rng(2929)
SLOWER, FASTER = SchemeTiming(direct_us=10.0, winograd_us=20.0), SchemeTiming(direct_us=20.0, winograd_us=10.0)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """Two Conv + ReLU layers (the module docstring); its path."""
    nodes, weights, x = [], [], "x"
    for index, (c, k) in enumerate(((8, 48), (48, 48))):
        w = (RNG.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
        b = RNG.standard_normal(k).astype(np.float32)
        weights += [numpy_helper.from_array(w, f"w{index}"), numpy_helper.from_array(b, f"b{index}")]
        nodes += [helper.make_node("Conv", [x, f"w{index}", f"b{index}"], [f"c{index}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{index}"], [f"y{index}"])]
        x = f"y{index}"
    graph = helper.make_graph(nodes, "two_convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 20, 20])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 48, 20, 20])], weights)
    path = tmp_path_factory.mktemp("tune") / "two_convs.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def cases_of(model, target):
    module = import_onnx(model, context=make_context())
    with module.context:
        rewrite_module(module)
        fuse_module(module, "dnnf", target=target)
        return tuning_cases(module, target, 1)


def plant(path, cases, timings):
    database = ProfileDatabase(path)
    for case, timing in zip(cases, timings):
        database.store_scheme(case.key, timing)
    database.close()


def rewritten(case, options: str, stats) -> bool:
    """Whether dnnf-winograd with ``options`` rewrites ``case``'s convolution; its report in ``stats``."""
    module = ir.Module.parse(str(case.module), case.module.context)
    build_pass_manager(f"builtin.module(dnnf-winograd{{{options} stats-file={stats}}})", module.context).run(
        module.operation)
    names = [op.name for op in linalg_ops(module.operation)]
    assert ("linalg.conv_2d_nchw_fchw" in names) != ("linalg.batch_matmul" in names)
    return "linalg.batch_matmul" in names


def test_the_pass_takes_a_planted_measurement_both_ways_and_the_rule_without_one(model, tmp_path):
    cases = cases_of(model, get_target("host"))
    assert [(case.channels, case.rule) for case in cases] == [((8, 48), False), ((48, 48), True)]
    database, stats = tmp_path / "p.sqlite3", tmp_path / "stats.json"
    plant(database, cases, [FASTER, SLOWER])
    for case, measured in zip(cases, (True, False)):
        assert rewritten(case, f"profile-db={database}", stats) == measured
        assert json.loads(stats.read_text())["decided_by"] == {"measurement": 1, "rule": 0}
        assert rewritten(case, f"profile-db={database} measured=false", stats) == case.rule
        on_two = prefers_winograd(1, *case.channels, *case.output, threads=2)
        assert rewritten(case, f"profile-db={database} threads=2", stats) == on_two  # measured on 1 thread
        assert json.loads(stats.read_text())["decided_by"] == {"measurement": 0, "rule": 1}


def test_dnnf_tune_measures_once_and_the_compile_takes_its_choice(model, tmp_path, monkeypatch, capsys):
    database = tmp_path / "p.sqlite3"
    assert tune.main([str(model), "--profile-db", str(database)]) == 0
    first = capsys.readouterr().out
    assert "2 convolutions (2 measured now)" in first and first.count(" at 20x20 ") == 2
    assert tune.main([str(model), "--profile-db", str(database)]) == 0
    assert "2 convolutions (0 measured now)" in capsys.readouterr().out
    choices = ProfileDatabase(database).scheme_choices("host", get_target("host").cpu_name, 1)
    assert len(choices) == 2

    monkeypatch.setenv(PROFILE_DB_ENV, str(database))
    report = compile_model(model, tmp_path / "out")
    assert report.manifest["winograd"]["decided_by"] == {"measurement": 2, "rule": 0}
    assert report.manifest["winograd"]["winograd"] == sum(winograd for _, winograd in choices)
    assert "decided 2 by measurements (dnnf-tune), 0 by the cost model" in report.summary()

    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32)
    want = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = InferenceSession(model, use_cache=False).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_cache_key_changes_with_the_choices_read(model, tmp_path, monkeypatch):
    cases = cases_of(model, get_target("host"))
    monkeypatch.setenv(PROFILE_DB_ENV, str(tmp_path / "empty.sqlite3"))
    assert CompileOptions().cache_fields()[TUNED_FIELD] is None
    keys = []
    for name, timings in (("a", [FASTER, SLOWER]), ("b", [FASTER, FASTER]), ("c", [FASTER, SchemeTiming(30.0, 40.0)])):
        plant(tmp_path / f"{name}.sqlite3", cases, timings)
        monkeypatch.setenv(PROFILE_DB_ENV, str(tmp_path / f"{name}.sqlite3"))
        keys.append(CompileOptions().cache_fields())
    assert keys[0][TUNED_FIELD] and keys[0][TUNED_FIELD] != keys[1][TUNED_FIELD]
    assert keys[0][TUNED_FIELD] == keys[2][TUNED_FIELD]  # other times, the same choices: the same code
    # Measured on 1 thread: nothing read on 2, nor with --winograd off.
    assert CompileOptions(threads=2).cache_fields()[TUNED_FIELD] is None
    assert CompileOptions(winograd="off").cache_fields()[TUNED_FIELD] is None


def test_a_cpu_this_machine_cannot_run_uses_its_measurements_and_is_never_measured(model, tmp_path, cpu_above_host):
    cases = cases_of(model, cpu_above_host)
    assert all(case.key.cpu == cpu_above_host.cpu_name for case in cases)
    database, stats = tmp_path / "p.sqlite3", tmp_path / "stats.json"
    plant(database, cases[1:], [SLOWER])
    cpu = f"cpu={cpu_above_host.cpu}"
    assert not rewritten(cases[1], f"profile-db={database} {cpu}", stats)
    assert json.loads(stats.read_text())["decided_by"] == {"measurement": 1, "rule": 0}
    assert not rewritten(cases[0], f"profile-db={database} {cpu}", stats)  # no measurement: the rule
    assert json.loads(stats.read_text())["decided_by"] == {"measurement": 0, "rule": 1}
    with pytest.raises(ToolError, match=f"cannot run code for host \\({cpu_above_host.cpu}\\), which needs"):
        tune.main(["--cpu", cpu_above_host.cpu, "--profile-db", str(database), str(model)])
    assert len(ProfileDatabase(database).scheme_choices("host", cpu_above_host.cpu_name, 1)) == 1


@pytest.mark.parametrize("content, message", [(None, "no such model"), (b"not a model", "is not a valid ONNX model")])
def test_bad_input_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "model.onnx"
    if content is not None:
        path.write_bytes(content)
    run = subprocess.run([sys.executable, "-m", "dnnf_mlir.tools.tune", str(path), "--profile-db",
                          str(tmp_path / "p.sqlite3")], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "dnnf-tune: error: " in run.stderr and message in run.stderr
