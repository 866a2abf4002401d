"""Strength rules: the simplifications that always pay, applied by the greedy driver.

Identities come from the ops' ``Algebra.identity``; the facts Algebra has no field
for (which op undoes, absorbs or subsumes which) are tables of op pairs below.
Weight folding writes the new weights as ECG ops over constants, which the engine
folds with the ops' reference semantics: a batch normalization over constants,
with zero mean and shift, is the per-channel scale ``scale/sqrt(var+eps)`` with
the op's own epsilon (templates have no way to compute a literal from attributes).
"""

from math import prod

from ...ecg import OPS
from ..terms import A, B, C, K1, Lit, N, Ref, Var

_NUMBER_NAMES = {0.0: "zero", 1.0: "one"}

# ----- elementwise tables (pairs of ops: facts about ranges and inverses) -----

# f(g(A)) == A: g undoes f. Exp(Log), Square(Sqrt) hold on the inner op's domain.
_CANCELLING = (
    ("neg", "neg"), ("reciprocal", "reciprocal"), ("not", "not"),
    ("exp", "log"), ("log", "exp"), ("square", "sqrt"),
)
_ROUNDING = ("floor", "ceil", "round")
_NON_NEGATIVE = ("abs", "relu", "square", "exp", "sigmoid", "sqrt")
# f(g(A)) == g(A): every result of g is a fixed point of f (idempotence when f == g).
_ABSORBED = (
    *((f, f) for f in ("abs", "relu", "sign", *_ROUNDING)),
    *((f, g) for f in ("abs", "relu") for g in _NON_NEGATIVE if g != f),
    *((f, g) for f in _ROUNDING for g in (*_ROUNDING, "sign") if g != f),
)
# Even functions and norms: f(-A) == f(|A|) == f(A).
_EVEN = ("abs", "square", "cos", "reduce_l1", "reduce_l2", "reduce_sum_square")
# f(g(A)) == h(A), with h taking the attributes of whichever of f, g has them.
_MERGED = (
    ("sqrt", "square", "abs"),
    ("reduce_sum", "square", "reduce_sum_square"),
    ("reduce_sum", "abs", "reduce_l1"),
    ("sqrt", "reduce_sum_square", "reduce_l2"),
    ("log", "reduce_sum", "reduce_log_sum"),
    *((f, g, f) for f in _EVEN for g in ("neg", "abs") if (f, g) != ("abs", "abs")),
)
# Pow(A, exponent) by a literal exponent (Pow costs 4 FLOPs per element).
_POWERS = (
    ("two", 2.0, N("square", A)),
    ("three", 3.0, N("mul", N("square", A), A)),
    ("half", 0.5, N("sqrt", A)),
    ("minus-one", -1.0, N("reciprocal", A)),
    ("minus-half", -0.5, N("reciprocal", N("sqrt", A))),
)
_SIGNS = (
    ("add-neg", N("add", A, N("neg", B)), N("sub", A, B)),
    ("sub-neg", N("sub", A, N("neg", B)), N("add", A, B)),
    ("neg-sub", N("neg", N("sub", A, B)), N("sub", B, A)),
    ("mul-neg-neg", N("mul", N("neg", A), N("neg", B)), N("mul", A, B)),
    ("div-neg-neg", N("div", N("neg", A), N("neg", B)), N("div", A, B)),
    ("mul-reciprocal", N("mul", A, N("reciprocal", B)), N("div", A, B)),
    ("one-div", N("div", Lit(1.0), A), N("reciprocal", A)),
    ("mul-self", N("mul", A, A), N("square", A)),
    ("mul-sqrt-sqrt", N("mul", N("sqrt", A), N("sqrt", A)), A),
)

# ----- data movement -----

_RESHAPING = ("reshape", "flatten", "squeeze", "unsqueeze")
# Ops that are the identity when their result type is their input type, with the
# extra condition some need: a same-shaped transpose may swap equal dimensions, a
# slice may reverse, a pad may crop and pad, a resize may shift its samples.
_NO_OP_WHEN = {
    **{op: None for op in (*_RESHAPING, "expand", "tile", "cast", "depth_to_space", "space_to_depth")},
    "transpose": lambda attrs: list(attrs["perm"]) == sorted(attrs["perm"]),
    "slice": lambda attrs: all(step > 0 for step in attrs["steps"]),
    "pad": lambda attrs: not any(attrs["pads"]),
    "resize": lambda attrs: all(scale == 1 for scale in attrs["scales"]),
}

