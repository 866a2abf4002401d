"""The "strength" rules (rewriting/catalogue/strength.py), one case per rule.

Each case builds a small ECG function containing the rule's left-hand side, applies
only that rule, checks that it fired, which ops remain, and that the reference
interpreter gives the same results before and after. The negative cases are
matches the rule must leave alone because rewriting them would be wrong.
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import func, ir
from dnnf_mlir.ecg import OPS, TensorSpec, to_mlir
from dnnf_mlir.interpreter import interpret
from dnnf_mlir.rewriting import catalogue
from dnnf_mlir.rewriting.catalogue import strength
from dnnf_mlir.rewriting.pass_ import rewrite_function

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return (np.abs(RNG.standard_normal(shape)) + 0.5).astype(np.float32)


def op(mnemonic, *operands, **attrs):
    return OPS[mnemonic].build(list(operands), attrs).operation.results[0]


def const(array):
    return op("constant", value=np.asarray(array))


def build(inputs, body):
    context = dnnf_mlir.make_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [to_mlir(TensorSpec.of(a)) for a in inputs]
            function = func.FuncOp("main", (types, []))
            with ir.InsertionPoint(function.add_entry_block()):
                result = body(*function.entry_block.arguments)
                func.ReturnOp([result])
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [result.type]))
        module.operation.verify()
    return module, function


def ops_of(function):
    return sorted(o.name[4:] for o in function.entry_block.operations if o.name.startswith("ecg.") and o.name != "ecg.constant")


def rewrite(rule, inputs, body):
    """(rules applied, ops left, results before, results after)."""
    module, function = build(inputs, body)
    before = interpret(module, inputs)
    with module.context:
        report = rewrite_function(function.operation, only=rule)
    module.operation.verify()
    return report["rules"], ops_of(function), before, interpret(module, inputs)


# ----- cases: (rule, inputs, body, ops left) -----


def unary(*chain, domain=randn, **attrs):
    """f(g(...(x))) for chain (f, g, ...), attrs for the reductions."""

    def body(x):
        for mnemonic in reversed(chain):
            x = op(mnemonic, x, **(attrs if mnemonic.startswith("reduce") else {}))
        return x

    return [domain(3, 4)], body


REDUCE = {"axes": [1], "keepdims": 0}
CASES = []


def case(rule, inputs, body, left, variant=""):
    CASES.append(pytest.param(rule, inputs, body, left, id=f"{rule}{'[' + variant + ']' if variant else ''}"))


for name, cls in OPS.items():
    e = cls.ALGEBRA.identity
    if e is not None:
        # float operands, or random uint8 ones for the integer-only (bitwise) ops
        x = positive(3, 4) if "f" in getattr(cls, "OPERAND_KINDS", "f") else RNG.integers(0, 256, (3, 4), np.uint8)
        case(f"{name}-{strength._NUMBER_NAMES[e]}", [x], lambda v, n=name, e=e, d=x.dtype: op(n, v, const(np.array(e, d))), [])
case("add-zero", [randn(3, 4)], lambda x: op("add", const(np.zeros(4, np.float32)), x), [], "zero-first")
case("mul-one", [np.arange(12, dtype=np.int32).reshape(3, 4)], lambda x: op("mul", x, const(np.int32(1))), [], "int")
for f in ("max", "min"):
    case(f"{f}-self", [randn(3, 4)], lambda x, f=f: op(f, x, x), [])
for f in ("and", "or"):
    case(f"{f}-self", [RNG.random((3, 4)) < 0.5], lambda x, f=f: op(f, x, x), [])
for f, g in strength._CANCELLING:
    domain = (lambda *s: RNG.random(s) < 0.5) if f == "not" else positive
    case(f"{f}-{g}", *unary(f, g, domain=domain), [])
for f, g in strength._ABSORBED:
    case(f"{f}-{g}", *unary(f, g), [g])
for f, g, h in strength._MERGED:
    domain = positive if f == "log" else randn
    case(strength.rule_name(f, g), *unary(f, g, domain=domain, **REDUCE), [h])
for name, exponent, rhs in strength._POWERS:
    left = {"two": ["square"], "three": ["mul", "square"], "half": ["sqrt"], "minus-one": ["reciprocal"],
            "minus-half": ["reciprocal", "sqrt"]}[name]
    case(f"pow-{name}", [positive(3, 4)], lambda x, e=exponent: op("pow", x, const(np.float32(e))), left)

two = [randn(3, 4), positive(3, 4)]
case("add-neg", two, lambda a, b: op("add", op("neg", b), a), ["sub"])
case("sub-neg", two, lambda a, b: op("sub", a, op("neg", b)), ["add"])
case("neg-sub", two, lambda a, b: op("neg", op("sub", a, b)), ["sub"])
case("mul-neg-neg", two, lambda a, b: op("mul", op("neg", a), op("neg", b)), ["mul"])
case("div-neg-neg", two, lambda a, b: op("div", op("neg", a), op("neg", b)), ["div"])
case("mul-reciprocal", two, lambda a, b: op("mul", op("reciprocal", b), a), ["div"])
case("one-div", [positive(3, 4)], lambda x: op("div", const(np.float32(1)), x), ["reciprocal"])
case("mul-self", [randn(3, 4)], lambda x: op("mul", x, x), ["square"])
case("mul-sqrt-sqrt", [positive(3, 4)], lambda x: op("mul", op("sqrt", x), op("sqrt", x)), [])

NO_OPS = {
    "reshape": ((3, 4), {"shape": [3, 4]}),
    "flatten": ((3, 4), {"axis": 1}),
    "squeeze": ((3, 4), {}),
    "unsqueeze": ((3, 4), {"axes": []}),
    "expand": ((3, 4), {"shape": [3, 4]}),
    "tile": ((3, 4), {"repeats": [1, 1]}),
    "cast": ((3, 4), {"to": "f32"}),
    "depth_to_space": ((1, 4, 2, 3), {"blocksize": 1}),
    "space_to_depth": ((1, 4, 2, 3), {"blocksize": 1}),
    "transpose": ((3, 4), {"perm": [0, 1]}),
    "slice": ((3, 4), {"starts": [0, 0], "ends": [3, 4], "axes": [0, 1], "steps": [1, 1]}),
    "pad": ((3, 4), {"pads": [0, 0, 0, 0], "mode": "reflect"}),
    "resize": ((1, 2, 3, 4), {"sizes": [1, 2, 3, 4], "mode": "linear"}),
}
for name, (shape, attrs) in NO_OPS.items():
    case(strength.rule_name(name, "noop"), [randn(*shape)], lambda x, n=name, a=attrs: op(n, x, **a), [])

case("transpose-transpose", [randn(2, 3, 4)],
     lambda x: op("transpose", op("transpose", x, perm=[1, 2, 0]), perm=[2, 0, 1]), ["transpose"], "identity")
case("transpose-*", [randn(2, 3, 4)],
     lambda x: op("transpose", op("transpose", x, perm=[1, 2, 0]), perm=[2, 0, 1]), [], "then-noop")
case("transpose-transpose", [randn(2, 3, 4)],
     lambda x: op("transpose", op("transpose", x, perm=[1, 0, 2]), perm=[0, 2, 1]), ["transpose"], "composed")
RESHAPING = {
    "reshape": {"shape": [2, 1, 12]},
    "flatten": {"axis": 0},
    "squeeze": {},
    "unsqueeze": {"axes": [2]},
}
OUTER_RESHAPING = {**RESHAPING, "reshape": {"shape": [6, 4]}, "unsqueeze": {"axes": [0]}}
for outer, outer_attrs in OUTER_RESHAPING.items():
    for inner, inner_attrs in RESHAPING.items():
        case(f"{outer}-{inner}", [randn(1, 2, 3, 4)],
             lambda x, o=outer, oa=outer_attrs, i=inner, ia=inner_attrs: op(o, op(i, x, **ia), **oa), ["reshape"])


# ----- weight folding -----


def batch_norm(y, channels, epsilon=1e-3):
    params = [positive(channels), randn(channels), randn(channels), positive(channels)]
    return op("batch_normalization", y, *map(const, params), epsilon=epsilon)


def conv(x, bias, **attrs):
    operands = [x, const(randn(6, 2, 3, 3))] + ([const(randn(6))] if bias else [])
    return op("conv", *operands, **{"group": 2, "pads": [1, 1, 1, 1], **attrs})


X4 = [randn(2, 4, 5, 5)]
for bias in (False, True):
    suffix = "-bias" if bias else ""
    case(f"conv{suffix}-batch_normalization", X4, lambda x, b=bias: batch_norm(conv(x, b), 6), ["conv"])
    for variant, k in {"per-channel": randn(1, 6, 1, 1), "rank-3": randn(6, 1, 1), "scalar": np.float32(-1.5)}.items():
        case(f"conv{suffix}-mul", X4, lambda x, b=bias, k=k: op("mul", const(k), conv(x, b)), ["conv"], variant)
        case(f"conv{suffix}-add", X4, lambda x, b=bias, k=k: op("add", conv(x, b), const(k)), ["conv"], variant)
for variant, k in {"per-channel": randn(1, 4, 1, 1), "scalar": np.float32(0.75)}.items():
    case("batch_normalization-mul", X4, lambda x, k=k: op("mul", batch_norm(x, 4), const(k)), ["batch_normalization"], variant)
    case("batch_normalization-add", X4, lambda x, k=k: op("add", const(k), batch_norm(x, 4)), ["batch_normalization"], variant)

# A zero pad of the image axes folds into the conv's own pads (asymmetric, on top of
# them, with strides and dilations: MobileNetV2's explicit Pad before a stride-2 conv).
for bias in (False, True):
    suffix = "-bias" if bias else ""
    for variant, pads, attrs in (("asymmetric", [0, 0, 0, 1, 0, 0, 2, 0], {"pads": [0, 0, 0, 0]}),
                                 ("stride-2", [0, 0, 0, 0, 0, 0, 1, 1], {"pads": [0, 0, 0, 0], "strides": [2, 2]}),
                                 ("on-own-pads", [0, 0, 1, 2, 0, 0, 0, 1], {"dilations": [2, 1]}),
                                 ("valid", [0, 0, 0, 0, 0, 0, 1, 1], {"auto_pad": "VALID", "strides": [2, 2]})):
        case(f"conv{suffix}-pad", X4, lambda x, b=bias, p=pads, a=attrs: conv(op("pad", x, pads=p), b, **a), ["conv"],
             variant)


def gemm(x, trans_b=0, c=None, **attrs):
    w = randn(5, 3) if trans_b else randn(3, 5)
    operands = [x, const(w)] + ([const(c)] if c is not None else [])
    return op("gemm", *operands, transB=trans_b, **attrs)


XG = [randn(4, 3)]
C_SHAPES = {"row": (5,), "column": (4, 1), "full": (4, 5)}
for trans_b in (0, 1):
    t = f"transB={trans_b}"
    case("gemm-batch_normalization", XG, lambda x, t=trans_b: batch_norm(gemm(x, t, alpha=0.5, beta=3.0), 5), ["gemm"], t)
    case("gemm-mul", XG, lambda x, t=trans_b: op("mul", gemm(x, t, alpha=2.0), const(randn(1, 5))), ["gemm"], t)
    for name, shape in C_SHAPES.items():
        c = randn(*shape)
        case("gemm-bias-batch_normalization", XG, lambda x, t=trans_b, c=c: batch_norm(gemm(x, t, c), 5), ["gemm"], f"{t},{name}")
        case("gemm-bias-mul", XG, lambda x, t=trans_b, c=c: op("mul", gemm(x, t, c, beta=0.5), const(randn(5))), ["gemm"], f"{t},{name}")
        case("gemm-bias-add", XG, lambda x, t=trans_b, c=c: op("add", gemm(x, t, c), const(randn(4, 1))), ["gemm"], f"{t},{name}")
case("mat_mul-batch_normalization", XG, lambda x: batch_norm(op("mat_mul", x, const(randn(3, 5))), 5), ["add", "mat_mul"])
case("mat_mul-mul", [randn(2, 4, 3)], lambda x: op("mul", op("mat_mul", x, const(randn(3, 5))), const(randn(5))), ["mat_mul"])
case("mat_mul-mul", [randn(3)], lambda x: op("mul", op("mat_mul", x, const(randn(2, 3, 5))), const(randn(1, 5))), ["mat_mul"], "batched-w")


@pytest.mark.parametrize("rule, inputs, body, left", CASES)
def test_rule(rule, inputs, body, left):
    fired, ops, before, after = rewrite(rule, inputs, body)
    assert fired and all(name.startswith(rule.rstrip("*")) for name in fired), fired
    assert ops == sorted(left)
    for got, want in zip(after, before):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ----- where the rules must not fire -----

def shared(y, consumer):
    """consumer(y) + y: a rewrite that removes y's op would have to duplicate it."""
    return op("add", consumer(y), y)


