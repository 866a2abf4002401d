"""The Vulkan runtime (python/dnnf_mlir/runtime/vulkan/dnnf_vulkan.c) on lavapipe.

The runtime is compiled into a shared library and driven through ctypes (it is a plain C
API); the kernels are the SPIR-V assembly files in shaders/, assembled with spirv-as and
checked with spirv-val. Inputs are random, so that a wrong buffer, a wrong offset or a
missing copy shows in the numbers. Environment variables the runtime reads at load time
(DNNF_VULKAN_STAGING, _DEVICE, _LOADER, _HIDE_FEATURES) are set with monkeypatch; the
loader's own (VK_ICD_FILENAMES, VK_DRIVER_FILES) in a subprocess.

By hand, under AddressSanitizer (flags for the runtime's compilation come from
DNNF_VULKAN_TEST_CFLAGS):

    DNNF_VULKAN_TEST_CFLAGS=-fsanitize=address LD_PRELOAD=$(gcc -print-file-name=libasan.so) \
        ASAN_OPTIONS=detect_leaks=0 python -m pytest -q test/python/runtime
"""

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
RUNTIME = ROOT / "python" / "dnnf_mlir" / "runtime"
SOURCE = RUNTIME / "vulkan" / "dnnf_vulkan.c"
SHADERS = Path(__file__).resolve().parent / "shaders"
OK, ERROR, INVALID_ARGUMENT, NO_DEVICE, UNSUPPORTED, OUT_OF_MEMORY, BAD_PLAN = range(7)
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fPIC", "-shared"]
N = 1000  # elements: not a multiple of the workgroup sizes (64, 32), a multiple of 4
BYTES = 4 * N
GROUPS_64 = (N + 63) // 64
GROUPS_32 = (N + 31) // 32


def tool_environment() -> dict:
    """The environment for compilers and the SPIR-V tools: without a sanitizer preloaded."""
    return {name: value for name, value in os.environ.items() if name != "LD_PRELOAD"}


def compile_runtime(compiler: str, output: Path) -> Path:
    extra = os.environ.get("DNNF_VULKAN_TEST_CFLAGS", "").split()
    done = subprocess.run([compiler, *CFLAGS, *extra, str(SOURCE), "-o", str(output), "-ldl", "-lpthread"],
                          capture_output=True, text=True, env=tool_environment())
    assert done.returncode == 0 and not done.stderr, done.stderr
    return output


def assemble(source: Path, output: Path) -> np.ndarray:
    for command in (["spirv-as", "--target-env", "vulkan1.1", str(source), "-o", str(output)],
                    ["spirv-val", "--target-env", "vulkan1.1", str(output)]):
        done = subprocess.run(command, capture_output=True, text=True, env=tool_environment())
        assert done.returncode == 0, f"{' '.join(command)}: {done.stderr}{done.stdout}"
    return np.fromfile(output, dtype=np.uint32)


class Spirv(ctypes.Structure):
    _fields_ = [("words", ctypes.POINTER(ctypes.c_uint32)), ("count", ctypes.c_size_t)]


class LoadError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(f"dnnf_vk_load: {code}: {message}")
        self.code, self.message = code, message


class Runtime:
    """The C API through ctypes."""

    def __init__(self, path: Path):
        self.path = path
        lib = self.lib = ctypes.CDLL(str(path))
        p, i, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        lib.dnnf_vk_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(Spirv), i, p, sz, ctypes.POINTER(p),
                                     ctypes.c_char_p, sz]
        lib.dnnf_vk_run.argtypes = [p, ctypes.POINTER(p), ctypes.POINTER(p), ctypes.c_char_p, sz]
        lib.dnnf_vk_dispatch_times.argtypes = [p, ctypes.POINTER(ctypes.c_double), i]
        lib.dnnf_vk_dispatch_name.argtypes = [p, i]
        lib.dnnf_vk_dispatch_name.restype = ctypes.c_char_p
        lib.dnnf_vk_device_name.argtypes = [p]
        lib.dnnf_vk_device_name.restype = ctypes.c_char_p
        lib.dnnf_vk_probe.argtypes = [ctypes.c_char_p, sz, ctypes.c_char_p, sz]
        for name in ("dnnf_vk_free", "dnnf_vk_dispatch_count", "dnnf_vk_uses_staging", "dnnf_vk_num_inputs",
                     "dnnf_vk_num_outputs"):
            getattr(lib, name).argtypes = [p]
        for name in ("dnnf_vk_input_bytes", "dnnf_vk_output_bytes"):
            getattr(lib, name).argtypes = [p, i]
            getattr(lib, name).restype = sz

    def probe(self) -> tuple[int, str, str]:
        description, error = ctypes.create_string_buffer(4096), ctypes.create_string_buffer(1024)
        code = self.lib.dnnf_vk_probe(description, 4096, error, 1024)
        return code, description.value.decode(), error.value.decode()

    def load(self, plan: str, modules: list, weights: bytes | None = None) -> "Model":
        blobs = (Spirv * max(len(modules), 1))()
        for blob, words in zip(blobs, modules):
            blob.words = words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))
            blob.count = words.size
        handle, error = ctypes.c_void_p(), ctypes.create_string_buffer(1024)
        code = self.lib.dnnf_vk_load(textwrap.dedent(plan).encode(), blobs, len(modules), weights,
                                     len(weights) if weights else 0, ctypes.byref(handle), error, 1024)
        if code != OK:
            assert not handle.value, "a failed load returned a model"
            raise LoadError(code, error.value.decode())
        return Model(self, handle)

    def load_error(self, plan: str, modules: list, weights: bytes | None = None) -> LoadError:
        with pytest.raises(LoadError) as failure:
            self.load(plan, modules, weights).close()
        message = failure.value.message
        assert message and "\n" not in message, repr(message)
        return failure.value


