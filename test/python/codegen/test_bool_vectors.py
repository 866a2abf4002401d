"""Element-wise kernels reading or writing bool (i1) tensors are vectorized on the CPU
(codegen/cpu/rows.py), their vector loads and stores moving a byte per lane as ONNX
bool storage holds them (codegen/cpu/byte_bools.py), on AVX-512 and AVX2.

Shapes are odd (rows of 37, 97, 301: masked vector tails) and masks broadcast, so a
lane read from the wrong byte, a packed-bit load (eight lanes from one byte) or a
wrong tail shows; inputs are random with both truth values common, and the check is
exact (bools and selected floats are copied, never rounded).
"""

import numpy as np
import pytest

import dnnf_mlir
from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen import get_target
from dnnf_mlir.codegen.cpu import jit, lower_to_llvm
from dnnf_mlir.codegen.cpu.byte_bools import bools_as_bytes
from dnnf_mlir.codegen.errors import CodegenError
from dnnf_mlir.transforms.pipeline import build_pass_manager

RNG = np.random.default_rng(29)
CPUS = ["x86-64-v3", "x86-64-v4"]


def tensor(shape, element="f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def compile_ecg(text: str, cpu: str):
    """(a runner of the JIT function @main, schedules) of an ECG module lowered for
    ``cpu``. For a CPU whose features this machine lacks (x86-64-v4 on an AVX2 machine)
    the code is still lowered, its schedules checked and its LLVM built; the test skips
    only where it would run it."""
    target = get_target("host", cpu)
    context = dnnf_mlir.make_context()
    with context:
        module = ir.Module.parse(text)
        build_pass_manager("builtin.module(convert-ecg-to-linalg)", context).run(module.operation)
        report = lower_to_llvm(module, target)
        main = jit(module)["main"]

    def run(*arrays):
        if target.missing_features():
            pytest.skip(f"this machine lacks {target.missing_features()} of {cpu}: compiled, not run")
        return main(*arrays)

    return run, report.schedules


def assert_vectorized(schedules):
    assert schedules and all(s.strategy == "vectorized" for s in schedules), schedules


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("shape", [(5, 37), (3, 301)])
def test_where_of_a_comparison_and_a_mask(cpu, shape):
    """Less (f32 -> bool output), Not of a bool input, And, Where on the result."""
    x, y = tensor(shape), tensor(shape[-1:])
    m = tensor(shape, "i1")
    compiled, schedules = compile_ecg(f"""
func.func @main(%x: {x}, %y: {y}, %m: {m}) -> ({x}, {m}) {{
  %0 = "ecg.less"(%x, %y) : ({x}, {y}) -> {m}
  %1 = "ecg.not"(%m) : ({m}) -> {m}
  %2 = "ecg.and"(%0, %1) : ({m}, {m}) -> {m}
  %3 = "ecg.where"(%2, %x, %y) : ({m}, {x}, {y}) -> {x}
  return %3, %2 : {x}, {m}
}}""", cpu)
    assert_vectorized(schedules)
    a = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape[-1:]).astype(np.float32)
    mask = RNG.random(shape) < 0.5
    selected, condition = compiled(a, b, mask)
    expected = (a < b) & ~mask
    assert condition.dtype == np.bool_ and np.array_equal(condition, expected)
    assert np.array_equal(selected, np.where(expected, a, b))


@pytest.mark.parametrize("cpu", CPUS)
def test_logic_chain_on_broadcast_masks(cpu):
    """Or / Xor / Not / And of masks broadcast along different dims (attention-mask
    style), written as a bool output, and Where of a broadcast mask over floats."""
    full, row, col = (3, 5, 97), (1, 97), (5, 1)
    b, br, bc, f = tensor(full, "i1"), tensor(row, "i1"), tensor(col, "i1"), tensor(full)
    compiled, schedules = compile_ecg(f"""
func.func @main(%a: {b}, %r: {br}, %c: {bc}, %x: {f}) -> ({b}, {f}) {{
  %0 = "ecg.or"(%a, %r) : ({b}, {br}) -> {b}
  %1 = "ecg.xor"(%0, %c) : ({b}, {bc}) -> {b}
  %2 = "ecg.not"(%1) : ({b}) -> {b}
  %3 = "ecg.and"(%2, %a) : ({b}, {b}) -> {b}
  %4 = "ecg.where"(%r, %x, %x) : ({br}, {f}, {f}) -> {f}
  %5 = "ecg.where"(%c, %4, %x) : ({bc}, {f}, {f}) -> {f}
  return %3, %5 : {b}, {f}
}}""", cpu)
    assert_vectorized(schedules)
    a, r, c = (RNG.random(s) < 0.5 for s in (full, row, col))
    x = RNG.standard_normal(full).astype(np.float32)
    logic, selected = compiled(a, r, c, x)
    assert logic.dtype == np.bool_ and np.array_equal(logic, ~((a | r) ^ c) & a)
    assert np.array_equal(selected, x)


@pytest.mark.parametrize("cpu", CPUS)
def test_a_gather_of_bools_stays_a_loop(cpu):
    """GPT-2's mask gather: no vector instruction gathers bytes, so it stays a loop (and exact)."""
    table, index, out = tensor((128, 1), "i1"), tensor((1, 1, 1, 128), "i64"), tensor((1, 1, 1, 128, 1), "i1")
    compiled, schedules = compile_ecg(f"""
func.func @main(%t: {table}, %i: {index}) -> {out} {{
  %0 = "ecg.gather"(%t, %i) {{axis = 0 : i64}} : ({table}, {index}) -> {out}
  return %0 : {out}
}}""", cpu)
    assert [s.strategy for s in schedules] == ["loops"]
    t = RNG.random((128, 1)) < 0.5
    i = RNG.integers(0, 128, (1, 1, 1, 128)).astype(np.int64)
    (gathered,) = compiled(t, i)
    assert np.array_equal(gathered, t[i])


def test_an_aggregate_of_bool_vectors_in_memory_is_refused():
    """What would still move packed bits is an error, not a silent miscompile."""
    with ir.Context():
        module = ir.Module.parse("""
llvm.func @f(%p: !llvm.ptr) -> !llvm.array<2 x vector<8xi1>> {
  %0 = llvm.load %p : !llvm.ptr -> !llvm.array<2 x vector<8xi1>>
  llvm.return %0 : !llvm.array<2 x vector<8xi1>>
}""")
        with pytest.raises(CodegenError, match="llvm.load of .*aggregate of i1 vectors"):
            bools_as_bytes(module)
