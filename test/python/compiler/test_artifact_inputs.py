"""A compiled model given what does not fit -- a truncated or foreign weights.bin,
buffers of the wrong size, indices out of range -- returns an error with a message,
through the C API, dnnf_runner, the Artifact, the session and dnnf-run."""

import ctypes
import shutil
import subprocess

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.compiler import Artifact, ArtifactError, InvalidInput, compile_model
from dnnf_mlir.compiler.weights import HEADER_BYTES
from dnnf_mlir.hostile.seeds import embedding
from dnnf_mlir.session import InferenceSession, InvalidArgument


def _other_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same graph and layout with other values in its embedding table."""
    other = onnx.ModelProto.FromString(model.SerializeToString())
    table = numpy_helper.to_array(other.graph.initializer[0])
    other.graph.initializer[0].CopyFrom(numpy_helper.from_array(table + 1, "table"))
    return other


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(model path, artifact directory, a directory of the same model with other weights)."""
    root = tmp_path_factory.mktemp("artifact-inputs")
    onnx.save(embedding(), root / "embedding.onnx")
    onnx.save(_other_weights(embedding()), root / "other.onnx")
    compile_model(root / "embedding.onnx", root / "embedding")
    compile_model(root / "other.onnx", root / "other")
    return root / "embedding.onnx", root / "embedding", root / "other"


@pytest.fixture
def copy(compiled, tmp_path):
    shutil.copytree(compiled[1], tmp_path / "model")
    return tmp_path / "model"


def _ids(*values):
    return np.array([values], np.int64)


def test_in_range_indices_match_onnxruntime(compiled):
    model, outdir, _ = compiled
    ids = _ids(0, 99, -1, -100)
    (got,) = Artifact(outdir).run([ids])[0]
    (want,) = onnxruntime.InferenceSession(str(model)).run(None, {"ids": ids})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_manifest_names_the_checked_input(compiled):
    assert Artifact(compiled[1]).manifest["index_checks"] == [{"input": 0, "size": 100, "node": "embed", "op": "Gather"}]


@pytest.mark.parametrize("bad", [100, -101, 1 << 40])
def test_index_out_of_range_is_an_invalid_input(compiled, bad):
    with pytest.raises(InvalidInput, match=rf"input ids: element 1 is {bad}, out of the range \[-100, 99\] "
                                           r"of the indices of Gather node embed"):
        Artifact(compiled[1]).run([_ids(3, bad, 0, 0)])


