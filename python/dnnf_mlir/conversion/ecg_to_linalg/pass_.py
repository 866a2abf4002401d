"""The convert-ecg-to-linalg pass: walk the module, check every ECG op, then replace
each by the values its ``LOWERINGS`` entry builds, inlining ``ecg.fused`` bodies. A
lowering may build ECG ops (a recurrence's loop body): they are lowered in the next round.

Importing this module imports every op family, which registers its lowerings.
"""

from ..._mlir import ir
from ...ecg import ECGOp
from ...transforms.pass_base import ModulePass
from ...transforms.registry import described_by_table
# Each op family registers its lowerings in LOWERINGS when imported.
from . import (  # noqa: F401
    bitcast, bitwise_trig, conv_transpose, convolution, data_movement, elementwise, matmul, normalization, pooling,
    quantization, recurrent, reduction, resize, scatter, top_k, gather_sums,
)
from .bfloat16 import computes_in_f32, lower_in_f32
from .signless import make_signless

from .registry import LOWERINGS, Unsupported


class LoweringError(Exception):
    """An ECG op this pass cannot lower; reported at ``location``."""

    def __init__(self, message: str, location=None):
        super().__init__(message)
        self.location = location


# Ops whose lowering handles unsigned element types itself, and those that only move
# elements (no arithmetic on them).
_UNSIGNED_OPS = (
    "ecg.bit_shift", "ecg.bitwise_and", "ecg.bitwise_or", "ecg.bitwise_xor", "ecg.bitwise_not",
    "ecg.cast", "ecg.quantize_linear", "ecg.dequantize_linear",
    "ecg.constant", "ecg.reshape", "ecg.flatten", "ecg.squeeze", "ecg.unsqueeze", "ecg.transpose",
    "ecg.gather", "ecg.bitcast", "ecg.top_k",
)


def _unsigned_type(op) -> str | None:
    for value in list(op.operands) + list(op.results):
        type_ = value.type
        if isinstance(type_, ir.ShapedType) or isinstance(type_, ir.RankedTensorType):
            element = ir.ShapedType(type_).element_type
            if isinstance(element, ir.IntegerType) and element.is_unsigned:
                return str(element)
    return None


def _ecg_ops(root) -> list:
    """ECG ops under ``root`` in pre-order, not descending into ecg.fused (inlined whole)."""
    found = []

    def visit(operation):
        for region in operation.regions:
            for block in region.blocks:
                for op in block.operations:
                    name = op.operation.name
                    if name.startswith("ecg."):
                        found.append(op.operation)
                        if name == "ecg.fused":
                            continue
                    visit(op.operation)

    visit(root)
    return found


def _problems(operation) -> list:
    """[(location, message)] for ``operation`` (or the body ops of a fused op) that cannot be lowered."""
    name = operation.name
    if name == "ecg.fused":
        return [
            problem
            for region in operation.regions
            for block in region.blocks
            for inner in block.operations
            if inner.operation.name != "ecg.yield"
            for problem in _problems(inner.operation)
        ]
    if name[len("ecg."):] not in LOWERINGS:
        return [(operation.location, f"failed to legalize operation '{name}': no lowering to linalg in convert-ecg-to-linalg")]
    unsigned = _unsigned_type(operation)
    if unsigned and name not in _UNSIGNED_OPS:
        message = f"failed to legalize operation '{name}': unsigned element type {unsigned} (arith works on signless integers)"
        return [(operation.location, message)]
    return []


def lower_op(operation, args) -> list:
    """The values replacing ``operation``'s results; ops are created before ``operation``."""
    view = operation.opview
    if operation.name == "ecg.fused":
        return _inline_fused(view, args)
    if not isinstance(view, ECGOp):
        raise LoweringError(f"'{operation.name}' is not an ECG op", operation.location)
    if computes_in_f32(operation):
        return lower_in_f32(operation, args, lower_op)
    try:
        results = LOWERINGS[view.mnemonic](view, list(args))
    except Unsupported as error:
        raise LoweringError(
            f"failed to legalize operation '{operation.name}': {error} is not supported by convert-ecg-to-linalg",
            operation.location,
        ) from None
    except LoweringError:
        raise
    except Exception as error:  # a bug in a lowering: still a diagnostic at the op, not a traceback
        raise LoweringError(
            f"internal error lowering '{operation.name}': {type(error).__name__}: {error}", operation.location
        ) from error
    results = list(results)
    for new, old in zip(results, operation.results):
        if new.type != old.type:
            raise LoweringError(
                f"lowering of '{operation.name}' produced {new.type}, expected {old.type}", operation.location
            )
    return results


def _inline_fused(view, args) -> list:
    """Lower a fused op's body in place of the fused op (block arguments are its operands)."""
    block = view.operation.regions[0].blocks[0]
    values = {arg: value for arg, value in zip(block.arguments, args)}
    for inner in block.operations:
        operation = inner.operation
        operands = [values.get(v, v) for v in operation.operands]
        if operation.name == "ecg.yield":
            return operands
        with operation.location:
            results = lower_op(operation, operands)
        for old, new in zip(operation.results, results):
            values[old] = new
    raise LoweringError("'ecg.fused' body does not end with 'ecg.yield'", view.operation.location)


def convert_module(module_op) -> list:
    """Lower every ECG op under ``module_op`` in place; returns [(location, message)] failures.

    Every op is checked before anything changes; a failure while lowering leaves the
    module partly converted (the pass fails then).
    """
    while operations := _ecg_ops(module_op):
        problems = [problem for op in operations for problem in _problems(op)]
        if problems:
            return problems
        for operation in operations:
            args = list(operation.operands)
            try:
                with ir.InsertionPoint(operation), operation.location:
                    results = lower_op(operation, args)
            except LoweringError as error:
                return [(error.location or operation.location, str(error))]
            for old, new in zip(operation.results, results):
                old.replace_all_uses_with(new)
            operation.erase()
    try:
        make_signless(module_op)
    except Unsupported as error:
        return [(module_op.location, f"convert-ecg-to-linalg: {error} is not supported")]
    return []


class ConversionError(Exception):
    """The module holds ECG ops this conversion cannot lower (raised outside a pass manager)."""

    def __init__(self, failures):
        self.failures = failures
        super().__init__("\n".join(f"{location}: {message}" for location, message in failures))


@described_by_table
class ConvertECGToLinalgPass(ModulePass):
    """Rewrites every ECG op into linalg/tensor/arith/math ops on tensors."""

    NAME = "convert-ecg-to-linalg"

    def run(self, module):
        failures = convert_module(module)
        if failures:
            raise ConversionError(failures)

    def __call__(self, op, pass_=None):
        operation = op.operation if hasattr(op, "operation") else op
        failures = convert_module(operation)
        if not failures:
            return
        if pass_ is None:
            raise ConversionError(failures)
        for location, message in failures:
            location.emit_error(message)
        pass_.signal_pass_failure()


def convert_ecg_to_linalg(module):
    """Lower ``module`` (an ir.Module or its operation) in place; raises ConversionError."""
    ConvertECGToLinalgPass()(module.operation if hasattr(module, "operation") else module)
    return module
