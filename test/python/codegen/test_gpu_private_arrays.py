"""``codegen/gpu/private_arrays.py``: a launch keeping more private arrays per thread than
the device profile allows is scheduled one op a dispatch, or refused by name.

A product written transposed keeps its 4x4 register tile in a private array of 64 bytes
when fused (``permuted_products``), none one op a dispatch; an Inception-style padded
pool over concatenated branches keeps a few bytes even one op a dispatch. The bounds
below are set around those numbers, so that each assertion fails if the check counts
wrong or is not applied."""

import dataclasses

import pytest

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.errors import CodegenError
from dnnf_mlir.codegen.gpu.kernels import FALLBACK_ATTR, SCHEDULE_ATTR
from dnnf_mlir.codegen.gpu.lower import COMPILED_ATTR, compile_kernels
from dnnf_mlir.codegen.gpu.prepare import prepare_module
from dnnf_mlir.codegen.gpu.private_arrays import private_bytes
from dnnf_mlir.codegen.gpu.vulkan.target import vulkan_target
from dnnf_mlir.codegen.lowered_module import functions, symbol_name
from dnnf_mlir.context import make_context
from dnnf_mlir.ir_walk import walk_ops

TRANSPOSED_PRODUCT = """
func.func private @kernel_0(%x: tensor<1x16x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<1x4x16x16xf32> attributes {dnnf.kernel} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, s, h, d, k) -> (b, s, k)>, affine_map<(b, s, h, d, k) -> (k, h, d)>,
                                        affine_map<(b, s, h, d, k) -> (b, s, h, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
       ins(%x, %w : tensor<1x16x64xf32>, tensor<64x4x16xf32>) outs(%f : tensor<1x16x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x4x16xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %t = linalg.transpose ins(%p : tensor<1x16x4x16xf32>) outs(%e2 : tensor<1x4x16x16xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x4x16x16xf32>
}
"""

POOLED_BRANCHES = """
func.func private @kernel_0(%a: tensor<1x8x9x9xf32>, %b: tensor<1x16x9x9xf32>, %c: tensor<1x4x9x9xf32>)
    -> (tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>) attributes {dnnf.kernel} {
  %lowest = arith.constant -3.40282347E+38 : f32
  %ab = tensor.concat dim(1) %a, %b : (tensor<1x8x9x9xf32>, tensor<1x16x9x9xf32>) -> tensor<1x24x9x9xf32>
  %abc = tensor.concat dim(1) %ab, %c : (tensor<1x24x9x9xf32>, tensor<1x4x9x9xf32>) -> tensor<1x28x9x9xf32>
  %padded = tensor.pad %abc low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %lowest : f32
  } : tensor<1x28x9x9xf32> to tensor<1x28x11x11xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x28x9x9xf32>
  %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x28x9x9xf32>) -> tensor<1x28x9x9xf32>
  %pooled = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %window : tensor<1x28x11x11xf32>, tensor<3x3xf32>) outs(%f : tensor<1x28x9x9xf32>) -> tensor<1x28x9x9xf32>
  return %abc, %pooled : tensor<1x28x9x9xf32>, tensor<1x28x9x9xf32>
}
"""


def _compile(source: str, max_private_memory: int | None = None):
    """The compiled kernel function of ``source`` for Vulkan's generic profile, its private
    bound replaced by ``max_private_memory``: (its schedule, why it fell back, the private
    bytes of each launch)."""
    device = vulkan_target().device
    if max_private_memory is not None:
        device = dataclasses.replace(device, max_private_memory=max_private_memory)
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(source)
        prepare_module(module)
        compile_kernels(module, device)
        kernel = next(f for f in functions(module) if COMPILED_ATTR in f.attributes)
        name = ir.FlatSymbolRefAttr(kernel.attributes[COMPILED_ATTR]).value
        compiled = next(f for f in functions(module) if symbol_name(f) == name)
        fallback = compiled.attributes[FALLBACK_ATTR] if FALLBACK_ATTR in compiled.attributes else None
        return (ir.StringAttr(compiled.attributes[SCHEDULE_ATTR]).value,
                ir.StringAttr(fallback).value if fallback is not None else None,
                [private_bytes(launch) for launch in walk_ops(compiled, {"gpu.launch"})])


def test_within_the_bound_the_kernel_stays_fused():
    schedule, fallback, private = _compile(TRANSPOSED_PRODUCT)
    assert (schedule, fallback, private) == ("fused", None, [64])
    assert vulkan_target().device.max_private_memory == 4096


def test_over_the_bound_the_kernel_runs_one_op_a_dispatch():
    schedule, fallback, private = _compile(TRANSPOSED_PRODUCT, max_private_memory=32)
    assert schedule == "per-op"
    assert "kernel_0 keeps 64 bytes of private arrays per thread in a launch" in fallback
    assert "allows 32" in fallback
    assert len(private) > 1 and max(private) <= 32


def test_over_the_bound_one_op_a_dispatch_too_is_an_error_naming_the_kernel():
    fused = _compile(POOLED_BRANCHES)
    assert fused[0] == "fused" and max(fused[2]) > 0
    with pytest.raises(CodegenError, match=r"kernel kernel_0: neither its fused schedule nor one dispatch per op "
                                           r"applies \(.*private arrays per thread.*allows 0"):
        _compile(POOLED_BRANCHES, max_private_memory=0)
