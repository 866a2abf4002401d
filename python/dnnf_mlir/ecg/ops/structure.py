"""Ops that give the graph its structure: constants and fusion blocks."""

from ..._mlir import ext, ir
from ..attributes import Elements, Str
from ..base import ECGOp, TensorResult, VerificationError, define_with_slots, value_slots
from ..properties import MappingType
from ..tensor_spec import TensorSpec, from_mlir


class ConstantOp(ECGOp, name="constant"):
    """A constant tensor (weights, folded shape computations)."""

    output: TensorResult
    value: Elements
    MAPPING = MappingType.ONE_TO_ONE
    ONNX = ("Constant",)

    @classmethod
    def infer(cls, operands, attrs):
        return [TensorSpec.of(attrs["value"])]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [attrs["value"]]

    def check(self):
        value_type = self.operation.attributes["value"].type
        if value_type != self.operation.results[0].type:
            raise VerificationError(f"value type {value_type} does not match result type {self.operation.results[0].type}")
        if not isinstance(self.operation.attributes["value"], ir.DenseElementsAttr):
            raise VerificationError(f"value {self.operation.attributes['value']} has no data (a missing resource blob?)")


# The values of a fusion block have all kinds of types, so each gets a field of its
# own (see base.value_slots).
MAX_FUSED_INPUTS = 32
MAX_FUSED_OUTPUTS = 8


class _YieldBase(ECGOp):
    """Terminates an ``ecg.fused`` body, yielding the block's results."""

    MAPPING = MappingType.ONE_TO_ONE

    def check(self):
        parent = self.operation.parent
        if parent is None or parent.name != "ecg.fused":
            raise VerificationError("must terminate an 'ecg.fused' body")


YieldOp = define_with_slots(
    _YieldBase, "yield", value_slots("value", MAX_FUSED_OUTPUTS, ext.Operand), traits=[ir.IsTerminatorTrait, ext.Pure]
)


class _FusedBase(ECGOp):
    """One fusion block: a single-block region over its inputs, yielding its outputs.

    ``mapping`` is the block's resulting mapping type. Fused ops with structurally
    identical bodies are one kernel. At most MAX_FUSED_INPUTS inputs and
    MAX_FUSED_OUTPUTS outputs (the fusion planner's operand limit).
    """

    body: ext.Region
    mapping: Str
    MAPPING = MappingType.MANY_TO_MANY

    @property
    def mapping_type(self) -> MappingType:
        return MappingType(self.attrs["mapping"])

    @property
    def inputs(self) -> list:
        return list(self.operation.operands)

    @property
    def outputs(self) -> list:
        return list(self.operation.results)

    @property
    def body_ops(self) -> list:
        return list(self.body.blocks[0].operations)

    @classmethod
    def count_flops(cls, operands, results, attrs):
        raise NotImplementedError("the FLOPs of a fused op are those of its body ops")

    def flops(self) -> int:
        return sum(op.flops() for op in self.body_ops[:-1])

    def check(self):
        try:
            MappingType(self.attrs["mapping"])
        except ValueError:
            raise VerificationError(
                f"mapping '{self.attrs['mapping']}' is not one of " + ", ".join(m.value for m in MappingType)
            ) from None
        blocks = list(self.body.blocks)
        if len(blocks) != 1:
            raise VerificationError(f"body must have one block, got {len(blocks)}")
        block = blocks[0]
        operand_types = [v.type for v in self.operation.operands]
        if [a.type for a in block.arguments] != operand_types:
            raise VerificationError("block argument types must match the operand types")
        ops = list(block.operations)
        if not ops or ops[-1].name != "ecg.yield":
            raise VerificationError("body must end with 'ecg.yield'")
        yielded = [v.type for v in ops[-1].operands]
        if yielded != [r.type for r in self.operation.results]:
            raise VerificationError("yielded types must match the result types")
        for type_ in operand_types + yielded:
            from_mlir(type_)  # raises for anything but a static tensor


FusedOp = define_with_slots(
    _FusedBase,
    "fused",
    value_slots("input", MAX_FUSED_INPUTS, ext.Operand),
    value_slots("output", MAX_FUSED_OUTPUTS, ext.Result),
    traits=[ir.IsIsolatedFromAboveTrait, ext.Pure],
)
