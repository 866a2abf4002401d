"""Linalg-on-tensors modules of one op (MLIR text): matmul, batch_matmul, conv_2d_nchw_fchw.

Each function returns a module with one public function ``@main`` that zero-fills its
result and runs the op, the form ``convert-ecg-to-linalg`` produces. Used by the
tests, the benchmark (``python -m dnnf_mlir.codegen.cpu.bench``) and the lit tests.
"""

from __future__ import annotations


def _t(shape, dtype="f32") -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def matmul(m: int, n: int, k: int, name: str = "main") -> str:
    a, b, c = _t((m, k)), _t((k, n)), _t((m, n))
    return f"""func.func @{name}(%a: {a}, %b: {b}) -> {c} {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : {c}
  %init = linalg.fill ins(%zero : f32) outs(%empty : {c}) -> {c}
  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%init : {c}) -> {c}
  return %r : {c}
}}
"""


def batch_matmul(batch: int, m: int, n: int, k: int, name: str = "main") -> str:
    a, b, c = _t((batch, m, k)), _t((batch, k, n)), _t((batch, m, n))
    return f"""func.func @{name}(%a: {a}, %b: {b}) -> {c} {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : {c}
  %init = linalg.fill ins(%zero : f32) outs(%empty : {c}) -> {c}
  %r = linalg.batch_matmul ins(%a, %b : {a}, {b}) outs(%init : {c}) -> {c}
  return %r : {c}
}}
"""


def conv2d_nchw(n: int, c: int, h: int, w: int, f: int, kh: int, kw: int, pad: int = 0, stride: int = 1,
                name: str = "main") -> str:
    """conv_2d_nchw_fchw of an N x C x H x W input (zero-padded by ``pad`` first)."""
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (w + 2 * pad - kw) // stride + 1
    x, wt, y = _t((n, c, h, w)), _t((f, c, kh, kw)), _t((n, f, oh, ow))
    lines = [f"func.func @{name}(%x: {x}, %w: {wt}) -> {y} {{", "  %zero = arith.constant 0.0 : f32"]
    src = "%x"
    if pad:
        xp = _t((n, c, h + 2 * pad, w + 2 * pad))
        lines += [
            f"  %xp = tensor.pad %x low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{",
            "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):",
            "    tensor.yield %zero : f32",
            f"  }} : {x} to {xp}",
        ]
        src, x = "%xp", xp
    lines += [
        f"  %empty = tensor.empty() : {y}",
        f"  %init = linalg.fill ins(%zero : f32) outs(%empty : {y}) -> {y}",
        f"  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}",
        f"     ins({src}, %w : {x}, {wt}) outs(%init : {y}) -> {y}",
        f"  return %r : {y}",
        "}",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["batch_matmul", "conv2d_nchw", "matmul"]
