"""What ``lower_to_llvm`` records on a module, for whoever loads or links it: the
signatures of its public functions (which bufferization turns into out-parameters),
the target and CPU, whether it runs OpenMP. Also the module walks the code generator
shares.
"""

from __future__ import annotations

import re

import numpy as np

from .._mlir import ir
from ..kernel_functions import is_public
from .errors import CodegenError


SIGNATURES = "dnnf.codegen.signatures"


USES_OPENMP = "dnnf.codegen.openmp"


TARGET_ATTR = "dnnf.codegen.target"


CPU_ATTR = "dnnf.codegen.cpu"
KERNELS_ATTR = "dnnf.codegen.kernels"  # kernels launched per call (see pipeline.py)
UNIQUE_KERNELS_ATTR = "dnnf.codegen.unique_kernels"  # distinct kernels: the functions (or planned ops)


def walk_ops(module_op, names) -> list:
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    return found


def functions(module: ir.Module):
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def symbol_name(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
    "i1": np.bool_,
    "ui64": np.uint64,
    "ui32": np.uint32,
    "ui16": np.uint16,
    "ui8": np.uint8,
}


def _type_spec(t: ir.Type) -> str:
    try:
        shaped = ir.ShapedType(t)
    except ValueError:
        return str(t)
    dims = ",".join("?" if d == ir.ShapedType.get_dynamic_size() else str(d) for d in shaped.shape)
    return f"{shaped.element_type}[{dims}]"


def _parse_spec(spec: str):
    m = re.fullmatch(r"(\w+)\[([^\]]*)\]", spec)
    if not m or m.group(1) not in _DTYPES:
        raise CodegenError(f"unsupported argument type {spec}")
    dims = tuple(int(d) if d != "?" else -1 for d in m.group(2).split(",") if d != "")
    return _DTYPES[m.group(1)], dims


def record_signatures(module: ir.Module):
    entries = {}
    for func in functions(module):
        if not is_public(func) or len(func.regions[0].blocks) == 0:
            continue
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        text = ";".join(_type_spec(t) for t in ftype.inputs) + "->" + ";".join(_type_spec(t) for t in ftype.results)
        entries[symbol_name(func)] = ir.StringAttr.get(text)
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    module.operation.attributes[SIGNATURES] = ir.DictAttr.get(entries)


def signatures(module: ir.Module) -> dict:
    """{function: ([(dtype, shape)] inputs, [(dtype, shape)] outputs)} recorded by lower_to_llvm."""
    if SIGNATURES not in module.operation.attributes:
        raise CodegenError("the module was not lowered by dnnf_mlir.codegen.lower_to_llvm")
    result = {}
    for named in ir.DictAttr(module.operation.attributes[SIGNATURES]):
        text = ir.StringAttr(named.attr).value
        ins, outs = text.split("->")
        result[named.name] = (
            [_parse_spec(s) for s in ins.split(";") if s],
            [_parse_spec(s) for s in outs.split(";") if s],
        )
    return result



__all__ = [
    "CPU_ATTR",
    "KERNELS_ATTR",
    "SIGNATURES",
    "TARGET_ATTR",
    "UNIQUE_KERNELS_ATTR",
    "USES_OPENMP",
    "functions",
    "is_public",
    "record_signatures",
    "signatures",
    "symbol_name",
    "walk_ops",
]
