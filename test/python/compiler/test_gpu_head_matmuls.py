"""Attention's matmuls on both GPU targets, where the matmul schedule
(``codegen/gpu/contraction_steps.py``, ``epilogue_dims.py``) must apply although the
product is written through a reshape and transpose of heads: a projection stored as
[batch, heads, S, head size] or transposed as K^T [batch, heads, head size, S] (with a
bias, a residual, or merged with a second projection as MobileBERT's and GPT-2's are,
one half stored plain), and a batch matmul of heads. Each graph is compiled for
Vulkan (lavapipe; the K^T ones for its lavapipe profile too) and OpenCL (PoCL), run
on standard normal inputs and compared with numpy in float64: fp32 within ``checking.compare``'s default
(|got - want| <= 3e-5 + 1e-4 * |want|), fp16 storage within ``half_tolerance`` (rtol 8u,
atol 4u sqrt(K) RMS(want), u = 2^-11). A wrong row, column or head moves outputs by O(1),
far above either bound. The stepped schedule's workgroup (``GpuDevice.matmul_threads``,
8x2) is checked in the dispatch plan, so a fallback to the element-wise tiling fails.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.checking import compare
from dnnf_mlir.half_tolerance import half_tolerance
from gpu_artifacts import artifact_cache

OPSET = 17
MATMUL_WORKGROUP = 16  # threads of the matmul schedule's workgroup on the generic device profile


def _model(nodes, inputs: dict, outputs: dict, inits=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
                              list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _projection(seq: int, width: int, heads: int, merged: bool, rng, perm=(0, 2, 1, 3), residual=False):
    """``x @ w + b`` stored as heads (``perm``: [0, 2, 3, 1] stores them transposed, as
    attention's K^T); ``merged``: ``w`` has a first half whose product is returned plain
    (a merged projection split in two); ``residual``: an input ``r`` of the product's
    shape added too (an epilogue operand indexed by the product's rows as well as its
    columns). Returns (model, reference, K)."""
    out = 2 * width if merged else width
    w = rng.standard_normal((width, out)).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([1, seq, heads, width // heads], np.int64), "shape")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["s"])]
    inputs = {"x": [1, seq, width]}
    if residual:
        nodes[-1] = helper.make_node("Add", ["m", "b"], ["biased"])
        nodes.append(helper.make_node("Add", ["biased", "r"], ["s"]))
        inputs["r"] = [1, seq, out]
    outputs = {"y": [[1, seq, heads, width // heads][p] for p in perm]}
    if merged:
        inits.append(numpy_helper.from_array(np.array([width, width], np.int64), "split"))
        nodes.append(helper.make_node("Split", ["s", "split"], ["plain", "h"], axis=2))
        outputs["plain"] = [1, seq, width]
    nodes += [helper.make_node("Reshape", ["h" if merged else "s", "shape"], ["r"]),
              helper.make_node("Transpose", ["r"], ["y"], perm=list(perm))]

    def heads_of(s):
        return s.reshape(1, seq, heads, -1).transpose(perm)

    def reference(x, r=0.0):
        s = x.astype(np.float64) @ w + b + r
        return [heads_of(s[..., width:]), s[..., :width]] if merged else [heads_of(s)]

    return _model(nodes, inputs, outputs, inits), reference, width


def _heads_product(batch: int, heads: int, seq: int, inner: int, width: int, perm=(0, 2, 1, 3)):
    """A batch matmul of heads, [batch, heads, seq, inner] @ [batch, heads, inner, width],
    stored back as [batch, seq, heads, width] (attention's probabilities times V), or in
    another order of dims (``perm``: [0, 1, 3, 2] stores it transposed)."""
    nodes = [helper.make_node("MatMul", ["a", "v"], ["m"]), helper.make_node("Transpose", ["m"], ["y"], perm=list(perm))]
    model = _model(nodes, {"a": [batch, heads, seq, inner], "v": [batch, heads, inner, width]},
                   {"y": [[batch, heads, seq, width][p] for p in perm]})

    def reference(a, v):
        return [(a.astype(np.float64) @ v).transpose(perm)]

    return model, reference, inner


CASES = {
    # name: (builder, arguments)
    "projection": (_projection, (40, 64, 4, False)),  # bias, heads of 16
    "projection_odd_rows": (_projection, (37, 96, 3, False)),  # 37 rows: one per thread; heads of 32
    "merged_projection": (_projection, (24, 64, 2, True)),  # half plain, half as heads
    "transposed_projection": (_projection, (32, 64, 4, False, (0, 2, 3, 1))),  # K^T through a bias
    "transposed_projection_odd": (_projection, (37, 39, 3, False, (0, 2, 3, 1))),  # S 37, heads of 13
    "transposed_residual": (_projection, (40, 64, 4, False, (0, 2, 3, 1), True)),  # K^T of x w + b + r
    "projection_residual_odd": (_projection, (37, 39, 3, False, (0, 2, 1, 3), True)),  # heads of x w + b + r
    "heads_product": (_heads_product, (1, 4, 36, 64, 32)),  # K stepped
    "heads_product_odd": (_heads_product, (3, 2, 37, 61, 45)),  # K odd: steps of 1; N odd: thread rows of 1 column
    "transposed_product": (_heads_product, (1, 2, 32, 64, 40, (0, 1, 3, 2))),  # stored [width, seq]: rows innermost
    # lavapipe's tall K^T tiles (tilings._register_tile): MobileBERT's merged Q / K^T (16x8 a
    # thread), S 144 by heads of 24 (16x4), and heads of 13 (D in no vec4s: the 4x4 tile)
    "transposed_merged_tall": (_projection, (128, 128, 4, True, (0, 2, 3, 1))),
    "transposed_projection_tall_odd": (_projection, (144, 72, 3, False, (0, 2, 3, 1))),
    "transposed_projection_odd_heads": (_projection, (40, 39, 3, False, (0, 2, 3, 1))),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    def build(name):
        builder, arguments = CASES[name]
        if builder is _projection:
            arguments = arguments[:4] + (np.random.default_rng(3),) + arguments[4:]
        return builder(*arguments)

    return artifact_cache(tmp_path_factory.mktemp("gpu-heads"), build)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("target", ["vulkan", "opencl"])
@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name, target, precision, compiled):
    _assert_matches_numpy(name, target, precision, None, compiled)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", ["transposed_projection_odd", "transposed_residual", "transposed_product",
                                  "transposed_merged_tall", "transposed_projection_tall_odd",
                                  "transposed_projection_odd_heads"])
def test_transposed_matches_numpy_on_lavapipe_profile(name, precision, compiled):
    """K^T written from the register tile through the lavapipe profile's 64-bit words."""
    _assert_matches_numpy(name, "vulkan", precision, "lavapipe", compiled)


def _assert_matches_numpy(name, target, precision, device, compiled):
    artifact, reference, k = compiled(name, target, precision, device)
    rng = np.random.default_rng(11)
    inputs = [rng.standard_normal(shape).astype(dtype) for _, dtype, shape in artifact.inputs]
    got, _ = artifact.run(inputs)
    wants = reference(*inputs)
    assert len(got) == len(wants)
    for index, (value, want) in enumerate(zip(got, wants)):
        tolerance = half_tolerance(want, k) if precision == "fp16" else ()
        result = compare(value, want, *tolerance)
        assert result.ok and not result.degenerate, f"{name} output {index} on {target} ({device}) in {precision}: {result}"


@pytest.mark.parametrize("name", ["projection", "merged_projection", "transposed_projection", "heads_product",
                                  "transposed_product"])
def test_takes_the_matmul_workgroup(name, compiled):
    """Every kernel of these graphs is a matmul written as heads, K^T through a bias
    included: each runs the matmul schedule's workgroup, not the element-wise tiling's
    (up to 128 threads)."""
    artifact, _, _ = compiled(name, "vulkan", "fp32")
    kernels = [line.split() for line in (artifact.path / "plan.txt").read_text().splitlines()
               if line.startswith("kernel ")]
    assert kernels and all(int(fields[5]) == MATMUL_WORKGROUP for fields in kernels), kernels


@pytest.mark.parametrize("name, workgroups", [
    # Q: 16x8 a thread, 2 heads of its 4 a workgroup (4 x 2 workgroups); K^T: 16 of S by 8 of D
    # a thread, 8 x 2 threads, 128 x 16 a workgroup (2 x 4 heads). The 4x4 K^T tile took 64.
    ("transposed_merged_tall", 8 + 8),
    # 16 of S by 4 of D a thread (24 is not 2 vec4s a thread for 8 workgroups), 3 x 3 threads,
    # 48 x 12 a workgroup: 3 x 2 x 3 heads (the 4x4 tile: 6 x 3 x 3).
    ("transposed_projection_tall_odd", 18),
])
def test_transposed_takes_the_tall_tile_on_lavapipe(name, workgroups, compiled):
    """On the lavapipe profile a product written transposed takes the plain matmul's
    tall thread tile, its rows along S, the dim its store makes contiguous."""
    artifact, _, _ = compiled(name, "vulkan", "fp32", "lavapipe")
    grids = [[int(n) for n in line.split()[2:5]] for line in (artifact.path / "plan.txt").read_text().splitlines()
             if line.startswith("dispatch ")]
    assert [g[0] * g[1] * g[2] for g in grids] == [workgroups], grids
