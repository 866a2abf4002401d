"""Reading and writing modules: MLIR text or bytecode, with large constants as resources.

In memory, constants are ``dense<...>`` elements attributes (numpy reads them
without a copy). In text, a large one would be a hex string of megabytes inside
its op, so the writer moves it into the file's ``dialect_resources`` section as a
``dense_resource`` blob (standard MLIR) and the reader moves it back.
"""

import io
import re
import sys
from pathlib import Path

from ._mlir import ir

# Hex payloads longer than this (characters) become resources.
RESOURCE_THRESHOLD = 1024
_INLINE = re.compile(r'dense<"0x([0-9A-F]+)"> : (tensor<([^>]*?)x?(f16|f32|f64|bf16|i8|i16|i32|i64|ui8|ui16|ui32|ui64)>)')
_RESOURCE_SECTION = re.compile(r"\n\{-#\n  dialect_resources: \{\n    builtin: \{\n(.*?)\n    \}\n  \}\n#-\}\n?\Z", re.S)
_RESOURCE_ENTRY = re.compile(r'^      (\w+): "0x([0-9A-F]{8})([0-9A-F]*)",?$', re.M)
_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
          "ui8": 1, "ui16": 2, "ui32": 4, "ui64": 8}
BYTECODE_MAGIC = b"ML\xefR"


def module_to_text(module_or_op, *, debug_info: bool = False, elide_larger: int | None = None) -> str:
    """Print as MLIR text, large constants moved into a resource section.

    ``elide_larger`` elides constants above that many elements instead (for
    reading only; the result does not parse back to the same values).
    """
    op = module_or_op.operation if hasattr(module_or_op, "operation") else module_or_op
    text = op.get_asm(enable_debug_info=debug_info, large_elements_limit=elide_larger)
    if elide_larger is not None:
        return text
    blobs = []

    def to_resource(match):
        payload, tensor, element = match.group(1), match.group(2), match.group(4)
        if len(payload) <= RESOURCE_THRESHOLD:
            return match.group(0)
        name = f"ecg_const_{len(blobs)}"
        alignment = _BYTES[element].to_bytes(4, "little").hex().upper()
        blobs.append(f'      {name}: "0x{alignment}{payload}"')
        return f"dense_resource<{name}> : {tensor}"

    text = _INLINE.sub(to_resource, text)
    if blobs:
        text = text.rstrip("\n") + "\n\n{-#\n  dialect_resources: {\n    builtin: {\n" + ",\n".join(blobs) + "\n    }\n  }\n#-}\n"
    return text


def text_to_inline(text: str) -> str:
    """Undo ``module_to_text``: put resource blobs back inline as dense elements."""
    section = _RESOURCE_SECTION.search(text)
    if not section:
        return text
    blobs = {m.group(1): m.group(3) for m in _RESOURCE_ENTRY.finditer(section.group(1))}
    body = text[: section.start()] + "\n"

    def to_inline(match):
        name = match.group(1)
        return f'dense<"0x{blobs[name]}"> : ' if name in blobs else match.group(0)

    return re.sub(r"dense_resource<(\w+)> : ", to_inline, body)


def parse(source: str | bytes, context: ir.Context) -> ir.Module:
    """Parse MLIR text (as written by ``module_to_text``) or bytecode."""
    if isinstance(source, bytes) and not source.startswith(BYTECODE_MAGIC):
        source = source.decode()
    if isinstance(source, str):
        source = text_to_inline(source)
    try:
        return ir.Module.parse(source, context)
    except RuntimeError as error:  # corrupt bytecode whose strings the bindings cannot convert
        raise SourceError(f"the input is not valid MLIR ({error})") from None


class SourceError(ValueError):
    """An input that is neither MLIR text (UTF-8) nor MLIR bytecode."""


def read_source(path: str) -> str | bytes:
    """The content of ``path`` ('-' is stdin): bytes for bytecode, else text."""
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    if data.startswith(BYTECODE_MAGIC):
        return data
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        raise SourceError(f"'{path}' is neither MLIR text nor MLIR bytecode (byte {error.start} is not UTF-8)") from None


def write_module(module, path: str, *, bytecode: bool = False, **print_options):
    """Write to ``path`` ('-' is stdout) atomically: no half-written file on failure."""
    data = module_to_bytecode(module) if bytecode else module_to_text(module, **print_options).encode()
    write_bytes(data, path)


def module_to_bytecode(module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def write_bytes(data: bytes, path: str):
    """Write ``data`` to ``path`` ('-' is stdout). A file is written under a temporary
    name and renamed, so that a failure leaves no half-written file; a device or a
    pipe (``-o /dev/null``) is written in place: renaming over it would replace it."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    target = Path(path)
    if target.exists() and not target.is_file():
        with open(target, "wb") as stream:
            stream.write(data)
        return
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_bytes(data)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
