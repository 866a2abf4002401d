"""The 14 judged models compiled with dnnf-compile, run through their C entry point and
checked against onnxruntime by dnnf-run --check, with each fusion planner (dnnf, tvm)
and without fusion: every model fused by dnnf (the product) in every test run, and
SqueezeNet, ShuffleNet, ResNet-50 and DistilBERT in the other two modes; all 14 in
every mode when DNNF_HOST_FUSION_MODES=all is set (about ten minutes more of CPU).
dnnf-compile rewrites the graph with ecg-rewrite first, so this
checks the rewritten, fused graph's code; fusion decides conservatively
(--no-profile), so the kernels do not depend on the machine's load; every model is
compiled afresh in each test run: for the host through a cache of the run's own
(``shared_compile_cache``, which test_planted_errors shares: DenseNet-121 fused by dnnf is
compiled once), for the other targets without one (--no-cache).

The check is dnnf-run's default, element by element |got - want| <= 3e-5 + 1e-4 *
|want| against the model run in float64, widened to four times onnxruntime float32's own
error against it where that is larger (why: dnnf_mlir/checking.py), on every output,
never a degenerate one: the CNNs ending in a Softmax are compiled with its logits as a
second output (``checked_models``), and random inputs are scaled down where the softmax saturates.

Host libraries run in every test run. The AArch64 libraries run under qemu-aarch64,
which executes about 0.1 GFLOP/s here: all 14 take about half an hour per mode, so the
suite runs SqueezeNet in every fusion mode and DistilBERT (about 50 s a mode) fused by
dnnf (its other modes are checked on the host), and the rest when
DNNF_AARCH64_MODELS=all is set. The Vulkan libraries run on the Vulkan device found
(lavapipe, on the CPU, here: about 1 GFLOP/s), fused by the dnnf planner; every
SPIR-V binary they hold passes spirv-val. The suite runs the same two, the rest
when DNNF_VULKAN_MODELS=all is set. The OpenCL libraries run on the OpenCL device found
(PoCL, on the CPU, here), fused by the dnnf planner, with the same check; every program
they hold builds from source with an empty log (no warning). The suite runs SqueezeNet
and MobileBERT (the judged transformer PoCL runs quickest: 0.9 s), the rest when
DNNF_OPENCL_MODELS=all is set; the same two compiled with --precision fp16 (half storage
through vload_half / vstore_half_rte), checked by dnnf-run --check against onnxruntime
float32 with the fp16 bound it applies to an fp16 artifact (dnnf_mlir/half_tolerance.py).
"""

import json
import os
import subprocess

import pytest
from gen_models import MODEL_NAMES
from test_opencl import OpenclLibrary

from dnnf_mlir.compiler import Artifact

FUSION_MODES = ("dnnf", "tvm", "none")
HOST_ALWAYS = tuple((name, fusion) for name in MODEL_NAMES for fusion in FUSION_MODES
                    if fusion == "dnnf" or name in ("squeezenet", "shufflenet", "resnet50", "distilbert"))
AARCH64_ALWAYS = (("squeezenet", "dnnf"), ("squeezenet", "tvm"), ("squeezenet", "none"), ("distilbert", "dnnf"))
VULKAN_ALWAYS = ("squeezenet", "distilbert")
OPENCL_ALWAYS = ("squeezenet", "mobilebert")  # MobileBERT: the quickest transformer on PoCL
SPIRV_TARGET_ENV = "vulkan1.1"


def opt_in(cases, always, variable, why):
    """``cases`` (names, or tuples of values) as parameters, those not in ``always``
    skipped unless ``variable`` is ``all``."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.skipif(
        case not in always and os.environ.get(variable) != "all", reason=f"{why}: set {variable}=all"))
        for case in cases]


def compile_to(onnx_path, outdir, target, fusion, precision="fp32", cache=None, extra=()):
    """dnnf-compile ``onnx_path`` into ``outdir``: afresh, or through the compile cache
    directory ``cache`` (``shared_compile_cache``); ``extra``: more of its arguments."""
    command = ["dnnf-compile", onnx_path, "--target", target, "-o", outdir, "--fusion", fusion, "--no-profile",
               "--precision", precision, *extra]
    if cache is None:
        command.append("--no-cache")
    env = None if cache is None else {**os.environ, "DNNF_CACHE_DIR": str(cache)}
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}{result.stderr}"


def compile_and_check(onnx_path, outdir, target, fusion, tolerance=(), precision="fp32", cache=None, extra=()):
    """``tolerance``: dnnf-run's --atol/--rtol arguments, where the default is not the right one;
    ``cache``, ``extra``: as for ``compile_to``. Returns dnnf-run's output."""
    compile_to(onnx_path, outdir, target, fusion, precision, cache, extra)
    command = ["dnnf-run", outdir, "--check", *tolerance]
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}{result.stderr}"
    outputs = json.loads((outdir / "manifest.json").read_text())["outputs"]
    assert result.stdout.count("ok output") == len(outputs), result.stdout
    assert "degenerate reference" not in result.stdout, result.stdout
    return result.stdout


