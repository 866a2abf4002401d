"""Model weights as entry-function arguments, stored next to the code in one file.

Compiled code does not embed the weights: a 500 MB constant would be printed into
LLVM IR (4 characters a byte), compiled by llc and linked into the library, which
takes minutes and doubles the memory. Instead ``externalize_weights`` turns every
large constant tensor of the entry function into a trailing argument, and
``write_weights`` stores the values in one file, each array at an ``ALIGNMENT``-byte
offset, which the C runtime maps and passes to the entry point (what TVM's params
file and IREE's parameter archives do). Small constants (shapes, scalars, splats:
``kernel_functions.stays_in_code``) stay in the code, where the compiler can fold them;
``ecg-outline-kernels`` leaves the others in the entry function, which passes them
to its kernel functions.

The file starts with a ``HEADER_BYTES`` header: a magic string and a hash of the
layout and every byte of the weights. The C glue holds the same header and compares
it when it loads the file (one page, whatever the file's size), so a weights file of
another model, or of another compilation of the same model, is refused instead of
being computed with; a file of the wrong size is refused before it is mapped. A
byte changed later in a file whose header is intact is not detected: that would
need hashing all of it at every load (420 MB for BERT-base).
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass

import numpy as np

from .._mlir import ir
from ..codegen.lowered_module import DECLARED_TYPE_ATTR
from ..ecg.bfloat16_elements import elements_array
from ..kernel_functions import stays_in_code
from ..transforms.pass_base import ModulePass, PassError
from ..transforms.registry import described_by_table
from .huge_pages import write_aligned

ALIGNMENT = 64  # bytes: a cache line, and whole AVX-512 vectors
MAGIC = b"DNNFWTS1"  # the format's name and version
HEADER_BYTES = ALIGNMENT  # MAGIC, a 32-byte BLAKE2b digest, the file size (u64 LE), zeros


@dataclass(frozen=True)
class Weight:
    """One array of the weights file."""

    offset: int  # bytes from the start of the file
    dtype: np.dtype
    shape: tuple

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def to_json(self) -> dict:
        return {"offset": self.offset, "dtype": self.dtype.name, "shape": list(self.shape)}


def _is_weight(op) -> bool:
    if op.name != "arith.constant" or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    value = op.attributes["value"]
    return isinstance(value, ir.DenseElementsAttr) and not stays_in_code(value)


def externalize_weights(module, entry: str = "") -> list:
    """Replace the large constants of ``@entry`` (default: the one public function) by
    new trailing arguments, one per distinct value.

    ``module`` is an ``ir.Module`` or its operation. Returns their values (numpy
    arrays) in argument order. Every argument of the
    entry function is marked ``bufferization.writable = false``: the compiled code
    must never write into the caller's inputs or into the shared weights.
    """
    function = _entry_function(module, entry)
    block = function.regions[0].blocks[0]
    constants = [op for op in block.operations if _is_weight(op.operation)]
    values, arguments = [], {}
    with module.operation.context:
        for op in constants:
            value = np.ascontiguousarray(elements_array(op.attributes["value"]))
            key = _content_key(op.results[0].type, value)
            if key not in arguments:
                arguments[key] = block.add_argument(op.results[0].type, op.location)
                values.append(value)
            op.results[0].replace_all_uses_with(arguments[key])
            op.operation.erase()
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        inputs = [argument.type for argument in block.arguments]
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, function_type.results))
        if DECLARED_TYPE_ATTR in function.attributes:  # callers pass the weights as they are stored
            declared = ir.FunctionType(ir.TypeAttr(function.attributes[DECLARED_TYPE_ATTR]).value)
            function.attributes[DECLARED_TYPE_ATTR] = ir.TypeAttr.get(
                ir.FunctionType.get([*declared.inputs, *inputs[len(declared.inputs):]], declared.results))
        read_only = ir.DictAttr.get({"bufferization.writable": ir.BoolAttr.get(False)})
        old = list(ir.ArrayAttr(function.attributes["arg_attrs"])) if "arg_attrs" in function.attributes else []
        merged = []
        for index in range(len(inputs)):
            entries = {n.name: n.attr for n in ir.DictAttr(old[index])} if index < len(old) else {}
            entries.update({n.name: n.attr for n in read_only})
            merged.append(ir.DictAttr.get(entries))
        function.attributes["arg_attrs"] = ir.ArrayAttr.get(merged)
    return values


def _content_key(tensor_type, value) -> tuple:
    """What makes two constants one weight: their type and every byte. Rewrites fold a
    weight shared by several nodes (ALBERT's one layer used twelve times) into a new
    constant per use, e.g. each layer's concatenated Q, K and V projections; stored once
    each, ALBERT-base's weights were 122 MB for a 44 MB model."""
    return str(tensor_type), hashlib.blake2b(value.reshape(-1).view(np.uint8), digest_size=32).digest()


def _entry_function(module, name: str):
    """The function ``@name``; with no name, the module's one public function."""
    functions = [op.operation for op in module.operation.regions[0].blocks[0].operations if op.operation.name == "func.func"]
    if name:
        found = [f for f in functions if ir.StringAttr(f.attributes["sym_name"]).value == name]
        if not found:
            raise ValueError(f"no function @{name} in the module")
        return found[0]
    public = [f for f in functions if "sym_visibility" not in f.attributes]
    if len(public) != 1:
        raise ValueError(f"the module has {len(public)} public functions: name the entry (option entry=NAME)")
    return public[0]


def layout(values) -> list:
    """The ``Weight`` entries of ``values`` packed at ``ALIGNMENT``-byte offsets after the header."""
    entries, offset = [], HEADER_BYTES
    for value in values:
        entries.append(Weight(offset, value.dtype, tuple(value.shape)))
        offset += -(-value.nbytes // ALIGNMENT) * ALIGNMENT
    return entries


def file_bytes(entries) -> int:
    """The size of the weights file of the layout ``entries``: the last array padded to
    ``ALIGNMENT`` as every other is, so that a reader of whole vectors (a GPU kernel's
    vec4 words) reads within the file at its end too."""
    return entries[-1].offset + -(-entries[-1].nbytes // ALIGNMENT) * ALIGNMENT if entries else HEADER_BYTES


def header(entries, values) -> bytes:
    """The file's first ``HEADER_BYTES``: what identifies these weights in this layout."""
    digest = hashlib.blake2b(json.dumps([e.to_json() for e in entries]).encode(), digest_size=32)
    for value in values:
        digest.update(np.ascontiguousarray(value).reshape(-1).view(np.uint8))  # bytes of any dtype, bfloat16 too
    fields = MAGIC + digest.digest() + struct.pack("<Q", file_bytes(entries))
    return fields + b"\0" * (HEADER_BYTES - len(fields))


def write_weights(path: str, values) -> list:
    """Write the header and ``values`` into the file ``path`` as ``layout`` places them;
    returns the layout."""
    entries = layout(values)
    try:
        with open(path, "wb", buffering=0) as f:
            write_aligned(f, header(entries, values))
            for entry, value in zip(entries, values):
                write_aligned(f, bytes(entry.offset - f.tell()))
                write_aligned(f, np.ascontiguousarray(value).reshape(-1).view(np.uint8))  # no copy of a 500 MB array
            write_aligned(f, bytes(file_bytes(entries) - f.tell()))
    except OSError as error:
        if error.filename:
            raise
        # Neither a failed write nor a short one names the file.
        reason = error.strerror or f"{error} (a short write: is the disk full?)"
        raise OSError(error.errno, reason, str(path)) from None
    return entries


def read_header(path) -> bytes:
    """The header of the weights file ``path``."""
    with open(path, "rb") as f:
        return f.read(HEADER_BYTES)


def read_weights(path: str, entries) -> list:
    """The arrays of a weights file (memory-mapped, read-only)."""
    if not entries:
        return []
    data = np.memmap(path, dtype=np.uint8, mode="r")
    return [
        data[e.offset : e.offset + e.nbytes].view(e.dtype).reshape(e.shape) for e in entries
    ]


WEIGHTS_ATTR = "dnnf.weights"


def record_layout(module, entries):
    """Put the ``Weight`` layout on ``module`` (``dnnf.weights``: offset, dtype, shape per argument)."""
    with module.operation.context:
        module.operation.attributes[WEIGHTS_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(json.dumps(entry.to_json())) for entry in entries]
        )


def recorded_layout(module) -> list:
    """The ``Weight`` layout that ``dnnf-externalize-weights`` put on ``module``."""
    if WEIGHTS_ATTR not in module.operation.attributes:
        return []
    entries = [json.loads(ir.StringAttr(a).value) for a in ir.ArrayAttr(module.operation.attributes[WEIGHTS_ATTR])]
    return [Weight(e["offset"], np.dtype(e["dtype"]), tuple(e["shape"])) for e in entries]


@described_by_table
class ExternalizeWeightsPass(ModulePass):
    """``externalize_weights`` as a pass: the weights become trailing arguments of the
    entry function, their layout is recorded on the module, and ``weights-file`` (when
    given) receives their values."""

    NAME = "dnnf-externalize-weights"

    def run(self, module: ir.Operation):
        try:
            values = externalize_weights(module, self.options["entry"])
        except ValueError as error:
            raise PassError(str(error), op=module) from None
        path = self.options["weights-file"]
        record_layout(module, write_weights(path, values) if path else layout(values))


__all__ = [
    "ALIGNMENT",
    "HEADER_BYTES",
    "MAGIC",
    "ExternalizeWeightsPass",
    "WEIGHTS_ATTR",
    "Weight",
    "externalize_weights",
    "file_bytes",
    "header",
    "layout",
    "read_header",
    "read_weights",
    "recorded_layout",
    "write_weights",
]
