"""Whole-model compilation: ONNX -> a target's deployable directory, and running it.

    from dnnf_mlir.compiler import compile_model, Artifact, CompileOptions
    compile_model("resnet50.onnx", "out/resnet50", target="aarch64")
    compile_model("resnet50.onnx", "out/resnet50-tvm", options=CompileOptions(fusion="tvm", threads=2))
    outputs, times_ms = Artifact("out/resnet50").run([x], repeat=3)
"""

from .artifact import Artifact, ArtifactError, HostSession, InvalidInput
from .driver import CompileError, CompileReport, compile_model
from .options import CompileOptions

__all__ = ["Artifact", "ArtifactError", "CompileError", "CompileOptions", "CompileReport", "HostSession", "InvalidInput",
           "compile_model"]
