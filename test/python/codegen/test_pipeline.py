"""CPU code generation: numerics of the compiled kernels against numpy, the LLVM IR /
llc path, and the AArch64 cross build run under qemu (when the tools are installed)."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from dnnf_mlir._mlir import ir
from dnnf_mlir.checking import compare
from dnnf_mlir.codegen import CodegenError, get_target, sample_ops, signatures
from dnnf_mlir.codegen.cpu import CpuError, UnsupportedCpuError, compile_object, emit_llvm_ir, host_target, jit, lower_to_llvm
from dnnf_mlir.codegen.cpu import cross
from dnnf_mlir.codegen.cpu.cross import build_executable, disassemble, missing_tools, run_executable

from compile_helpers import compile_text

RNG = np.random.default_rng(1234)





def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def conv_reference(x, w, pad, stride):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch.astype(np.float64), w[:, :, i, j].astype(np.float64))
    return out


def assert_close(got, want, rtol=2e-5):
    """``checking.compare`` against a float64 reference with atol = rtol * the output's
    scale: an element of a matmul or convolution that cancels (its K products summing
    to near 0) errs by float32 rounding of terms as large as the other outputs."""
    result = compare(got, want, rtol, rtol * max(1.0, float(np.abs(want).max())))
    assert result.ok, result


THREADS = [1, 2]


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize(
    "m,n,k",
    [
        (64, 64, 64),  # packed B, full tiles
        (128, 96, 48),  # several panels per thread
        (13, 17, 19),  # padded to whole register tiles
        (1, 40, 33),  # a single row
        (30, 100, 16),
        (9, 48, 16),  # 3 column tiles of 16: no even split (see below)
    ],
)
def test_matmul(m, n, k, threads):
    compiled, report, _, _ = compile_text(sample_ops.matmul(m, n, k), threads)
    a, b = rand(m, k), rand(k, n)
    (c,) = compiled["main"](a, b)
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64))
    (kernel,) = report.schedules
    assert kernel.strategy == "matmul"
    if threads > 1 and m * n >= 64 * 64:
        assert "forall" in kernel.details
    if threads > 1 and (m, n) == (9, 48):
        if host_target().lanes(32) == 8:
            # Two vectors of 8 a tile: 6 tiles of one vector split evenly (tiles.even_column_tile).
            assert kernel.details["register_tile"][1] == 8 and "forall" in kernel.details
        else:
            # One vector of 16 a tile, none narrower: stays on one thread.
            assert kernel.details["threads"] == 1


@pytest.mark.parametrize("threads", THREADS)
def test_batch_matmul(threads):
    compiled, report, _, _ = compile_text(sample_ops.batch_matmul(3, 20, 48, 24), threads)
    a, b = rand(3, 20, 24), rand(3, 24, 48)
    (c,) = compiled["main"](a, b)
    assert_close(c, np.matmul(a.astype(np.float64), b.astype(np.float64)))
    assert report.schedules[0].strategy == "matmul"


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize(
    "n,c,h,w,f,kh,kw,pad,stride",
    [
        (1, 16, 14, 14, 32, 3, 3, 1, 1),  # ResNet-like, width padded to whole vectors
        (1, 8, 12, 56, 16, 3, 3, 1, 1),
        (2, 5, 9, 11, 7, 3, 2, 1, 1),  # odd everything, batch 2
        (1, 3, 20, 20, 8, 3, 3, 0, 2),  # stride 2, no padding: two column phases
        (1, 3, 23, 23, 16, 7, 7, 3, 2),  # ResNet stem shape (7x7 / 2), smaller image
        (1, 12, 7, 7, 24, 1, 1, 0, 1),  # 1x1: a matmul
        (1, 16, 9, 9, 32, 1, 1, 0, 2),  # 1x1 stride 2: strided slice + matmul
        (2, 8, 5, 5, 16, 1, 1, 0, 1),  # 1x1, two images: stays a convolution
        (1, 8, 3, 10, 48, 3, 3, 1, 1),  # 3 rows, 3 channel tiles: no even split
    ],
)
def test_conv2d_nchw(n, c, h, w, f, kh, kw, pad, stride, threads):
    text = sample_ops.conv2d_nchw(n, c, h, w, f, kh, kw, pad, stride)
    compiled, report, _, _ = compile_text(text, threads)
    x, wt = rand(n, c, h, w), rand(f, c, kh, kw)
    (y,) = compiled["main"](x, wt)
    assert_close(y, conv_reference(x, wt, pad, stride))
    compute = [k for k in report.schedules if k.strategy in ("conv2d", "matmul")]
    if (n, kh, kw) == (1, 1, 1):
        # 1x1 convolutions of one image become matmuls (W[F, C] @ X[C, H*W])
        assert [k.strategy for k in compute] == ["matmul"]
    elif stride > 1:
        # one stride-1 convolution per phase of the input columns, the phases copied out
        # together by one transposing generic (planes this small: ``phase_split``), all
        # computed in the register tiles of the last one (one schedule); an even-width
        # image zero-padded (here to whole vectors of output columns) has its phases
        # written into a zeroed buffer instead of a padded copy (``padded_phases``)
        assert [k.strategy for k in compute] == ["conv2d"]
        assert compute[0].details["phases"] == min(stride, kw)
        copies = ["linalg.generic"] if w % 2 else ["linalg.fill", "linalg.generic"]
        assert [k.op for k in report.schedules if k not in compute] == copies
    else:
        assert [k.strategy for k in compute] == ["conv2d"]


ELEMENTWISE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @main(%a: tensor<64x96xf32>, %b: tensor<96x80xf32>, %bias: tensor<80xf32>) -> (tensor<64x80xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x80xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x80xf32>) -> tensor<64x80xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x80xf32>) outs(%init : tensor<64x80xf32>) -> tensor<64x80xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<64x80xf32>, tensor<80xf32>) outs(%empty : tensor<64x80xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x80xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<64x80xf32>) outs(%empty : tensor<64x80xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    %t = math.tanh %m : f32
    linalg.yield %t : f32
  } -> tensor<64x80xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %rinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%act : tensor<64x80xf32>) outs(%rinit : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %act, %sum : tensor<64x80xf32>, tensor<64xf32>
}
"""


