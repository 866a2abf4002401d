"""IREE as dnnf-bench's peer on the same Vulkan device: an ONNX model imported with
``iree-import-onnx``, compiled with ``iree-compile --iree-hal-target-device=vulkan``
for one of IREE's Vulkan targets, and run through ``iree.runtime`` in this process (a
first run in a process of its own, which a time limit can stop: ``IreeProcess``;
packages ``iree-base-compiler`` and ``iree-base-runtime``, pinned in tools/setup.sh).

One compilation gives both the program and its dispatch count: the compilation's
phases are dumped (weights elided) and the ``flow.dispatch`` ops of the flow phase are
counted with IREE's own IR API -- the models have no control flow, so each runs once
per inference. Models below opset 17 are upgraded by the importer (``--opset-version
17``): IREE's ONNX lowering does not take, for instance, opset 9's MaxPool.

Two steps make the transformers compile, both standard for IREE on mobile GPUs:
- the model is constant-folded first (onnxruntime's basic graph optimizations, which
  keep to ONNX operators): the attention mask's Expand takes a shape computed through
  Where on shape tensors, which ONNX shape inference leaves as ``[?,?,128,128]``, and
  IREE's Vulkan lowering fails on the dynamic dims ("unresolved target materialization
  from tensor<1x128x768xf32> to tensor<1x?x768xf32>");
- ``--iree-input-demote-i64-to-i32``: IREE's Mali and Adreno targets have no Int64
  compute (their target lists int32 at most), so the masks' and indices' int64
  arithmetic fails to legalize (``vector.broadcast ... (i64) -> vector<1xi64>``). The
  demotion keeps an int64 input in the program's interface but reads its buffer as
  int32 (a mask 1 1 0 1 is read 1 0 1 0: wrong results, IREE 3.13), so the model's
  int64 inputs become int32 inputs cast to int64 in the graph, and the session passes
  int64 arrays as int32 (token ids and masks fit).
"""

import importlib
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OPSET = 17
# IREE's Vulkan target for the peer: Android's baseline profile (Mali and Adreno class,
# no subgroup operations). The named mobile targets assume the vendor's subgroup width
# (valhall: 16, adreno: 64), and lavapipe's subgroups are 8 wide: IREE's subgroup
# reductions (softmax, layer norm) then return NaN there, every transformer's output.
DEFAULT_VULKAN_TARGET = "vp_android_baseline_2022"
VERSION = "3.13.0"  # of iree-base-compiler and iree-base-runtime, as tools/setup.sh pins them


class IreeError(Exception):
    """IREE could not import, compile or run a model; the message is its first error line."""


@dataclass(frozen=True)
class IreeProgram:
    vmfb: Path
    dispatches: int
    vulkan_target: str


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[0]


def _tool(name: str) -> str:
    """IREE's command ``name``: beside this Python (the virtual environment pip put it
    in, whether or not it is activated), else on PATH."""
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        raise IreeError(f"{name} not found (pip install iree-base-compiler=={VERSION})")
    return found


def _run(command: list, what: str):
    proc = subprocess.run([_tool(command[0])] + [str(c) for c in command[1:]], capture_output=True, text=True)
    if proc.returncode != 0:
        raise IreeError(f"{what}: {_first_error(proc.stderr + proc.stdout)}")


def _import(module: str, package: str):
    """IREE's Python packages are the peer's, not the compiler's: imported when used."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise IreeError(f"{module} not found (pip install {package}=={VERSION})") from None


def installed_version() -> str | None:
    """iree-base-runtime's version here (None when it is missing)."""
    try:
        return metadata.version("iree-base-runtime")
    except metadata.PackageNotFoundError:
        return None


def count_dispatches(flow_ir: Path) -> int:
    """The ``flow.dispatch`` ops of the program at IREE's flow phase."""
    ir = _import("iree.compiler.ir", "iree-base-compiler")

    with ir.Context():
        module = ir.Module.parse(flow_ir.read_text())
        count = 0
        pending = [module.operation]
        while pending:
            op = pending.pop()
            count += op.name == "flow.dispatch"
            pending.extend(inner.operation for region in op.regions for block in region.blocks for inner in block)
        return count


def with_int32_inputs(model: "onnx.ModelProto") -> "onnx.ModelProto":
    """``model`` (changed in place) with each int64 input taken as int32 and cast to
    int64 first thing: IREE's int64 demotion miscompiles int64 inputs (module docstring)."""
    import onnx

    casts = []
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        if tensor_type.elem_type == onnx.TensorProto.INT64:
            wide = f"{value.name}.int64"
            for node in model.graph.node:
                node.input[:] = [wide if name == value.name else name for name in node.input]
            casts.append(onnx.helper.make_node("Cast", [value.name], [wide], to=onnx.TensorProto.INT64))
            tensor_type.elem_type = onnx.TensorProto.INT32
    nodes = casts + list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


