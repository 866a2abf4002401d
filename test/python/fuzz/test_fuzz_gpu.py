"""The fuzzer's GPU mode (``dnnf_mlir.fuzz.gpu``): its comparisons and checks catch wrong
outputs, invalid SPIR-V and compiler errors that are no known limit, and a fixed-seed
budget of the generator's graphs checks clean on Vulkan (lavapipe) and on OpenCL (PoCL)
in fp32, against onnxruntime within the host mode's tolerance
(|got - want| <= 1e-4 * max(1, scale) + 1e-4 * |want|).

The budget is CI's share: ``GPU_CI_GRAPHS`` graphs per target, each compiled alone
(about 2 s of compilation and up to 2 s of PoCL's kernel build each on this machine).
``DNNF_FUZZ_GPU_GRAPHS=N`` checks N graphs per target instead (a longer run);
``tools/fuzz.sh N --target vulkan`` runs a campaign that shrinks and saves what fails.
"""

import os

import numpy as np
import pytest
from hypothesis import Phase, given, seed, settings

from dnnf_mlir.compiler import CompileError
from dnnf_mlir.fuzz import gpu
from dnnf_mlir.fuzz.gpu import GPU_TARGETS, check_cases_on, refusal_name, spirv_problems
from dnnf_mlir.fuzz.graph import Case, GraphBuilder
from dnnf_mlir.fuzz.strategies import graphs
from test_fuzz import QUIET, real_failures

GPU_CI_SEED = 20261127
GPU_CI_GRAPHS = int(os.environ.get("DNNF_FUZZ_GPU_GRAPHS", "12"))


def matmul_case() -> Case:
    """A product with a bias and an activation: a kernel of the matmul schedule."""
    g = GraphBuilder()
    x = g.input((5, 33))
    w = g.constant(np.random.default_rng(0).standard_normal((33, 7)).astype(np.float32) / 6)
    y = g.one("Relu", [g.one("MatMul", [x, w], (5, 7))], (5, 7))
    return Case(g.model([y], (1,)))


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_a_clean_case_checks_clean(target):
    assert check_cases_on(target, [matmul_case()]) == []


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_a_wrong_output_is_caught(target, monkeypatch):
    """The device's outputs off by one element: a mismatch naming the element."""
    run = gpu.Artifact.run

    def off_by_one(artifact, arrays):
        outputs, times = run(artifact, arrays)
        outputs[0].flat[-1] += 1
        return outputs, times

    monkeypatch.setattr(gpu.Artifact, "run", off_by_one)
    (failure,) = check_cases_on(target, [matmul_case()])
    assert failure.signature == f"mismatch in {target} vs onnxruntime"
    assert "worst element [4, 6]" in failure.detail


def test_invalid_spirv_is_caught(tmp_path):
    (tmp_path / "kernels").mkdir()
    assert spirv_problems(tmp_path) == ["no SPIR-V binary in the artifact"]
    np.array([0x07230203, 0x00010300, 0, 1, 0], np.uint32).tofile(tmp_path / "kernels" / "k.spv")  # a header, no module
    (problem,) = spirv_problems(tmp_path)
    assert problem.startswith("k.spv: ") and "error" in problem


def test_refusals_are_named_and_other_errors_are_not():
    message = ("dnnf-lower-to-spirv: kernel kernel_0_quantize_linear: linalg.generic computes in i8, which the GPU "
               "targets do not support yet (they take f32, f16, i64, i32, i1)")
    assert refusal_name(message) == "kernel K: linalg.generic computes in i8, which the GPU targets do not support yet"
    assert refusal_name("dnnf-lower-to-spirv: kernel kernel_3_mat_mul: neither its fused schedule nor one dispatch "
                        "per op applies (vectorizing failed)") == (
        "kernel K: neither its fused schedule nor one dispatch per op applies")
    assert refusal_name("kernel k binds a buffer of 300 bytes; the device allows 256") == (
        "kernel k binds a buffer of N bytes; the device allows")
    assert refusal_name("kernel_1_add: spirv-val rejects the SPIR-V: error: ...") is None
    assert refusal_name("") is None


@pytest.mark.parametrize("message, kind", [
    ("dnnf-lower-to-opencl: kernel kernel_0_x: linalg.generic has a dynamic shape (tensor<?xf32>)", "unsupported"),
    ("dnnf-lower-to-spirv: kernel_0_x: spirv-val rejects the SPIR-V: error: bad", "CompileError"),
])
def test_compile_errors_are_refusals_only_when_they_name_a_limit(message, kind, monkeypatch):
    def refuse(*args, **kwargs):
        raise CompileError(message)

    monkeypatch.setattr(gpu, "compile_model", refuse)
    (failure,) = check_cases_on("vulkan", [matmul_case()])
    assert failure.kind == kind
    if kind == "CompileError":  # named by its message, so that a campaign shrinks each kind apart
        assert failure.signature == "CompileError in compilation for vulkan: K: spirv-val rejects the SPIR-V: error: bad"


def test_a_traceback_of_the_compiler_is_a_failure(monkeypatch):
    def crash(*args, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(gpu, "compile_model", crash)
    (failure,) = check_cases_on("opencl", [matmul_case()])
    assert failure.signature == "IndexError in compilation for opencl: list index out of range"


def test_an_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown fuzzing target 'cuda'"):
        check_cases_on("cuda", [matmul_case()])


@pytest.mark.parametrize("target", GPU_TARGETS)
def test_fixed_seed_budget_gpu(target):
    """``GPU_CI_GRAPHS`` graphs of seed ``GPU_CI_SEED`` check clean on ``target``; the
    refusals (known limits, counted apart) are printed. No shrinking (each step would
    compile again): the first failing graph is reported as drawn."""
    refused = []

    @seed(GPU_CI_SEED)
    @settings(max_examples=GPU_CI_GRAPHS, phases=(Phase.generate,), **QUIET)
    @given(graphs())
    def check(case):
        failures = check_cases_on(target, [case])
        refused.extend(f.signature for f in failures if f.kind == "unsupported")
        assert not real_failures(failures), "\n".join(map(str, failures))

    check()
    print(f"fixed-seed budget on {target}: {GPU_CI_GRAPHS} graphs of seed {GPU_CI_SEED}, {len(refused)} refused: "
          + "; ".join(sorted(set(refused))))
