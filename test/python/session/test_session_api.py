"""InferenceSession on small models: what it shows of the model next to onnxruntime,
every kind of bad feed, arrays it must take as they come, and specialisation per
input shapes (compiled once each, least recently used dropped, reloaded from the cache).

Numerics: each output is compared with onnxruntime's at rtol 1e-5 and atol 1e-6:
these models are one matmul of 16 terms plus element-wise ops, whose float32 rounding
differs from onnxruntime's only by summation order and FMA contraction.
"""


import numpy as np
import onnxruntime
import pytest
from tiny_models import matmul_relu, two_inputs

from dnnf_mlir import InferenceSession
from dnnf_mlir.session import InvalidArgument

RTOL, ATOL = 1e-5, 1e-6


def ort_session(model):
    return onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def same_args(ours, theirs):
    assert [(a.name, a.shape, a.type) for a in ours] == [(a.name, a.shape, a.type) for a in theirs]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def tiny(cache_dir):
    return InferenceSession(matmul_relu(), cache_dir=cache_dir, max_specializations=2)


@pytest.fixture(scope="module")
def mixed(cache_dir):
    return InferenceSession(two_inputs(), cache_dir=cache_dir)


def test_model_description_matches_onnxruntime(tiny, mixed):
    for model, session in ((matmul_relu(), tiny), (two_inputs(), mixed)):
        reference = ort_session(model)
        same_args(session.get_inputs(), reference.get_inputs())
        same_args(session.get_outputs(), reference.get_outputs())
        ours, theirs = session.get_modelmeta(), reference.get_modelmeta()
        for field in ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
                      "custom_metadata_map"):
            assert getattr(ours, field) == getattr(theirs, field), field
    assert mixed.get_inputs()[2].shape == []  # no shape in the model, as onnxruntime shows it


def test_outputs_match_onnxruntime_and_are_selected_by_name(tiny):
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    want = ort_session(matmul_relu()).run(None, {"x": x})
    got = tiny.run(None, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
    s, y = tiny.run(["s", "y"], {"x": x})
    np.testing.assert_array_equal(s, got[1])
    np.testing.assert_array_equal(y, got[0])


def test_arrays_as_they_come(mixed):
    """Non-contiguous, read-only and Fortran-ordered arrays give the same results as
    plain ones; a scalar-shaped input without a declared shape takes any rank."""
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50, (6, 10))
    mask = rng.integers(0, 2, (3, 5)).astype(bool)
    scale = rng.standard_normal((2, 2)).astype(np.float32)
    plain = {"ids": np.ascontiguousarray(ids[::2, ::2]), "mask": mask, "scale": scale}
    want = ort_session(two_inputs()).run(None, plain)[0]
    read_only = mask.copy()
    read_only.flags.writeable = False
    odd = {"ids": ids[::2, ::2], "mask": read_only, "scale": np.asfortranarray(scale)}
    assert not odd["ids"].flags.c_contiguous and not odd["scale"].flags.c_contiguous
    np.testing.assert_allclose(mixed.run(None, plain)[0], want, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(mixed.run(None, odd)[0], mixed.run(None, plain)[0])


@pytest.mark.parametrize(
    "feeds, message",
    [
        ({"x": np.zeros((2, 16), np.float32), "q": np.zeros(1)}, "the model has no input 'q'; its inputs are 'x'"),
        ({}, "input 'x' is missing from the feeds: expected tensor(float) ['batch', 16]"),
        ({"x": np.zeros((2, 16))}, "input 'x' must be tensor(float) (float32), got float64"),
        ({"x": [[1.0] * 16]}, "input 'x' must be tensor(float) (float32), got float64"),
        ({"x": np.zeros((2, 16, 1), np.float32)}, "input 'x' must have rank 2 (tensor(float) ['batch', 16]), got shape [2, 16, 1]"),
        ({"x": np.zeros((2, 15), np.float32)}, "input 'x' axis 1 must be 16 (tensor(float) ['batch', 16]), got shape [2, 15]"),
        ("x", "feeds must map input names to arrays, got str"),
    ],
)
def test_bad_feeds(tiny, feeds, message):
    with pytest.raises(InvalidArgument) as error:
        tiny.run(None, feeds)
    assert str(error.value) == message


def test_bad_feeds_of_symbolic_and_integer_inputs(mixed):
    good = {"ids": np.zeros((2, 3), np.int64), "mask": np.zeros((2, 3), bool), "scale": np.ones(4, np.float32)}
    with pytest.raises(InvalidArgument, match="input 'mask' axis 1 is 4, but dimension 'seq' is 3 in input 'ids'"):
        mixed.run(None, good | {"mask": np.zeros((2, 4), bool)})
    with pytest.raises(InvalidArgument, match=r"input 'ids' must be tensor\(int64\) \(int64\), got int32"):
        mixed.run(None, good | {"ids": np.zeros((2, 3), np.int32)})
    with pytest.raises(InvalidArgument, match="the model has no output 'y'; its outputs are 'z'"):
        mixed.run(["y"], good)


def test_specializations_are_compiled_once_and_kept_least_recently_used(tiny):
    """max_specializations=2: a third shape drops the least recently used, which then
    comes back from the compile cache, not from the compiler."""
    reference = ort_session(matmul_relu())
    rng = np.random.default_rng(2)
    start = tiny.compilations
    for batch in (1, 2, 5, 1):
        x = rng.standard_normal((batch, 16)).astype(np.float32)
        for got, want in zip(tiny.run(None, {"x": x}), reference.run(None, {"x": x})):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert tiny.compilations - start == 3  # 1, 2 and 5; 1 again is a cache hit
    assert tiny.specializations == [{"x": (5, 16)}, {"x": (1, 16)}]


def test_bytes_and_paths_make_the_same_session(tiny, cache_dir, tmp_path):
    """The model as a path, as bytes or as a proto is the same content: one cache entry."""
    path = tmp_path / "tiny.onnx"
    path.write_bytes(matmul_relu().SerializeToString())
    x = np.ones((2, 16), np.float32)
    want = tiny.run(None, {"x": x})
    for model in (path, str(path), path.read_bytes()):
        session = InferenceSession(model, cache_dir=cache_dir)
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], want[0])
        assert session.compilations == 0


def test_bad_arguments(cache_dir, tmp_path):
    with pytest.raises(ValueError, match="fusion must be one of dnnf, tvm, none, got 'xla'"):
        InferenceSession(matmul_relu(), fusion="xla", cache_dir=cache_dir)
    with pytest.raises(ValueError, match="max_specializations must be at least 1"):
        InferenceSession(matmul_relu(), max_specializations=0, cache_dir=cache_dir)
    with pytest.raises(Exception, match="no such model file"):
        InferenceSession(tmp_path / "missing.onnx", cache_dir=cache_dir)
    with pytest.raises(Exception, match="not an ONNX model"):
        InferenceSession(b"\x01garbage", cache_dir=cache_dir)


def test_aarch64_target_runs_under_qemu(tiny, cache_dir, aarch64_toolchain):
    """target="aarch64": the AArch64 library, run through its C runner under qemu-aarch64."""
    x = np.random.default_rng(4).standard_normal((2, 16)).astype(np.float32)
    arm = InferenceSession(matmul_relu(), target="aarch64", cache_dir=cache_dir)
    for got, want in zip(arm.run(None, {"x": x}), tiny.run(None, {"x": x})):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
