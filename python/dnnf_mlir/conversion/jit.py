"""The loops harness: run linalg-on-tensors modules on the CPU with MLIR's ExecutionEngine.

A correctness harness for ``convert-ecg-to-linalg``, not the code generator (whose
JIT is ``codegen.JitFunction``): bufferize (function boundaries included, results
turned into caller-allocated out-parameters), lower linalg to plain loops and
everything to LLVM (the pipelines of ``lowering/loops/``), JIT-compile, call with
numpy arrays. No tiling or vectorization. The module is lowered in place (pass a copy to keep it).

    module = import_onnx("squeezenet.onnx")
    convert_ecg_to_linalg(module)
    outputs = LoopsJitFunction(module)(x)     # numpy arrays, one per result
"""

import ctypes
import time
from typing import Sequence

import numpy as np

from .. import _mlir
from .._mlir import ir
from ..codegen.passes import run_pipeline
from ..codegen.cpu.split import split_functions
from ..codegen.lowered_module import declared_function_type
from ..ecg import TensorSpec, from_mlir
from ..ir_walk import walk_ops
from ..lowering import read_pipeline

class JitError(Exception):
    pass


def _is_identity(memref_type) -> bool:
    layout = memref_type.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(memref_type.rank)


def copies_to_linalg(module_op):
    """Rewrite memref.copy between non-identity layouts into linalg.copy.

    The LLVM lowering of such a copy calls ``memrefCopy`` from MLIR's C runner
    utilities, which the wheel does not ship; a linalg.copy becomes loops instead.
    """
    linalg = _mlir.linalg
    for op in walk_ops(module_op, {"memref.copy"}):
        source, target = op.operands
        if _is_identity(ir.MemRefType(source.type)) and _is_identity(ir.MemRefType(target.type)):
            continue
        with ir.InsertionPoint(op), op.location:
            linalg.copy(source, outs=[target])
        op.erase()


def flatten_constants(module_op):
    """Make every non-splat multi-dimensional constant 1-d plus a tensor.expand_shape.

    Bufferized, a constant becomes a memref.global whose LLVM type nests one array per
    dimension; translating a (64, 256, 1, 1) weight builds 16384 one-element LLVM
    constants, which dominates compile time (ResNet-50: minutes). A flat global is
    one array and the expand_shape only a view.
    """
    constants = [op for op in walk_ops(module_op, {"arith.constant"}) if isinstance(op.results[0].type, ir.RankedTensorType)]
    tensor = _mlir.tensor
    for op in constants:
        value = op.attributes["value"]
        result_type = ir.RankedTensorType(op.results[0].type)
        element = result_type.element_type
        if (
            result_type.rank < 2 or not isinstance(value, ir.DenseElementsAttr) or value.is_splat
            or (isinstance(element, ir.IntegerType) and element.width == 1)
        ):
            continue
        flat = np.ascontiguousarray(np.asarray(value)).reshape(-1)
        attr = ir.DenseElementsAttr.get(flat, type=ir.RankedTensorType.get([flat.size], element))
        i64 = ir.IntegerType.get_signless(64)
        group = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in range(result_type.rank)])])
        with ir.InsertionPoint(op), op.location:
            flat_value = _mlir.arith.ConstantOp(attr.type, attr).result
            shaped = tensor.expand_shape(result_type, flat_value, group, [], list(result_type.shape))
        op.results[0].replace_all_uses_with(shaped)
        op.erase()


def _find_function(module: ir.Module, name: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise JitError(f"no function @{name} in the module")


class LoopsJitFunction:
    """``@entry`` of a linalg-on-tensors module, compiled to plain loops; call it with numpy arrays.

    ``timings`` records the seconds spent bufferizing, lowering to LLVM and in the
    ExecutionEngine's LLVM compilation. ``max_ops_per_function`` (0: off) splits the
    bufferized body into functions of about that many nested ops
    (``codegen.cpu.split.split_functions``): LLVM's optimizer is superlinear in function
    size, one function holding every loop nest of MobileBERT takes minutes.
    """

    def __init__(self, module: ir.Module, entry: str = "main", opt_level: int = 2, max_ops_per_function: int = 256):
        function = _find_function(module, entry)
        function_type = declared_function_type(function)
        self.entry = entry
        self.input_specs = [from_mlir(t) for t in function_type.inputs]
        self.output_specs = [from_mlir(t) for t in function_type.results]
        function.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get(module.context)
        self.timings = {}
        with module.context, ir.Location.unknown():
            start = time.perf_counter()
            flatten_constants(module.operation)
            run_pipeline(read_pipeline("loops/bufferize.pipeline"), module)
            copies_to_linalg(module.operation)
            if max_ops_per_function:
                split_functions(module, max_ops_per_function)
            self.timings["bufferize"] = time.perf_counter() - start
            start = time.perf_counter()
            run_pipeline(read_pipeline("loops/to-llvm.pipeline"), module)
            self.timings["to_llvm"] = time.perf_counter() - start
            start = time.perf_counter()
            self.module = module  # the engine's globals come from it: keep it alive
            self.engine = _mlir.execution_engine.ExecutionEngine(module, opt_level=opt_level)
            try:
                self.engine.lookup(entry)  # compiles now, failing on unresolved symbols
            except RuntimeError:
                raise JitError(f"JIT compilation of @{entry} failed (unresolved symbols are listed on stderr)") from None
            self.timings["llvm"] = time.perf_counter() - start

    def __call__(self, *inputs: np.ndarray) -> list:
        runtime = _mlir.runtime
        if len(inputs) != len(self.input_specs):
            raise JitError(f"@{self.entry} takes {len(self.input_specs)} inputs, got {len(inputs)}")
        arrays = []
        for index, (value, spec) in enumerate(zip(inputs, self.input_specs)):
            array = np.ascontiguousarray(value)
            if TensorSpec.of(array) != spec:
                raise JitError(f"input {index} must be {spec}, got {TensorSpec.of(array)}")
            arrays.append(array)
        outputs = [np.empty(spec.shape, spec.dtype) for spec in self.output_specs]
        descriptors = [runtime.get_ranked_memref_descriptor(a) for a in arrays + outputs]
        self.engine.invoke(self.entry, *[ctypes.pointer(ctypes.pointer(d)) for d in descriptors])
        return outputs


def jit_run(module: ir.Module, inputs: Sequence[np.ndarray], entry: str = "main") -> list:
    """Compile ``module`` (linalg on tensors; lowered in place) and run ``@entry`` once."""
    return LoopsJitFunction(module, entry)(*inputs)


__all__ = [
    "JitError", "LoopsJitFunction", "copies_to_linalg", "flatten_constants", "jit_run",
]