NEGATIVE = [
    pytest.param("add-zero", [randn(4)], lambda x: op("add", x, const(np.zeros((3, 4), np.float32))), id="add-zero[broadcasts]"),
    pytest.param("sub-zero", [randn(4)], lambda x: op("sub", const(np.float32(0)), x), id="sub-zero[zero-first]"),
    pytest.param("transpose-noop", [randn(3, 3)], lambda x: op("transpose", x, perm=[1, 0]), id="transpose-noop[square]"),
    pytest.param("slice-noop", [randn(3, 4)], lambda x: op("slice", x, starts=[2], ends=[-1], axes=[0], steps=[-1]),
                 id="slice-noop[reversed]"),
    pytest.param("pad-noop", [randn(3, 4)], lambda x: op("pad", x, pads=[-1, 0, 1, 0]), id="pad-noop[shifted]"),
    pytest.param("abs-relu", [randn(3, 4)], lambda x: op("relu", op("abs", x)), id="abs-relu[other-order]"),
    pytest.param("conv-mul", X4, lambda x: op("mul", conv(x, False), const(randn(5))), id="conv-mul[last-axis]"),
    pytest.param("batch_normalization-add", X4, lambda x: op("add", batch_norm(x, 4), const(randn(5))),
                 id="batch_normalization-add[last-axis]"),
    pytest.param("conv-add", X4, lambda x: op("add", conv(x, False), const(randn(1, 6, 5, 1))), id="conv-add[spatial]"),
    pytest.param("gemm-mul", XG, lambda x: op("mul", gemm(x), const(randn(4, 1))), id="gemm-mul[rows]"),
    pytest.param("gemm-bias-add", XG, lambda x: op("add", gemm(x, 0, randn(5), beta=0.5), const(randn(5))),
                 id="gemm-bias-add[beta]"),
    pytest.param("gemm-bias-batch_normalization", XG, lambda x: batch_norm(gemm(x, 0, randn(5), beta=2.0), 5),
                 id="gemm-bias-batch_normalization[beta]"),
    pytest.param("mat_mul-batch_normalization", [randn(2, 4, 3)],
                 lambda x: batch_norm(op("mat_mul", x, const(randn(3, 5))), 4), id="mat_mul-batch_normalization[rank-3]"),
    pytest.param("mat_mul-mul", XG, lambda x: op("mul", op("mat_mul", x, const(randn(3, 5))), const(randn(4, 1))),
                 id="mat_mul-mul[rows]"),
    pytest.param("conv-batch_normalization", X4, lambda x: shared(conv(x, False), lambda y: batch_norm(y, 6)),
                 id="conv-batch_normalization[shared]"),
    pytest.param("conv-pad", X4, lambda x: conv(op("pad", x, pads=[1, 0, 0, 0, 0, 0, 0, 0]), False),
                 id="conv-pad[batch]"),
    pytest.param("conv-pad", X4, lambda x: conv(op("pad", x, pads=[0, 0, 1, 1, 0, 0, 1, 1], constant_value=1.0), False),
                 id="conv-pad[non-zero]"),
    pytest.param("conv-pad", X4, lambda x: conv(op("pad", x, pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="edge"), False),
                 id="conv-pad[edge]"),
    pytest.param("conv-pad", X4, lambda x: conv(op("pad", x, pads=[0, 0, -1, 1, 0, 0, 1, 1]), False, pads=[0, 0, 0, 0]),
                 id="conv-pad[crops]"),
    pytest.param("conv-pad", X4, lambda x: conv(op("pad", x, pads=[0, 0, 1, 1, 0, 0, 0, 0]), False, pads=[0, 0, 0, 0],
                                                auto_pad="SAME_UPPER"), id="conv-pad[auto-pad]"),
    pytest.param("neg-neg", [randn(3, 4)], lambda x: op("neg", op("reduce_sum", x, axes=[0])), id="neg-neg[no-pair]"),
]


@pytest.mark.parametrize("rule, inputs, body", NEGATIVE)
def test_rule_does_not_fire(rule, inputs, body):
    fired, _, before, after = rewrite(rule, inputs, body)
    assert not fired
    for got, want in zip(after, before):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_every_rule_has_a_case():
    strength_rules = {r.name for r in catalogue() if r.family == "strength"}
    assert strength_rules == {p.values[0] for p in CASES} - {"transpose-*"}
