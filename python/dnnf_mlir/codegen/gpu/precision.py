"""fp16 storage for the GPU targets: ``dnnf-gpu-fp16-storage`` / ``store_in_half``.

Run on linalg on tensors with kernel functions (after ``convert-ecg-to-linalg``, before
``dnnf-externalize-weights``, which then writes the weights in half), it keeps every
f32 tensor that lives in GPU memory in f16 while every kernel computes in f32:

- the entry function's f32 constants (the weights) become f16 constants, the results
  of its kernel calls f16, except the values it returns (through reshapes): the model's
  inputs and outputs stay f32 at the C interface, converted in the kernels that read
  or write them, so that no extra dispatch or runtime conversion is needed;
- each kernel function takes and returns what its callers now pass (a kernel called
  with two signatures is cloned): an f16 argument is widened by an element-wise
  ``arith.extf`` generic at its start, an f16 result narrowed by an ``arith.truncf``
  generic at its end. On the GPU, ``fold_widenings`` (``prepare.prepare_kernel``) moves
  each widening into the body of every op that reads it, and the element-wise fusion
  the narrowing into the op that computes the result: the kernels load f16 and store
  f16, with f32 in between. A reduction (matmul, convolution, sum, softmax's and layer
  norm's statistics) is never fused into its consumer, so it accumulates in f32, and
  everything between a kernel's loads and stores (exponentials included) is f32.

A target takes it where its ``precisions`` name fp16 (``codegen.target.check_precision``).
"""

from __future__ import annotations

import numpy as np

from ... import _mlir
from ..._mlir import ir
from ...ir_walk import walk_ops
from ...kernel_functions import is_kernel, is_public
from ...linalg_builders import affine_map, generic
from ...transforms.pass_base import ModulePass, PassError
from ...transforms.registry import described_by_table
from ..errors import CodegenError
from ..linalg_queries import linalg_input_count
from ..lower_pass import ModuleView
from ..lowered_module import symbol_name
from ..linalg_queries import TENSOR_RESHAPES