class Model:
    def __init__(self, runtime: Runtime, handle: ctypes.c_void_p):
        self.lib, self.handle = runtime.lib, handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.handle:
            self.lib.dnnf_vk_free(self.handle)
            self.handle = None

    def run_status(self, inputs, outputs) -> tuple[int, str]:
        error = ctypes.create_string_buffer(1024)
        ins = (ctypes.c_void_p * max(len(inputs), 1))(*[x if isinstance(x, int) or x is None else x.ctypes.data
                                                          for x in inputs])
        outs = (ctypes.c_void_p * max(len(outputs), 1))(*[y if isinstance(y, int) or y is None else y.ctypes.data
                                                           for y in outputs])
        code = self.lib.dnnf_vk_run(self.handle, ins, outs, error, 1024)
        return code, error.value.decode()

    def run(self, *inputs: np.ndarray, dtype=np.float32) -> list[np.ndarray]:
        """The outputs (of the plan's sizes, viewed as `dtype`) for these inputs."""
        assert len(inputs) == self.lib.dnnf_vk_num_inputs(self.handle)
        inputs = [np.ascontiguousarray(x) for x in inputs]
        for i, x in enumerate(inputs):
            assert x.nbytes == self.lib.dnnf_vk_input_bytes(self.handle, i), f"input {i}"
        outputs = [np.empty(self.lib.dnnf_vk_output_bytes(self.handle, j), np.uint8)
                   for j in range(self.lib.dnnf_vk_num_outputs(self.handle))]
        code, message = self.run_status(inputs, outputs)
        assert code == OK, message
        return [y.view(dtype) for y in outputs]

    def dispatch_times(self, capacity: int) -> list[float] | None:
        times = (ctypes.c_double * max(capacity, 1))()
        written = self.lib.dnnf_vk_dispatch_times(self.handle, times, capacity)
        return None if written < 0 else list(times[:written])

    def dispatch_names(self) -> list[str]:
        return [self.lib.dnnf_vk_dispatch_name(self.handle, d).decode()
                for d in range(self.lib.dnnf_vk_dispatch_count(self.handle))]

    @property
    def staging(self) -> bool:
        return bool(self.lib.dnnf_vk_uses_staging(self.handle))


@pytest.fixture(scope="session")
def runtime(tmp_path_factory) -> Runtime:
    return Runtime(compile_runtime("gcc", tmp_path_factory.mktemp("vulkan") / "libdnnf_vulkan.so"))


@pytest.fixture(scope="session")
def spirv(tmp_path_factory) -> dict:
    """Each shaders/*.spvasm assembled and validated, by file stem."""
    directory = tmp_path_factory.mktemp("spirv")
    return {source.stem: assemble(source, directory / f"{source.stem}.spv") for source in sorted(SHADERS.glob("*.spvasm"))}


@pytest.fixture(scope="session")
def limits(runtime) -> dict:
    """The device's limits, read from the probe's description (NAME VALUE or NAME XxYxZ)."""
    code, description, error = runtime.probe()
    assert code == OK, error
    return {name: [int(v) for v in value.split("x")]
            for name, value in re.findall(r"\b((?:max|min)\w+) (\d+(?:x\d+)*)", description)}


@pytest.fixture(scope="session")
def device_name(runtime) -> str:
    """The name of the device the runtime picks (lavapipe's "llvmpipe (LLVM ...)" here and in CI)."""
    code, description, error = runtime.probe()
    assert code == OK, error
    return description.split(", Vulkan ")[0]


@pytest.fixture(params=[False, True], ids=["mapped", "staging"])
def staging(request, monkeypatch) -> bool:
    """Both ways of moving data: mapped device memory (lavapipe's) and staging copies."""
    if request.param:
        monkeypatch.setenv("DNNF_VULKAN_STAGING", "1")
    else:
        monkeypatch.delenv("DNNF_VULKAN_STAGING", raising=False)
    return request.param


def random_floats(seed: int, count: int = N) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(count).astype(np.float32)


def test_compiles_without_warnings_under_clang(tmp_path):
    compile_runtime("clang-22", tmp_path / "libdnnf_vulkan.so")


def test_probe_describes_lavapipe(runtime):
    code, description, error = runtime.probe()
    assert code == OK, error
    assert description.startswith("llvmpipe"), description
    assert re.search(r", Vulkan 1\.\d+\.\d+, subgroup \d+, CPU", description), description
    assert "compute timestamps" in description


ADD_PLAN = """\
    # c = a + b, with comments, blank lines and CRLF line ends
    dnnf-vulkan-plan 1\r

    buffer 0 4000 input 0      # a
    buffer 1 4000 input 1\r
    buffer 2 4000 output 0
    kernel 0 0 add 3 64 1 1 elementwise_add
    dispatch 0 16 1 1 0 0:0:4000 1:0:4000 2:0:4000
"""


def test_add_two_inputs(runtime, spirv, staging, device_name):
    with runtime.load(ADD_PLAN, [spirv["elementwise"]]) as model:
        assert model.staging == (staging or "llvmpipe" not in device_name)  # lavapipe's memory is host-visible
        assert runtime.lib.dnnf_vk_device_name(model.handle).decode() == device_name
        assert model.dispatch_names() == ["elementwise_add"]
        for seed in (1, 2):  # the recorded command buffer serves every run
            a, b = random_floats(seed), random_floats(seed + 10)
            (c,) = model.run(a, b)
            np.testing.assert_array_equal(c, a + b)


def test_inputs_and_outputs_copy_the_callers_bytes_only(runtime, spirv, staging):
    """A buffer larger than its tensor (rounded up for the kernels' vector accesses)
    copies only the caller's bytes in and out: the memory after them is left alone."""
    n = N - 2
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 0 {4 * n}
        buffer 1 {BYTES} input 1 {4 * n}
        buffer 2 {BYTES} output 0 {4 * n}
        kernel 0 0 add 3 64 1 1 elementwise_add
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 1:0:{BYTES} 2:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]]) as model:
        a, b = random_floats(1)[:n], random_floats(2)[:n]
        assert runtime.lib.dnnf_vk_input_bytes(model.handle, 0) == runtime.lib.dnnf_vk_output_bytes(model.handle, 0) == 4 * n
        guarded = np.full(n + 4, 7.0, np.float32)
        code, message = model.run_status([a, b], [guarded[:n]])
        assert code == OK, message
        np.testing.assert_array_equal(guarded[:n], a + b)
        np.testing.assert_array_equal(guarded[n:], 7.0)