@pytest.mark.parametrize("name,fusion", opt_in([(name, fusion) for name in MODEL_NAMES for fusion in FUSION_MODES],
                                                HOST_ALWAYS, "DNNF_HOST_FUSION_MODES", "checked fused by dnnf"))
def test_host(name, fusion, checked_models, shared_compile_cache, tmp_path):
    compile_and_check(checked_models(name), tmp_path / name, "host", fusion, cache=shared_compile_cache)


@pytest.mark.parametrize("name,fusion", opt_in([(name, fusion) for name in MODEL_NAMES for fusion in FUSION_MODES],
                                                AARCH64_ALWAYS, "DNNF_AARCH64_MODELS", "slow under qemu"))
def test_aarch64(name, fusion, checked_models, tmp_path):
    compile_and_check(checked_models(name), tmp_path / name, "aarch64", fusion)


@pytest.mark.parametrize("name", opt_in(MODEL_NAMES, VULKAN_ALWAYS, "DNNF_VULKAN_MODELS", "slow on lavapipe"))
def test_vulkan(name, checked_models, tmp_path):
    outdir = tmp_path / name
    compile_and_check(checked_models(name), outdir, "vulkan", "dnnf")
    check_spirv_binaries(outdir)


@pytest.mark.parametrize("name", opt_in(MODEL_NAMES, OPENCL_ALWAYS, "DNNF_OPENCL_MODELS", "slow on PoCL"))
def test_opencl(name, checked_models, tmp_path, monkeypatch):
    outdir = tmp_path / name
    monkeypatch.setenv("DNNF_OPENCL_CACHE", str(tmp_path / "programs"))  # built from source: its log below
    compile_and_check(checked_models(name), outdir, "opencl", "dnnf")
    check_opencl_build_log(tmp_path / "programs", outdir, monkeypatch)


@pytest.mark.parametrize("name", opt_in(MODEL_NAMES, OPENCL_ALWAYS, "DNNF_OPENCL_MODELS", "slow on PoCL"))
def test_opencl_fp16(name, checked_models, tmp_path, monkeypatch):
    outdir = tmp_path / name
    monkeypatch.setenv("DNNF_OPENCL_CACHE", str(tmp_path / "programs"))
    report = compile_and_check(checked_models(name), outdir, "opencl", "dnnf", precision="fp16")
    print(report)
    outputs = json.loads((outdir / "manifest.json").read_text())["outputs"]
    assert report.count("vs onnxruntime float32") == report.count("fp16 storage: rtol 8u") == len(outputs), report
    check_opencl_build_log(tmp_path / "programs", outdir, monkeypatch)


def check_opencl_build_log(cache, outdir, monkeypatch):
    """The OpenCL program of the artifact in ``outdir`` was cached in ``cache`` by its
    first load (dnnf-run's), and builds from source with an empty log: no warning."""
    assert len(list(cache.glob("*.bin"))) == 1
    monkeypatch.setenv("DNNF_OPENCL_CACHE", "off")
    with OpenclLibrary(Artifact(outdir)) as library:
        assert not library.cached and library.build_log == "", library.build_log


def check_spirv_binaries(outdir):
    """Every SPIR-V binary of the Vulkan artifact in ``outdir`` passes spirv-val."""
    manifest = json.loads((outdir / "manifest.json").read_text())
    binaries = sorted((outdir / "kernels").glob("*.spv"))
    assert len(binaries) == manifest["spirv_kernels"] > 0
    for binary in binaries:
        check = subprocess.run(["spirv-val", "--target-env", SPIRV_TARGET_ENV, str(binary)], capture_output=True,
                               text=True)
        assert check.returncode == 0, f"{binary.name}: {check.stdout}{check.stderr}"
