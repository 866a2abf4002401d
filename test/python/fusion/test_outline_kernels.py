"""ecg-outline-kernels end to end: hand-made fusion blocks become one kernel function
each, which the interpreter, the JIT and the compiled library run with the same
results, and whose contraction keeps its micro-kernel schedule (the tail in the
same function is its epilogue)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnf_mlir
from dnnf_mlir import ecg
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.conversion import convert_ecg_to_linalg
from dnnf_mlir.ecg import MappingType
from dnnf_mlir.frontend.onnx_importer import import_onnx
from dnnf_mlir.fusion.kernels import outline_kernels
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.tools.common import onnxruntime_session

RNG = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32) * 0.1, name)


def model(nodes, inputs, output_shape, initializers):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)], initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def fuse_all(module):
    """Test-only fusion: every ECG op of @main but the constants becomes one
    ``ecg.fused`` (the constants are its operands, as the planner leaves weights)."""
    function = next(op for op in module.body.operations if op.operation.name == "func.func")
    block = function.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    body, ret = [op for op in ops[:-1] if op.name != "ecg.constant"], ops[-1]
    members = set(body)
    inputs = []
    for op in body:
        for value in op.operands:
            if value not in inputs and not (isinstance(value, ir.OpResult) and value.owner in members):
                inputs.append(value)
    outputs = list(ret.operands)
    with ir.InsertionPoint(ret), ret.location:
        fused = ecg.OPS["fused"].build(inputs, {"mapping": str(MappingType.MANY_TO_MANY)}, [v.type for v in outputs])
        inner = fused.body.blocks.append(*[v.type for v in inputs])
        with ir.InsertionPoint(inner):
            yielded = ecg.OPS["yield"].build(outputs, {}, [])
    for op in body:
        op.move_before(yielded.operation)
    for outer, argument in zip(inputs, inner.arguments):
        for use in list(outer.uses):
            if use.owner.parent == fused.operation:
                use.owner.operands[use.operand_number] = argument
    for index, value in enumerate(outputs):
        ret.operands[index] = fused.results[index]
    assert fused.operation.verify()


def matmul_add_relu():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    return model(nodes, [("x", [16, 64])], [16, 32], [weight("w", 64, 32), weight("b", 32)]), "matmul"


def softmax_chain():
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["mx"], axes=[-1], keepdims=1),
        helper.make_node("Sub", ["x", "mx"], ["d"]), helper.make_node("Exp", ["d"], ["e"]),
        helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1), helper.make_node("Div", ["e", "s"], ["y"]),
    ]
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    return model(nodes, [("x", [8, 128])], [8, 128], [axes]), None


def layer_norm_chain():
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[-1]), helper.make_node("Sub", ["x", "mean"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["sq"]), helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["g"]),
        helper.make_node("Add", ["g", "beta"], ["y"]),
    ]
    eps = numpy_helper.from_array(np.array(1e-5, np.float32), "eps")
    return model(nodes, [("x", [16, 96])], [16, 96], [eps, weight("gamma", 96), weight("beta", 96)]), None


def conv_bias_relu_residual():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    return model(nodes, [("x", [1, 8, 16, 16])], [1, 8, 16, 16], [weight("w", 8, 8, 3, 3), weight("b", 8)]), "conv2d"


@pytest.mark.parametrize("make", [matmul_add_relu, softmax_chain, layer_norm_chain, conv_bias_relu_residual])
def test_fusion_block_is_one_kernel_function(make):
    onnx_model, contraction = make()
    x = RNG.standard_normal([d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim])
    x = x.astype(np.float32)
    with dnnf_mlir.make_context(), ir.Location.unknown():
        module = import_onnx(onnx_model)
        want = interpret(module, [x])[0]
        fuse_all(module)
        assert outline_kernels(module.operation) == (1, 1)
        np.testing.assert_allclose(interpret(module, [x])[0], want, rtol=1e-5, atol=1e-6)
        convert_ecg_to_linalg(module)
        report = lower_to_llvm(module, "host")
        got = jit(module)["main"](x)[0]
    assert (report.launched, report.unique) == (1, 1)
    assert len({k.function for k in report.schedules}) == 1 and report.schedules[0].function.startswith("kernel_0_")
    if contraction:
        (kernel,) = [k for k in report.schedules if k.strategy == contraction]
        if contraction == "matmul":
            assert "epilogue" in kernel.details  # bias + relu applied to the accumulators
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_shared_library_of_outlined_model(tmp_path):
    """Two convolutions of the same shape with different weights, each fused with its
    Relu: one kernel function called twice (weights are arguments), in the library as in
    the old pipeline; unfused, two (the convolution and the Relu) called twice each."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c2"], ["y"])]
    path = tmp_path / "convs.onnx"
    onnx.save(model(nodes, [("x", [1, 8, 12, 12])], [1, 8, 12, 12], [weight("w1", 8, 8, 3, 3), weight("w2", 8, 8, 3, 3)]), path)
    x = RNG.standard_normal((1, 8, 12, 12)).astype(np.float32)
    want = onnxruntime_session(path).run(None, {"x": x})[0]
    for fusion, outline, expected in (("dnnf", True, (2, 1)), ("none", True, (4, 2)), ("dnnf", False, None)):
        outdir = tmp_path / f"out-{fusion}-{outline}"
        artifact = Artifact(compile_model(path, outdir, outline=outline, fusion=fusion).outdir)
        kernels = (artifact.manifest["kernels"], artifact.manifest["unique_kernels"])
        assert kernels == (expected or (kernels[0], kernels[0]))
        outputs, _ = artifact.run([x])
        np.testing.assert_allclose(outputs[0], want, rtol=1e-4, atol=1e-5)
