"""One-to-One ops: elementwise unary, binary (numpy broadcasting) and ternary ops.

Each op is a short class: its numpy function, its FLOPs per element and its
algebra; the shared bases give result-type inference, verification and
reference semantics.
"""

import numpy as np

from ..attributes import Float, Int, Str
from ..base import ECGOp, Tensor, TensorResult
from ..properties import Algebra, MappingType
from ..shapes import broadcast, require, require_float, same_dtype
from ..tensor_spec import DTYPE_BY_NAME, TensorSpec, dtype_name, element_kind, finfo

def _special(name):
    """scipy.special's function ``name``, imported on first use (a quarter of start-up)."""

    def compute(*args):
        from scipy import special

        return getattr(special, name)(*args)

    return compute


_erf = _special("erf")

# Unary elementwise ops commute with every pure data-movement op.
_MOVES = ("Reorganize", "Shuffle")
# Non-decreasing functions commute with max and min: f(max(a, b)) == max(f(a), f(b)).
_MONOTONE = (("max", "max"), ("min", "min"))


def _morphic(*morphisms):
    """The algebra of a unary op with these (inner, outer) morphisms."""
    return Algebra(commutes_with=_MOVES, morphisms=morphisms)



class UnaryElementwise(ECGOp):
    """y = f(x) elementwise; subclasses set ``compute`` (numpy, attrs as keywords)."""

    input: Tensor
    output: TensorResult
    MAPPING = MappingType.ONE_TO_ONE
    ALGEBRA = Algebra(commutes_with=_MOVES)
    FLOPS_PER_ELEMENT = 1
    FLOAT_ONLY = True

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        if cls.FLOAT_ONLY:
            require_float(x)
        return [x]

    @classmethod
    def reference(cls, inputs, attrs, results):
        with np.errstate(all="ignore"):
            y = cls.compute(inputs[0], **attrs)
        return [np.asarray(y).astype(results[0].dtype, copy=False)]


def _family_namespace(onnx, compute, doc, attrs, algebra, **constants):
    """Class body shared by the op families; ``attrs`` maps name -> (kind, default)."""
    namespace = {
        "__doc__": doc,
        "__annotations__": {name: kind for name, (kind, _) in (attrs or {}).items()},
        "DEFAULTS": {name: default for name, (_, default) in (attrs or {}).items()},
        "ONNX": (onnx,) if onnx else (),
        "compute": staticmethod(compute),
        **constants,
    }
    if algebra is not None:
        namespace["ALGEBRA"] = algebra
    return namespace


def _class_name(name):
    return "".join(part.title() for part in name.split("_")) + "Op"


def _unary(name, onnx, compute, doc, *, flops=1, float_only=True, algebra=None, attrs=None):
    """Define a unary elementwise op class (the family differs only in these fields)."""
    namespace = _family_namespace(onnx, compute, doc, attrs, algebra, FLOPS_PER_ELEMENT=flops, FLOAT_ONLY=float_only)
    return type(_class_name(name), (UnaryElementwise,), namespace, name=name)


def _signed(x):
    return element_kind(x.dtype) != "u"


