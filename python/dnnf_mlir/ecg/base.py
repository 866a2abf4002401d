"""The ECG dialect object and the base class every ECG op derives from.

An ECG op class is a ``dialects.ext`` operation (so MLIR parses, prints and
verifies it) plus class-level semantics written in plain Python over
``TensorSpec``s and numpy arrays:

- ``MAPPING`` and ``ALGEBRA``: the DNNFusion mapping type and algebraic properties;
- ``default_attrs``: the ONNX defaults of its attributes;
- ``infer``: result types from operand types and attributes (the verifier compares
  them with the IR, the builder uses them when no result type is given);
- ``count_flops``: the FLOPs estimate;
- ``reference``: numpy semantics, which the reference interpreter runs.
"""

from typing import Optional, Sequence

import numpy as np

from .._mlir import ext, ir
from .attributes import AttributeKind
from .properties import NO_ALGEBRA, Algebra, MappingType
from .tensor_spec import TensorSpec, UnsupportedTypeError, from_mlir, to_mlir


class ECG(ext.Dialect, name="ecg"):
    """The Extended Computational Graph dialect: one op per ONNX operator."""


class VerificationError(ValueError):
    """An ECG op whose operands, attributes or results do not fit together."""


Tensor = ext.Operand[ir.RankedTensorType]
TensorResult = ext.Result[ir.RankedTensorType]


def value_slots(prefix: str, count: int, kind) -> dict:
    """Class-body entries for ``count`` optional operand (kind=ext.Operand) or result fields.

    Stands in for a variadic field wherever the values may differ in type: IRDL binds
    every value of one variadic field to a single type. ``define_with_slots`` adds
    them to an op class.
    """
    annotations = {f"{prefix}{i}": Optional[kind[ir.RankedTensorType]] for i in range(count)}
    return {"__annotations__": annotations, **{name: None for name in annotations}}


def define_with_slots(base: type, mnemonic: str, *slots: dict, traits=None) -> type:
    """Define op ``mnemonic`` as ``base`` plus the given ``value_slots`` fields."""
    namespace = {"__doc__": base.__doc__, "__annotations__": {}}
    for entries in slots:
        namespace["__annotations__"].update(entries["__annotations__"])
        namespace.update({k: v for k, v in entries.items() if k != "__annotations__"})
    name = base.__name__.lstrip("_").replace("Base", "") + "Op"
    kwargs = {"traits": traits} if traits is not None else {}
    return type(name, (base,), namespace, name=mnemonic, **kwargs)


# mnemonic -> op class, for every op with a name.
OPS: dict[str, type] = {}


