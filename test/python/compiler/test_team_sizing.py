"""Each run of a compiled library on several threads sizes its own team
(``compiler/team_sizing.py``): dynamic teams off, the team the thread count asked for
less the CPUs other processes keep busy, one thread with every CPU busy; and the result
is the same on any team. Outputs are compared with numpy at rtol 1e-4, atol 1e-4 (a
512-term dot product of standard normals, summed in another order)."""

import ctypes
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.codegen.cpu import find_libomp
from dnnf_mlir.compiler import Artifact, CompileOptions, compile_model
from dnnf_mlir.compiler.artifact import HostSession


@pytest.fixture(scope="module")
def matmul(tmp_path_factory):
    """A 256 x 512 x 512 MatMul compiled for 2 threads, and its weight."""
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((512, 512)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 512])],
        [numpy_helper.from_array(weight, "w")])
    directory = tmp_path_factory.mktemp("teams")
    path = directory / "matmul.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    compile_model(path, directory / "out", options=CompileOptions(threads=2))
    return Artifact(directory / "out"), weight


def calling_thread_team(omp) -> tuple:
    """(the team size the last run set on this thread, whether dynamic teams are on)."""
    return omp.omp_get_max_threads(), omp.omp_get_dynamic()


def test_a_run_takes_one_thread_when_every_cpu_is_busy(matmul):
    artifact, weight = matmul
    omp = ctypes.CDLL(find_libomp())
    x = np.random.default_rng(6).standard_normal((256, 512)).astype(np.float32)
    session = HostSession(artifact, threads=2)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(len(os.sched_getaffinity(0)))]
    try:
        for _ in range(5):
            (y,) = session.run([x])
            np.testing.assert_allclose(y, x @ weight, rtol=1e-4, atol=1e-4)
            assert calling_thread_team(omp) == (1, 0)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_a_run_never_takes_more_threads_than_asked(matmul):
    artifact, weight = matmul
    omp = ctypes.CDLL(find_libomp())
    x = np.random.default_rng(7).standard_normal((256, 512)).astype(np.float32)
    session = HostSession(artifact)
    for threads in (1, 2, 1):
        assert session.set_threads(threads) == threads
        (y,) = session.run([x])
        np.testing.assert_allclose(y, x @ weight, rtol=1e-4, atol=1e-4)
        team, dynamic = calling_thread_team(omp)
        assert 1 <= team <= threads and dynamic == 0