AbsOp = _unary("abs", "Abs", np.abs, "|x|.", float_only=False, algebra=_morphic(("mul", "mul"), ("div", "div")))
NegOp = _unary("neg", "Neg", np.negative, "-x.", float_only=False,
    algebra=_morphic(("add", "add"), ("sub", "sub"), ("max", "min"), ("min", "max")),
)
ExpOp = _unary("exp", "Exp", np.exp, "e**x.", algebra=_morphic(("add", "mul"), ("sub", "div"), *_MONOTONE))
LogOp = _unary("log", "Log", np.log, "Natural logarithm.", algebra=_morphic(("mul", "add"), ("div", "sub"), *_MONOTONE))
SqrtOp = _unary("sqrt", "Sqrt", np.sqrt, "Square root.", algebra=_morphic(("mul", "mul"), ("div", "div"), *_MONOTONE))
ReciprocalOp = _unary("reciprocal", "Reciprocal", np.reciprocal, "1/x.", algebra=_morphic(("mul", "mul"), ("div", "div")))
ReluOp = _unary("relu", "Relu", lambda x: np.maximum(x, np.zeros((), x.dtype)), "max(x, 0).", float_only=False, algebra=_morphic(*_MONOTONE))
SigmoidOp = _unary("sigmoid", "Sigmoid", _special("expit"), "1/(1+e**-x).", flops=4, algebra=_morphic(*_MONOTONE))
TanhOp = _unary("tanh", "Tanh", np.tanh, "Hyperbolic tangent.", flops=4, algebra=_morphic(*_MONOTONE))
ErfOp = _unary("erf", "Erf", _erf, "Gauss error function.", flops=4, algebra=_morphic(*_MONOTONE))
FloorOp = _unary("floor", "Floor", np.floor, "Round down.", algebra=_morphic(*_MONOTONE))
CeilOp = _unary("ceil", "Ceil", np.ceil, "Round up.", algebra=_morphic(*_MONOTONE))
RoundOp = _unary("round", "Round", np.round, "Round half to even.", algebra=_morphic(*_MONOTONE))
SignOp = _unary("sign", "Sign", np.sign, "-1, 0 or 1.", float_only=False, algebra=_morphic(("mul", "mul"), *_MONOTONE))
SinOp = _unary("sin", "Sin", np.sin, "Sine.", flops=4)
CosOp = _unary("cos", "Cos", np.cos, "Cosine.", flops=4)
SoftplusOp = _unary("softplus", "Softplus", lambda x: np.logaddexp(0, x), "log(1+e**x).", flops=4, algebra=_morphic(*_MONOTONE))
SoftsignOp = _unary("softsign", "Softsign", lambda x: x / (1 + np.abs(x)), "x/(1+|x|).", flops=3, algebra=_morphic(*_MONOTONE))
SquareOp = _unary("square", None, np.square, "x*x; no ONNX op, the math-property rewrites create it.", float_only=False,
    algebra=_morphic(("mul", "mul"), ("div", "div")),
)
NotOp = _unary("not", "Not", np.logical_not, "Logical negation of a bool tensor.", float_only=False,
    algebra=_morphic(("and", "or"), ("or", "and")),
)
HardSwishOp = _unary(
    "hard_swish", "HardSwish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), "x*max(0, min(1, x/6+1/2)).", flops=4
)
HardSigmoidOp = _unary(
    "hard_sigmoid",
    "HardSigmoid",
    lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1),
    "max(0, min(1, alpha*x+beta)).",
    flops=3,
    attrs={"alpha": (Float, 0.2), "beta": (Float, 0.5)},
)
LeakyReluOp = _unary(
    "leaky_relu", "LeakyRelu", lambda x, alpha: np.where(x < 0, alpha * x, x), "x if x >= 0 else alpha*x.",
    flops=2, attrs={"alpha": (Float, 0.01)},
)
EluOp = _unary(
    "elu", "Elu", lambda x, alpha: np.where(x < 0, alpha * np.expm1(x), x), "x if x >= 0 else alpha*(e**x-1).",
    flops=4, attrs={"alpha": (Float, 1.0)},
)
SeluOp = _unary(
    "selu",
    "Selu",
    lambda x, alpha, gamma: gamma * np.where(x <= 0, alpha * np.expm1(x), x),
    "gamma*(x if x > 0 else alpha*(e**x-1)).",
    flops=5,
    attrs={"alpha": (Float, 1.67326319217681884765625), "gamma": (Float, 1.05070102214813232421875)},
)
GeluOp = _unary(
    "gelu",
    "Gelu",
    lambda x, approximate: (
        0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
        if approximate == "tanh"
        else 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    ),
    "x*Phi(x), exact (erf) or with the tanh approximation.",
    flops=8,
    attrs={"approximate": (Str, "none")},
)



class CastOp(ECGOp, name="cast"):
    """Convert the element type to ``to`` (an MLIR element type name such as f32)."""

    input: Tensor
    output: TensorResult
    to: Str
    MAPPING = MappingType.ONE_TO_ONE
    ALGEBRA = Algebra(commutes_with=_MOVES)
    FLOPS_PER_ELEMENT = 1
    ONNX = ("Cast",)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(attrs["to"] in DTYPE_BY_NAME, f"unsupported target element type '{attrs['to']}'")
        return [TensorSpec(x.shape, DTYPE_BY_NAME[attrs["to"]])]

    @classmethod
    def reference(cls, inputs, attrs, results):
        # ONNX leaves NaN, infinities and out-of-range floats cast to integers undefined;
        # models rely on discarding them (T5's position buckets cast log(0) = -inf and
        # drop it with a Where), so they are no warning when constant folding.
        with np.errstate(invalid="ignore"):
            return [inputs[0].astype(results[0].dtype)]


