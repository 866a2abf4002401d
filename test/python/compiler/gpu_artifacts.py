"""GPU artifacts of small test graphs, compiled once per graph, target and precision,
and their outputs checked against onnxruntime's."""

import subprocess

import numpy as np
import onnx

from dnnf_mlir.checking import compare
from dnnf_mlir.half_tolerance import half_tolerance
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.tools.common import onnxruntime_session


def artifact_cache(directory, build):
    """``get(name, target, precision, device=None)``: (the ``Artifact`` of ``build(name)``'s
    model, compiled into ``directory`` for ``device``'s profile (None: the target's default),
    the rest of what ``build`` returned), compiled the first time it is asked for."""
    cache = {}

    def get(name, target, precision, device=None):
        key = (name, target, precision, device)
        if key not in cache:
            model, *rest = build(name)
            path = directory / f"{name}.onnx"
            onnx.save(model, path)
            out = directory / f"{name}-{target}-{precision}-{device or 'default'}"
            compile_model(path, out, target=target, precision=precision, device=device)
            cache[key] = (Artifact(out), *rest)
        return cache[key]

    return get


def assert_matches_onnxruntime(artifact, seed: int):
    """Run ``artifact`` on standard normal inputs (``numpy.random.default_rng(seed)``) and
    check every output against onnxruntime's within ``checking.compare``'s default
    tolerance (3e-5 + 1e-4 * |want| per element), none of them degenerate."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape).astype(dtype) for _, dtype, shape in artifact.inputs]
    outputs, _ = artifact.run(inputs)
    want = onnxruntime_session(artifact.manifest["model"]).run(
        None, {name: array for (name, _, _), array in zip(artifact.inputs, inputs)})
    for got, expected in zip(outputs, want):
        result = compare(got, expected)
        assert result.ok and not result.degenerate, result


def dispatched_kernels(artifact) -> list:
    """The kernel of each dispatch of one run of ``artifact`` on zero inputs, in order."""
    session = artifact.session()
    session.run([np.zeros(shape, dtype) for _, dtype, shape in artifact.inputs])
    return [kernel for kernel, _ in session.dispatch_times()]


def assert_spirv_valid(artifact):
    """Every SPIR-V binary of the Vulkan ``artifact`` (at least one) passes ``spirv-val``."""
    binaries = sorted((artifact.path / "kernels").glob("*.spv"))
    assert binaries
    for binary in binaries:
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", str(binary)], capture_output=True, text=True)
        assert check.returncode == 0, f"{binary.name}: {check.stdout}{check.stderr}"


def assert_matches_reference(artifact, reference, k: int, precision: str, seed: int, what: str):
    """Run ``artifact`` (one output) on standard normal inputs (``numpy.random.default_rng(seed)``)
    and check it against ``reference({name: input})`` (numpy, float64): in fp32 within
    ``checking.compare``'s default, in fp16 storage within ``half_tolerance`` for sums
    of ``k`` products; not degenerate."""
    rng = np.random.default_rng(seed)
    inputs = {n: rng.standard_normal(shape).astype(dtype) for n, dtype, shape in artifact.inputs}
    (got,), _ = artifact.run([inputs[n] for n, _, _ in artifact.inputs])
    want = reference(inputs)
    result = compare(got, want, *(half_tolerance(want, k) if precision == "fp16" else ()))
    assert result.ok and not result.degenerate, f"{what} in {precision}: {result}"
