"""What ``codegen.lower`` records on a module, for whoever loads or links it, whatever
the target: the signatures of its public functions (which bufferization turns into
out-parameters), the kernels it launches, the target and its options.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np

from .._mlir import ir
from ..ecg.tensor_spec import FLOAT8_DTYPES
from ..kernel_functions import is_public
from .errors import CodegenError

SIGNATURES = "dnnf.codegen.signatures"
TARGET_ATTR = "dnnf.codegen.target"
KERNELS_ATTR = "dnnf.codegen.kernels"  # kernels launched per call (see pipeline.py)
UNIQUE_KERNELS_ATTR = "dnnf.codegen.unique_kernels"  # distinct kernels: the functions (or planned ops)


def target_option_attr(option: str) -> str:
    """The module attribute of a target option (``cpu``: ``dnnf.codegen.cpu``)."""
    return f"dnnf.codegen.{option}"


def functions(module: ir.Module):
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def symbol_name(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


_DTYPES = {
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "i64": np.int64,
    "i32": np.int32,
    "i16": np.int16,
    "i8": np.int8,
    "i1": np.bool_,
    "ui64": np.uint64,
    "ui32": np.uint32,
    "ui16": np.uint16,
    "ui8": np.uint8,
    **{name: dtype.type for name, dtype in FLOAT8_DTYPES.items()},
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


# The signature a function declared when lowering changed its types (convert-ecg-to-linalg
# makes unsigned integers signless): the one its callers pass and get arrays of.
DECLARED_TYPE_ATTR = "dnnf.declared_type"


def declared_function_type(func) -> ir.FunctionType:
    """``func``'s signature as its callers see it (``DECLARED_TYPE_ATTR``, else its type)."""
    attributes = func.attributes
    name = DECLARED_TYPE_ATTR if DECLARED_TYPE_ATTR in attributes else "function_type"
    return ir.FunctionType(ir.TypeAttr(attributes[name]).value)


def record_signatures(module: ir.Module):
    entries = {}
    for func in functions(module):
        if not is_public(func) or len(func.regions[0].blocks) == 0:
            continue
        ftype = declared_function_type(func)
        text = ";".join(_type_spec(t) for t in ftype.inputs) + "->" + ";".join(_type_spec(t) for t in ftype.results)
        entries[symbol_name(func)] = ir.StringAttr.get(text)
    module.operation.attributes[SIGNATURES] = ir.DictAttr.get(entries)


def record_kernels(module: ir.Module, launched: int, unique: int):
    i64 = ir.IntegerType.get_signless(64)
    module.operation.attributes[KERNELS_ATTR] = ir.IntegerAttr.get(i64, launched)
    module.operation.attributes[UNIQUE_KERNELS_ATTR] = ir.IntegerAttr.get(i64, unique)


def lowered_kernels(module: ir.Module) -> tuple:
    """(launched per call, distinct) as ``record_kernels`` recorded them."""
    attributes = module.operation.attributes
    return tuple(ir.IntegerAttr(attributes[name]).value for name in (KERNELS_ATTR, UNIQUE_KERNELS_ATTR))


def lowered_target_name(module: ir.Module) -> str | None:
    """The name of the target the module was lowered for (None before ``emit``)."""
    attributes = module.operation.attributes
    return ir.StringAttr(attributes[TARGET_ATTR]).value if TARGET_ATTR in attributes else None


def record_target(module: ir.Module, target):
    """The target's name and its options (``Target.options``), each an attribute."""
    attributes = module.operation.attributes
    attributes[TARGET_ATTR] = ir.StringAttr.get(target.name)
    for option, value in target.options().items():
        attributes[target_option_attr(option)] = ir.StringAttr.get(str(value))


def signatures(module: ir.Module) -> dict:
    """{function: ([(dtype, shape)] inputs, [(dtype, shape)] outputs)} recorded by ``lower``."""
    if SIGNATURES not in module.operation.attributes:
        raise CodegenError("the module was not lowered by dnnf_mlir.codegen.lower")
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
    "DECLARED_TYPE_ATTR",
    "KERNELS_ATTR",
    "SIGNATURES",
    "TARGET_ATTR",
    "UNIQUE_KERNELS_ATTR",
    "functions",
    "is_public",
    "declared_function_type",
    "lowered_kernels",
    "lowered_target_name",
    "record_kernels",
    "record_signatures",
    "record_target",
    "signatures",
    "symbol_name",
    "target_option_attr",
]
