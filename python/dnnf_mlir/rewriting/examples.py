"""A concrete instance of each rule's left-hand side: an ECG function to test it on.

The catalogue lists each rule's FLOPs change on this instance, the lit tests and the
property-based tests start from it. Types are chosen from what the pattern's ops
need: a data-movement, linear or pooling op gets operands it takes (``OPERANDS``), logical ops get
bools, BitShift and the bitwise ops unsigned integers, and everything else float tensors of
``BASE_SHAPE``; constants broadcast along the last axis, scalars have rank 0.
"""

from dataclasses import dataclass

import numpy as np

from .._mlir import func, ir
from ..ecg import OPS, TensorSpec, from_mlir, to_mlir
from .terms import Lit, N, Var, mnemonics

BASE_SHAPE = (2, 3, 4)
F32 = np.dtype(np.float32)

# Operand specs and attributes that make an op's instance valid (and, for the
# selecting ops, smaller than its input, so that moving work across it gains).
# Attributes given as a function are computed from the first operand's type, so
# that movement ops nest (Reshape(Squeeze(A))).
OPERANDS = {
    "reshape": ([BASE_SHAPE], lambda s: {"shape": [1, s.numel // s.shape[-1], s.shape[-1]]}),
    "flatten": ([(1, 3, 4)], {"axis": 1}),
    "squeeze": ([(1, 1, 4)], lambda s: {"axes": [s.shape.index(1)]}),
    "unsqueeze": ([BASE_SHAPE], {"axes": [0]}),
    "slice": ([BASE_SHAPE], lambda s: {"starts": [0], "ends": [max(1, s.shape[-1] // 2)], "axes": [s.rank - 1],
                                       "steps": [1]}),
    "transpose": ([BASE_SHAPE], lambda s: {"perm": list(range(s.rank - 2)) + [s.rank - 1, s.rank - 2]}),
    "depth_to_space": ([(1, 8, 2, 3)], {"blocksize": 2, "mode": "DCR"}),
    "space_to_depth": ([(1, 2, 4, 6)], {"blocksize": 2}),
    "expand": ([(1, 3, 1)], lambda s: {"shape": [2 if d == 1 else d for d in s.shape]}),
    "tile": ([BASE_SHAPE], lambda s: {"repeats": [1] * (s.rank - 1) + [2]}),
    "pad": ([BASE_SHAPE], lambda s: {"pads": [0] * (2 * s.rank)}),
    "resize": ([BASE_SHAPE], lambda s: {"sizes": list(s.shape), "scales": np.ones(s.rank, np.float32)}),
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
    "bitcast": ([BASE_SHAPE], {"to": "i32"}),
}
_BOOL_OPS = ("and", "or", "xor", "not")
_INTEGER_OPS = {op: np.dtype(np.uint8) for op in ("bit_shift", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")}


@dataclass
class Instance:
    """An example function for a rule, and inputs for it."""

    module: ir.Module
    function: object
    inputs: list


def values_for(rule, spec: TensorSpec, rng, positive=False) -> np.ndarray:
    """Random values in the domain of every op of the rule: positive where a log,
    square root, reciprocal, division, power or normalization appears, and for
    scalars (so that a scale keeps the order of what it scales)."""
    if spec.dtype == np.bool_:
        return rng.random(spec.shape) < 0.5
    if spec.dtype.kind in "iu":  # signed ones are indices: 0 and 1 are in range for every instance
        return rng.integers(0, 2 if spec.dtype.kind == "i" else 4, spec.shape).astype(spec.dtype)
    low = 0.5 if positive or _needs_positive(rule) else -2.0
    return rng.uniform(low, 2.0, spec.shape).astype(spec.dtype)


# Ops whose domain excludes negative numbers or zero.
_POSITIVE_DOMAIN = {"log", "log_softmax", "sqrt", "reciprocal", "div", "pow"}


def _needs_positive(rule) -> bool:
    ops = mnemonics(rule.lhs) | mnemonics(rule.rhs)
    return bool(ops & _POSITIVE_DOMAIN) or any(op.startswith("reduce_") or op.endswith("normalization") for op in ops)


def instantiate(rule, context, rng, shapes=None) -> Instance:
    """Build ``func.func @<rule>`` computing the rule's left-hand side.

    Variables become arguments (constants for the constant kinds) when the build
    reaches them, typed from their position: ``shapes`` (name -> shape) first, then
    what the op needs there, then their siblings' types. ``shapes`` (and the rule's
    ``example``) may also give a named node's attributes.
    """
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp(rule.name, ([], []))
            block = function.add_entry_block()
            builder = _Builder(rule, block, rng, {**(rule.example or {}), **(shapes or {})})
            with ir.InsertionPoint(block):
                result = builder.build(rule.lhs, TensorSpec(BASE_SHAPE, F32))
                func.ReturnOp([result])
            types = [argument.type for argument in block.arguments]
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [result.type]))
    return Instance(module, function, builder.inputs)


class _Builder:
    """Builds a pattern bottom-up, typing each variable where the build reaches it."""

    def __init__(self, rule, block, rng, example):
        self.rule, self.block, self.rng, self.example = rule, block, rng, example
        self.values, self.inputs = {}, []

    def build(self, term, want: TensorSpec) -> ir.Value:
        if isinstance(term, Var):
            if term.name not in self.values:
                self.values[term.name] = self._variable(term, want)
            return self.values[term.name]
        wants = self._operand_wants(term, want)
        operands = []
        for operand, wanted in zip(term.operands, wants):
            if isinstance(operand, Lit):
                operands.append(None)
                continue
            built = [from_mlir(v.type) for v in operands if v is not None]
            if term.op not in OPERANDS:
                wanted = _near(term.op, wanted, built, operand)
            operands.append(self.build(operand, wanted))
        dtype = next(from_mlir(v.type).dtype for v in operands if v is not None)
        operands = [
            OPS["constant"].build([], {"value": np.array(o.value, dtype)}).results[0] if v is None else v
            for o, v in zip(term.operands, operands)
        ]
        attrs = self.example.get(term.name) or OPERANDS.get(term.op, ((), {}))[1]
        if callable(attrs):
            attrs = attrs(from_mlir(operands[0].type))
        return OPS[term.op].build(operands, {**attrs, **dict(term.attrs)}).results[0]

    def _operand_wants(self, node: N, want: TensorSpec) -> list:
        count = len(node.operands)
        if node.op in OPERANDS:
            shapes = OPERANDS[node.op][0]
            specs = [s if isinstance(s, TensorSpec) else TensorSpec(s, want.dtype) for s in shapes]
            return (specs + [want] * count)[:count]
        dtype = _INTEGER_OPS.get(node.op, np.dtype(np.bool_) if node.op in _BOOL_OPS else want.dtype)
        wants = [TensorSpec(want.shape, dtype)] * count
        if node.op == "where":
            wants[0] = TensorSpec(want.shape, np.bool_)
        return wants

    def _variable(self, var: Var, want: TensorSpec) -> ir.Value:
        spec = TensorSpec(self.example.get(var.name, want.shape), want.dtype)
        if var.kind == "scalar":
            spec = spec.with_shape(())
        array = values_for(self.rule, spec, self.rng, positive=var.kind == "scalar")
        if var.kind != "any":
            return OPS["constant"].build([], {"value": array}).results[0]
        self.inputs.append(array)
        return self.block.add_argument(to_mlir(spec), ir.Location.unknown())


def _near(op: str, want: TensorSpec, siblings: list, operand) -> TensorSpec:
    """A constant next to a built operand of an elementwise op varies along its last
    axis; batch normalization's parameters follow the input's channels."""
    if siblings and op == "batch_normalization":
        return want.with_shape(siblings[0].shape[1:2])
    if isinstance(operand, Var) and operand.kind == "const" and siblings and siblings[0].rank:
        return want.with_shape(siblings[0].shape[-1:])
    return want