def test_weight_buffers_at_nonzero_offsets(runtime, spirv, staging):
    w1, w2 = random_floats(3), random_floats(4)
    header, gap = b"\xff" * 64, b"\xee" * 70
    weights = header + w1.tobytes() + gap + w2.tobytes() + b"\xdd" * 8
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 0
        buffer 1 {BYTES} weight 64
        buffer 2 {BYTES} weight {64 + BYTES + 70}
        buffer 3 {BYTES} output 0
        buffer 4 {BYTES} output 1
        kernel 0 0 mul 3 64 1 1 mul
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 1:0:{BYTES} 3:0:{BYTES}
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 2:0:{BYTES} 4:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]], weights) as model:
        x = random_floats(5)
        y1, y2 = model.run(x)
        np.testing.assert_array_equal(y1, x * w1)
        np.testing.assert_array_equal(y2, x * w2)


def test_constant_buffers(runtime, spirv, staging):
    """A constant's bytes come from the plan (hex); the bytes after them are zeros."""
    c = random_floats(7)
    half = c[: N // 2].tobytes().hex()
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 0
        buffer 1 {BYTES} constant {c.tobytes().hex()}
        buffer 2 {BYTES} constant {half}
        buffer 3 {BYTES} output 0
        buffer 4 {BYTES} output 1
        kernel 0 0 mul 3 64 1 1 mul
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 1:0:{BYTES} 3:0:{BYTES}
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 2:0:{BYTES} 4:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]]) as model:
        x = random_floats(8)
        y1, y2 = model.run(x)
        np.testing.assert_array_equal(y1, x * c)
        np.testing.assert_array_equal(y2, x * np.concatenate([c[: N // 2], np.zeros(N - N // 2, np.float32)]))


def test_chain_through_reused_scratch_buffers(runtime, spirv, staging):
    """s0 = a + b; s1 = s0 * w; s0 = s1 * w + a (s0 reused); out = s0 + s1, with barriers;
    the inputs are declared in another order than their indices."""
    w = random_floats(6)
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 1
        buffer 1 {BYTES} input 0
        buffer 2 {BYTES} weight 16
        buffer 3 {BYTES} scratch
        buffer 4 {BYTES} scratch
        buffer 5 {BYTES} output 0
        kernel 0 0 add 3 64 1 1 add
        kernel 1 0 mul 3 64 1 1 mul
        kernel 2 1 main 4 32 1 1 fma
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 1:0:{BYTES} 3:0:{BYTES}
        dispatch 1 {GROUPS_64} 1 1 1 3:0:{BYTES} 2:0:{BYTES} 4:0:{BYTES}
        dispatch 2 {GROUPS_32} 1 1 1 4:0:{BYTES} 2:0:{BYTES} 0:0:{BYTES} 3:0:{BYTES}
        dispatch 0 {GROUPS_64} 1 1 1 3:0:{BYTES} 4:0:{BYTES} 5:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"], spirv["fma"]], bytes(16) + w.tobytes()) as model:
        assert model.dispatch_names() == ["add", "mul", "fma", "add"]
        for seed in (7, 8):
            b, a = random_floats(seed), random_floats(seed + 10)  # input 0 is buffer 1 (b)
            (out,) = model.run(b, a)
            s0 = a + b
            s1 = s0 * w
            s0 = s1 * w + a
            np.testing.assert_allclose(out, s0 + s1, rtol=1e-5, atol=1e-6)


def test_output_read_by_a_later_dispatch(runtime, spirv, staging):
    """c = a + b is output 1 and the input of d = c * c (output 0)."""
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 0
        buffer 1 {BYTES} input 1
        buffer 2 {BYTES} output 1
        buffer 3 {BYTES} output 0
        kernel 0 0 add 3 64 1 1 add
        kernel 1 0 mul 3 64 1 1 square
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 1:0:{BYTES} 2:0:{BYTES}
        dispatch 1 {GROUPS_64} 1 1 1 2:0:{BYTES} 2:0:{BYTES} 3:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]]) as model:
        a, b = random_floats(9), random_floats(10)
        d, c = model.run(a, b)
        np.testing.assert_array_equal(c, a + b)
        np.testing.assert_array_equal(d, (a + b) * (a + b))


def test_bindings_with_offsets(runtime, spirv, staging):
    """out[:N] = x[:N] + x[N:] and out[N:] = x[:N] * x[N:]: halves bound at offsets."""
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {2 * BYTES} input 0
        buffer 1 {2 * BYTES} output 0
        kernel 0 0 add 3 64 1 1 add
        kernel 1 0 mul 3 64 1 1 mul
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 0:{BYTES}:{BYTES} 1:0:{BYTES}
        dispatch 1 {GROUPS_64} 1 1 0 0:0:{BYTES} 0:{BYTES}:{BYTES} 1:{BYTES}:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]]) as model:
        x = random_floats(11, 2 * N)
        (out,) = model.run(x)
        np.testing.assert_array_equal(out[:N], x[:N] + x[N:])
        np.testing.assert_array_equal(out[N:], x[:N] * x[N:])


def test_dispatch_times(runtime, spirv):
    plan = f"""\
        dnnf-vulkan-plan 1
        buffer 0 {BYTES} input 0
        buffer 1 {BYTES} scratch
        buffer 2 {BYTES} output 0
        kernel 0 0 add 3 64 1 1 double
        kernel 1 0 mul 3 64 1 1 square
        dispatch 0 {GROUPS_64} 1 1 0 0:0:{BYTES} 0:0:{BYTES} 1:0:{BYTES}
        dispatch 1 {GROUPS_64} 1 1 1 1:0:{BYTES} 1:0:{BYTES} 2:0:{BYTES}
        dispatch 0 {GROUPS_64} 1 1 1 2:0:{BYTES} 2:0:{BYTES} 1:0:{BYTES}
    """
    with runtime.load(plan, [spirv["elementwise"]]) as model:
        assert runtime.lib.dnnf_vk_dispatch_count(model.handle) == 3
        assert model.dispatch_names() == ["double", "square", "double"]
        assert runtime.lib.dnnf_vk_dispatch_name(model.handle, 3) is None
        assert model.dispatch_times(8) == []  # before the first run
        model.run(random_floats(12))
        times = model.dispatch_times(8)
        assert len(times) == 3 and all(t >= 0 for t in times), times
        assert len(model.dispatch_times(2)) == 2