class ECGOp(ECG.Operation):
    """Base of every ECG op: the IR definition plus the semantics listed above."""

    MAPPING = None  # a MappingType; class constants must stay unannotated (annotations are fields)
    ALGEBRA = NO_ALGEBRA
    # FLOPs per result element for the default estimate (elementwise ops).
    FLOPS_PER_ELEMENT = 0
    # The ONNX operator types this op is imported from.
    ONNX = ()
    # Values of attributes a caller may leave out; ``default_attrs`` may compute more.
    DEFAULTS = {}

    @classmethod
    def __init_subclass__(cls, *, name=None, **kwargs):
        annotations = cls.__dict__.get("__annotations__", {})
        kinds = dict(getattr(cls, "ATTRIBUTES", {}))
        for field, hint in list(annotations.items()):
            if isinstance(hint, type) and issubclass(hint, AttributeKind):
                kinds[field] = hint
                annotations[field] = hint.constraint
        cls.ATTRIBUTES = kinds
        if name is not None and "traits" not in kwargs:
            kwargs["traits"] = [ext.Pure]
        super().__init_subclass__(name=name, **kwargs)
        if name is not None:
            if not isinstance(cls.MAPPING, MappingType):
                raise TypeError(f"ECG op class {cls.__name__} must declare its MAPPING")
            OPS[name] = cls

    # ----- semantics over specs and arrays; op classes override these -----

    @classmethod
    def default_attrs(cls, operands: Sequence[TensorSpec]) -> dict:
        """Values for attributes the caller left out (ONNX's defaults)."""
        return dict(cls.DEFAULTS)

    @classmethod
    def infer(cls, operands: Sequence[TensorSpec], attrs: dict) -> list:
        raise NotImplementedError(f"{cls.__name__} does not infer its result types")

    @classmethod
    def count_flops(cls, operands, results, attrs) -> int:
        return cls.FLOPS_PER_ELEMENT * sum(r.numel for r in results)

    @classmethod
    def reference(cls, inputs: Sequence[np.ndarray], attrs: dict, results: Sequence[TensorSpec]) -> list:
        raise NotImplementedError(f"{cls.__name__} has no reference semantics")

    # ----- building -----

    @classmethod
    def build(cls, operands: Sequence[ir.Value], attrs: dict | None = None, result_types=None, *, loc=None, ip=None):
        """Create the op from operand values and Python attribute values.

        Missing attributes take ``default_attrs``; result types are inferred unless
        given (as ``TensorSpec``s or MLIR types). The op is created directly rather
        than through the ``ext`` builder, which drops falsy (empty) attributes.
        """
        specs = [from_mlir(v.type) for v in operands]
        attrs = cls.complete_attrs(specs, attrs or {})
        if result_types is None:
            result_types = cls.infer(specs, attrs)
        result_types = [to_mlir(t) if isinstance(t, TensorSpec) else t for t in result_types]
        attributes = {name: kind.to_attr(attrs[name]) for name, kind in cls.ATTRIBUTES.items()}
        operand_segments = cls._segments(ext.OperandDef, len(operands))
        result_segments = cls._segments(ext.ResultDef, len(result_types))
        if cls._ODS_OPERAND_SEGMENTS is not None:
            attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(operand_segments)
        if cls._ODS_RESULT_SEGMENTS is not None:
            attributes["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(result_segments)
        regions = sum(isinstance(f, ext.RegionDef) for f in cls._fields)
        operation = ir.Operation.create(
            cls.OPERATION_NAME, results=result_types, operands=list(operands), attributes=attributes,
            regions=regions, loc=loc, ip=ip,
        )
        return operation.opview

    @classmethod
    def complete_attrs(cls, operands: Sequence[TensorSpec], attrs: dict) -> dict:
        unknown = set(attrs) - set(cls.ATTRIBUTES)
        if unknown:
            raise VerificationError(f"'ecg.{cls._op_name}' has no attribute {', '.join(sorted(unknown))}")
        missing = [name for name in cls.ATTRIBUTES if name not in attrs]
        if missing:
            defaults = cls.default_attrs(operands)
            absent = [name for name in missing if name not in defaults]
            if absent:
                raise VerificationError(f"'ecg.{cls._op_name}' requires attribute {', '.join(absent)}")
            attrs = {**{name: defaults[name] for name in missing}, **attrs}
        return attrs

    @classmethod
    def checked_attrs(cls, attrs: dict) -> dict:
        """``attrs`` as their kinds store them (an ONNX int list given for an int raises
        VerificationError here, not a TypeError in ``infer``)."""
        checked = {}
        for name, value in attrs.items():
            kind = cls.ATTRIBUTES.get(name)
            if kind is None:  # complete_attrs says so
                checked[name] = value
                continue
            try:
                checked[name] = kind.from_attr(kind.to_attr(value))
            except (TypeError, ValueError, OverflowError):
                raise VerificationError(f"attribute '{name}' must be a {kind.description}, got {value!r}") from None
        return checked

    @classmethod
    def check_arity(cls, operands: int, results: int | None = None):
        """Raise VerificationError unless the op's fields take that many operands (and results)."""
        cls._segments(ext.OperandDef, operands)
        if results is not None:
            cls._segments(ext.ResultDef, results)

    @classmethod
    def _segments(cls, kind, count: int) -> list:
        """How ``count`` values distribute over the op's operand or result fields."""
        fields = [f for f in cls._fields if isinstance(f, kind)]
        what = "operands" if kind is ext.OperandDef else "results"
        singles = sum(f.variadicity == ext.Variadicity.single for f in fields)
        optionals = sum(f.variadicity == ext.Variadicity.optional for f in fields)
        variadic = any(f.variadicity == ext.Variadicity.variadic for f in fields)
        if count < singles or (not variadic and count > singles + optionals):
            expected = f"{singles}" if singles == singles + optionals else f"{singles} to {singles + optionals}"
            raise VerificationError(f"'ecg.{cls._op_name}' takes {expected}{'+' if variadic else ''} {what}, got {count}")
        spare = count - singles
        segments = []
        for field in fields:
            if field.variadicity == ext.Variadicity.single:
                segments.append(1)
            elif field.variadicity == ext.Variadicity.optional:
                segments.append(min(spare, 1))
                spare -= segments[-1]
            else:
                segments.append(spare)
                spare = 0
        return segments

    # ----- queries on an op in the IR -----

    @property
    def mnemonic(self) -> str:
        return self._op_name

    @property
    def mapping_type(self) -> MappingType:
        return self.MAPPING

    @property
    def algebra(self) -> Algebra:
        return self.ALGEBRA

    @property
    def attrs(self) -> dict:
        """The op's attributes as Python values."""
        attributes = self.operation.attributes
        return {name: kind.from_attr(attributes[name]) for name, kind in self.ATTRIBUTES.items()}

    @property
    def operand_specs(self) -> list:
        return [from_mlir(v.type) for v in self.operation.operands]

    @property
    def result_specs(self) -> list:
        return [from_mlir(r.type) for r in self.operation.results]

    def flops(self) -> int:
        return self.count_flops(self.operand_specs, self.result_specs, self.attrs)

    def result_bytes(self) -> int:
        return sum(spec.nbytes for spec in self.result_specs)

    # ----- verification -----

    def verify_invariants(self) -> bool:
        try:
            self.check_fields()
            self.check()
        except (VerificationError, UnsupportedTypeError) as error:
            self.operation.location.emit_error(f"'{self.operation.name}' op {error}")
            return False
        return True

    def check_fields(self):
        """Raise VerificationError unless the op has its operand and result counts and
        each attribute of its kind: what every ``check`` may then rely on."""
        self.check_arity(len(self.operation.operands), len(self.operation.results))
        attributes = self.operation.attributes
        for name, kind in self.ATTRIBUTES.items():
            if name not in attributes:
                raise VerificationError(f"requires attribute '{name}' ({kind.description})")
            if not kind.accepts(attributes[name]):
                raise VerificationError(f"attribute '{name}' must be a {kind.description}, got {attributes[name]}")

    def check(self):
        """Raise VerificationError when the op is malformed; the verifier reports it."""
        expected = self.infer(self.operand_specs, self.attrs)
        actual = self.result_specs
        if expected != actual:
            raise VerificationError(
                "result types (" + ", ".join(map(str, actual)) + ") do not match the inferred types ("
                + ", ".join(map(str, expected)) + ")"
            )
