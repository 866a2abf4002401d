"""OpenMP code: the entry point makes libomp's workers sleep soon after a parallel
region (``kmp_set_blocktime(BLOCKTIME_MS)``), the JIT lets libomp size its teams by the
system's load (``omp_set_dynamic(1)`` before each call, see ``codegen/cpu/openmp.py``;
a compiled library sizes them itself, ``test/python/compiler/test_team_sizing.py``), and still
computes the same result on one and on two threads (one: a team smaller than the
threads the loops were cut for, as libomp makes it when another process holds a core),
also while another process keeps a core busy."""

import ctypes
import subprocess
import sys

import numpy as np

from dnnf_mlir._mlir import ir
from dnnf_mlir.codegen.cpu import find_libomp, jit, lower_to_llvm
from dnnf_mlir.codegen.cpu.openmp import BLOCKTIME_MS

MATMUL = """
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %y = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%f : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
"""


def test_parallel_entry_sets_blocktime_and_dynamic_teams():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 256)).astype(np.float32)
    with ir.Context():
        module = ir.Module.parse(MATMUL)
        lower_to_llvm(module, "host", threads=2)
        text = str(module)
        assert "omp.parallel" in text and "llvm.call @kmp_set_blocktime" in text and "omp_set_dynamic" not in text
        compiled = jit(module)
        omp = ctypes.CDLL(find_libomp())
        default, dynamic = omp.omp_get_max_threads(), omp.omp_get_dynamic()
        omp.omp_set_dynamic(0)
        busy = None
        try:
            for threads in (1, 2):
                omp.omp_set_num_threads(threads)
                (y,) = compiled.main(a, b)
                np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-4)
            assert omp.kmp_get_blocktime() == BLOCKTIME_MS and omp.omp_get_dynamic() == 1
            busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(20):
                (y,) = compiled.main(a, b)
                np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-4)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
            omp.omp_set_num_threads(default)  # the tests after this one run with the defaults
            omp.omp_set_dynamic(dynamic)