def test_buffers_beyond_one_allocation_block(runtime, spirv, staging):
    """Three 100 MiB scratch buffers (allocations hold at most 256 MiB) and a thousand small
    ones: a -> s0 -> s1 -> s2 -> out stays right wherever each buffer landed."""
    big = 100 << 20
    plan = [f"dnnf-vulkan-plan 1", f"buffer 0 {BYTES} input 0", f"buffer 1 {BYTES} output 0"]
    plan += [f"buffer {2 + i} {big} scratch" for i in range(3)]
    plan += [f"buffer {5 + i} {4 * (i + 1)} scratch" for i in range(1000)]
    plan += ["kernel 0 0 add 3 64 1 1 add"]
    # each step doubles at the big buffer's far end, where a wrong offset in a block would show
    far = big - BYTES
    chain = [(0, 0), (2, far), (3, far), (4, far), (1, 0)]
    for (src, src_offset), (dst, dst_offset) in zip(chain, chain[1:]):
        plan.append(f"dispatch 0 {GROUPS_64} 1 1 1 {src}:{src_offset}:{BYTES} {src}:{src_offset}:{BYTES} "
                    f"{dst}:{dst_offset}:{BYTES}")
    with runtime.load("\n".join(plan), [spirv["elementwise"]]) as model:
        a = random_floats(14)
        (out,) = model.run(a)
        np.testing.assert_array_equal(out, a * 16)


def test_a_run_past_the_timeout_breaks_the_model(runtime, spirv, monkeypatch):
    """DNNF_VULKAN_TIMEOUT_S=1 and a dispatch of about 2.5 s: the run fails naming the wait,
    later runs refuse, dnnf_vk_free waits for the dispatch before destroying anything."""

    def plan(groups):  # each workgroup spins 60000 steps: llvmpipe stops any loop at 65535
        return f"""\
            dnnf-vulkan-plan 1
            buffer 0 4 input 0
            buffer 1 4 output 0
            kernel 0 0 main 2 1 1 1 spin
            dispatch 0 {groups} 1 1 0 0:0:4 1:0:4
        """

    steps = np.array([60000], np.uint32)
    with runtime.load(plan(500), [spirv["spin"]]) as model:  # how long a workgroup takes here
        model.run(steps)
        start = time.perf_counter()
        (x,) = model.run(steps, dtype=np.uint32)
        seconds_per_group = (time.perf_counter() - start) / 500
        expected = 0
        for _ in range(60000):
            expected = (expected * 1664525 + 1013904223) % 2**32
        assert x[0] == expected
    monkeypatch.setenv("DNNF_VULKAN_TIMEOUT_S", "1")
    with runtime.load(plan(min(int(2.5 / seconds_per_group), 65535)), [spirv["spin"]]) as model:
        code, message = model.run_status([steps], [np.empty(1, np.uint32)])
        assert (code, message) == (
            ERROR, "vkWaitForFences (model run): the device did not finish within 1 s (DNNF_VULKAN_TIMEOUT_S)")
        code, again = model.run_status([steps], [np.empty(1, np.uint32)])
        assert (code, again) == (ERROR, f"the model cannot run after an earlier device error: {message}")


F16_PLAN = """\
    dnnf-vulkan-plan 1
    require shaderFloat16 storageBuffer16BitAccess
    buffer 0 2000 input 0
    buffer 1 2000 input 1
    buffer 2 2000 output 0
    kernel 0 0 main 3 64 1 1 add_f16
    dispatch 0 16 1 1 0 0:0:2000 1:0:2000 2:0:2000
"""


def test_require_a_feature_the_device_has(runtime, spirv):
    with runtime.load(F16_PLAN, [spirv["add_f16"]]) as model:
        rng = np.random.default_rng(13)  # multiples of 1/8 below 128: exact sums in float16
        a, b = (rng.integers(-1000, 1000, N) / 8).astype(np.float16), (rng.integers(-1000, 1000, N) / 8).astype(np.float16)
        (c,) = model.run(a, b, dtype=np.float16)
        np.testing.assert_array_equal(c, a + b)


def test_require_a_feature_the_device_lacks(runtime, spirv, monkeypatch, device_name):
    # lavapipe has every feature a plan may require: pretend it lacks one.
    monkeypatch.setenv("DNNF_VULKAN_HIDE_FEATURES", "shaderFloat16")
    failure = runtime.load_error(F16_PLAN, [spirv["add_f16"]])
    assert failure.code == UNSUPPORTED
    assert failure.message == f"the plan requires shaderFloat16, which {device_name} lacks"