def constant_folded(model: Path, folded: Path) -> Path:
    """``model``, its int64 inputs made int32, with its constant subgraphs folded by
    onnxruntime's basic graph optimizations (ONNX operators only), written to
    ``folded``: the shapes computed from constants become static for IREE's importer."""
    import onnx
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    try:
        onnxruntime.InferenceSession(with_int32_inputs(onnx.load(str(model))).SerializeToString(), options,
                                     providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own Fail/InvalidGraph types
        raise IreeError(f"constant folding with onnxruntime: {_first_error(str(error))}") from None
    return folded


def compile_for_vulkan(model: Path, workdir: Path, vulkan_target: str) -> IreeProgram:
    """``model`` imported and compiled for IREE's Vulkan ``vulkan_target`` in ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    imported, vmfb, phases = workdir / "model.mlir", workdir / "model.vmfb", workdir / "phases"
    folded = constant_folded(model, workdir / "folded.onnx")
    _run(["iree-import-onnx", "--opset-version", OPSET, folded, "-o", imported], "iree-import-onnx")
    _run(["iree-compile", imported, "--iree-hal-target-device=vulkan", f"--iree-vulkan-target={vulkan_target}",
          "--iree-input-demote-i64-to-i32", f"--dump-compilation-phases-to={phases}",
          "--mlir-elide-resource-strings-if-larger=16", "--mlir-elide-elementsattrs-if-larger=16", "-o", vmfb],
         "iree-compile")
    imported.unlink()  # the weights, in text: as large again as the model
    folded.unlink()
    (flow,) = phases.glob("*.flow.mlir")
    return IreeProgram(vmfb, count_dispatches(flow), vulkan_target)


class IreeSession:
    """A compiled IREE program loaded on the Vulkan device, in this process."""

    def __init__(self, program: IreeProgram):
        self._rt = rt = _import("iree.runtime", "iree-base-runtime")
        try:
            self.device = rt.get_device("vulkan")
            config = rt.Config(device=self.device)
            module = rt.VmModule.mmap(config.vm_instance, str(program.vmfb))
            self._context = rt.SystemContext(vm_modules=[module], config=config)
        except (RuntimeError, ValueError) as error:
            raise IreeError(f"loading on vulkan: {_first_error(str(error))}") from None
        (entry,) = [name for name in module.function_names if not name.endswith("$async") and not name.startswith("__")]
        self._entry = self._context.modules[module.name][entry]

    def _to_host(self, array) -> np.ndarray:
        """``array``'s contents through a mappable staging buffer: ``DeviceArray.to_host``
        imports the numpy buffer into Vulkan, which lavapipe refuses (it wants 4096-byte
        aligned host pointers)."""
        rt = self._rt
        view = array._buffer_view  # iree.runtime has no public route to the HAL buffer
        staging = self.device.allocator.allocate_buffer(
            memory_type=int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
            allowed_usage=int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED),
            allocation_size=view.get_buffer().byte_length())
        semaphore = self.device.create_semaphore(0)
        self.device.queue_copy(view.get_buffer(), staging, wait_semaphores=rt.HalFence.create_at(semaphore, 0),
                               signal_semaphores=rt.HalFence.create_at(semaphore, 1))
        rt.HalFence.create_at(semaphore, 1).wait()
        dtype = rt.HalElementType.map_to_dtype(view.element_type)
        return np.array(staging.map().asarray(tuple(view.shape), dtype))

    def bind(self, arrays):
        """A zero-argument callable running the model on ``arrays`` and reading its
        results back; its ``outputs`` hold them after a run."""
        arrays = [array.astype(np.int32) if array.dtype == np.int64 else array for array in arrays]

        def call():
            try:
                results = self._entry(*arrays)
            except (RuntimeError, ValueError) as error:
                raise IreeError(f"running: {_first_error(str(error))}") from None
            call.outputs = [self._to_host(r) for r in (results if isinstance(results, (tuple, list)) else [results])]

        call.outputs = []
        return call


@dataclass(frozen=True)
class IreeRun:
    """One run of an IREE program: its milliseconds (the run alone, not the loading)
    and its outputs on the host."""
    ms: float
    outputs: list


def _serve(program: IreeProgram, arrays: list, connection):
    """The child of ``IreeProcess``: load the program, say so, then run it on each
    request and send the run."""
    try:
        run = IreeSession(program).bind(arrays)
        connection.send("loaded")
        while connection.recv() == "run":
            start = time.perf_counter()
            run()
            connection.send(IreeRun(1e3 * (time.perf_counter() - start), run.outputs))
    except IreeError as error:
        connection.send(error)


class IreeProcess:
    """A compiled IREE program loaded on the Vulkan device in a process of its own, run
    there on request under a time limit: IREE's code for a CNN can take many minutes an
    inference on lavapipe, and a call into IREE's runtime cannot be interrupted in the
    process that made it."""

    def __init__(self, program: IreeProgram, arrays: list):
        context = multiprocessing.get_context("spawn")  # a fresh process: no Vulkan state forked from this one
        self._connection, child_end = context.Pipe()
        self._child = context.Process(target=_serve, args=(program, arrays, child_end), daemon=True)
        self._child.start()
        child_end.close()
        try:
            self._received()  # loaded
        except IreeError:
            self.close()
            raise

    def _received(self):
        """The child's next message; an IreeError it sent is raised here."""
        try:
            message = self._connection.recv()
        except EOFError:
            self._child.join()
            raise IreeError(f"running: its process ended with exit code {self._child.exitcode}") from None
        if isinstance(message, IreeError):
            raise message
        return message

    def run(self, seconds: float) -> IreeRun | None:
        """One run, or None when it had not finished after ``seconds`` (the process is
        then stopped)."""
        self._connection.send("run")
        if not self._connection.poll(seconds):
            self.close()
            return None
        return self._received()

    def close(self):
        self._child.kill()
        self._child.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["DEFAULT_VULKAN_TARGET", "IreeError", "IreeProcess", "IreeProgram", "IreeRun", "IreeSession",
           "compile_for_vulkan", "constant_folded", "count_dispatches", "installed_version", "with_int32_inputs"]
