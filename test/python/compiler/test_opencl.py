"""The OpenCL target end to end: the Vulkan tests' small ONNX graphs (``test_vulkan.GRAPHS``,
one per kind of kernel the GPU schedules), compiled with ``compile_model(target="opencl")``,
run in this process on the OpenCL device the runtime finds (PoCL on the CPU here) and
compared with onnxruntime with the Vulkan tests' tolerance (``checking.compare``: |got -
want| <= 3e-5 + 1e-4 * |want| per element) on random inputs; every program builds with
an empty build log (no warning). Then the program-binary cache, the per-dispatch times,
the runner, ``InferenceSession(target="opencl")``, and the errors: no platform, a
program that does not build (its log in the message), options the target does not take.

``--precision fp16`` (``codegen/gpu/opencl/half.py``): the same graphs, their tensors
stored in half through OpenCL 1.2's ``vload_half`` / ``vstore_half_rte`` (PoCL has no
``cl_khr_fp16``), built with an empty log, compared with onnxruntime fp32 within the fp16
bound of ``dnnf_mlir/half_tolerance.py`` (rtol 8u, atol 4u sqrt(K) RMS(want)); a program
computing in half requires ``cl_khr_fp16``, and a device without it is refused by name.
"""

import ctypes
import json
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from gpu_artifacts import assert_matches_onnxruntime
from test_vulkan import GRAPHS, graphs_compiled_for

from dnnf_mlir.checking import compare
from dnnf_mlir.codegen import get_target
from dnnf_mlir.compiler import Artifact, ArtifactError
from dnnf_mlir.half_tolerance import half_tolerance, longest_accumulation
from dnnf_mlir.session import InferenceSession
from dnnf_mlir.tools.common import onnxruntime_session

@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """name -> the Artifact of GRAPHS[name], compiled for OpenCL once per module."""
    return graphs_compiled_for("opencl", tmp_path_factory.mktemp("opencl"))


def _inputs(artifact, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _, dtype, shape in artifact.inputs]


@pytest.mark.parametrize("name", GRAPHS)
def test_matches_onnxruntime(name, compiled):
    assert_matches_onnxruntime(compiled(name), seed=3)


class OpenclLibrary:
    """The artifact's library loaded on its own (not through ``HostSession``), to read
    what only the OpenCL glue has: the build log and whether the binary was cached."""

    def __init__(self, artifact: Artifact):
        self.lib = ctypes.CDLL(str(artifact.path / artifact.manifest["library"]))
        self.lib.dnnf_load.restype = ctypes.c_void_p
        self.lib.dnnf_error.restype = ctypes.c_char_p
        for name, restype in (("dnnf_build_log", ctypes.c_char_p), ("dnnf_program_cached", ctypes.c_int)):
            getattr(self.lib, name).restype = restype
            getattr(self.lib, name).argtypes = [ctypes.c_void_p]
        self.lib.dnnf_free.argtypes = [ctypes.c_void_p]
        self.model = self.lib.dnnf_load(str(artifact.path / "weights.bin").encode())
        assert self.model, self.lib.dnnf_error().decode()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.dnnf_free(self.model)

    @property
    def build_log(self) -> str:
        return self.lib.dnnf_build_log(self.model).decode()

    @property
    def cached(self) -> bool:
        return bool(self.lib.dnnf_program_cached(self.model))


@pytest.mark.parametrize("name", GRAPHS)
def test_every_program_builds_without_warnings(name, compiled, monkeypatch):
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")  # a build from source, with its log
    with OpenclLibrary(compiled(name)) as library:
        assert not library.cached
        assert library.build_log == "", library.build_log


def test_the_program_binary_is_cached(compiled, tmp_path, monkeypatch):
    artifact = compiled("attention")
    monkeypatch.setenv("DNNF_OPENCL_CACHE", str(tmp_path / "cache"))
    with OpenclLibrary(artifact) as first:
        assert not first.cached
    assert len(list((tmp_path / "cache").glob("*.bin"))) == 1
    with OpenclLibrary(artifact) as second:
        assert second.cached
    inputs = _inputs(artifact)
    cold, _ = artifact.run(inputs)  # a session of its own, from the cached binary
    want = onnxruntime_session(artifact.manifest["model"]).run(
        None, {name: array for (name, _, _), array in zip(artifact.inputs, inputs)})
    assert compare(cold[0], want[0]).ok