def _limit_cases(limits):
    """(plan, SPIR-V module, the limit's name, the plan's value, the limit's value)."""
    range_limit = limits["maxStorageBufferRange"][0]
    big = range_limit + 16
    yield (f"""buffer 0 {big} scratch
               kernel 0 0 add 3 64 1 1 add
               dispatch 0 1 1 1 0 0:0:{BYTES} 0:{BYTES}:{BYTES} 0:0:{big}""",
           "elementwise", "maxStorageBufferRange", big, range_limit)
    groups = limits["maxComputeWorkGroupCount"][1]
    yield (f"""buffer 0 {BYTES} scratch
               kernel 0 0 add 3 64 1 1 add
               dispatch 0 1 {groups + 1} 1 0 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES}""",
           "elementwise", r"maxComputeWorkGroupCount\[1\]", groups + 1, groups)
    bindings = limits["maxPerStageDescriptorStorageBuffers"][0] + 1
    yield (f"""buffer 0 {BYTES} scratch
               kernel 0 0 main {bindings} 32 1 1 fma
               dispatch 0 1 1 1 0 {' '.join([f'0:0:{BYTES}'] * bindings)}""",
           "fma", "maxPerStageDescriptorStorageBuffers", bindings, bindings - 1)
    size = limits["maxComputeWorkGroupSize"][0]
    yield (f"""buffer 0 {BYTES} scratch
               kernel 0 0 main 4 {2 * size} 1 1 wide
               dispatch 0 1 1 1 0 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES}""",
           f"fma:{2 * size} 1 1", r"maxComputeWorkGroupSize\[0\]", 2 * size, size)
    invocations = limits["maxComputeWorkGroupInvocations"][0]
    yield (f"""buffer 0 {BYTES} scratch
               kernel 0 0 main 4 {invocations} 2 1 tall
               dispatch 0 1 1 1 0 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES}""",
           f"fma:{invocations} 2 1", "maxComputeWorkGroupInvocations", 2 * invocations, invocations)
    alignment = limits["minStorageBufferOffsetAlignment"][0]
    assert alignment > 1
    yield (f"""buffer 0 {2 * BYTES} scratch
               kernel 0 0 add 3 64 1 1 add
               dispatch 0 1 1 1 0 0:0:{BYTES} 0:{alignment // 2}:{BYTES} 0:0:{BYTES}""",
           "elementwise", "minStorageBufferOffsetAlignment", alignment // 2, alignment)


LIMIT_NAMES = ["storage_buffer_range", "group_count", "bindings", "workgroup_size", "invocations", "offset_alignment"]


@pytest.mark.parametrize("case", range(len(LIMIT_NAMES)), ids=LIMIT_NAMES)
def test_limit_violations(runtime, spirv, limits, tmp_path, case):
    body, module, limit, value, maximum = list(_limit_cases(limits))[case]
    if limit == "maxPerStageDescriptorStorageBuffers" and value > 65536:  # lavapipe: 32
        pytest.skip(f"the device allows {maximum} storage buffers per kernel; a plan may declare at most 65536")
    if limit == "maxStorageBufferRange" and value > limits["maxMemoryAllocationSize"][0]:  # NVIDIA: 4 GiB - 1
        pytest.skip("the device's maxStorageBufferRange exceeds maxMemoryAllocationSize: no buffer is large enough")
    if ":" in module:  # the fma kernel with another LocalSize
        module, size = module.split(":")
        source = tmp_path / "resized.spvasm"
        source.write_text((SHADERS / f"{module}.spvasm").read_text().replace("LocalSize 32 1 1", f"LocalSize {size}"))
        words = assemble(source, tmp_path / "resized.spv")
    else:
        words = spirv[module]
    failure = runtime.load_error("dnnf-vulkan-plan 1\n" + textwrap.dedent("               " + body), [words])
    assert failure.code == UNSUPPORTED, failure.message
    assert re.search(rf"\(plan line \d\): {value} exceeds the device's {limit}.* {maximum}$", failure.message) or \
        re.search(rf"offset {value} is not a multiple of the device's {limit} {maximum}$", failure.message), failure.message


def _reverse_with_shared_floats(floats: int, tmp_path) -> np.ndarray:
    """shaders/reverse.spvasm with its workgroup array of ``floats`` floats."""
    source = tmp_path / "reverse.spvasm"
    source.write_text((SHADERS / "reverse.spvasm").read_text().replace(
        "%shared_floats = OpConstant %uint 64", f"%shared_floats = OpConstant %uint {floats}"))
    return assemble(source, tmp_path / "reverse.spv")


REVERSE_PLAN = """dnnf-vulkan-plan 1
                  buffer 0 4096 input 0
                  buffer 1 4096 output 0
                  kernel 0 0 reverse 2 64 1 1 reverse
                  dispatch 0 16 1 1 0 0:0:4096 1:0:4096"""


def test_shared_memory_up_to_the_limit_runs(runtime, limits, tmp_path):
    """A kernel declaring exactly the device's maxComputeSharedMemorySize loads and runs."""
    words = _reverse_with_shared_floats(limits["maxComputeSharedMemorySize"][0] // 4, tmp_path)
    with runtime.load(REVERSE_PLAN, [words]) as model:
        a = np.random.default_rng(17).standard_normal(1024).astype(np.float32)
        (b,) = model.run(a)
        np.testing.assert_array_equal(b, a.reshape(16, 64)[:, ::-1].reshape(-1))


def test_shared_memory_over_the_limit_is_refused(runtime, limits, tmp_path):
    """A kernel declaring more workgroup memory than the device has (an artifact compiled
    for a device profile with more) is refused at load, naming the kernel, its bytes and
    the device's limit."""
    limit = limits["maxComputeSharedMemorySize"][0]
    words = _reverse_with_shared_floats(limit // 4 + 1, tmp_path)
    failure = runtime.load_error(REVERSE_PLAN, [words])
    assert failure.code == UNSUPPORTED, failure.message
    assert re.fullmatch(rf"kernel 0 'reverse' \(plan line 4\): {limit + 4} exceeds the device's "
                        rf"maxComputeSharedMemorySize \(bytes of workgroup memory its SPIR-V declares\) {limit}",
                        failure.message), failure.message


LOOPS_PLAN = """dnnf-vulkan-plan 1
                buffer 0 16 input 0
                buffer 1 16 output 0
                kernel 0 0 main 2 1 1 1 loops
                dispatch 0 1 1 1 0 0:0:16 1:0:16"""
LOOP_CASES = {  # counts n0..n3 of shaders/loops.spvasm -> what lavapipe runs of them
    "one_loop_of_65535": ((65535, 0, 0, 0), (65535, 0, 0, 0)),
    "one_loop_past_it": ((100000, 10, 0, 0), (65535, 1, 0, 0)),
    "two_loops_sharing_it": ((40000, 40000, 0, 0), (40000, 25534, 0, 0)),
    "nested_loops_each_under_it": ((0, 0, 300, 300), (0, 0, 65100, 217)),
}


@pytest.mark.parametrize("case", LOOP_CASES)
def test_a_threads_loops_share_one_budget_on_lavapipe(runtime, spirv, device_name, case):
    """What ``codegen/gpu/loop_budget.py`` and the Vulkan profiles'
    ``max_loop_iterations`` (65535) rest on: lavapipe ends every loop of an invocation
    once its loops ran 65535 iterations in all, one after another or nested, silently.
    Another device runs every loop to its end."""
    counts, on_lavapipe = LOOP_CASES[case]
    with runtime.load(LOOPS_PLAN, [spirv["loops"]]) as model:
        (got,) = model.run(np.array(counts, np.uint32), dtype=np.uint32)
    complete = (counts[0], counts[1], counts[2] * counts[3], counts[2])
    assert tuple(got) == (on_lavapipe if device_name.startswith("llvmpipe") else complete)


DISPATCH = "\nbuffer 0 4000 scratch\ndispatch 0 1 1 1 0 0:0:4000 0:0:4000 0:0:4000"
MALFORMED = [  # (plan after the header line or a whole plan, a fragment of the message)
    ("", "plan: empty (no 'dnnf-vulkan-plan 1' line)"),
    ("# only a comment\n\n", "plan: empty"),
    ("buffer 0 4 input 0", "plan line 1: expected 'dnnf-vulkan-plan 1' first, got 'buffer'"),
    ("dnnf-vulkan-plan 2", "plan line 1: plan version '2' is not the one this runtime reads (1)"),
    ("dnnf-vulkan-plan", "plan line 1: 'dnnf-vulkan-plan' takes 1 fields"),
    ("+dnnf-vulkan-plan 1", "plan line 2: a second 'dnnf-vulkan-plan' line"),
    ("+bufer 0 4 input 0", "plan line 2: unknown keyword 'bufer'"),
    ("+buffer 1 4000 input 0", "plan line 2: buffer id 1 out of order: expected 0"),
    ("+buffer 0 0 scratch", "plan line 2: the size in bytes must be a number from 1"),
    ("+buffer 0 -4 scratch", "not '-4'"),
    ("+buffer 0 12x scratch", "not '12x'"),
    ("+buffer 0 99999999999999999999999 scratch", "not '99999999999999999999999'"),
    ("+buffer 0 4 texture", "plan line 2: unknown buffer kind 'texture'"),
    ("+buffer 0 4 scratch 7", "plan line 2: 'buffer' takes 3 fields (<id> <bytes> scratch), got 4"),
    ("+buffer 0 4 input", "'buffer' takes 4 fields (<id> <bytes> input <index> [<caller's bytes>]), got 3"),
    ("+buffer 0 4 output 0 8", "plan line 2: the caller's bytes must be a number from 1 to 4, not '8'"),
    ("+buffer 0 4 input 0\nbuffer 1 4 input 0", "plan line 3: input 0 is already buffer 0 (line 2)"),
    ("+buffer 0 4000 input 1\nbuffer 1 4000 output 0\nkernel 0 0 add 3 64 1 1 add\n"
     "dispatch 0 16 1 1 0 0:0:4000 0:0:4000 1:0:4000", "plan: input 0 has no buffer (inputs are numbered 0..1)"),
    ("+buffer 0 4 weight 0", "plan line 2: weight buffer 0 reads weights[0 .. 4), past the end of the weights (0 bytes)"),
    ("+buffer 0 2 constant 0a0b0c", "plan line 2: a constant of 2 bytes takes at most 2 bytes of hex"),
    ("+buffer 0 4 constant 0a0", "plan line 2: a constant of 4 bytes takes at most 4 bytes of hex"),
    ("+buffer 0 4 constant 0x12", "plan line 2: a constant's bytes must be hex digits"),
    ("+buffer 0 4 constant", "plan line 2: 'buffer' takes 4 fields (<id> <bytes> constant <hex bytes>)"),
    ("+require shaderFloat64", "plan line 2: unknown feature 'shaderFloat64' (known: shaderInt64 "),
    ("+require", "plan line 2: 'require' names no feature"),
    ("+kernel 0 3 add 3 64 1 1 add", "plan line 2: SPIR-V index 3 out of range: 1 SPIR-V modules were given"),
    ("+kernel 0 0 add 3 64 1 1", "plan line 2: 'kernel' takes 8 fields"),
    ("+kernel 0 0 add 0 64 1 1 add", "plan line 2: the number of bindings must be a number from 1"),
    ("+kernel 0 0 add 3 0 1 1 add", "plan line 2: a workgroup size must be a number from 1"),
    ("+kernel 0 0 sub 3 64 1 1 sub" + DISPATCH, "plan line 2: kernel 0 'sub': SPIR-V module 0 has no GLCompute entry point 'sub'"),
    ("+kernel 0 0 add 3 32 1 1 add" + DISPATCH,
     "plan line 2: kernel 0 'add': workgroup size 32x1x1 differs from the SPIR-V's LocalSize 64x1x1"),
    ("+buffer 0 4 scratch\nbuffer 1 4 output 0", "plan: no dispatch"),
    ("+dispatch 0 1 1 1 0 0:0:4", "plan line 2: kernel 0 is not declared above (0 kernels so far)"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 0 0:0:4000",
     "plan line 4: kernel 0 'add' has 3 bindings, the dispatch names 1"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 0 0:0:4000 0:0:4000 1:0:4000",
     "plan line 4: binding 2: buffer 1 is not declared above (1 buffers so far)"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 0 0:0:4000 0:16:4000 0:0:4000",
     "plan line 4: binding 1: bytes [16 .. 4016) pass the end of buffer 0 (4000 bytes)"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 0 0:0:4000 0:0 0:0:4000",
     "plan line 4: binding 1: expected <buffer>:<offset>:<range>, got '0:0'"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 0 0:0:4000 0:0:0 0:0:4000",
     "plan line 4: a binding's range must be a number from 1"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 0 1 1 0 0:0:4000 0:0:4000 0:0:4000",
     "plan line 4: a group count must be a number from 1"),
    ("+buffer 0 4000 scratch\nkernel 0 0 add 3 64 1 1 add\ndispatch 0 1 1 1 2 0:0:4000 0:0:4000 0:0:4000",
     "plan line 4: the barrier flag must be a number from 0 to 1, not '2'"),
]


@pytest.mark.parametrize("body, fragment", MALFORMED, ids=[f"case{i}" for i in range(len(MALFORMED))])
def test_malformed_plans(runtime, spirv, body, fragment):
    plan = "dnnf-vulkan-plan 1\n" + body[1:] if body.startswith("+") else body
    failure = runtime.load_error(plan, [spirv["elementwise"]])
    assert failure.code == BAD_PLAN, failure.message
    assert fragment in failure.message, failure.message


def test_plan_inconsistent_with_its_spirv(runtime, spirv):
    def message(plan, modules):
        failure = runtime.load_error("dnnf-vulkan-plan 1\n" + textwrap.dedent(plan), modules)
        assert failure.code == BAD_PLAN, failure.message
        return failure.message

    # fma.spvasm (one entry point) uses bindings 0..3: a kernel line with 3 cannot be right.
    assert message(f"""\
        buffer 0 {BYTES} scratch
        kernel 0 0 main 3 32 1 1 fma
        dispatch 0 1 1 1 0 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES}""", [spirv["fma"]]) == \
        "plan line 3: kernel 0 'fma': the SPIR-V uses binding 3 but the kernel line declares 3 bindings"
    plan = f"""\
        buffer 0 {BYTES} scratch
        kernel 0 0 add 3 64 1 1 add
        dispatch 0 1 1 1 0 0:0:{BYTES} 0:0:{BYTES} 0:0:{BYTES}"""
    words = spirv["elementwise"]
    assert message(plan, [words[:3]]) == "SPIR-V module 0 is empty or shorter than its header (3 words)"
    assert "does not start with the SPIR-V magic number" in message(plan, [words.byteswap()])
    truncated = words[:-1].copy()  # without OpFunctionEnd, OpReturn last
    truncated[-1] = (5 << 16) | (truncated[-1] & 0xFFFF)  # OpReturn claims 5 words, past the end
    assert re.fullmatch(r"SPIR-V module 0 is malformed at word \d+", message(plan, [truncated]))


def test_invalid_arguments(runtime, spirv):
    lib = runtime.lib
    error = ctypes.create_string_buffer(256)
    handle = ctypes.c_void_p()
    assert lib.dnnf_vk_load(None, None, 0, None, 0, ctypes.byref(handle), error, 256) == INVALID_ARGUMENT
    assert lib.dnnf_vk_load(b"dnnf-vulkan-plan 1\n", None, 1, None, 0, ctypes.byref(handle), error, 256) == INVALID_ARGUMENT
    assert lib.dnnf_vk_load(b"dnnf-vulkan-plan 1\n", None, 0, None, 8, ctypes.byref(handle), error, 256) == INVALID_ARGUMENT
    assert lib.dnnf_vk_load(b"dnnf-vulkan-plan 1\n", None, 0, None, 0, None, error, 256) == INVALID_ARGUMENT
    assert lib.dnnf_vk_load(b"x", None, 0, None, 0, ctypes.byref(handle), None, 0) == BAD_PLAN  # no message buffer
    lib.dnnf_vk_free(None)
    assert lib.dnnf_vk_dispatch_count(None) == 0
    with runtime.load(ADD_PLAN, [spirv["elementwise"]]) as model:
        a, c = random_floats(1), np.empty(N, np.float32)
        assert model.run_status([a, None], [c]) == (INVALID_ARGUMENT, "dnnf_vk_run: input 1 is NULL")
        assert model.run_status([a, a], [None]) == (INVALID_ARGUMENT, "dnnf_vk_run: output 0 is NULL")
        assert lib.dnnf_vk_run(model.handle, None, None, None, 0) == INVALID_ARGUMENT
        assert lib.dnnf_vk_input_bytes(model.handle, 2) == 0 and lib.dnnf_vk_output_bytes(model.handle, -1) == 0


def test_device_selection(runtime, spirv, monkeypatch, device_name):
    word = device_name.split()[0]  # "llvmpipe"
    for choice in ("0", word.upper(), word[2:-1]):  # an index, any case, any part of the name
        monkeypatch.setenv("DNNF_VULKAN_DEVICE", choice)
        with runtime.load(ADD_PLAN, [spirv["elementwise"]]) as model:
            name = runtime.lib.dnnf_vk_device_name(model.handle).decode()
            assert name == device_name or choice == "0", name  # index 0 need not be the preferred device
    for choice in ("7", "no such gpu"):
        monkeypatch.setenv("DNNF_VULKAN_DEVICE", choice)
        failure = runtime.load_error(ADD_PLAN, [spirv["elementwise"]])
        assert failure.code == NO_DEVICE
        assert failure.message.startswith(f"no Vulkan device matches DNNF_VULKAN_DEVICE={choice} (devices: 0 '")
        assert f"'{device_name}'" in failure.message


def test_no_loader(runtime, spirv, monkeypatch):
    monkeypatch.setenv("DNNF_VULKAN_LOADER", "/nonexistent/libvulkan.so.1")
    failure = runtime.load_error(ADD_PLAN, [spirv["elementwise"]])
    assert failure.code == NO_DEVICE
    assert failure.message.startswith("cannot load /nonexistent/libvulkan.so.1 (")
    assert failure.message.endswith(
        "): install the Vulkan loader (Debian: libvulkan1) and a driver (mesa-vulkan-drivers for lavapipe)")
    code, _, error = runtime.probe()
    assert code == NO_DEVICE and error == failure.message


NO_DEVICE_SCRIPT = """
import ctypes, json, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
words = np.fromfile(sys.argv[2], dtype=np.uint32)
class Spirv(ctypes.Structure):
    _fields_ = [("words", ctypes.POINTER(ctypes.c_uint32)), ("count", ctypes.c_size_t)]
blob = Spirv(words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), words.size)
error, description = ctypes.create_string_buffer(1024), ctypes.create_string_buffer(1024)
model = ctypes.c_void_p()
lib.dnnf_vk_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(Spirv), ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                             ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_size_t]
load = lib.dnnf_vk_load(sys.argv[3].encode(), ctypes.byref(blob), 1, None, 0, ctypes.byref(model), error, 1024)
load_error = error.value.decode()
probe = lib.dnnf_vk_probe(description, 1024, error, 1024)
print(json.dumps([load, load_error, probe, error.value.decode(), model.value]))
"""


def test_no_device(runtime, spirv, tmp_path):
    words = tmp_path / "elementwise.spv"
    spirv["elementwise"].tofile(words)
    environment = dict(os.environ, VK_ICD_FILENAMES="/nonexistent.json", VK_DRIVER_FILES="/nonexistent.json")
    done = subprocess.run([sys.executable, "-c", NO_DEVICE_SCRIPT, str(runtime.path), str(words),
                           textwrap.dedent(ADD_PLAN)], capture_output=True, text=True, env=environment, timeout=60)
    assert done.returncode == 0, done.stderr
    load, load_error, probe, probe_error, model = json.loads(done.stdout)
    assert (load, probe, model) == (NO_DEVICE, NO_DEVICE, None)
    assert load_error == probe_error
    assert load_error.startswith("no Vulkan driver found") or load_error.startswith("Vulkan found no device")
    assert "mesa-vulkan-drivers" in load_error


def test_concurrent_runs(runtime, spirv, staging):
    with runtime.load(ADD_PLAN, [spirv["elementwise"]]) as model:
        failures = []

        def work(seed):
            try:
                for r in range(25):
                    a, b = random_floats(seed + r), random_floats(seed + r + 1000)
                    (c,) = model.run(a, b)
                    np.testing.assert_array_equal(c, a + b)
            except Exception as error:  # reported by the main thread
                failures.append(error)

        threads = [threading.Thread(target=work, args=(seed,)) for seed in (100, 200)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures


MODEL_H = """\
#ifndef DNNF_MODEL_H
#define DNNF_MODEL_H
#include <stddef.h>
#include <stdint.h>
#define DNNF_NUM_INPUTS 2
#define DNNF_NUM_OUTPUTS 1
#define DNNF_INVALID_ARGUMENT 2
typedef struct dnnf_model dnnf_model;
typedef struct { const char *name; const char *dtype; int rank; const int64_t *shape; size_t bytes; } dnnf_tensor_info;
extern const dnnf_tensor_info dnnf_inputs[DNNF_NUM_INPUTS];
extern const dnnf_tensor_info dnnf_outputs[DNNF_NUM_OUTPUTS];
dnnf_model *dnnf_load(const char *weights_path);
int dnnf_run_sized(dnnf_model *model, const void *const inputs[], const size_t input_bytes[],
                   void *const outputs[], const size_t output_bytes[]);
void dnnf_free(dnnf_model *model);
const char *dnnf_error(void);
int dnnf_set_num_threads(int threads);
#endif
"""

MODEL_C = """\
/* A stand-in for the generated glue: c = a + b over the Vulkan runtime. */
#include <stdio.h>
#include "dnnf_vulkan.h"
#include "model.h"
static const int64_t shape[] = {%(n)d};
const dnnf_tensor_info dnnf_inputs[] = {{"a", "float32", 1, shape, %(bytes)d}, {"b", "float32", 1, shape, %(bytes)d}};
const dnnf_tensor_info dnnf_outputs[] = {{"c", "float32", 1, shape, %(bytes)d}};
static const char plan[] = %(plan)s;
static const uint32_t words[] = {%(words)s};
static char message[512];
struct dnnf_model { dnnf_vk_model *vk; };
dnnf_model *dnnf_load(const char *weights_path) {
  (void)weights_path;
  static dnnf_model model;
  dnnf_vk_spirv kernel = {words, sizeof words / sizeof *words};
  return dnnf_vk_load(plan, &kernel, 1, NULL, 0, &model.vk, message, sizeof message) ? NULL : &model;
}
int dnnf_run_sized(dnnf_model *model, const void *const inputs[], const size_t input_bytes[],
                   void *const outputs[], const size_t output_bytes[]) {
  (void)input_bytes, (void)output_bytes;
  return dnnf_vk_run(model->vk, inputs, outputs, message, sizeof message);
}
void dnnf_free(dnnf_model *model) { dnnf_vk_free(model->vk); }
const char *dnnf_error(void) { return message; }
int dnnf_set_num_threads(int threads) { (void)threads; return 1; }
"""


def build_vulkan_model(spirv, tmp_path, *cmake_options) -> Path:
    """The stand-in model's artifact directory built with DNNF_VULKAN=ON; the build directory."""
    source = tmp_path / "model"
    source.mkdir()
    for file in ("CMakeLists.txt", "dnnf_runner.c", "aarch64-linux-gnu.cmake", "vulkan/dnnf_vulkan.c",
                 "vulkan/dnnf_vulkan.h"):
        shutil.copy(RUNTIME / file, source)  # flat, as the compiler copies them
    (source / "model.h").write_text(MODEL_H)
    words = ", ".join(f"{w}u" for w in spirv["elementwise"])
    (source / "model.c").write_text(MODEL_C % {"n": N, "bytes": BYTES, "plan": json.dumps(textwrap.dedent(ADD_PLAN)),
                                               "words": words})
    build = tmp_path / "build"
    for command in (["cmake", "-S", str(source), "-B", str(build), "-DDNNF_VULKAN=ON", *cmake_options],
                    ["cmake", "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, env=tool_environment())
        assert done.returncode == 0, done.stdout + done.stderr
    needed = subprocess.run(["readelf", "-d", str(build / "libdnnf_model.so")], capture_output=True, text=True,
                            env=tool_environment()).stdout
    assert "NEEDED" in needed and "libvulkan" not in needed, needed
    return build


def test_cmake_builds_a_vulkan_model_library(spirv, tmp_path):
    """DNNF_VULKAN=ON: libdnnf_model.so from model.c + dnnf_vulkan.c, no libvulkan at link
    time; dnnf_runner runs it."""
    build = build_vulkan_model(spirv, tmp_path)
    a, b = random_floats(20), random_floats(21)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    done = subprocess.run([str(build / "dnnf_runner"), "/dev/null", str(tmp_path / "a.bin"), str(tmp_path / "b.bin"),
                           str(tmp_path / "c.bin"), "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("run-ms") == 2
    np.testing.assert_array_equal(np.fromfile(tmp_path / "c.bin", dtype=np.float32), a + b)


def test_cmake_cross_builds_for_aarch64(spirv, tmp_path):
    """The AArch64 library builds (the Vulkan headers serve every architecture) and, under
    qemu where no Vulkan loader exists, loads and says what to install."""
    build = build_vulkan_model(spirv, tmp_path, "-DCMAKE_TOOLCHAIN_FILE=aarch64-linux-gnu.cmake")
    assert "AArch64" in subprocess.run(["readelf", "-h", str(build / "libdnnf_model.so")], capture_output=True,
                                       text=True).stdout
    done = subprocess.run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", str(build / "dnnf_runner"), "/dev/null",
                           "/dev/null", "/dev/null", str(tmp_path / "c.bin")], capture_output=True, text=True,
                          env=tool_environment())
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("dnnf_runner: cannot load libvulkan.so.1 ("), done.stderr
    assert done.stderr.rstrip().endswith("install the Vulkan loader (Debian: libvulkan1) and a driver "
                                         "(mesa-vulkan-drivers for lavapipe)"), done.stderr
