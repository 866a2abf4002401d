"""Benchmark the generated code against numpy (OpenBLAS) and onnxruntime.

    python -m dnnf_mlir.codegen.cpu.bench                 # all cases, 1 and 2 threads
    python -m dnnf_mlir.codegen.cpu.bench --cases bert_ffn,resnet_conv --threads 1

Cases: ``bert_ffn`` (matmul 128x768 @ 768x3072), ``matmul512`` (512^3),
``resnet_conv`` (1x64x56x56, 64x64x3x3, pad 1), ``conv256`` (1x256x14x14,
256x256x3x3, pad 1). Every implementation is timed the same way: the best of
``--repeat`` batches of back-to-back calls lasting ``--seconds`` each (the best,
not the mean, because the machine may be shared). numpy computes a convolution as
im2col (``sliding_window_view``) + one sgemm; onnxruntime gets the weights as
initializers (it may pre-pack them) and runs with ``intra_op_num_threads``.
GFLOP/s count 2*M*N*K (matmul) or 2*N*F*OH*OW*C*KH*KW (conv) useful flops.
Results are checked against numpy's (``checking.compare``; "err/tol" above 1 is
wrong) with ``checking.RTOL`` and an atol of ``checking.RTOL * sqrt(K)``: each output
sums K products of standard normals, so it is of order sqrt(K), and so is the
rounding error of an element that cancels to near 0.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..._mlir import ir
from ...checking import RTOL, compare
from .. import sample_ops
from .jit import jit
from .lower_pass import lower_to_llvm


@dataclass
class Case:
    name: str
    kind: str  # "matmul" | "conv"
    dims: tuple

    @property
    def flops(self) -> int:
        if self.kind == "matmul":
            m, n, k = self.dims
            return 2 * m * n * k
        n, c, h, w, f, kh, kw, pad = self.dims
        oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
        return 2 * n * f * oh * ow * c * kh * kw

    def module_text(self) -> str:
        if self.kind == "matmul":
            return sample_ops.matmul(*self.dims)
        n, c, h, w, f, kh, kw, pad = self.dims
        return sample_ops.conv2d_nchw(n, c, h, w, f, kh, kw, pad)

    @property
    def reduction(self) -> int:
        """K: the products summed into each output element."""
        if self.kind == "matmul":
            return self.dims[2]
        _, c, _, _, _, kh, kw, _ = self.dims
        return c * kh * kw

    def inputs(self, rng):
        if self.kind == "matmul":
            m, n, k = self.dims
            return [rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)]
        n, c, h, w, f, kh, kw, _ = self.dims
        return [rng.standard_normal((n, c, h, w), np.float32), rng.standard_normal((f, c, kh, kw), np.float32)]


CASES = {
    "bert_ffn": Case("bert_ffn", "matmul", (128, 3072, 768)),
    "matmul512": Case("matmul512", "matmul", (512, 512, 512)),
    "resnet_conv": Case("resnet_conv", "conv", (1, 64, 56, 56, 64, 3, 3, 1)),
    "conv256": Case("conv256", "conv", (1, 256, 14, 14, 256, 3, 3, 1)),
}


def _batch(fn, seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / calls


def best_time(fn, repeat: int = 7, seconds: float = 0.25) -> float:
    """Seconds per call: the best of ``repeat`` batches of back-to-back calls."""
    fn()
    return min(_batch(fn, seconds) for _ in range(repeat))


def best_times(fns: dict, repeat: int = 7, seconds: float = 0.25) -> dict:
    """``best_time`` of several implementations, interleaved batch by batch so that
    all of them see the same machine (frequency, other processes)."""
    for fn in fns.values():
        fn()
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], _batch(fn, seconds))
    return best


# ----------------------------------------------------------------- numpy / OpenBLAS

_openblas = None


def set_numpy_threads(threads: int) -> bool:
    """Set the number of OpenBLAS threads of numpy's bundled scipy-openblas."""
    global _openblas
    if _openblas is None:
        here = os.path.dirname(np.__file__)
        for path in glob.glob(os.path.join(here, "..", "numpy.libs", "*openblas*")):
            _openblas = ctypes.CDLL(path)
            break
    for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads"):
        if _openblas is not None and hasattr(_openblas, name):
            getattr(_openblas, name)(ctypes.c_int(threads))
            return True
    return False


