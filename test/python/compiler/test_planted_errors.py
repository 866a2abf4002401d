"""The check catches a small miscompile and passes fp32 noise: one kernel's result
scaled by 1 + 1e-3 (a Mul planted after one Conv or MatMul of the ONNX graph, which
ecg-fuse makes that kernel's epilogue) fails dnnf-run --check against the unplanted
model, on DenseNet-121 (a Conv halfway down its 121 layers) and DistilBERT (the FFN
output of its third layer); the unplanted DenseNet-121 passes, and the output says how
the tolerance was derived (checking.py: against float64, widened by onnxruntime
float32's own error where that is larger)."""

import subprocess

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

PLANTED_FACTOR = 1.001


def planted(model: onnx.ModelProto, index: int) -> onnx.ModelProto:
    """``model`` with the first result of node ``index`` scaled by PLANTED_FACTOR."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    node = model.graph.node[index]
    result, node.output[0] = node.output[0], node.output[0] + "_unplanted"
    model.graph.initializer.append(numpy_helper.from_array(np.array(PLANTED_FACTOR, np.float32), "planted_factor"))
    model.graph.node.insert(index + 1, helper.make_node("Mul", [node.output[0], "planted_factor"], [result]))
    return model


def middle_conv(model: onnx.ModelProto) -> int:
    convs = [i for i, node in enumerate(model.graph.node) if node.op_type == "Conv"]
    return convs[len(convs) // 2]


def third_ffn_output(model: onnx.ModelProto) -> int:
    return next(i for i, node in enumerate(model.graph.node) if node.name == "/model/transformer/layer.2/ffn/lin2/MatMul")


def compile_and_check(model_path, reference, outdir) -> subprocess.CompletedProcess:
    compiled = subprocess.run(["dnnf-compile", str(model_path), "--target", "host", "-o", str(outdir), "--fusion", "dnnf",
                               "--no-profile", "--no-cache"], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    return subprocess.run(["dnnf-run", str(outdir), "--check", "--reference", str(reference)], capture_output=True,
                          text=True)


@pytest.mark.parametrize("name,node", [("densenet121", middle_conv), ("distilbert", third_ffn_output)])
def test_one_kernel_scaled_by_one_plus_1e_3_fails(name, node, checked_models, tmp_path):
    reference = checked_models(name)
    model = onnx.load(str(reference))
    onnx.save(planted(model, node(model)), tmp_path / "planted.onnx")
    check = compile_and_check(tmp_path / "planted.onnx", reference, tmp_path / "out")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "FAIL output 0 vs float64" in check.stdout, check.stdout


def test_unplanted_densenet_passes_and_says_how_the_tolerance_was_derived(checked_models, tmp_path):
    reference = checked_models("densenet121")
    check = compile_and_check(reference, reference, tmp_path / "out")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "ok output 0 vs float64" in check.stdout, check.stdout
    assert "(atol 3e-05 + rtol 0.0001 * |want| against the interpreter in float64" in check.stdout, check.stdout
    assert "onnxruntime float32's own error against it" in check.stdout, check.stdout
