"""``cpu/sliced_matmuls.py``: a horizontally merged 1x1 convolution read only in slices
of channels (the kernel's results, one of them through its own ReLU) computed slice by
slice, each part written straight into its result, where the slices' rows outnumber K
times the extra parts; otherwise (or for overlapping slices) left one matmul. Likewise
a loop over weight panels (BERT's merged Q/K/V) read in column slices of whole panels,
each slice through the bias to its heads' layout: one loop per slice; a slice cutting
a panel, or overlapping slices, leave it one loop.

Each case checks how many matmuls the plan holds (and, split, that no element-wise op
is left outside their epilogues) and the numbers against numpy in
float64 on 1 and 2 threads. Inputs standard normal, weights scaled by 1/sqrt(C) and
biases standard normal, so that about half of each part is negative and a ReLU applied
to the wrong part shows. Tolerance: rtol 1e-4, atol 1e-4 (float32 sums of C products).
"""

import numpy as np
import pytest

from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.context import make_context
from dnnf_mlir._mlir import ir

RNG = np.random.default_rng(11)


def merged_conv(c: int, h: int, w: int, parts: list) -> str:
    """A 1x1 convolution of ``c`` channels to the channels of all ``parts`` (offset,
    count, relu) with a bias, its result returned in those slices, a ReLU on some."""
    f = max(offset + count for offset, count, _ in parts)
    image = lambda ch: f"tensor<1x{ch}x{h}x{w}xf32>"  # noqa: E731
    lines, results = [], []
    for index, (offset, count, relu) in enumerate(parts):
        lines.append(f"%s{index} = tensor.extract_slice %biased[0, {offset}, 0, 0] [1, {count}, {h}, {w}] [1, 1, 1, 1]"
                     f" : {image(f)} to {image(count)}")
        value = f"%s{index}"
        if relu:
            lines.append(f"""%e{index} = tensor.empty() : {image(count)}
  %r{index} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%s{index} : {image(count)}) outs(%e{index} : {image(count)}) {{
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }} -> {image(count)}""")
            value = f"%r{index}"
        results.append(value)
    body = "\n  ".join(lines)
    types = ", ".join(image(count) for _, count, _ in parts)
    return f"""
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @main(%x: {image(c)}, %wt: tensor<{f}x{c}x1x1xf32>, %b: tensor<{f}xf32>) -> ({types}) {{
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : {image(f)}
  %acc = linalg.fill ins(%zero : f32) outs(%init : {image(f)}) -> {image(f)}
  %conv = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%x, %wt : {image(c)}, tensor<{f}x{c}x1x1xf32>) outs(%acc : {image(f)}) -> {image(f)}
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [{f}, 1, 1] : tensor<{f}xf32> into tensor<{f}x1x1xf32>
  %biased = linalg.generic {{indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%conv, %b3 : {image(f)}, tensor<{f}x1x1xf32>) outs(%init : {image(f)}) {{
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }} -> {image(f)}
  {body}
  return {", ".join(results)} : {types}
}}"""


CASES = {
    # ResNet-50's first stage: the 64-channel branch (ReLU) beside the 256-channel shortcut
    "resnet_stage": (64, 12, 20, [(0, 64, True), (64, 256, False)], 2),
    # three branches, ReLU on the middle one; 64 rows >= 2 x K = 32
    "three_branches": (16, 8, 12, [(0, 16, False), (16, 32, True), (48, 16, False)], 3),
    # K = 128 > 64 rows: B read again per part would cost more than the copies
    "long_k": (128, 8, 8, [(0, 32, True), (32, 32, False)], 1),
    # overlapping slices are no partition: left one matmul
    "overlapping": (16, 6, 6, [(0, 24, True), (16, 32, False)], 1),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(CASES))