class ClipOp(ECGOp, name="clip"):
    """min(max(x, min), max) with constant bounds."""

    input: Tensor
    output: TensorResult
    min: Float
    max: Float
    MAPPING = MappingType.ONE_TO_ONE
    ALGEBRA = Algebra(commutes_with=_MOVES)
    FLOPS_PER_ELEMENT = 2
    ONNX = ("Clip",)

    @classmethod
    def default_attrs(cls, operands):
        limits = finfo(operands[0].dtype) if operands[0].is_float else np.iinfo(operands[0].dtype)
        return {"min": float(limits.min), "max": float(limits.max)}

    @classmethod
    def infer(cls, operands, attrs):
        return [operands[0]]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x = inputs[0]
        return [np.minimum(np.maximum(x, _bound(attrs["min"], x.dtype)), _bound(attrs["max"], x.dtype))]


def _bound(value: float, dtype) -> np.ndarray:
    """A float attribute as a ``dtype`` scalar; integer bounds saturate (the default max
    of int64, 2**63 - 1, is not a float: as one it rounds up past the type)."""
    if np.issubdtype(dtype, np.integer):
        limits = np.iinfo(dtype)
        return np.array(max(limits.min, min(limits.max, int(value))), dtype)
    return np.array(value).astype(dtype)


