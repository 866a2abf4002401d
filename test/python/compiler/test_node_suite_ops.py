"""The ONNX ops the node suite adds, compiled for the host and checked against onnxruntime
on the shapes models use (the node suite runs them in the interpreter only, on tiny shapes).

Each case is one node with random inputs; outputs must match onnxruntime's within
rtol 1e-5 and atol 1e-5 (float32 results of sums over at most 64 terms, whose rounding
differs from onnxruntime's only in summation order), integers and booleans exactly.
DFT sums up to 512 terms of magnitude up to 20 against onnxruntime's FFT: atol 1e-4.
"""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from dnnf_mlir import InferenceSession
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.frontend.onnx_types import OnnxImportError

RTOL = ATOL = 1e-5
_TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.float64: TensorProto.DOUBLE,
          np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.uint8: TensorProto.UINT8,
          np.int8: TensorProto.INT8, np.uint16: TensorProto.UINT16, np.bool_: TensorProto.BOOL}


def one_node(op_type: str, feeds: dict, outputs: int = 1, opset: int = 23, constants: dict | None = None, **attrs):
    """A model of one ``op_type`` node reading ``feeds`` (graph inputs, in order; None skips a slot)
    and ``constants`` (initializers, by input position)."""
    constants = constants or {}
    names = [None if value is None else name for name, value in feeds.items()]
    for index, value in constants.items():
        names.insert(index, f"c{index}")
    node = helper.make_node(op_type, [n or "" for n in names], [f"y{i}" for i in range(outputs)], **attrs)
    inputs = [helper.make_tensor_value_info(n, _TYPES[v.dtype.type], v.shape) for n, v in feeds.items() if v is not None]
    initializers = [helper.make_tensor(f"c{i}", _TYPES[v.dtype.type], v.shape, v.flatten().tolist())
                    for i, v in constants.items()]
    graph = helper.make_graph([node], op_type.lower(), inputs,
                              [onnx.ValueInfoProto(name=f"y{i}") for i in range(outputs)], initializers)
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
    for output in model.graph.output:  # ONNX infers none through MeanVarianceNormalization's function body
        if not output.type.tensor_type.elem_type:
            output.type.tensor_type.elem_type = inputs[0].type.tensor_type.elem_type
    return model


def check(model, feeds: dict, atol: float = ATOL):
    feeds = {name: value for name, value in feeds.items() if value is not None}
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    assert len(got) == len(want)
    for index, (ours, theirs) in enumerate(zip(got, want)):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (index, ours.dtype, ours.shape, theirs.shape)
        if np.issubdtype(theirs.dtype, np.floating):
            np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=atol, err_msg=f"output {index}")
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=f"output {index}")