def numpy_fn(case: Case, arrays):
    if case.kind == "matmul":
        a, b = arrays
        return lambda: a @ b
    x, w = arrays
    pad = case.dims[7]
    f, c, kh, kw = w.shape
    wm = w.reshape(f, c * kh * kw)

    def conv():
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n c oh ow kh kw
        n, _, oh, ow = win.shape[:4]
        cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
        return np.matmul(wm, cols).reshape(n, f, oh, ow)

    return conv


# ----------------------------------------------------------------- onnxruntime


def ort_fn(case: Case, arrays, threads: int):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    if case.kind == "matmul":
        a, b = arrays
        m, n, k = case.dims
        node = helper.make_node("MatMul", ["A", "B"], ["Y"])
        inputs = [helper.make_tensor_value_info("A", TensorProto.FLOAT, list(a.shape))]
        inits = [numpy_helper.from_array(b, "B")]
        out_shape = [m, n]
        feed = {"A": a}
    else:
        x, w = arrays
        pad = case.dims[7]
        node = helper.make_node("Conv", ["X", "W"], ["Y"], pads=[pad] * 4, kernel_shape=list(w.shape[2:]))
        inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape))]
        inits = [numpy_helper.from_array(w, "W")]
        n, c, h, wd, f, kh, kw, _ = case.dims
        out_shape = [n, f, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1]
        feed = {"X": x}
    graph = helper.make_graph([node], case.name, inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda: session.run(None, feed)[0]


# ----------------------------------------------------------------- ours


def compile_case(case: Case, threads: int):
    context = ir.Context()
    with context:
        module = ir.Module.parse(case.module_text())
        report = lower_to_llvm(module, "host", threads=threads)
        compiled = jit(module)
    return compiled["main"], report, context


def run(cases, threads_list, repeat=7, seconds=0.25, check=True, out=sys.stdout):
    rng = np.random.default_rng(0)
    rows = []
    for name in cases:
        case = CASES[name]
        arrays = case.inputs(rng)
        reference = None
        for threads in threads_list:
            fn, report, _ctx = compile_case(case, threads)
            call = fn.bind(*arrays)
            npf = numpy_fn(case, arrays)
            if reference is None:
                reference = npf()
            if check:
                call()
                got = call.outputs[0]
                err = compare(got, reference, RTOL, RTOL * np.sqrt(case.reduction)).ratio
            else:
                err = float("nan")
            orf = ort_fn(case, arrays, threads)

            def numpy_call(npf=npf, threads=threads):
                set_numpy_threads(threads)
                return npf()

            set_numpy_threads(threads)
            times = best_times({"ours": call, "numpy": numpy_call, "ort": orf}, repeat, seconds)
            ours, t_np, t_ort = times["ours"], times["numpy"], times["ort"]
            g = lambda t: case.flops / t / 1e9  # noqa: E731
            row = dict(case=name, threads=threads, ours=g(ours), numpy=g(t_np), ort=g(t_ort), err=err,
                       ms=ours * 1e3, kernels=[(k.strategy, k.details) for k in report.schedules])
            rows.append(row)
            print(
                f"{name:12s} t={threads}  ours {row['ours']:6.1f}  numpy {row['numpy']:6.1f}  ort {row['ort']:6.1f}"
                f"  GFLOP/s   ours/ort {row['ours'] / row['ort']:.2f}  ({row['ms']:.3f} ms, err/tol {err:.2g})",
                file=out, flush=True,
            )
    set_numpy_threads(os.cpu_count() or 1)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.25)
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            parser.error(f"unknown case {c}; known: {', '.join(CASES)}")
    run(cases, [int(t) for t in args.threads.split(",")], args.repeat, args.seconds)


if __name__ == "__main__":
    main()
