"""Transform-dialect scripts written from Python: ``Script`` builds the text of one
``transform.named_sequence`` with fresh handle names. Steps that do not depend on
shapes are sequences of the transform libraries in ``lowering/`` (``Script.include``),
copied into the script's module, which is thus self-contained (``dnnf-opt`` runs it
as it is).

The kernel plan tags each linalg op it schedules with ``TAG`` (``dnnf.cg = "k3"``);
``Script.match`` selects ops by that tag.
"""

from __future__ import annotations

import json
from typing import Optional

from .._mlir import ir
from ..lowering import read_transform_library

TAG = "dnnf.cg"


def library_sequences(library: str) -> list:
    """The printed named sequences of the transform library ``lowering/<library>``
    (parsed, so in the current context, and checked)."""
    module = ir.Module.parse(read_transform_library(library))
    return [str(op) for op in module.body.operations]


class Script:
    """Text of one transform named sequence, with fresh handle names."""

    def __init__(self):
        self.lines: list[str] = []
        self.libraries: list[str] = []  # the lowering/ files it includes sequences of
        self._count = 0
        self._indent = 2

    def fresh(self, hint: str = "h") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def emit(self, text: str):
        self.lines.append("  " * self._indent + text)

    def include(self, library: str, sequence: str, handles, params=(), results: int = 0) -> list:
        """Call ``@sequence`` of the library ``lowering/<library>`` on op ``handles`` and
        the integer ``params``; returns its ``results`` op handles."""
        if library not in self.libraries:
            self.libraries.append(library)
        values = list(handles)
        for value in params:
            param = self.fresh("p")
            self.emit(f"{param} = transform.param.constant {int(value)} : i64 -> !transform.param<i64>")
            values.append(param)
        types = ["!transform.any_op"] * len(handles) + ["!transform.param<i64>"] * len(params)
        outs = [self.fresh("r") for _ in range(results)]
        assign = f"{', '.join(outs)} = " if outs else ""
        self.emit(
            f"{assign}transform.include @{sequence} failures(propagate) ({', '.join(values)})"
            f" : ({', '.join(types)}) -> ({', '.join(['!transform.any_op'] * results)})"
        )
        return outs

    def unroll(self, loop: str, factor: int):
        self.emit(f"transform.loop.unroll {loop} {{factor = {factor}}} : !transform.any_op")

    # -- matching
    def match(self, names, within: str = "%root", tag: Optional[str] = None, hint: str = "m") -> str:
        handle = self.fresh(hint)
        ops = ", ".join(json.dumps(n) for n in names)
        attrs = f" attributes{{{TAG} = {json.dumps(tag)}}}" if tag is not None else ""
        self.emit(
            f"{handle} = transform.structured.match ops{{[{ops}]}}{attrs} in {within}"
            " : (!transform.any_op) -> !transform.any_op"
        )
        return handle

    def merge(self, handles) -> str:
        """One handle to the ops of all ``handles``."""
        merged = self.fresh("merged")
        self.emit(f"{merged} = transform.merge_handles {', '.join(handles)} : !transform.any_op")
        return merged

    def match_func(self, within: str = "%root") -> str:
        return self.match(["func.func"], within, hint="func")

    # -- tiling
    def tile_for(self, handle: str, sizes, interchange=None, hint: str = "t"):
        """Tile ``handle`` with scf.for loops (the two ops spell ``interchange`` differently)."""
        return self._loops("tile_using_for", handle, sizes, f" interchange = {list(interchange)}" if interchange else "", hint)

    def tile_forall(self, handle: str, sizes, hint: str = "t"):
        tiled, forall = self.fresh(hint), self.fresh("forall")
        self.emit(
            f"{tiled}, {forall} = transform.structured.tile_using_forall {handle} tile_sizes {list(sizes)}"
            " : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"
        )
        return tiled, forall

    def fuse(self, handle: str, sizes, interchange=None, hint: str = "t"):
        """Tile ``handle`` with scf.for loops and fuse its producers (the fill) into them."""
        return self._loops("fuse", handle, sizes, f" interchange {list(interchange)}" if interchange else "", hint)

    def _loops(self, transform: str, handle: str, sizes, interchange: str, hint: str):
        """``transform.structured.<transform>`` making one scf.for per non-zero tile size:
        (tiled op handle, loop handles, outermost first)."""
        loops = sum(1 for s in sizes if s)
        tiled, loop = self.fresh(hint), self.fresh("loop")
        results = ", ".join(["!transform.any_op"] * (loops + 1))
        names = f"{tiled}, {loop}:{loops}" if loops > 1 else f"{tiled}, {loop}"
        self.emit(
            f"{names} = transform.structured.{transform} {handle} tile_sizes {list(sizes)}{interchange}"
            f" : (!transform.any_op) -> ({results})"
        )
        return tiled, [f"{loop}#{i}" for i in range(loops)] if loops > 1 else [loop]

    def fuse_into(self, producer: str, containing: str):
        fused, new = self.fresh("fused"), self.fresh("forall")
        self.emit(
            f"{fused}, {new} = transform.structured.fuse_into_containing_op {producer} into {containing}"
            " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)"
        )
        return fused, new

    def producer_of(self, handle: str, operand: int) -> str:
        h = self.fresh("prod")
        self.emit(f"{h} = transform.get_producer_of_operand {handle}[{operand}] : (!transform.any_op) -> !transform.any_op")
        return h

    # -- padding / packing
    def pad(self, handle: str, dims, nofold, multiple_of=None, copy_back: str = "none", element: str = "f32"):
        padded, pad, copy = self.fresh("padded"), self.fresh("pad"), self.fresh("copy")
        n = len(nofold)
        values = ", ".join([f"0.0 : {element}"] * n)
        mult = f" pad_to_multiple_of {list(multiple_of)}" if multiple_of else ""
        self.emit(
            f"{padded}, {pad}, {copy} = transform.structured.pad {handle}{mult} {{"
            f"padding_values = [{values}], padding_dimensions = {list(dims)}, "
            f"nofold_flags = {list(nofold)}, copy_back_op = {json.dumps(copy_back)}}}"
            " : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)"
        )
        return padded

    def hoist_pad(self, pad: str, loops: int) -> str:
        h = self.fresh("packed")
        self.emit(f"{h} = transform.structured.hoist_pad {pad} by {loops} loops : (!transform.any_op) -> !transform.any_op")
        return h

    def bufferize_to_allocation(self, handle: str):
        buf, new = self.fresh("buf"), self.fresh("val")
        self.emit(
            f"{buf}, {new} = transform.structured.bufferize_to_allocation {handle}"
            ' {memcpy_op = "linalg.copy"} : !transform.any_op'
        )

    # -- vectorization
    def vectorize(self, handle: str, sizes=None, contraction: bool = False):
        vs = f" vector_sizes {list(sizes)}" if sizes else ""
        attrs = " {create_named_contraction}" if contraction else ""
        self.emit(f"transform.structured.vectorize {handle}{vs}{attrs} : !transform.any_op")

    def decompose(self, handle: str) -> str:
        h = self.fresh("dec")
        self.emit(f"{h} = transform.structured.decompose {handle} : (!transform.any_op) -> !transform.any_op")
        return h

    def patterns(self, func: str, patterns):
        self.emit(f"transform.apply_patterns to {func} {{")
        for p in patterns:
            self.emit(f"  transform.apply_patterns.{p}")
        self.emit("} : !transform.any_op")

    def canonicalize(self, funcs: str):
        """Canonicalize and CSE each of the functions ``funcs`` (apply_cse takes one op)."""
        self.patterns(funcs, ["canonicalization"])
        func = self.begin_foreach(funcs)
        self.emit(f"transform.apply_cse to {func} : !transform.any_op")
        self.end_nested()

    def eliminate_dead_code(self, within: str):
        """Erase the ops in ``within`` whose results nothing reads: a clone left behind by
        an earlier fusion would otherwise count as a use outside a later loop."""
        self.emit(f"transform.apply_dce to {within} : !transform.any_op")

    def parent_func(self, handle: str) -> str:
        """The function holding ``handle``'s op (one kernel function of many)."""
        h = self.fresh("func")
        self.emit(f"{h} = transform.get_parent_op {handle} {{op_name = \"func.func\"}} : (!transform.any_op) -> !transform.any_op")
        return h

    def hoist_accumulators(self, within: str):
        """Move loop invariants out and keep read/modify/write tiles in registers (tensors)."""
        loops = self.match_interface("LoopLikeInterface", within)
        self.emit(f"transform.apply_licm to {loops} : !transform.any_op")
        self.emit(f"transform.loop.hoist_loop_invariant_subsets {loops} : !transform.any_op")

    def match_interface(self, interface: str, within: str) -> str:
        h = self.fresh("loops")
        self.emit(
            f"{h} = transform.structured.match interface{{{interface}}} in {within}"
            " : (!transform.any_op) -> !transform.any_op"
        )
        return h

    def annotate(self, handle: str, name: str, value: str):
        """Set the string attribute ``name`` to ``value`` on the ops of ``handle``."""
        param = self.fresh("p")
        self.emit(f"{param} = transform.param.constant {json.dumps(value)} -> !transform.any_param")
        self.emit(f"transform.annotate {handle} {json.dumps(name)} = {param} : !transform.any_op, !transform.any_param")

    def begin_suppressed(self, handle: str):
        """Open a nested sequence whose silenceable failures are ignored (closed by ``end_nested``)."""
        arg = self.fresh("s")
        self.emit(f"transform.sequence {handle} : !transform.any_op failures(suppress) {{")
        self.emit(f"^bb0({arg}: !transform.any_op):")
        self._indent += 1
        return arg

    def begin_foreach(self, handle: str) -> str:
        """Open a nested sequence run on each op of ``handle`` (closed by ``end_nested``)."""
        arg = self.fresh("each")
        self.emit(f"transform.foreach {handle} : !transform.any_op {{")
        self.emit(f"^bb0({arg}: !transform.any_op):")
        self._indent += 1
        return arg

    def begin_alternatives(self, scope: str) -> str:
        """Open the first alternative of ``transform.alternatives`` on the op ``scope``
        (isolated from above, e.g. a function): it runs on a copy of the op, which
        replaces it if it succeeds; else the next alternative (``next_alternative``)
        runs on the op as it was. Closed by ``end_nested``."""
        self.emit(f"transform.alternatives {scope} : !transform.any_op {{")
        return self._alternative_block()

    def next_alternative(self) -> str:
        self.emit("transform.yield")
        self._indent -= 1
        self.emit("}, {")
        return self._alternative_block()

    def _alternative_block(self) -> str:
        arg = self.fresh("alt")
        self.emit(f"^bb0({arg}: !transform.any_op):")
        self._indent += 1
        return arg

    def end_nested(self):
        """Close a sequence opened by ``begin_suppressed``, ``begin_foreach`` or ``begin_alternatives``."""
        self.emit("transform.yield")
        self._indent -= 1
        self.emit("}")

    def text(self, name: str = "__dnnf_codegen") -> str:
        body = "\n".join(self.lines)
        sequences = "".join(
            f"  // lowering/{library}\n" + "".join(f"  {text}\n" for text in library_sequences(library))
            for library in self.libraries
        )
        return (
            "module attributes {transform.with_named_sequence} {\n"
            f"{sequences}"
            f"  transform.named_sequence @{name}(%root: !transform.any_op {{transform.readonly}}) {{\n"
            f"{body}\n"
            "    transform.yield\n"
            "  }\n"
            "}\n"
        )



__all__ = ["Script", "TAG"]