@pytest.mark.parametrize("threads", THREADS)
def test_elementwise_and_reduction(threads):
    compiled, report, _, _ = compile_text(ELEMENTWISE, threads)
    a, b, bias = rand(64, 96), rand(96, 80), rand(80)
    act, total = compiled["main"](a, b, bias)
    want = np.tanh(np.maximum(a.astype(np.float64) @ b + bias, 0))
    assert_close(act, want)
    assert_close(total, want.sum(1), rtol=1e-4)
    (matmul,) = [k for k in report.schedules if k.op == "linalg.matmul"]
    # bias + activation: fused into one generic (linalg-fuse-elementwise-ops), then into
    # the matmul's register tiles as its epilogue
    assert matmul.strategy == "matmul" and "epilogue" in matmul.details
    # the row sum: vectorized on its own
    assert [k.strategy for k in report.schedules if k.op == "linalg.generic"] == ["vectorized"]


CHAIN = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<64x128xf32>, %w1: tensor<128x256xf32>, %b1: tensor<256xf32>, %w2: tensor<256x128xf32>,
                %k: tensor<48x128xf32>) -> (tensor<64x128xf32>, tensor<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %ex = tensor.empty() : tensor<64x128xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%ex : tensor<64x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x256xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %mm1 = linalg.matmul ins(%scaled, %w1 : tensor<64x128xf32>, tensor<128x256xf32>) outs(%i1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %b1 : tensor<64x256xf32>, tensor<256xf32>) outs(%e1 : tensor<64x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<64x256xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%ex : tensor<64x128xf32>) -> tensor<64x128xf32>
  %mm2 = linalg.matmul ins(%h, %w2 : tensor<64x256xf32>, tensor<256x128xf32>) outs(%i2 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e3 = tensor.empty() : tensor<64x48xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %qk = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%mm2, %k : tensor<64x128xf32>, tensor<48x128xf32>) outs(%i3 : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %mm2, %qk : tensor<64x128xf32>, tensor<64x48xf32>
}
"""


@pytest.mark.parametrize("threads", THREADS)
def test_matmul_chain(threads):
    """An element-wise producer stays outside the matmul tiles (not recomputed per
    tile), bias + tanh become the first matmul's epilogue, a matmul reading B
    transposed gets a linalg.transpose + the packed kernel."""
    compiled, report, _, _ = compile_text(CHAIN, threads)
    x, w1, b1, w2, k = rand(64, 128), rand(128, 256), rand(256), rand(256, 128), rand(48, 128)
    y, qk = compiled["main"](x, w1, b1, w2, k)
    h = np.tanh((0.5 * x.astype(np.float64)) @ w1 + b1)
    want = h @ w2
    assert_close(y, want)
    assert_close(qk, want @ k.T.astype(np.float64), rtol=1e-4)
    kinds = [(k.op, k.strategy) for k in report.schedules]
    assert kinds == [
        ("linalg.generic", "vectorized"),
        ("linalg.matmul", "matmul"),
        ("linalg.matmul", "matmul"),
        ("linalg.transpose", "vectorized"),
        ("linalg.matmul", "matmul"),
    ]
    assert "epilogue" in report.schedules[1].details
    assert report.schedule_script.count("bufferize_to_allocation") == 0


def test_signature_and_input_checks():
    compiled, _, module, context = compile_text(sample_ops.matmul(8, 16, 4))
    with context:
        assert signatures(module) == {"main": ([(np.float32, (8, 4)), (np.float32, (4, 16))], [(np.float32, (8, 16))])}
    with pytest.raises(CodegenError, match="input 0"):
        compiled["main"](np.zeros((4, 8), np.float32), np.zeros((4, 16), np.float32))
    with pytest.raises(CodegenError, match="takes 2 inputs"):
        compiled["main"](np.zeros((8, 4), np.float32))
    # bind(): a zero-argument callable for timing, writing into given outputs
    a, b = rand(8, 4), rand(4, 16)
    out = np.empty((8, 16), np.float32)
    call = compiled["main"].bind(a, b, outputs=[out])
    call()
    assert_close(out, a @ b)


def test_targets(monkeypatch):
    monkeypatch.delenv("DNNF_CPU", raising=False)
    host = host_target()
    assert host.is_host and host.cpu == "native" and host.cpu_name != "native"
    assert host.vector_bits in (128, 256, 512) and not host.missing_features() and not host.pinned
    # A named CPU decides the vector shape and the features, whatever this machine is.
    v3, v4 = get_target("host", "x86-64-v3"), get_target("host", "x86-64-v4")
    assert (v3.lanes(), v3.vector_registers, v4.lanes(), v4.vector_registers) == (8, 16, 16, 32)
    assert {"avx2", "fma"} <= set(v3.features) and "avx512f" not in v3.features and "avx512f" in v4.features
    assert v3.pinned and v3.describe() == "host (x86-64-v3)"
    # $DNNF_CPU is the host's default CPU; an explicit one wins.
    monkeypatch.setenv("DNNF_CPU", "x86-64-v3")
    assert get_target("host") == v3 and get_target("host", "x86-64-v4") == v4
    arm = get_target("aarch64")
    assert (arm.cpu, arm.features, arm.lanes(), arm.is_host) == ("generic", ("neon",), 4, False)
    assert get_target("aarch64", "cortex-a76").features == ("neon", "fullfp16", "dotprod")
    with pytest.raises(ValueError, match="unknown target"):
        get_target("sparc")
    with pytest.raises(CpuError, match="unknown CPU 'pentium9' for x86_64"):
        get_target("host", "pentium9")
    with pytest.raises(CpuError, match="give an aarch64 CPU name"):
        get_target("aarch64", "native")


def test_jit_runs_a_lower_cpu_and_refuses_a_higher_one(cpu_above_host):
    """Code pinned to x86-64-v3 runs here; code for a CPU above this machine compiles
    (plan, LLVM) but is never called: UnsupportedCpuError names what is missing."""
    a, b = rand(64, 64), rand(64, 64)
    compiled, report, _, _ = compile_text(sample_ops.matmul(64, 64, 64), target=get_target("host", "x86-64-v3"))
    assert report.schedules[0].details["register_tile"] == (4, 16)  # rows x two 8-lane AVX2 vectors
    assert_close(compiled["main"](a, b)[0], a @ b)
    compiled, report, _, _ = compile_text(sample_ops.matmul(64, 64, 64), target=cpu_above_host)
    with pytest.raises(UnsupportedCpuError, match=f"compiled for host \\({cpu_above_host.cpu}\\) and needs") as error:
        compiled["main"](a, b)
    assert set(error.value.missing) == set(cpu_above_host.missing_features())


def test_jit_refuses_foreign_modules():
    context = ir.Context()
    with context:
        module = ir.Module.parse(sample_ops.matmul(8, 8, 8))
        lower_to_llvm(module, "aarch64")
        with pytest.raises(CodegenError, match="lowered for aarch64"):
            jit(module)


@pytest.mark.parametrize("target", ["host", "aarch64"])
def test_llvm_ir_accepted_by_llc(target, tmp_path):
    """The 24git-printed LLVM IR (conv + elementwise + OpenMP) is accepted by llc-22."""
    for text, threads in ((sample_ops.conv2d_nchw(1, 8, 10, 10, 16, 3, 3, 1), 2), (ELEMENTWISE, 1)):
        context = ir.Context()
        with context:
            module = ir.Module.parse(text)
            lower_to_llvm(module, target, threads=threads)
            llvm_ir = emit_llvm_ir(module)
        assert "define void @_mlir_ciface_main" in llvm_ir
        obj = compile_object(llvm_ir, target=target, output=str(tmp_path / f"k{threads}.o"))
        with open(obj, "rb") as f:
            assert f.read(4) == b"\x7fELF"


def _chained_through_memory_ir(steps: int) -> str:
    """``void chain(float *p, float *q)``: one basic block of ``steps`` loads and stores,
    ``q[i] = p[i] + 1``; called with ``q = p + 1`` each load reads the store before it."""
    body = []
    for i in range(steps):
        body += [f"  %a{i} = getelementptr float, ptr %p, i64 {i}", f"  %v{i} = load float, ptr %a{i}",
                 f"  %w{i} = fadd float %v{i}, 1.0", f"  %b{i} = getelementptr float, ptr %q, i64 {i}",
                 f"  store float %w{i}, ptr %b{i}"]
    return "define void @chain(ptr %p, ptr %q) {\n" + "\n".join(body) + "\n  ret void\n}\n"


def test_llc_keeps_memory_order_in_a_huge_block(tmp_path):
    """A block of more memory operations than llc's schedulers track one by one
    (``LLC_FLAGS``: past 200 their dependences are coarsened): the loads still wait
    for the stores they may read, through pointers not known to alias."""
    steps = 1500
    obj = compile_object(_chained_through_memory_ir(steps), target="host", output=str(tmp_path / "chain.o"), pic=True)
    library = tmp_path / "chain.so"
    subprocess.run(["cc", "-shared", "-o", str(library), obj], check=True)
    data = np.zeros(steps + 1, np.float32)
    data[0] = 3.0
    pointer = data.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    ctypes.CDLL(str(library)).chain(pointer, ctypes.cast(ctypes.addressof(pointer.contents) + 4, ctypes.POINTER(ctypes.c_float)))
    np.testing.assert_array_equal(data, 3.0 + np.arange(steps + 1, dtype=np.float32))


def test_aarch64_matmul_under_qemu(tmp_path, aarch64_toolchain):
    m, n, k = 48, 40, 36
    context = ir.Context()
    with context:
        module = ir.Module.parse(sample_ops.matmul(m, n, k))
        report = lower_to_llvm(module, "aarch64")
        exe = build_executable(module, "main", "aarch64", directory=str(tmp_path))
    assert report.schedules[0].details["register_tile"] == (8, 8)
    a, b = rand(m, k), rand(k, n)
    (c,), _ = run_executable(exe, [a, b])
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64))
    # The micro-kernel is NEON: fused multiply-adds on 4 x f32 vectors.
    asm = disassemble(exe.object_path, "__dnnf_kernel_main")
    assert asm.count("fmla\tv") >= 16, asm


def test_aarch64_conv_under_qemu(tmp_path, aarch64_toolchain):
    context = ir.Context()
    with context:
        module = ir.Module.parse(sample_ops.conv2d_nchw(1, 4, 9, 9, 8, 3, 3, 1))
        lower_to_llvm(module, "aarch64")
        exe = build_executable(module, "main", "aarch64", directory=str(tmp_path))
    x, w = rand(1, 4, 9, 9), rand(8, 4, 3, 3)
    (y,), _ = run_executable(exe, [x, w])
    assert_close(y, conv_reference(x, w, 1, 1))


def test_missing_tools_names_packages(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("DNNF_LLC", "/nonexistent/llc")
    missing = missing_tools("aarch64")
    assert any("llvm-22" in m for m in missing)
    assert any("qemu-user" in m for m in missing)
    assert any("gcc-aarch64-linux-gnu" in m for m in missing)


def test_missing_tools_names_clang_when_the_cpu_cannot_be_resolved(monkeypatch):
    """Without clang no CPU name resolves: missing_tools lists it with the rest instead of raising."""
    def unresolvable(target):
        raise CpuError("clang-22 not found (package clang-22)")

    monkeypatch.setattr(cross, "get_target", unresolvable)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    missing = missing_tools("aarch64")
    assert any("clang-22" in m for m in missing)
    assert any("qemu-user" in m for m in missing)


CONTRACTION = """
#x = affine_map<(d0, d1, d2, d3, d4) -> ({x})>
#y = affine_map<(d0, d1, d2, d3, d4) -> ({y})>
#s = affine_map<(d0, d1, d2, d3, d4) -> ({s})>
#c = affine_map<(d0, d1, d2, d3, d4) -> ({c})>
func.func @main(%x: tensor<{xt}xf32>, %y: tensor<{yt}xf32>, %s: tensor<{st}xf32>) -> tensor<{ct}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{ct}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<{ct}xf32>) -> tensor<{ct}xf32>
  %r = linalg.generic {{indexing_maps = [#x, #y, #s, #c], iterator_types = [{iterators}]}}
      ins(%x, %y, %s : tensor<{xt}xf32>, tensor<{yt}xf32>, tensor<{st}xf32>) outs(%init : tensor<{ct}xf32>) {{
  ^bb0(%a: f32, %b: f32, %d: f32, %acc: f32):
    %q = arith.divf %a, %d : f32
    %p = arith.mulf %q, %b : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }} -> tensor<{ct}xf32>
  return %r : tensor<{ct}xf32>
}}
"""


@pytest.mark.parametrize(
    "x,y,s,c,sizes,einsum",
    [
        # Q = X @ W with W reshaped to heads (unit batch dim: a matmul)
        ("d0, d1, d4", "d4, d2, d3", "d0", "d0, d1, d2, d3", (1, 24, 3, 8, 40), "abe,ecd->abcd"),
        # softmax(S) @ V per head, the division by the row sums fused in (a batch_matmul)
        ("d0, d1, d2, d4", "d0, d1, d4, d3", "d0, d1, d2", "d0, d1, d2, d3", (2, 3, 20, 16, 24), "abce,abed->abcd"),
        # heads merged back: two reduction dims, result transposed
        ("d0, d1, d3, d4", "d3, d4, d2", "d0", "d0, d2, d1", (1, 16, 40, 3, 8), "abde,dec->acb"),
    ],
)
def test_generic_contraction(x, y, s, c, sizes, einsum):
    def shape(m):
        return [sizes[int(d.strip()[1])] for d in m.split(",")]

    xs, ys, ss, cs = shape(x), shape(y), shape(s), shape(c)
    reduced = {int(d.strip()[1]) for d in (x + "," + y).split(",")} - {int(d.strip()[1]) for d in c.split(",")}
    iterators = ", ".join('"reduction"' if i in reduced else '"parallel"' for i in range(5))
    text = CONTRACTION.format(
        x=x, y=y, s=s, c=c, iterators=iterators, **{k + "t": "x".join(map(str, v)) for k, v in zip("xysc", (xs, ys, ss, cs))}
    )
    compiled, report, _, _ = compile_text(text)
    a, b, d = rand(*xs), rand(*ys), np.abs(rand(*ss)) + 1
    scaled = a.astype(np.float64) / d.astype(np.float64).reshape(ss + [1] * (len(xs) - len(ss)))
    (got,) = compiled["main"](a, b, d)
    assert_close(got, np.einsum(einsum, scaled, b.astype(np.float64)))
    assert "matmul" in [k.strategy for k in report.schedules]