# The no-op instance of each (``examples``): A's shape and the root's attributes.
_NO_OP_EXAMPLES = {
    "reshape": ((2, 3, 4), {"shape": [2, 3, 4]}),
    "flatten": ((3, 4), {"axis": 1}),
    "squeeze": ((2, 3, 4), {"axes": []}),
    "unsqueeze": ((2, 3, 4), {"axes": []}),
    "expand": ((2, 3, 4), {"shape": [2, 3, 4]}),
    "tile": ((2, 3, 4), {"repeats": [1, 1, 1]}),
    "cast": ((2, 3, 4), {"to": "f32"}),
    "depth_to_space": ((1, 4, 2, 3), {"blocksize": 1}),
    "space_to_depth": ((1, 4, 2, 3), {"blocksize": 1}),
    "transpose": ((2, 3, 4), {"perm": [0, 1, 2]}),
    "slice": ((2, 3, 4), {"starts": [0], "ends": [4], "axes": [2], "steps": [1]}),
    "pad": ((2, 3, 4), {"pads": [0] * 6}),
    "resize": ((2, 3, 4), {}),
}

# ----- weight folding -----

X, W, BIAS = Var("X"), Var("W", "const"), Var("Bias", "const")
SCALE, SHIFT, MEAN, VARIANCE = (Var(name, "const") for name in ("Scale", "Shift", "Mean", "Variance"))


def add_rules(catalogue):
    def rule(name, lhs, rhs, condition=None, note="", example=None):
        catalogue.add(name, "strength", lhs, rhs, condition, note, example)

    _elementwise(rule)
    _data_movement(rule)
    _batch_normalization_folding(rule)
    _constant_folding(rule)


def _elementwise(rule):
    for name, cls in OPS.items():
        identity = cls.ALGEBRA.identity
        if identity is not None:
            rule(f"{name}-{_NUMBER_NAMES.get(identity, f'{identity:g}')}", N(name, A, Lit(identity)), A, note="Algebra.identity")
    for f in ("max", "min", "and", "or"):
        rule(f"{f}-self", N(f, A, A), A, note="idempotent")
    for f, g in _CANCELLING:
        rule(rule_name(f, g), N(f, N(g, A)), A)
    for f, g in _ABSORBED:
        rule(rule_name(f, g), N(f, N(g, A, name="g")), Ref("g"), note=f"{g}'s results are fixed points of {f}")
    for f, g, h in _MERGED:
        like = "g" if OPS[g].ATTRIBUTES else "f"
        rule(rule_name(f, g), N(f, N(g, A, name="g"), name="f"), N(h, A, like=like))
    for name, exponent, rhs in _POWERS:
        rule(f"pow-{name}", N("pow", A, Lit(exponent)), rhs)
    for name, lhs, rhs in _SIGNS:
        rule(name, lhs, rhs)


def rule_name(*mnemonics):
    """A rule name: the op mnemonics (with their underscores) joined by hyphens."""
    return "-".join(mnemonics)


def _same_type_as_input(extra):
    """The no-op condition: the root (``x``) has A's type and ``extra`` holds for its attributes."""
    return lambda m: m.spec("A") == m.spec("x") and (extra is None or extra(m.attrs("x")))


def _data_movement(rule):
    for op, extra in _NO_OP_WHEN.items():
        shape, attrs = _NO_OP_EXAMPLES[op]
        rule(rule_name(op, "noop"), N(op, A, name="x"), A, condition=_same_type_as_input(extra),
             example={"A": shape, "x": attrs})
    _pad_into_conv(rule)
    rule(
        "transpose-transpose",
        N("transpose", N("transpose", A, name="inner"), name="outer"),
        N("transpose", A, perm=lambda m: [m.attrs("inner")["perm"][q] for q in m.attrs("outer")["perm"]]),
    )
    # Reshape-like ops keep the row-major order, so any two make one Reshape.
    for outer in _RESHAPING:
        for inner in _RESHAPING:
            rule(rule_name(outer, inner), N(outer, N(inner, A), name="x"), N("reshape", A, shape=_shape_of("x")))


def _spatial_zero_pad(m) -> bool:
    """Condition: the pad (``p``) adds zeros along the spatial axes only and the conv
    pads by its own ``pads`` (auto_pad NOTSET) or not at all (VALID)."""
    pad, rank = m.attrs("p"), m.spec("A").rank
    pads = list(pad["pads"])
    return (pad["mode"] == "constant" and pad["constant_value"] == 0.0 and min(pads) >= 0
            and not any(pads[:2] + pads[rank:rank + 2]) and m.attrs("conv")["auto_pad"] in ("NOTSET", "VALID"))