def test_pocl_keeps_no_program_binary_by_default(compiled, tmp_path, monkeypatch):
    """PoCL caches its compiled kernels itself; a program binary would cost a second
    compile of every kernel: without DNNF_OPENCL_CACHE none is written there."""
    monkeypatch.delenv("DNNF_OPENCL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with OpenclLibrary(compiled("attention")) as library:
        assert not library.cached
    assert not (tmp_path / ".cache").exists()


def test_dispatch_times_and_device(compiled):
    artifact = compiled("conv_bn_relu")
    session = artifact.session()
    session.run_timed([np.ones((1, 16, 30, 30), np.float32)], 1)
    # One fused kernel (its NC4HW4 result then copied to NCHW: --gpu-layout auto), each
    # dispatch timed by a profiling event.
    times = session.dispatch_times()
    assert [kernel for kernel, _ in times if not kernel.startswith("kernel_nc4hw4_to_nchw_")] == [times[0][0]]
    assert all(kernel.startswith("kernel_") and milliseconds > 0 for kernel, milliseconds in times)
    assert session.device  # "<platform>: <device>"


def test_runner_agrees_with_library(compiled, tmp_path):
    artifact = compiled("softmax")
    x = np.random.default_rng(5).standard_normal((12, 77, 100)).astype(np.float32)
    outputs, _ = artifact.run([x])
    x.tofile(tmp_path / "x.bin")
    subprocess.run([artifact.path / "dnnf_runner", artifact.path / "weights.bin", tmp_path / "x.bin",
                    tmp_path / "y.bin"], check=True)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.bin", np.float32).reshape(12, 77, 100), outputs[0])


def test_inference_session(tmp_path):
    path = tmp_path / "layer_norm.onnx"
    onnx.save(GRAPHS["layer_norm"](), str(path))
    session = InferenceSession(path, target="opencl", cache_dir=tmp_path / "compiled")
    x = np.random.default_rng(1).standard_normal((2, 50, 96)).astype(np.float32)
    (got,) = session.run(None, {"x": x})
    (want,) = onnxruntime_session(path).run(None, {"x": x})
    result = compare(got, want)
    assert result.ok and not result.degenerate, result


def test_no_platform_says_what_to_install(compiled, tmp_path):
    """dnnf-run in a process whose ICD loader finds no driver (the loader reads its
    drivers once per process): one line saying what to install."""
    done = subprocess.run(["dnnf-run", str(compiled("softmax").path)], capture_output=True, text=True,
                          env={**os.environ, "OCL_ICD_VENDORS": str(tmp_path)})
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "no platform found: install an OpenCL driver (ICD)" in done.stderr, done.stderr


def _rebuilt(artifact: Artifact, directory, old: str, new: str) -> Artifact:
    """A copy of ``artifact`` in ``directory`` whose OpenCL C (the C string literal in its
    ``model.c``) has ``old`` replaced by ``new``, its library rebuilt."""
    shutil.copytree(artifact.path, directory, ignore=shutil.ignore_patterns("build"))
    glue = (directory / "model.c").read_text()
    assert old in glue
    (directory / "model.c").write_text(glue.replace(old, new, 1))
    subprocess.run(["cmake", "-S", directory, "-B", directory / "build", "-DDNNF_OPENCL=ON"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", directory / "build"], check=True, capture_output=True)
    shutil.copy(directory / "build" / "libdnnf_model.so", directory / "libdnnf_model.so")
    return Artifact(directory)


def test_a_program_that_does_not_build_reports_its_log(compiled, tmp_path, monkeypatch):
    broken = _rebuilt(compiled("elementwise"), tmp_path / "broken", "return;\\n}", "return 1;\\n}")
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with pytest.raises(ArtifactError, match=r"the program does not build on .*: .*error: .*void function"):
        broken.session()


def test_a_warning_is_in_the_build_log(compiled, tmp_path, monkeypatch):
    """What the no-warning check reads: PoCL's log of a program that builds with a warning."""
    warned = _rebuilt(compiled("elementwise"), tmp_path / "warned", "return;\\n}", "int w = 1.5; return;\\n}")
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with OpenclLibrary(warned) as library:
        assert re.match(r"warning: .*: implicit conversion from 'double' to 'int'", library.build_log), library.build_log


def test_more_local_memory_than_the_device_has_is_refused(compiled, tmp_path, monkeypatch):
    """A kernel sized for a device with more local (shared) memory than this one (its
    ``__local`` array made larger than PoCL's 1 MiB) is refused at load, before any run,
    naming the kernel, its bytes and the device's CL_DEVICE_LOCAL_MEM_SIZE."""
    artifact = compiled("softmax")
    source = (artifact.path / "kernels.cl").read_text()
    declaration = re.search(r"__local float (m\d+)\[(\d+)\];", source)
    assert declaration, "the softmax kernel stages its statistics in local memory"
    floats = (1 << 20) // 4 + 1
    larger = _rebuilt(artifact, tmp_path / "larger", declaration.group(0),
                      f"__local float {declaration.group(1)}[{floats}];")
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with pytest.raises(ArtifactError) as failure:
        larger.session()
    message = str(failure.value)
    found = re.search(r"OpenCL: kernel (\w+) needs (\d+) bytes of local \(shared\) memory; (.+) has (\d+) "
                      r"\(CL_DEVICE_LOCAL_MEM_SIZE\)", message)
    assert found, message
    assert found.group(1) in source and int(found.group(4)) == 1 << 20  # PoCL's
    assert int(found.group(2)) >= 4 * floats > int(found.group(4))


def test_options_the_target_does_not_take():
    with pytest.raises(ValueError, match="target 'opencl' takes no option cpu"):
        get_target("opencl", cpu="znver3")
    with pytest.raises(ValueError, match="unknown OpenCL device profile 'mali9000'; known: generic"):
        get_target("opencl", device="mali9000")


def test_manifest_describes_the_opencl_code(compiled):
    artifact = compiled("attention")
    manifest = json.loads((artifact.path / "manifest.json").read_text())
    assert manifest["target"] == "opencl" and manifest["device"] == "generic"
    source = (artifact.path / "kernels.cl").read_text()
    assert manifest["opencl_source_bytes"] == len(source.encode())
    assert len(re.findall(r"^__kernel ", source, re.M)) == manifest["opencl_kernels"] >= 1
    assert manifest["emulator"] is None and manifest["dispatches"] >= manifest["kernels"] >= 1


@pytest.fixture(scope="module")
def compiled_fp16(tmp_path_factory):
    """name -> the Artifact of GRAPHS[name], compiled for OpenCL in fp16 once per module."""
    return graphs_compiled_for("opencl", tmp_path_factory.mktemp("opencl-fp16"), precision="fp16")


@pytest.mark.parametrize("name", GRAPHS)
def test_fp16_matches_onnxruntime_fp32(name, compiled_fp16, monkeypatch):
    """Built from source with an empty log and no extension required, then within the fp16
    bound of onnxruntime fp32 (the C interface stays fp32)."""
    artifact = compiled_fp16(name)
    assert not re.search(r"^require ", (artifact.path / "plan.txt").read_text(), re.M)
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with OpenclLibrary(artifact) as library:
        assert library.build_log == "", library.build_log
    inputs = _inputs(artifact)
    outputs, _ = artifact.run(inputs)
    model = onnx.load(artifact.manifest["model"])
    want = onnxruntime_session(artifact.manifest["model"]).run(
        None, {name: array for (name, _, _), array in zip(artifact.inputs, inputs)})
    for got, expected in zip(outputs, want):
        assert got.dtype == np.float32
        rtol, atol = half_tolerance(expected, longest_accumulation(model))
        result = compare(got, expected, rtol=rtol, atol=atol)
        assert result.ok and not result.degenerate, result


def test_fp16_stores_half(compiled, compiled_fp16):
    """The weights file holds half the bytes, the kernels read and write halves, and the
    error is above what fp32 storage gives (values went through f16)."""
    fp32, fp16 = compiled("attention"), compiled_fp16("attention")
    assert (fp16.path / "weights.bin").stat().st_size < 0.6 * (fp32.path / "weights.bin").stat().st_size
    source = (fp16.path / "kernels.cl").read_text()
    assert "vload_half" in source and "vstore_half" in source and "cl_khr_fp16" not in source
    inputs = _inputs(fp16)
    half, exact = fp16.run(inputs)[0][0], fp32.run(inputs)[0][0]
    assert np.abs(half - exact).max() > 2.0 ** -14 * np.sqrt(np.mean(np.square(exact)))


def test_a_device_without_the_required_extension_is_refused(compiled_fp16, tmp_path, monkeypatch):
    """A program computing in half requires cl_khr_fp16 (its plan's ``require`` line, the
    program table's extensions): PoCL lacks it, and the load says so, naming the device."""
    artifact = compiled_fp16("elementwise")
    requiring = _rebuilt(artifact, tmp_path / "requiring", ', ""};', ', "cl_khr_fp16"};')
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with pytest.raises(ArtifactError, match=r"OpenCL: Portable Computing Language: .* lacks cl_khr_fp16, which the "
                                            r"program requires"):
        requiring.session()


def test_dnnf_run_checks_fp16_with_its_bound(compiled_fp16):
    """dnnf-run --check on an fp16 artifact applies the fp16 bound against onnxruntime
    float32 and says how it was derived; float32's default tolerance, given explicitly,
    fails it (the check can fail: the values went through f16)."""
    path = str(compiled_fp16("matmul_bias_relu").path)
    done = subprocess.run(["dnnf-run", path, "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ok output 0 vs onnxruntime float32: .*; fp16 storage: rtol 8u = 0.00391, atol 4u sqrt\(K\) "
                     r"RMS\(want\) = \S+ \(u = 2\^-11, K = 200, the longest accumulation", done.stdout, re.M), done.stdout
    strict = subprocess.run(["dnnf-run", path, "--check", "--rtol", "1e-4", "--atol", "3e-5"], capture_output=True,
                            text=True)
    assert strict.returncode == 1 and "FAIL output 0" in strict.stdout and "fp16 storage" not in strict.stdout


def test_inference_session_in_fp16(tmp_path):
    path = tmp_path / "matmul_bias_relu.onnx"
    onnx.save(GRAPHS["matmul_bias_relu"](), str(path))
    session = InferenceSession(path, target="opencl", precision="fp16", cache_dir=tmp_path / "compiled")
    model = onnx.load(str(path))
    feeds = {i.name: np.random.default_rng(2).standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
             .astype(np.float32) for i in model.graph.input}
    (got,) = session.run(None, feeds)
    (want,) = onnxruntime_session(path).run(None, feeds)
    rtol, atol = half_tolerance(want, longest_accumulation(model))
    result = compare(got, want, rtol=rtol, atol=atol)
    assert result.ok and not result.degenerate, result