class BinaryElementwise(ECGOp):
    """z = f(x, y) elementwise with numpy broadcasting."""

    lhs: Tensor
    rhs: Tensor
    output: TensorResult
    MAPPING = MappingType.ONE_TO_ONE
    FLOPS_PER_ELEMENT = 1
    # Element type of the result: the operands' (None) or bool for predicates.
    RESULT_DTYPE = None
    OPERAND_KINDS = "fiub"

    @classmethod
    def infer(cls, operands, attrs):
        dtype = same_dtype(operands)
        require(element_kind(dtype) in cls.OPERAND_KINDS, f"operands must not have element type {dtype_name(dtype)}")
        shape = broadcast(*(spec.shape for spec in operands))
        return [TensorSpec(shape, cls.RESULT_DTYPE or dtype)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        with np.errstate(all="ignore"):
            z = cls.compute(*inputs, **attrs)
        return [np.asarray(z).astype(results[0].dtype, copy=False)]


def _binary(name, onnx, compute, doc, *, algebra=None, predicate=False, kinds="fiu", attrs=None, flops=1):
    namespace = _family_namespace(
        onnx, compute, doc, attrs, algebra,
        RESULT_DTYPE=np.dtype(np.bool_) if predicate else None, OPERAND_KINDS=kinds, FLOPS_PER_ELEMENT=flops,
    )
    return type(_class_name(name), (BinaryElementwise,), namespace, name=name)


def _divide(x, y):
    """ONNX Div: true division for floats, truncation toward zero for integers."""
    if element_kind(x.dtype) == "f":
        return x / y
    quotient = np.abs(x) // np.where(y == 0, 1, np.abs(y))
    return np.where((x < 0) != (y < 0), -quotient, quotient)


def _modulo(x, y, fmod):
    """fmod=1: truncated (C fmod); fmod=0: floored, also for floats (Mod-28)."""
    if fmod:
        return np.fmod(x, y)
    return np.mod(x, y)


AddOp = _binary(
    "add", "Add", np.add, "x + y.",
    algebra=Algebra(commutative=True, associative=True, identity=0.0, distributes_over=("max", "min")),
)
SubOp = _binary(
    "sub", "Sub", np.subtract, "x - y.", algebra=Algebra(identity=0.0, distributes_over=("max", "min"), inverse_of="add"),
)
MulOp = _binary(
    "mul", "Mul", np.multiply, "x * y.",
    algebra=Algebra(commutative=True, associative=True, identity=1.0, absorbing=0.0, distributes_over=("add", "sub")),
)
DivOp = _binary(
    "div", "Div", _divide, "x / y (truncating for integers); right-distributes over add and sub.",
    algebra=Algebra(identity=1.0, distributes_over=("add", "sub"), inverse_of="mul"),
)
PowOp = _binary("pow", "Pow", np.power, "x ** y.", algebra=Algebra(identity=1.0), flops=4)
MaxOp = _binary("max", "Max", np.maximum, "max(x, y).", algebra=Algebra(commutative=True, associative=True))
MinOp = _binary("min", "Min", np.minimum, "min(x, y).", algebra=Algebra(commutative=True, associative=True))
ModOp = _binary("mod", "Mod", _modulo, "Remainder: fmod (sign of x) or mod (sign of y).", attrs={"fmod": (Int, 0)})
PReluOp = _binary("prelu", "PRelu", lambda x, slope: np.where(x < 0, slope * x, x), "x if x >= 0 else slope*x.", flops=2)
EqualOp = _binary("equal", "Equal", np.equal, "x == y.", predicate=True, kinds="fiub", algebra=Algebra(commutative=True))
LessOp = _binary("less", "Less", np.less, "x < y.", predicate=True)
LessOrEqualOp = _binary("less_or_equal", "LessOrEqual", np.less_equal, "x <= y.", predicate=True)
GreaterOp = _binary("greater", "Greater", np.greater, "x > y.", predicate=True)
GreaterOrEqualOp = _binary("greater_or_equal", "GreaterOrEqual", np.greater_equal, "x >= y.", predicate=True)
_LOGICAL = Algebra(commutative=True, associative=True)
AndOp = _binary("and", "And", np.logical_and, "Logical and.", kinds="b", algebra=_LOGICAL)
OrOp = _binary("or", "Or", np.logical_or, "Logical or.", kinds="b", algebra=_LOGICAL)
XorOp = _binary("xor", "Xor", np.logical_xor, "Logical exclusive or.", kinds="b", algebra=_LOGICAL)


class BitShiftOp(BinaryElementwise, name="bit_shift"):
    """x << y or x >> y, arithmetic for signed x (BitShift-28); a shift by a negative
    amount or the bit width or more leaves only the sign fill: -1 for x >> y with x < 0,
    else 0 (as numpy and ONNX Runtime give)."""

    direction: Str
    OPERAND_KINDS = "iu"
    ONNX = ("BitShift",)
    # A left shift by a fixed amount multiplies: it commutes with sums (wrapping).
    ALGEBRA = Algebra(commutes_with=("reduce_sum (left shifts)",))

    @staticmethod
    def compute(x, y, direction):
        return np.left_shift(x, y) if direction == "LEFT" else np.right_shift(x, y)

    @classmethod
    def infer(cls, operands, attrs):
        direction = attrs["direction"]
        require(direction in ("LEFT", "RIGHT"), f"direction '{direction}' must be LEFT or RIGHT")
        return super().infer(operands, attrs)


class WhereOp(ECGOp, name="where"):
    """condition ? x : y, with broadcasting over all three operands."""

    condition: Tensor
    lhs: Tensor
    rhs: Tensor
    output: TensorResult
    MAPPING = MappingType.ONE_TO_ONE
    ALGEBRA = Algebra(commutes_with=_MOVES)
    FLOPS_PER_ELEMENT = 1
    ONNX = ("Where",)

    @classmethod
    def infer(cls, operands, attrs):
        condition, x, y = operands
        require(condition.dtype == np.bool_, f"condition must be a bool tensor, got {condition}")
        dtype = same_dtype([x, y], "selected operands")
        return [TensorSpec(broadcast(condition.shape, x.shape, y.shape), dtype)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [np.where(*inputs).astype(results[0].dtype, copy=False)]


class BatchNormalizationOp(ECGOp, name="batch_normalization"):
    """Inference batch normalization over axis 1: scale*(x-mean)/sqrt(var+eps)+bias."""

    input: Tensor
    scale: Tensor
    bias: Tensor
    mean: Tensor
    var: Tensor
    output: TensorResult
    epsilon: Float
    MAPPING = MappingType.ONE_TO_ONE
    FLOPS_PER_ELEMENT = 2
    ONNX = ("BatchNormalization",)

    DEFAULTS = {"epsilon": 1e-5}

    @classmethod
    def infer(cls, operands, attrs):
        x, *params = operands
        require_float(x)
        require(x.rank >= 2, f"input must have rank >= 2, got {x}")
        for name, p in zip(("scale", "bias", "mean", "var"), params):
            require(p.shape == (x.shape[1],) and p.dtype == x.dtype, f"{name} must be {TensorSpec((x.shape[1],), x.dtype)}, got {p}")
        return [x]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x, scale, bias, mean, var = inputs
        shape = (1, -1) + (1,) * (x.ndim - 2)
        factor = scale / np.sqrt(var + np.array(attrs["epsilon"], x.dtype))
        y = (x - mean.reshape(shape)) * factor.reshape(shape) + bias.reshape(shape)
        return [y.astype(x.dtype, copy=False)]