def _conv_pads_with_pad(m) -> list:
    """The conv's pads (none when VALID) plus the folded pad's spatial ones, in the
    conv's (begins, then ends) order."""
    rank, pads, conv = m.spec("A").rank, list(m.attrs("p")["pads"]), m.attrs("conv")
    spatial = rank - 2
    own = list(conv["pads"]) if conv["auto_pad"] == "NOTSET" else [0] * (2 * spatial)
    return [own[i] + pads[2 + i] for i in range(spatial)] + [own[spatial + i] + pads[rank + 2 + i] for i in range(spatial)]


def _pad_into_conv(rule):
    """Conv(Pad(A)) with a zero pad of the spatial axes is Conv(A) padding by both: the
    padded tensor is then never stored (a model's explicit Pad before a stride-2
    depthwise convolution made its producer copy its whole result into the padded
    tensor; the convolution's code pads a channel at a time in cache instead)."""
    for suffix, bias in (("", ()), ("-bias", (C,))):
        rule(f"conv{suffix}-pad", N("conv", N("pad", A, name="p"), B, *bias, name="conv"),
             N("conv", A, B, *bias, like="conv", pads=_conv_pads_with_pad, auto_pad="NOTSET"),
             condition=_spatial_zero_pad,
             example={"A": (1, 2, 5, 5), "B": (3, 2, 3, 3), "p": {"pads": [0, 0, 1, 0, 0, 0, 1, 2]},
                      **({"C": (3,)} if bias else {})})


def _shape_of(name):
    return lambda m: list(m.spec(name).shape)


# ----- weight folding -----


def _zeros(like):
    """A constant of zeros shaped like the constant ``like`` (folded; weights are finite)."""
    return N("mul", like, Lit(0.0))


def _normalized(term, scale=SCALE, shift=SHIFT, mean=MEAN):
    """The matched batch normalization (its epsilon) over ``term``, a constant."""
    return N("batch_normalization", term, scale, shift, mean, VARIANCE, like="bn")


def _scaled_along(weight, axis):
    """``weight`` times the normalization's per-channel scale along ``axis(match)``: the
    constant is viewed as (before, channels, after) so the normalization's axis 1 is it."""

    def view(m):
        shape = m.spec(weight.name).shape
        a = axis(m)
        return [prod(shape[:a]), shape[a], prod(shape[a + 1:])]

    zeros = _zeros(MEAN)
    return N("reshape", _normalized(N("reshape", weight, shape=view), shift=zeros, mean=zeros), shape=_shape_of(weight.name))


def _channels(m):
    return m.spec("Mean").shape[0]


def _normalized_vector(bias):
    """The (C,) bias a folded normalization adds: the normalization of the old bias."""
    row = N("reshape", bias, shape=lambda m: [1, _channels(m)])
    return N("reshape", _normalized(row), shape=lambda m: [_channels(m)])


def _gemm_beta_one(m):
    return len(m.ops["g"].operands) == 2 or m.attrs("g")["beta"] == 1.0


def _gemm_rows(m):
    """The rows of the matched C (1 when it broadcasts along the rows)."""
    shape = m.spec("Bias").shape
    return shape[0] if len(shape) == 2 else 1


def _batch_normalization_folding(rule):
    """BN(Conv/Gemm/MatMul(X, W[, Bias])) with constant parameters: y = f*(z-mean)+shift
    with f = scale/sqrt(var+eps) is z with W scaled by f per output channel and
    Bias' = f*(Bias-mean)+shift (Bias = 0 when absent)."""

    def bn(producer):
        return N("batch_normalization", producer, SCALE, SHIFT, MEAN, VARIANCE, name="bn")

    for suffix, bias, new_bias in (("", (), _zeros(MEAN)), ("-bias", (BIAS,), BIAS)):
        rule(
            f"conv{suffix}-batch_normalization",
            bn(N("conv", X, W, *bias, name="conv")),
            N("conv", X, _scaled_along(W, lambda m: 0), _normalized_vector(new_bias), like="conv"),
            example={"Bias": (3,)},
        )

    def transposed(m):  # B's output-column axis
        return 1 - m.attrs("g")["transB"]

    rule(
        "gemm-batch_normalization",
        bn(N("gemm", X, W, name="g")),
        N("gemm", X, _scaled_along(W, transposed), _normalized_vector(_zeros(MEAN)), like="g", beta=1.0),
    )
    c_rows = N("expand", BIAS, shape=lambda m: [_gemm_rows(m), _channels(m)])
    rule(
        "gemm-bias-batch_normalization",
        bn(N("gemm", X, W, BIAS, name="g")),
        N("gemm", X, _scaled_along(W, transposed), _normalized(c_rows), like="g"),
        condition=_gemm_beta_one,
        example={"Bias": (5,)},
        note="beta == 1 (no literal can carry beta into the folded C)",
    )
    rule(
        "mat_mul-batch_normalization",
        bn(N("mat_mul", X, W, name="mm")),
        N("add", N("mat_mul", X, _scaled_along(W, lambda m: 1)), _normalized_vector(_zeros(MEAN))),
        condition=lambda m: m.spec("W").rank == 2 and m.spec("mm").rank == 2,
        example={"X": (3, 4)},
        note="rank-2 result: normalization axis 1 is W's columns; stays a MatMul + Add (Gemm's C costs more)",
    )