def test_runner_reports_index_out_of_range_with_status_2(compiled, tmp_path):
    outdir = compiled[1]
    _ids(0, 1, 2, 100).tofile(tmp_path / "ids.bin")
    proc = subprocess.run([outdir / "dnnf_runner", outdir / "weights.bin", tmp_path / "ids.bin", tmp_path / "y.bin"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "element 3 is 100, out of the range [-100, 99]" in proc.stderr


def test_runner_rejects_an_input_file_of_the_wrong_size(compiled, tmp_path):
    outdir = compiled[1]
    np.zeros(5, np.int64).tofile(tmp_path / "ids.bin")
    proc = subprocess.run([outdir / "dnnf_runner", outdir / "weights.bin", tmp_path / "ids.bin", tmp_path / "y.bin"],
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stderr.strip()) == (2, "dnnf_runner: input 0 (ids) has 40 bytes, the model takes 32")
    assert not (tmp_path / "y.bin").exists()


def test_c_api_checks_sizes_and_null_pointers(compiled):
    lib = ctypes.CDLL(str(compiled[1] / "libdnnf_model.so"))
    lib.dnnf_load.restype = ctypes.c_void_p
    lib.dnnf_run_sized.argtypes = [ctypes.c_void_p] * 5
    lib.dnnf_error.restype = ctypes.c_char_p
    model = lib.dnnf_load(str(compiled[1] / "weights.bin").encode())
    assert model
    ids, out = _ids(1, 2, 3, 4), np.empty((1, 32), np.float32)
    ins = (ctypes.c_void_p * 1)(ids.ctypes.data)
    outs = (ctypes.c_void_p * 1)(out.ctypes.data)
    assert lib.dnnf_run_sized(model, ins, (ctypes.c_size_t * 1)(31), outs, (ctypes.c_size_t * 1)(128)) == 2
    assert lib.dnnf_error() == b"input 0 (ids) has 31 bytes, the model takes 32"
    assert lib.dnnf_run_sized(model, ins, (ctypes.c_size_t * 1)(32), outs, (ctypes.c_size_t * 1)(64)) == 2
    assert lib.dnnf_error() == b"output 0 (y) has 64 bytes, the model takes 128"
    assert lib.dnnf_run_sized(model, (ctypes.c_void_p * 1)(None), (ctypes.c_size_t * 1)(32), outs,
                              (ctypes.c_size_t * 1)(128)) == 2
    assert lib.dnnf_error() == b"input 0 (ids) is NULL"
    assert lib.dnnf_run_sized(model, ins, (ctypes.c_size_t * 1)(32), outs, (ctypes.c_size_t * 1)(128)) == 0
    lib.dnnf_free(ctypes.c_void_p(model))


def test_truncated_weights_are_refused(copy):
    with open(copy / "weights.bin", "r+b") as f:
        f.truncate(HEADER_BYTES + 100)
    with pytest.raises(ArtifactError, match=r"weights.bin has 164 bytes, the model needs \d+"):
        Artifact(copy).session()


def test_weights_of_another_compilation_are_refused(compiled, copy):
    """Same model graph, same layout and size, other values: the header tells them apart."""
    assert (compiled[2] / "weights.bin").stat().st_size == (copy / "weights.bin").stat().st_size
    shutil.copyfile(compiled[2] / "weights.bin", copy / "weights.bin")
    with pytest.raises(ArtifactError, match="holds other weights than this library was compiled with"):
        Artifact(copy).session()


def test_a_file_that_is_no_weights_file_is_refused(copy):
    size = (copy / "weights.bin").stat().st_size
    (copy / "weights.bin").write_bytes(bytes(size))
    with pytest.raises(ArtifactError, match=r"is not a dnnf-compile weights file \(no DNNFWTS1 header\)"):
        Artifact(copy).session()


def test_dnnf_run_prints_one_line(compiled, tmp_path):
    np.save(tmp_path / "ids.npy", _ids(0, 1, 2, 100))
    proc = subprocess.run(["dnnf-run", str(compiled[1]), "--input", f"ids={tmp_path / 'ids.npy'}"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "dnnf-run: error: input ids: element 3 is 100, out of the range [-100, 99] of the indices of Gather node embed"]


def test_session_raises_invalid_argument(compiled, tmp_path):
    session = InferenceSession(str(compiled[0]), cache_dir=tmp_path / "cache")
    session.run(None, {"ids": _ids(0, 1, 2, 3)})
    with pytest.raises(InvalidArgument, match="element 0 is -101"):
        session.run(None, {"ids": _ids(-101, 1, 2, 3)})


def test_computed_indices_never_read_out_of_bounds(tmp_path):
    """Indices computed in the graph (ids * 2^40) cannot be checked on entry: the code
    clamps them into range, so it reads the table's last row instead of far memory."""
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["ids", "scale"], ["far"], name="scale"),
         helper.make_node("Gather", ["table", "far"], ["y"], name="pick", axis=0)],
        "computed", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array(1 << 40, np.int64), "scale")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "computed.onnx")
    compile_model(tmp_path / "computed.onnx", tmp_path / "computed")
    artifact = Artifact(tmp_path / "computed")
    assert artifact.manifest["index_checks"] == []
    (got,) = artifact.run([np.array([0, 1], np.int64)])[0]
    np.testing.assert_array_equal(got, table[[0, 3]])


def test_aarch64_runner_refuses_index_out_of_range(compiled, tmp_path, aarch64_toolchain):
    compile_model(compiled[0], tmp_path / "arm", target="aarch64")
    artifact = Artifact(tmp_path / "arm")
    (got,) = artifact.run([_ids(0, 1, 2, 3)])[0]
    (want,) = Artifact(compiled[1]).run([_ids(0, 1, 2, 3)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(InvalidInput, match=r"element 2 is -200, out of the range \[-100, 99\]"):
        artifact.run([_ids(0, 1, -200, 3)])
