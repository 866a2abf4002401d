"""CompileOptions: one keyword-only object, from which the tools' flags, the cache key and
dnnf-cache's listing are derived, so that a new field reaches all of them."""

import argparse
import dataclasses

import pytest

from dnnf_mlir.codegen import get_target
from dnnf_mlir.compiler import CompileOptions
from dnnf_mlir.compiler.options import add_option_arguments, describe_cache_fields, from_arguments


def test_keyword_only_with_one_default_for_profile():
    with pytest.raises(TypeError):
        CompileOptions("host")  # the fields are keyword-only
    assert CompileOptions().profile is False
    with pytest.raises(ValueError, match="fusion must be one of dnnf, tvm, none, got 'xla'"):
        CompileOptions(fusion="xla")


def test_flags_are_the_fields():
    parser = argparse.ArgumentParser()
    add_option_arguments(parser)
    flags = set(parser.format_help().replace(",", " ").split())
    for option in dataclasses.fields(CompileOptions):
        flag = option.name.replace("_", "-")
        assert f"--{flag}" in flags
        if isinstance(option.default, bool):
            assert f"--no-{flag}" in flags
    assert from_arguments(parser.parse_args([])) == CompileOptions()
    args = parser.parse_args(["--profile", "--no-rewrite", "--fusion", "tvm", "--threads", "2", "--cpu", "x86-64-v3"])
    assert from_arguments(args) == CompileOptions(profile=True, rewrite=False, fusion="tvm", threads=2, cpu="x86-64-v3")
    assert from_arguments(parser.parse_args(["--no-profile"]), threads=3) == CompileOptions(threads=3)


def test_cache_fields_name_the_resolved_target_and_every_other_field():
    options = CompileOptions(cpu="x86-64-v3", fusion="none", profile=True)
    fields = options.cache_fields()
    target = get_target("host", "x86-64-v3")
    assert {k: fields[k] for k in ("target", "cpu", "cpu_features")} == target.cache_fields()
    others = [f.name for f in dataclasses.fields(CompileOptions)
              if f.name != "target" and not f.metadata.get("target_option")]
    assert {name: fields[name] for name in others} == {name: getattr(options, name) for name in others}
    assert describe_cache_fields(fields) == (
        "host x86-64-v3 threads=1 fusion=none profile precision=fp32 gpu_layout=auto winograd=auto")
    assert describe_cache_fields(CompileOptions(target="aarch64", outline=False).cache_fields()) == (
        "aarch64 generic threads=1 fusion=dnnf no-outline precision=fp32 gpu_layout=auto winograd=auto")


def test_device_profile_names_the_code_and_is_a_gpu_option():
    """``device`` is an option of the GPU targets' ``get_target``: it names the code in the
    cache by the profile it resolves to; another target, or a profile the target lacks, is
    refused by name."""
    lavapipe = CompileOptions(target="vulkan", device="lavapipe").cache_fields()
    assert lavapipe["device"] == "lavapipe" and CompileOptions(target="vulkan").cache_fields()["device"] == "generic"
    assert CompileOptions(target="vulkan", device="lavapipe").resolve_target().device.matmul_rows == 16
    assert CompileOptions(target="vulkan").resolve_target().device.matmul_rows == 4
    with pytest.raises(ValueError, match=r"target 'host' takes no option device \(its options: cpu\)"):
        CompileOptions(device="lavapipe").resolve_target()
    with pytest.raises(ValueError, match="unknown OpenCL device profile 'lavapipe'; known: generic"):
        CompileOptions(target="opencl", device="lavapipe").resolve_target()


def test_precision_names_the_code_and_cpu_targets_refuse_fp16():
    half = CompileOptions(target="vulkan", precision="fp16").cache_fields()
    assert half["precision"] == "fp16" and half != CompileOptions(target="vulkan").cache_fields()
    for target in ("host", "aarch64"):
        with pytest.raises(ValueError, match=f"target {target} .*computes in fp32 only: --precision fp16 is for "
                                             r"the GPU targets \(vulkan, opencl\)"):
            CompileOptions(target=target, precision="fp16").resolve_target()
    for target in ("vulkan", "opencl"):
        assert CompileOptions(target=target, precision="fp16").resolve_target().kind == target
    with pytest.raises(ValueError, match="precision must be one of fp32, fp16, got 'bf16'"):
        CompileOptions(target="vulkan", precision="bf16").resolve_target()