def _is_f32_tensor(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and isinstance(ir.RankedTensorType(t).element_type, ir.F32Type)


def _with_element(t: ir.Type, element: ir.Type) -> ir.RankedTensorType:
    tensor = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(tensor.shape, element, tensor.encoding)


def _converted(value: ir.Value, element: ir.Type) -> ir.Value:
    """``value`` converted element-wise to ``element`` (``arith.extf`` / ``arith.truncf``)."""
    tensor = ir.RankedTensorType(value.type)
    identity = affine_map(tensor.rank, list(range(tensor.rank)))
    empty = _mlir.tensor.empty(tensor.shape, element)
    widen = isinstance(element, ir.F32Type)

    def body(x, _):
        return _mlir.arith.extf(element, x) if widen else _mlir.arith.truncf(element, x)

    return generic([value], [identity, identity], [empty], body)[0]


def _returned_values(block: ir.Block) -> set:
    """The values the entry function returns, and those they are reshapes of: they stay f32."""
    returned, pending = set(), list(list(block.operations)[-1].operands)
    while pending:
        value = pending.pop()
        returned.add(value)
        if isinstance(value, ir.OpResult) and value.owner.name in TENSOR_RESHAPES:
            pending.append(value.owner.operands[0])
    return returned


def _half_constant(constant: ir.Operation) -> ir.Value:
    """An f16 copy of the f32 tensor ``constant``, inserted before it."""
    attribute = ir.DenseElementsAttr(constant.attributes["value"])
    half = _with_element(constant.results[0].type, ir.F16Type.get())
    with ir.InsertionPoint(constant), constant.location:
        if attribute.is_splat:
            value = ir.DenseElementsAttr.get_splat(
                half, ir.FloatAttr.get(ir.F16Type.get(), ir.FloatAttr(attribute.get_splat_value()).value))
        else:
            value = ir.DenseElementsAttr.get(np.asarray(np.array(attribute), dtype=np.float16), type=half)
        return _mlir.arith.ConstantOp(half, value).result


def _retype_entry(function: ir.Operation) -> int:
    """Constants and kernel results of the entry ``function`` in f16 (see the module
    docstring); returns how many values changed."""
    block = function.regions[0].blocks[0]
    returned = _returned_values(block)
    half, changed = ir.F16Type.get(), 0
    for op in [op.operation for op in block.operations]:
        if op.name == "arith.constant":
            if _is_f32_tensor(op.results[0].type) and op.results[0] not in returned:
                op.results[0].replace_all_uses_with(_half_constant(op))
                op.erase()
                changed += 1
        elif op.name in TENSOR_RESHAPES:
            element = ir.RankedTensorType(op.operands[0].type).element_type
            op.results[0].set_type(_with_element(op.results[0].type, element))
        elif op.name == "func.call":
            for result in op.results:
                if _is_f32_tensor(result.type) and result not in returned:
                    result.set_type(_with_element(result.type, half))
                    changed += 1
        elif op.name not in ("func.return", "tensor.empty") and any(_is_f32_tensor(r.type) for r in op.results):
            raise CodegenError(f"{symbol_name(function)}: {op.name} computes between kernels; fp16 storage "
                               f"needs every computation in a kernel function (ecg-outline-kernels)")
    return changed


def _retype_kernel(function: ir.Operation, inputs: list, results: list) -> None:
    """Give the kernel ``function`` the signature ``inputs`` -> ``results`` (f16 where it
    had f32), converting at its start and its end."""
    block = function.regions[0].blocks[0]
    f32 = ir.F32Type.get()
    for argument, wanted in zip(list(block.arguments), inputs):
        if wanted == argument.type:
            continue
        uses = [(use.owner, use.operand_number) for use in argument.uses]
        argument.set_type(wanted)
        for owner, number in uses:  # one conversion per use: element-wise fusion takes single-use producers
            with ir.InsertionPoint.at_block_begin(block), function.location:
                owner.operands[number] = _converted(argument, f32)
    terminator = list(block.operations)[-1].operation
    for index, wanted in enumerate(results):
        value = terminator.operands[index]
        if wanted != value.type:
            with ir.InsertionPoint(terminator), terminator.location:
                terminator.operands[index] = _converted(value, ir.RankedTensorType(wanted).element_type)
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def store_in_half(module: ir.Module) -> int:
    """Rewrite ``module`` for fp16 storage (see the module docstring); returns how many
    values of the entry functions changed."""
    with module.operation.context, ir.Location.unknown():
        return _store_in_half(module)


def _store_in_half(module: ir.Module) -> int:
    body = module.operation.regions[0].blocks[0]
    functions = [op.operation for op in body.operations if op.operation.name == "func.func"]
    kernels = {symbol_name(f): f for f in functions if is_kernel(f)}
    changed = sum(_retype_entry(f) for f in functions if is_public(f) and not is_kernel(f))
    signatures: dict = {}  # kernel -> {(inputs, results): [calls]}
    for call in walk_ops(module.operation, {"func.call"}):
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if name in kernels:
            key = (tuple(v.type for v in call.operands), tuple(r.type for r in call.results))
            signatures.setdefault(name, {}).setdefault(key, []).append(call)
    for name, by_signature in signatures.items():
        original = kernels[name]
        declared = ir.FunctionType(ir.TypeAttr(original.attributes["function_type"]).value)
        retyped = []
        for number, ((inputs, results), calls) in enumerate(by_signature.items()):
            function = original
            if number > 0:  # another signature: a copy of the kernel as it was, called by its own name
                function = original.clone(ip=ir.InsertionPoint(body))
                copy_name = f"{name}_{number}"
                function.attributes["sym_name"] = ir.StringAttr.get(copy_name)
                for call in calls:
                    call.attributes["callee"] = ir.FlatSymbolRefAttr.get(copy_name)
            retyped.append((function, list(inputs), list(results)))
        for function, inputs, results in retyped:
            if (inputs, results) != (list(declared.inputs), list(declared.results)):
                _retype_kernel(function, inputs, results)
    return changed


def _is_widening(op: ir.Operation) -> bool:
    """Whether ``op`` is an element-wise ``linalg.generic`` doing only ``arith.extf``, its
    maps identities (not a transpose or a broadcast fused with a widening)."""
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return False
    body = [o.operation.name for o in op.regions[0].blocks[0].operations]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return body == ["arith.extf", "linalg.yield"] and all(m.is_permutation and m == ir.AffineMap.get_identity(
        m.n_dims) for m in maps)


def _widen_after(reshape: ir.Operation, source: ir.Value) -> ir.Operation:
    """Make ``reshape`` (of a widening of ``source``) reshape ``source`` itself, widened
    after it; returns that widening."""
    with ir.InsertionPoint(reshape), reshape.location:
        narrow = reshape.clone()
        narrow.operands[0] = source
        narrow.results[0].set_type(_with_element(reshape.results[0].type, ir.RankedTensorType(source.type).element_type))
        widened = _converted(narrow.results[0], ir.F32Type.get())
    reshape.results[0].replace_all_uses_with(widened)
    reshape.erase()
    return widened.owner


def _extract_from(extract: ir.Operation, source: ir.Value) -> None:
    """Make ``extract`` read ``source`` (f16) and widen the element it reads."""
    uses = [(u.owner, u.operand_number) for u in extract.results[0].uses]
    extract.operands[0] = source
    extract.results[0].set_type(ir.RankedTensorType(source.type).element_type)
    ops = [o.operation for o in extract.operation.block.operations]
    with ir.InsertionPoint(ops[ops.index(extract.operation) + 1]), extract.location:
        widened = _mlir.arith.extf(ir.F32Type.get(), extract.results[0])
    for owner, number in uses:
        owner.operands[number] = widened


def fold_widenings(module: ir.Module) -> int:
    """Each ``linalg.generic`` reading a widening reads its f16 source instead, widened
    by an ``arith.extf`` at the start of its body: the element-wise fusion would do the
    same, but only for a single-use producer, and a named op generalized or decomposed
    (softmax: a maximum, then the exponentials) reads its input twice. A ``tensor.extract``
    (a gather: an embedding table) reads its f16 element and widens it, also through a
    reshape (a gather through the table's 1-d view): a widening left for a gather makes
    its kernel two dispatches, the whole table widened first. Other readers (a pad) keep
    the widening. Returns how many reads changed."""
    folded = 0
    pending = [op for op in walk_ops(module.operation, {"linalg.generic"}) if _is_widening(op)]
    while pending:
        op = pending.pop()
        source = op.operands[0]
        for use in list(op.results[0].uses):
            reader = use.owner
            if reader.name == "tensor.extract" and use.operand_number == 0:  # a gather: one element widened
                _extract_from(reader, source)
                folded += 1
                continue
            if reader.name in TENSOR_RESHAPES:
                pending.append(_widen_after(reader, source))
                continue
            if reader.name != "linalg.generic" or use.operand_number >= linalg_input_count(reader):
                continue
            argument = reader.regions[0].blocks[0].arguments[use.operand_number]
            reads = [(u.owner, u.operand_number) for u in argument.uses]
            argument.set_type(ir.RankedTensorType(source.type).element_type)
            first = list(reader.regions[0].blocks[0].operations)[0]
            with ir.InsertionPoint(first), reader.location:
                widened = _mlir.arith.extf(ir.F32Type.get(), argument)
            for owner, number in reads:
                owner.operands[number] = widened
            reader.operands[use.operand_number] = source
            folded += 1
        if not list(op.results[0].uses):
            op.erase()
    return folded


@described_by_table
class Fp16StoragePass(ModulePass):
    NAME = "dnnf-gpu-fp16-storage"

    def run(self, module: ir.Operation):
        try:
            store_in_half(ModuleView(module))
        except CodegenError as error:
            functions = [op.operation for op in module.regions[0].blocks[0].operations
                         if op.operation.name == "func.func" and not is_kernel(op.operation)]
            raise PassError(str(error), functions[0] if functions else None) from None


__all__ = ["Fp16StoragePass", "fold_widenings", "store_in_half"]
