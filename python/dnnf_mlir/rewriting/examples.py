"""A concrete instance of each rule's left-hand side: an ECG function to test it on.

The catalogue lists each rule's FLOPs change on this instance, the lit tests and the
property-based tests start from it. Types are chosen from what the pattern's ops
need: a movement op gets operands it can move (``MOVEMENT``), logical ops get
bools, BitShift unsigned integers, and everything else float tensors of
``BASE_SHAPE``; constants broadcast along the last axis, scalars have rank 0.
"""

from dataclasses import dataclass

import numpy as np

from .._mlir import func, ir
from ..ecg import OPS, TensorSpec, to_mlir
from .terms import Lit, N, Var

BASE_SHAPE = (2, 3, 4)
F32 = np.dtype(np.float32)

# Operand specs and attributes that make an op's instance valid (and, for the
# selecting ops, smaller than its input, so that moving work across it gains).
MOVEMENT = {
    "reshape": ([BASE_SHAPE], {"shape": [6, 4]}),
    "flatten": ([BASE_SHAPE], {"axis": 1}),
    "squeeze": ([(2, 1, 4)], {"axes": [1]}),
    "unsqueeze": ([BASE_SHAPE], {"axes": [0]}),
    "slice": ([BASE_SHAPE], {"starts": [0], "ends": [2], "axes": [2], "steps": [1]}),
    "transpose": ([BASE_SHAPE], {"perm": [0, 2, 1]}),
    "depth_to_space": ([(1, 8, 2, 3)], {"blocksize": 2, "mode": "DCR"}),
    "space_to_depth": ([(1, 2, 4, 6)], {"blocksize": 2}),
    "expand": ([(1, 3, 1)], {"shape": [2, 3, 4]}),
    "tile": ([BASE_SHAPE], {"repeats": [1, 2, 1]}),
    "gather": ([BASE_SHAPE, TensorSpec((1,), np.int64)], {"axis": 0}),
    "gather_elements": ([BASE_SHAPE, TensorSpec((1, 3, 4), np.int64)], {"axis": 0}),
    "max_pool": ([(1, 2, 4, 4)], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "average_pool": ([(1, 2, 4, 4)], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "global_max_pool": ([(1, 2, 4, 4)], {}),
    "global_average_pool": ([(1, 2, 4, 4)], {}),
    "mat_mul": ([BASE_SHAPE, (4, 5)], {}),
    "gemm": ([(3, 4), (4, 5)], {}),
    "conv": ([(1, 2, 5, 5), (3, 2, 3, 3)], {}),
    "conv_transpose": ([(1, 2, 4, 4), (2, 3, 3, 3)], {}),
    "cast": ([BASE_SHAPE], {"to": "f64"}),
}
_BOOL_OPS = ("and", "or", "xor", "not")


@dataclass
class Instance:
    """An example function for a rule, and inputs for it."""

    module: ir.Module
    function: object
    inputs: list


class _Types:
    """Specs for the pattern's variables, from what the ops around them need."""

    def __init__(self, overrides):
        self.specs = dict(overrides)

    def want(self, term, spec: TensorSpec):
        if isinstance(term, Var):
            self.specs.setdefault(term.name, spec)
        elif isinstance(term, N):
            self.visit(term, spec)

    def visit(self, node: N, spec: TensorSpec):
        if node.op in MOVEMENT:
            shapes, _ = MOVEMENT[node.op]
            for operand, shape in zip(node.operands, shapes):
                self.want(operand, shape if isinstance(shape, TensorSpec) else TensorSpec(shape, spec.dtype))
            for operand in node.operands[len(shapes):]:
                self.want(operand, spec)
            return
        dtype = spec.dtype
        if node.op in _BOOL_OPS:
            dtype = np.dtype(np.bool_)
        elif node.op == "bit_shift":
            dtype = np.dtype(np.uint8)
        for i, operand in enumerate(node.operands):
            if node.op == "where" and i == 0:
                self.want(operand, TensorSpec(spec.shape, np.bool_))
            else:
                self.want(operand, TensorSpec(spec.shape, dtype))


def variable_specs(rule, overrides=None) -> dict:
    """name -> TensorSpec for every variable of the rule's pattern."""
    types = _Types(overrides or {})
    types.visit(rule.lhs, TensorSpec(BASE_SHAPE, F32))
    return types.specs


def values_for(rule, spec: TensorSpec, rng, kind: str) -> np.ndarray:
    """Random values in the domain of every op of the rule (positive where a log,
    square root, reciprocal, division or power appears)."""
    shape = () if kind == "scalar" else spec.shape[-1:] if kind == "const" else spec.shape
    if spec.dtype == np.bool_:
        return rng.random(shape) < 0.5
    if spec.dtype.kind in "iu":
        high = 4 if spec.dtype.kind == "u" else 2
        return rng.integers(0, high, shape).astype(spec.dtype)
    low = 0.5 if _needs_positive(rule) else -2.0
    return rng.uniform(low, 2.0, shape).astype(spec.dtype)


def _needs_positive(rule) -> bool:
    text = f"{rule.lhs} {rule.rhs}"
    return any(name in text for name in ("Log", "Sqrt", "Recip", "Div", "Pow", "ReduceLogSum", "ReduceProd"))


def instantiate(rule, context, rng, overrides=None) -> Instance:
    """Build ``func.func @<rule>`` computing the rule's left-hand side."""
    specs = variable_specs(rule, overrides)
    kinds = _variable_kinds(rule.lhs)
    arguments = [name for name in kinds if kinds[name] == "any"]
    constants = {name: values_for(rule, specs[name], rng, kinds[name]) for name in kinds if kinds[name] != "any"}
    inputs = [values_for(rule, specs[name], rng, "any") for name in arguments]
    for name, value in zip(arguments, inputs):
        if specs[name].dtype.kind == "i":
            # Indices into the moved operand: keep them in range.
            value[...] = rng.integers(0, 2, value.shape)
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [to_mlir(specs[name]) for name in arguments]
            function = func.FuncOp(rule.name.replace("-", "_"), (types, []))
            with ir.InsertionPoint(function.add_entry_block()):
                values = dict(zip(arguments, function.entry_block.arguments))
                for name, array in constants.items():
                    values[name] = OPS["constant"].build([], {"value": array}).results[0]
                result = _build(rule.lhs, values)
                func.ReturnOp([result])
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [result.type]))
    return Instance(module, function, inputs)


def _variable_kinds(term, kinds=None) -> dict:
    kinds = {} if kinds is None else kinds
    if isinstance(term, Var):
        kinds.setdefault(term.name, term.kind)
    elif isinstance(term, N):
        for operand in term.operands:
            _variable_kinds(operand, kinds)
    return kinds


def _build(term, values) -> ir.Value:
    if isinstance(term, Var):
        return values[term.name]
    operands = [_build(o, values) for o in term.operands if not isinstance(o, Lit)]
    if any(isinstance(o, Lit) for o in term.operands):
        dtype = np.dtype(str(ir.RankedTensorType(operands[0].type).element_type).replace("f", "float"))
        operands = [
            OPS["constant"].build([], {"value": np.array(o.value, dtype)}).results[0] if isinstance(o, Lit) else _build(o, values)
            for o in term.operands
        ]
    attrs = dict(MOVEMENT.get(term.op, ((), {}))[1])
    attrs.update(dict(term.attrs))
    return OPS[term.op].build(operands, attrs).results[0]