def test_sliced_matmul_matches_numpy(name, threads):
    c, h, w, parts, matmuls = CASES[name]
    f = max(offset + count for offset, count, _ in parts)
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    weights = (RNG.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    with make_context():
        module = ir.Module.parse(merged_conv(c, h, w, parts))
        report = lower_to_llvm(module, "host", threads=threads)
        got = jit(module, threads=threads)["main"](x, weights, bias)
    assert len([s for s in report.schedules if s.op == "linalg.matmul"]) == matmuls
    if matmuls > 1:  # every bias and ReLU is a part's epilogue, no pass of its own
        assert not [s for s in report.schedules if s.op == "linalg.generic"]
    wide = np.einsum("fc,chw->fhw", weights[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64)) + bias[:, None, None]
    for (offset, count, relu), result in zip(parts, got if isinstance(got, (list, tuple)) else [got]):
        want = wide[None, offset:offset + count]
        np.testing.assert_allclose(result, np.maximum(want, 0) if relu else want, rtol=1e-4, atol=1e-4)


def panel_loop(m: int, k: int, nr: int, panels: int, parts: list, bias: bool) -> str:
    """``x @ B`` from B's panels ``[panels, K, NR]`` in the ``scf.forall`` that
    ``dnnf-weight-panels`` makes (x collapsed in the loop, as upstream leaves it),
    through a bias over the columns (``bias``) read in the column slices ``parts``
    (offset, count, heads, permutation of the heads' layout ``[1, M, heads, count /
    heads]``, or None: the slice itself), BERT's merged Q/K/V."""
    n = panels * nr
    wide = f"tensor<1x{m}x{n}xf32>" if bias else f"tensor<{m}x{n}xf32>"
    lines, results, types = [], [], []
    for index, (offset, count, heads, perm) in enumerate(parts):
        piece = f"tensor<1x{m}x{count}xf32>" if bias else f"tensor<{m}x{count}xf32>"
        at, size = (f"[0, 0, {offset}]", f"[1, {m}, {count}]") if bias else (f"[0, {offset}]", f"[{m}, {count}]")
        lines.append(f"%s{index} = tensor.extract_slice %wide{at} {size} [{', '.join(['1'] * len(at.split(',')))}] : {wide} to {piece}")
        if perm is None:
            results.append(f"%s{index}")
            types.append(piece)
            continue
        split = [1, m, heads, count // heads]
        moved = [split[p] for p in perm]
        name = lambda dims: "tensor<" + "x".join(map(str, dims)) + "xf32>"  # noqa: E731
        lines.append(f"%h{index} = tensor.expand_shape %s{index} [[0], [1], [2, 3]] output_shape {split} : {piece} into {name(split)}")
        lines.append(f"%e{index} = tensor.empty() : {name(moved)}")
        lines.append(f"%t{index} = linalg.transpose ins(%h{index} : {name(split)}) outs(%e{index} : {name(moved)}) permutation = {perm}")
        results.append(f"%t{index}")
        types.append(name(moved))
    if bias:
        epilogue = f"""%expanded = tensor.expand_shape %product [[0, 1], [2]] output_shape [1, {m}, {n}] : tensor<{m}x{n}xf32> into {wide}
  %init = tensor.empty() : {wide}
  %wide = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>,
                         affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%expanded, %b : {wide}, tensor<{n}xf32>) outs(%init : {wide}) {{
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }} -> {wide}"""
    else:
        epilogue = ""
    body = "\n  ".join(lines)
    return f"""
func.func @main(%x: tensor<1x{m}x{k}xf32>, %panels: tensor<{panels}x{k}x{nr}xf32>, %b: tensor<{n}xf32>) -> ({", ".join(types)}) {{
  %zero = arith.constant 0.0 : f32
  %c{nr} = arith.constant {nr} : index
  %empty = tensor.empty() : tensor<{m}x{n}xf32>
  %{"product" if bias else "wide"} = scf.forall (%j) in ({panels}) shared_outs(%acc = %empty) -> (tensor<{m}x{n}xf32>) {{
    %column = arith.muli %j, %c{nr} : index
    %panel = tensor.extract_slice %panels[%j, 0, 0] [1, {k}, {nr}] [1, 1, 1] : tensor<{panels}x{k}x{nr}xf32> to tensor<{k}x{nr}xf32>
    %tile0 = tensor.empty() : tensor<{m}x{nr}xf32>
    %tile = linalg.fill ins(%zero : f32) outs(%tile0 : tensor<{m}x{nr}xf32>) -> tensor<{m}x{nr}xf32>
    %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x{m}x{k}xf32> into tensor<{m}x{k}xf32>
    %part = linalg.matmul ins(%rows, %panel : tensor<{m}x{k}xf32>, tensor<{k}x{nr}xf32>) outs(%tile : tensor<{m}x{nr}xf32>) -> tensor<{m}x{nr}xf32>
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %part into %acc[0, %column] [{m}, {nr}] [1, 1] : tensor<{m}x{nr}xf32> into tensor<{m}x{n}xf32>
    }}
  }}
  {epilogue}
  {body}
  return {", ".join(results)} : {", ".join(types)}
}}"""


PANEL_CASES = {
    # BERT's merged Q/K/V: three slices of whole panels, each to its heads' layout (K transposed)
    "qkv": (24, 40, 16, 6, [(0, 32, 2, [0, 2, 1, 3]), (32, 32, 2, [0, 2, 3, 1]), (64, 32, 2, [0, 2, 1, 3])], True, 3),
    # slices of the loop's value itself (no bias), one panel left unread
    "plain_slices": (8, 16, 8, 5, [(8, 16, 0, None), (24, 16, 0, None)], False, 2),
    # slices cutting a panel (24 columns of 16-wide panels): left one loop
    "cut_panel": (12, 24, 16, 3, [(0, 24, 2, [0, 2, 1, 3]), (24, 24, 2, [0, 2, 1, 3])], True, 1),
    # overlapping slices: left one loop
    "overlapping": (8, 16, 8, 4, [(0, 16, 0, None), (8, 24, 0, None)], False, 1),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(PANEL_CASES))
def test_sliced_panel_loop_matches_numpy(name, threads):
    m, k, nr, panels, parts, bias, matmuls = PANEL_CASES[name]
    n = panels * nr
    x = RNG.standard_normal((1, m, k)).astype(np.float32)
    weights = (RNG.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    packed = np.ascontiguousarray(weights.reshape(k, panels, nr).transpose(1, 0, 2))
    with make_context():
        module = ir.Module.parse(panel_loop(m, k, nr, panels, parts, bias))
        report = lower_to_llvm(module, "host", threads=threads)
        got = jit(module, threads=threads)["main"](x, packed, b)
    assert len([s for s in report.schedules if s.op == "linalg.matmul"]) == matmuls
    wide = x[0].astype(np.float64) @ weights.astype(np.float64) + (b if bias else 0)
    for (offset, count, heads, perm), result in zip(parts, got if isinstance(got, (list, tuple)) else [got]):
        want = wide[:, offset:offset + count]
        if perm is not None:
            want = want.reshape(1, m, heads, count // heads).transpose(perm)
        np.testing.assert_allclose(result, want, rtol=1e-4, atol=1e-4)