def _along_axis(axis):
    """Condition: K1 broadcasts into the root (``x``) and varies only along ``axis`` of it."""

    def condition(m):
        shape, rank = m.spec("K1").shape, m.spec("x").rank
        offset = rank - len(shape)
        return offset >= 0 and all(d == 1 for j, d in enumerate(shape) if j + offset != axis % rank)

    return condition


def _k_shaped(*dims):
    """K1 reshaped to ``dims``, where None stands for its element count (1 or the channels)."""
    return N("reshape", K1, shape=lambda m: [m.spec("K1").numel if d is None else d for d in dims])


def _constant_folding(rule):
    """Conv/Gemm/MatMul with constant weights, then times or plus a constant varying only
    along the output channels: the constant goes into the weights and the bias."""
    channel = _along_axis(1)

    def k_like_w(m):  # K1 as (n, 1, ..., 1) of W's rank, for a Conv weight
        return [m.spec("K1").numel] + [1] * (m.spec("W").rank - 1)

    k_conv = N("reshape", K1, shape=k_like_w)
    k_vector = _k_shaped(None)
    per_channel = {"K1": (3, 1, 1)}
    rule("conv-mul", N("mul", N("conv", X, W, name="c"), K1, name="x"),
         N("conv", X, N("mul", W, k_conv), like="c"), condition=channel, example=per_channel)
    rule("conv-bias-mul", N("mul", N("conv", X, W, BIAS, name="c"), K1, name="x"),
         N("conv", X, N("mul", W, k_conv), N("mul", BIAS, k_vector), like="c"), condition=channel,
         example={**per_channel, "Bias": (3,)})
    rule("conv-add", N("add", N("conv", X, W, name="c"), K1, name="x"),
         N("conv", X, W, N("expand", k_vector, shape=lambda m: [m.spec("W").shape[0]]), like="c"), condition=channel,
         example=per_channel)
    rule("conv-bias-add", N("add", N("conv", X, W, BIAS, name="c"), K1, name="x"),
         N("conv", X, W, N("add", BIAS, k_vector), like="c"), condition=channel,
         example={**per_channel, "Bias": (3,)})

    def k_like_b(m):  # K1 along B's output-column axis
        n = m.spec("K1").numel
        return [n, 1] if m.attrs("g")["transB"] else [1, n]

    k_gemm = N("mul", W, N("reshape", K1, shape=k_like_b))
    rule("gemm-mul", N("mul", N("gemm", X, W, name="g"), K1, name="x"),
         N("gemm", X, k_gemm, like="g"), condition=channel)
    rule("gemm-bias-mul", N("mul", N("gemm", X, W, BIAS, name="g"), K1, name="x"),
         N("gemm", X, k_gemm, N("mul", BIAS, _k_shaped(1, None)), like="g"), condition=channel,
         example={"Bias": (5,)})
    rule("gemm-bias-add", N("add", N("gemm", X, W, BIAS, name="g"), K1, name="x"),
         N("gemm", X, W, N("add", BIAS, K1), like="g"), condition=_gemm_beta_one, example={"Bias": (5,)},
         note="beta == 1; Gemm(A, B) + K without C is no gain: Gemm's C costs 2 FLOPs per element")
    rule("mat_mul-mul", N("mul", N("mat_mul", X, W), K1, name="x"),
         N("mat_mul", X, N("mul", W, _k_shaped(1, None))),
         condition=lambda m: m.spec("W").rank >= 2 and _along_axis(-1)(m))
    # A batch normalization followed by a per-channel scale or shift is one with
    # scaled (or shifted) parameters (DenseNet's BN, Mul, Add before each ReLU).
    per_channel = {"X": (1, 3, 2, 2), "K1": (3, 1, 1)}
    normalized = N("batch_normalization", X, SCALE, SHIFT, MEAN, VARIANCE, name="bn")
    rule("batch_normalization-mul", N("mul", normalized, K1, name="x"),
         N("batch_normalization", X, N("mul", SCALE, k_vector), N("mul", SHIFT, k_vector), MEAN, VARIANCE, like="bn"),
         condition=channel, example=per_channel)
    rule("batch_normalization-add", N("add", normalized, K1, name="x"),
         N("batch_normalization", X, SCALE, N("add", SHIFT, k_vector), MEAN, VARIANCE, like="bn"),
         condition=channel, example=per_channel)
