"""ecg-fuse on random DAGs of ECG ops: every mode gives a module that verifies, whose
blocks respect the operand, output and live-value limits, and that computes what the
unfused graph computes under the reference interpreter. (The compiled code of every
mode is checked on random ONNX graphs by the differential fuzzer, test/python/fuzz.)

The graphs mix broadcasting elementwise chains, MatMul with weights (some small
enough to be cloned into bodies, some not), reductions, Softmax, Transpose,
Reshape there and back, Expand, shared subexpressions and several results. Inputs
are standard normal and every op keeps values in a moderate range (tanh, sigmoid,
no division), so results agree to rounding: rtol 1e-5, atol 1e-5 (float32, the
fused body runs the same numpy semantics in another order of ops).
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dnnf_mlir
from dnnf_mlir._mlir import func, ir
from dnnf_mlir.ecg import OPS, TensorSpec, to_mlir
from dnnf_mlir.fusion import MODES, fuse_module
from dnnf_mlir.fuzz.invariants import fused_op_problems
from dnnf_mlir.interpreter import interpret

N = 4  # values are 4x4 (and 1x4, 4x1 to broadcast, 2x8 between two reshapes)
UNARY = ("relu", "tanh", "sigmoid", "neg", "abs", "exp")
BINARY = ("add", "mul", "sub", "max")

# One step: (kind, operand choices as fractions of the pool, a parameter).
steps = st.lists(
    st.tuples(
        st.sampled_from(("unary", "binary", "binary", "matmul", "reduce", "softmax", "transpose", "reshape", "expand")),
        st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6),
    ),
    min_size=1, max_size=24,
)


def op(mnemonic, *operands, **attrs):
    return OPS[mnemonic].build(list(operands), attrs).operation.results[0]


def build_graph(program, outputs_seed):
    """The module for ``program`` (a list of steps) over two 4x4 inputs."""
    rng = np.random.default_rng(outputs_seed)
    context = dnnf_mlir.make_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [to_mlir(TensorSpec((N, N), np.float32))] * 2
            function = func.FuncOp("main", (types, []))
            with ir.InsertionPoint(function.add_entry_block()):
                pool = list(function.entry_block.arguments)
                for kind, a, b, parameter in program:
                    pool.append(step(pool, kind, a, b, parameter))
                square = [v for v in pool if tuple(ir.RankedTensorType(v.type).shape) == (N, N)]
                extra = [square[i] for i in rng.choice(len(square), size=min(2, len(square)), replace=False)]
                results = list(dict.fromkeys([square[-1], *extra]))
                func.ReturnOp(results)
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [r.type for r in results]))
    assert module.operation.verify()
    return module


def pick(pool, index, shapes):
    choices = [v for v in pool if tuple(ir.RankedTensorType(v.type).shape) in shapes]
    return choices[index % len(choices)]


def step(pool, kind, a, b, parameter):
    broadcastable = {(N, N), (1, N), (N, 1)}
    if kind == "unary":
        return op(UNARY[parameter % len(UNARY)], pick(pool, a, broadcastable | {(2, 8)}))
    if kind == "binary":
        return op(BINARY[parameter % len(BINARY)], pick(pool, a, {(N, N)}), pick(pool, b, broadcastable))
    if kind == "matmul":
        rows = N if parameter % 2 else 3 * N  # 4x4 (cloned: < 64 elements) or 12x4 after a 4x12 (stays outside)
        weight = np.random.default_rng(parameter).standard_normal((N, rows)).astype(np.float32) / N
        value = op("mat_mul", pick(pool, a, {(N, N)}), op("constant", value=weight))
        if rows != N:
            back = np.random.default_rng(parameter + 1).standard_normal((rows, N)).astype(np.float32) / rows
            value = op("mat_mul", op("tanh", value), op("constant", value=back))
        return value
    if kind == "reduce":
        mnemonic = ("reduce_sum", "reduce_max")[parameter % 2]
        return op(mnemonic, pick(pool, a, {(N, N)}), axes=[parameter % 2], keepdims=1)
    if kind == "softmax":
        return op("softmax", pick(pool, a, {(N, N)}), axis=-1)
    if kind == "transpose":
        return op("transpose", pick(pool, a, {(N, N)}), perm=[1, 0])
    if kind == "reshape":
        source = pick(pool, a, {(N, N), (2, 8)})
        shape = (2, 8) if tuple(ir.RankedTensorType(source.type).shape) == (N, N) else (N, N)
        return op("reshape", source, shape=list(shape))
    if not any(tuple(ir.RankedTensorType(v.type).shape) in {(1, N), (N, 1)} for v in pool):
        pool = [op("reduce_max", pool[a % 2], axes=[parameter % 2], keepdims=1)]
    return op("expand", pick(pool, a, {(1, N), (N, 1)}), shape=[N, N])


def check_limits(module):
    problems = fused_op_problems(module.body.operations[0])
    assert not problems, "\n".join(problems)


def unfused_case(program, outputs_seed):
    """The graph of ``program``, its two inputs and what the interpreter makes of them."""
    inputs = [np.random.default_rng(seed).standard_normal((N, N)).astype(np.float32) for seed in (1, 2)]
    module = build_graph(program, outputs_seed)
    return module, inputs, interpret(module, inputs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=steps, outputs_seed=st.integers(0, 1000), mode=st.sampled_from(MODES))
def test_fusion_preserves_results(program, outputs_seed, mode):
    module, inputs, expected = unfused_case(program, outputs_seed)
    report = fuse_module(module, mode)
    assert module.operation.verify()
    check_limits(module)
    total = report["total"]
    assert total["ops_after"] <= total["ops_before"] and total["ir_bytes_after"] <= total["ir_bytes_before"]
    if mode == "none":
        assert total["blocks"] == 0
    for got, want in zip(interpret(module, inputs), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