def randn(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ----- Attention -----

# name -> (Q, K, V shapes, mask shape and type or None, past length or None, attributes)
ATTENTIONS = {
    # A GPT-style decode step: grouped-query heads, a KV cache, a boolean padding mask, causal.
    "gqa-decode-cache": ((2, 8, 1, 32), (2, 2, 1, 32), (2, 2, 1, 32), ((2, 1, 1, 17), np.bool_), 16, {"is_causal": 1}),
    # A BERT-style encoder in the 3-D layout (heads split by the op), an additive float mask.
    "3d-encoder-float-mask": ((2, 24, 64), (2, 24, 64), (2, 24, 64), ((2, 1, 24, 24), np.float32), None,
                              {"q_num_heads": 4, "kv_num_heads": 4}),
    # Prefill with softcap, a scale, a 2-D mask, the scores after the bias as output 3.
    "prefill-softcap-mode2": ((1, 4, 12, 16), (1, 4, 12, 16), (1, 4, 12, 8), ((12, 12), np.float32), None,
                              {"softcap": 2.0, "scale": 0.3, "qk_matmul_output_mode": 2}),
}


@pytest.mark.parametrize("name", ATTENTIONS)
def test_attention(name):
    q, k, v, mask, past, attrs = ATTENTIONS[name]
    rng = np.random.default_rng(0)
    feeds = {"Q": randn(rng, *q), "K": randn(rng, *k), "V": randn(rng, *v), "mask": None, "past_key": None,
             "past_value": None}
    if mask is not None:
        shape, dtype = mask
        feeds["mask"] = rng.random(shape) > 0.2 if dtype == np.bool_ else randn(rng, *shape)
    if past is not None:
        feeds["past_key"] = randn(rng, k[0], k[1], past, k[3])
        feeds["past_value"] = randn(rng, v[0], v[1], past, v[3])
    outputs = 4 if "qk_matmul_output_mode" in attrs else 3 if past is not None else 1
    check(one_node("Attention", feeds, outputs=outputs, **attrs), feeds)


# ----- CastLike -----


@pytest.mark.parametrize("source,target", [(np.float32, np.int32), (np.int64, np.float32), (np.float32, np.float16)])
def test_cast_like(source, target):
    rng = np.random.default_rng(1)
    x = (randn(rng, 4, 33) * 100).astype(source)
    feeds = {"x": x, "like": np.zeros((1,), target)}
    check(one_node("CastLike", feeds), feeds)


# ----- element-wise and normalizations -----

# name -> (op type, input shape, attributes, opset)
UNARY = {
    "swish": ("Swish", (4, 300), {"alpha": 0.7}, 24),
    "mish": ("Mish", (4, 300), {}, 22),
    "celu": ("Celu", (4, 300), {"alpha": 1.5}, 12),
    "thresholded-relu": ("ThresholdedRelu", (4, 300), {"alpha": 0.3}, 22),
    "rms-normalization": ("RMSNormalization", (2, 16, 768), {"epsilon": 1e-6}, 23),
    "lp-normalization-l1": ("LpNormalization", (8, 64, 7), {"axis": 1, "p": 1}, 22),
    "lp-normalization-l2": ("LpNormalization", (8, 640), {}, 22),
    "mean-variance": ("MeanVarianceNormalization", (2, 8, 12, 12), {}, 13),
    "hardmax": ("Hardmax", (4, 10, 33), {"axis": 1}, 13),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    op_type, shape, attrs, opset = UNARY[name]
    rng = np.random.default_rng(2)
    feeds = {"x": randn(rng, *shape)}
    constants = {1: randn(rng, shape[-1])} if op_type == "RMSNormalization" else None
    check(one_node(op_type, feeds, opset=opset, constants=constants, **attrs), feeds)


def test_group_normalization():
    rng = np.random.default_rng(3)
    feeds = {"x": randn(rng, 2, 32, 14, 14), "scale": randn(rng, 32), "bias": randn(rng, 32)}
    check(one_node("GroupNormalization", feeds, opset=21, num_groups=8, epsilon=1e-5), feeds)


def test_is_nan_and_is_inf():
    x = np.random.default_rng(4).standard_normal(257).astype(np.float32)
    x[::5], x[1::7], x[2::11] = np.nan, np.inf, -np.inf
    for op_type, attrs in [("IsNaN", {}), ("IsInf", {}), ("IsInf", {"detect_negative": 0})]:
        check(one_node(op_type, {"x": x}, opset=20, **attrs), {"x": x})


# ----- positional: Trilu, CumSum, OneHot, EyeLike -----


@pytest.mark.parametrize("upper,k", [(1, 0), (0, -2), (1, 3)])
def test_trilu(upper, k):
    feeds = {"x": randn(np.random.default_rng(5), 2, 64, 48)}
    check(one_node("Trilu", feeds, opset=14, constants={1: np.array(k, np.int64)}, upper=upper), feeds)


@pytest.mark.parametrize("dtype,axis,exclusive,reverse", [
    (np.float32, 1, 0, 0), (np.float32, -1, 1, 0), (np.int64, 0, 0, 1), (np.int32, 2, 1, 1)])
def test_cumsum(dtype, axis, exclusive, reverse):
    x = (np.random.default_rng(6).standard_normal((16, 40, 24)) * 10).astype(dtype)
    model = one_node("CumSum", {"x": x}, opset=14, constants={1: np.array(axis, np.int64)},
                     exclusive=exclusive, reverse=reverse)
    check(model, {"x": x})


@pytest.mark.parametrize("dtype,shape,axis,exclusive,reverse", [
    (np.int64, (3, 300, 5), 1, 0, 0), (np.int64, (3, 300, 5), 1, 1, 1), (np.int32, (2, 1024), -1, 1, 0),
    (np.int64, (200,), 0, 0, 1), (np.float32, (4, 1024), 1, 0, 0), (np.float32, (131, 3), 0, 1, 1)])
def test_cumsum_in_blocks(dtype, shape, axis, exclusive, reverse):
    """Axes of 128 elements or more are summed in blocks (zero-padded to whole blocks at 131,
    200 and 300): integers exactly; floats (partial sums up to about 300 of terms of magnitude
    10, float32 ulp 3e-5 there, added in another order than onnxruntime's) within 1e-3."""
    x = (np.random.default_rng(6).standard_normal(shape) * 10).astype(dtype)
    model = one_node("CumSum", {"x": x}, opset=14, constants={1: np.array(axis, np.int64)},
                     exclusive=exclusive, reverse=reverse)
    check(model, {"x": x}, atol=1e-3)


def test_one_hot():
    indices = np.random.default_rng(7).integers(-12, 12, (4, 9)).astype(np.int64)
    constants = {1: np.array(10, np.int64), 2: np.array([-1.5, 2.0], np.float32)}
    check(one_node("OneHot", {"i": indices}, opset=11, constants=constants, axis=1), {"i": indices})


def test_eye_like():
    x = np.zeros((5, 7), np.float32)
    check(one_node("EyeLike", {"x": x}, opset=22, k=-1, dtype=TensorProto.INT32), {"x": x})


# ----- Einsum -----

# equation -> operand shapes, as models write them
EINSUMS = {
    "bhqd,bhkd->bhqk": [(2, 4, 16, 32), (2, 4, 24, 32)],  # attention scores
    "bid,jd->bij": [(2, 10, 64), (48, 64)],  # a projection by a transposed weight
    "...ij,...jk->...ik": [(3, 1, 8, 16), (1, 5, 16, 12)],  # batch axes broadcast
    "ij->ji": [(17, 9)],
    "bii->bi": [(3, 7, 7)],  # a batched diagonal
    "i,i": [(100,), (100,)],  # implicit output: the inner product, a scalar
    "i,j->ij": [(7,), (9,)],  # outer product
    "ij,jk,kl->il": [(6, 8), (8, 5), (5, 4)],  # a chain of three
    "abc->ca": [(4, 5, 6)],  # b summed out
}


@pytest.mark.parametrize("equation", EINSUMS)
def test_einsum(equation):
    rng = np.random.default_rng(8)
    feeds = {f"x{i}": randn(rng, *shape) for i, shape in enumerate(EINSUMS[equation])}
    check(one_node("Einsum", feeds, opset=12, equation=equation), feeds)


def test_einsum_integers():
    rng = np.random.default_rng(9)
    feeds = {"a": rng.integers(-50, 50, (3, 4, 5)).astype(np.int32), "b": rng.integers(-50, 50, (5, 6)).astype(np.int32)}
    check(one_node("Einsum", feeds, opset=12, equation="abc,cd->abd"), feeds)


# ----- RotaryEmbedding -----

# name -> (input shape, attributes, position ids or not, cache rows)
ROTARIES = {
    "llama-4d-positions": ((2, 8, 12, 64), {}, True, 64),
    "gpt-neox-3d-partial": ((2, 12, 4 * 32), {"num_heads": 4, "rotary_embedding_dim": 16}, True, 40),
    "interleaved-4d-cache": ((1, 4, 6, 32), {"interleaved": 1}, False, None),
}


@pytest.mark.parametrize("name", ROTARIES)
def test_rotary_embedding(name):
    shape, attrs, with_positions, rows = ROTARIES[name]
    rng = np.random.default_rng(10)
    batch, length = shape[0], shape[2] if len(shape) == 4 else shape[1]
    half = attrs.get("rotary_embedding_dim", shape[-1] if len(shape) == 4 else shape[-1] // attrs["num_heads"]) // 2
    cache_shape = (rows, half) if with_positions else (batch, length, half)
    angles = rng.uniform(0, 2 * np.pi, cache_shape)
    feeds = {"x": randn(rng, *shape), "cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}
    if with_positions:
        feeds["positions"] = rng.integers(0, rows, (batch, length)).astype(np.int64)
    check(one_node("RotaryEmbedding", feeds, **attrs), feeds)


# ----- LpPool, CumProd, CenterCropPad, windows -----


@pytest.mark.parametrize("p,attrs", [
    (2, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    (3, {"kernel_shape": [2, 2], "dilations": [2, 2]}),
    (1, {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"}),
])
def test_lp_pool(p, attrs):
    feeds = {"x": randn(np.random.default_rng(11), 2, 8, 15, 15)}
    check(one_node("LpPool", feeds, opset=18, p=p, **attrs), feeds)


@pytest.mark.parametrize("dtype,axis,exclusive,reverse", [(np.float32, 1, 0, 0), (np.int64, 0, 1, 1)])
def test_cumprod(dtype, axis, exclusive, reverse):
    x = np.random.default_rng(12).uniform(0.5, 1.5, (6, 20, 3)).astype(dtype)
    if dtype == np.int64:
        x = np.random.default_rng(12).integers(-3, 4, (6, 20, 3)).astype(dtype)
    model = one_node("CumProd", {"x": x}, opset=26, constants={1: np.array(axis, np.int64)},
                     exclusive=exclusive, reverse=reverse)
    check(model, {"x": x})


def test_center_crop_pad():
    feeds = {"x": randn(np.random.default_rng(13), 3, 20, 11, 5)}
    check(one_node("CenterCropPad", feeds, opset=18, constants={1: np.array([15, 14], np.int64)}, axes=[1, 2]), feeds)


@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window(op_type, periodic):
    x = np.zeros((1,), np.float32)  # the model needs an input: the window is added to it
    window = helper.make_node(op_type, ["n"], ["w"], periodic=periodic)
    add = helper.make_node("Add", ["w", "x"], ["y0"])
    graph = helper.make_graph([window, add], "window", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [400])],
                              [helper.make_tensor("n", TensorProto.INT64, [], [400])])
    check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": x})


# ----- scatters and GatherND -----


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_nd(reduction):
    """A KV-cache write: rows of (batch, position) replaced by new ones (distinct when not reduced)."""
    rng = np.random.default_rng(14)
    rows = np.stack(np.meshgrid(np.arange(2), rng.choice(16, 3, replace=False), indexing="ij"), -1).astype(np.int64)
    rows[0, 0, 1] -= 16  # a negative index
    feeds = {"data": randn(rng, 2, 16, 8, 4), "indices": rows, "updates": randn(rng, 2, 3, 8, 4)}
    check(one_node("ScatterND", feeds, opset=18, reduction=reduction), feeds)


@pytest.mark.parametrize("reduction", ["none", "mul", "min"])
def test_scatter_elements(reduction):
    """Indices covering part of the other axis, negative ones, duplicates only when reduced."""
    rng = np.random.default_rng(15)
    indices = np.stack([rng.permutation(9)[:4] - 9 * (i % 2) for i in range(5)], 1).astype(np.int64)
    if reduction != "none":
        indices[1] = indices[0]
    feeds = {"data": randn(rng, 9, 7), "indices": indices, "updates": randn(rng, 4, 5)}
    check(one_node("ScatterElements", feeds, opset=18, axis=0, reduction=reduction), feeds)


def test_gather_nd_batch_dims():
    rng = np.random.default_rng(16)
    feeds = {"data": randn(rng, 3, 5, 6, 4), "indices": rng.integers(-5, 5, (3, 7, 1)).astype(np.int64)}
    feeds["indices"] = np.concatenate([feeds["indices"], rng.integers(0, 6, (3, 7, 1))], -1).astype(np.int64)
    check(one_node("GatherND", feeds, opset=13, batch_dims=1), feeds)


def test_attention_without_heads_for_3d_inputs_is_refused():
    q = np.zeros((1, 4, 8), np.float32)
    with pytest.raises(OnnxImportError, match=r"Attention, opset 23\): 3-D inputs need the q_num_heads"):
        import_onnx(one_node("Attention", {"Q": q, "K": q, "V": q}))


# ----- TopK -----


@pytest.mark.parametrize("dtype,shape,axis,k,largest", [
    (np.float32, (4, 1000), -1, 8, 1),  # sampling from logits
    (np.float32, (3, 50, 6), 1, 5, 0),
    (np.int32, (6, 40), 1, 6, 1),  # many ties: the lower index first
])
def test_top_k(dtype, shape, axis, k, largest):
    rng = np.random.default_rng(17)
    x = randn(rng, *shape) if dtype == np.float32 else rng.integers(-4, 4, shape).astype(dtype)
    if dtype == np.float32:
        x[0, :3] = -np.inf  # the masking sentinel among the values
    model = one_node("TopK", {"x": x}, outputs=2, opset=11, constants={1: np.array([k], np.int64)}, axis=axis,
                     largest=largest)
    check(model, {"x": x})


# ----- GridSample -----


@pytest.mark.parametrize("mode,padding,align", [
    ("linear", "zeros", 0), ("linear", "border", 1), ("nearest", "reflection", 0), ("cubic", "zeros", 1),
    ("cubic", "reflection", 1),
])
def test_grid_sample(mode, padding, align):
    """A flow-warp-like sampling: the grid reaches 20% past the borders."""
    rng = np.random.default_rng(18)
    feeds = {"x": randn(rng, 2, 8, 24, 32), "grid": rng.uniform(-1.2, 1.2, (2, 16, 20, 2)).astype(np.float32)}
    check(one_node("GridSample", feeds, opset=20, mode=mode, padding_mode=padding, align_corners=align), feeds)


def test_grid_sample_volumetric():
    rng = np.random.default_rng(19)
    feeds = {"x": randn(rng, 1, 3, 6, 7, 8), "grid": rng.uniform(-1.1, 1.1, (1, 4, 5, 6, 3)).astype(np.float32)}
    check(one_node("GridSample", feeds, opset=22, mode="linear", padding_mode="border"), feeds)


# ----- DFT -----


@pytest.mark.parametrize("shape,length,inverse,onesided", [
    ((2, 400, 1), 512, 0, 1),  # an audio frame's rfft, zero-padded
    ((3, 64, 5, 2), None, 1, 0),  # a complex inverse along axis 1
    ((2, 33, 2), 64, 1, 1),  # irfft of a one-sided spectrum
])
def test_dft(shape, length, inverse, onesided):
    x = randn(np.random.default_rng(20), *shape)
    constants = {1: np.array(length, np.int64)} if length else {}
    constants[2] = np.array(1, np.int64)
    feeds = {"x": x} if length else {"x": x, "dft_length": None}
    model = one_node("DFT", feeds, opset=20, constants=constants, inverse=inverse, onesided=onesided)
    check(model, {"x": x}, atol=1e-4)


# ----- CausalConvWithState (opset 27: onnxruntime 1.32 has no kernel; ONNX's reference checks it) -----


@pytest.mark.parametrize("with_past,activation", [(True, "silu"), (False, "none")])
def test_causal_conv_with_state(with_past, activation):
    """A Mamba-style decode step and a prefill: 256 channels, kernel 4."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(21)
    length = 1 if with_past else 64
    feeds = {"x": randn(rng, 2, 256, length), "w": randn(rng, 256, 1, 4), "b": randn(rng, 256),
             "past": randn(rng, 2, 256, 3) if with_past else None}
    model = one_node("CausalConvWithState", feeds, outputs=2, opset=27, activation=activation)
    feeds = {name: value for name, value in feeds.items() if value is not None}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = InferenceSession(model, use_cache=False, threads=1).run(None, feeds)
    for ours, theirs in zip(got, want):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)


# ----- AffineGrid and ReverseSequence -----


@pytest.mark.parametrize("size,align", [((2, 3, 24, 32), 0), ((1, 2, 5, 6, 7), 1)])
def test_affine_grid(size, align):
    """A spatial transformer's sampling grid."""
    rank = len(size) - 2
    feeds = {"theta": randn(np.random.default_rng(22), size[0], rank, rank + 1)}
    model = one_node("AffineGrid", feeds, opset=20, constants={1: np.array(size, np.int64)}, align_corners=align)
    check(model, feeds)


def test_reverse_sequence():
    rng = np.random.default_rng(23)
    feeds = {"x": randn(rng, 12, 5, 16), "lens": np.array([12, 1, 7, 3, 10], np.int64)}
    check(one_node("ReverseSequence", feeds, opset=10, batch_axis=1, time_axis=0), feeds)
