"""One kernel's ``gpu.module`` -> a Vulkan SPIR-V binary, checked by ``spirv-val``.

``to_spirv_binary(device, name)`` attaches a Vulkan target (``spirv-attach-target``: SPIR-V 1.3,
the capabilities the kernel's types need: ``Int64`` for 64-bit indices, ...), gives
its ``gpu.func`` the ``spirv.entry_point_abi`` that the conversion needs (from the
workgroup size), runs ``lowering/gpu/vulkan/spirv.pipeline``, moves the ``spirv.module``
that the conversion puts beside the ``gpu.module`` into it (``gpu-module-to-binary``
serializes only a nested one) and serializes it. Every binary is validated with
``spirv-val --target-env vulkan1.1`` (lavapipe runs invalid SPIR-V; a phone driver may
not): a failure is a ``CodegenError`` naming the kernel and the validator's message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from .... import _mlir
from ...._mlir import ir
from ....ir_walk import walk_ops
from ....lowering import read_pipeline
from ...errors import CodegenError
from ...passes import run_passes, run_pipeline
from ..program import REQUIRES_ATTR

SPIRV_VERSION = "v1.3"
TARGET_ENV = "vulkan1.1"
EXTENSIONS = ("SPV_KHR_storage_buffer_storage_class",)


def _uses_type(module: ir.Module, predicate) -> bool:
    found = []

    def visit(op):
        types = [v.type for v in op.results] + [v.type for v in op.operands]
        for region in op.regions:
            for block in region.blocks:
                types += [a.type for a in block.arguments]
        for t in types:
            element = ir.ShapedType(t).element_type if isinstance(t, (ir.MemRefType, ir.VectorType)) else t
            if predicate(element):
                found.append(op)
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return bool(found)


def capabilities(module: ir.Module) -> list:
    """The SPIR-V capabilities beyond ``Shader`` that the kernel's types need."""
    caps = ["Shader"]
    if _uses_type(module, lambda t: isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 64):
        caps.append("Int64")
    if _uses_type(module, lambda t: isinstance(t, ir.F16Type)):  # fp16 (``gpu/precision.py``)
        caps.append("Float16")
        if _has_f16_storage_buffer(module):  # not where every one is held as 64-bit words (``storage.py``)
            caps.append("StorageBuffer16BitAccess")
    return caps


def _has_f16_storage_buffer(module: ir.Module) -> bool:
    """Whether a kernel binds a buffer of f16 or of vectors of f16 (a ``gpu.func``
    argument in global memory)."""
    for function in walk_ops(module.operation, {"gpu.func"}):
        for argument in function.regions[0].blocks[0].arguments:
            if isinstance(argument.type, ir.MemRefType):
                memref = ir.MemRefType(argument.type)
                element = memref.element_type
                element = ir.VectorType(element).element_type if isinstance(element, ir.VectorType) else element
                if memref.memory_space is None and isinstance(element, ir.F16Type):
                    return True
    return False


# The Vulkan device feature each capability needs (VkPhysicalDeviceFeatures and the
# 16-bit storage / float16 feature structs, which runtime/vulkan checks at load).
FEATURE_OF_CAPABILITY = {"Int64": "shaderInt64", "Float16": "shaderFloat16",
                         "StorageBuffer16BitAccess": "storageBuffer16BitAccess"}


def required_features(module: ir.Module) -> list:
    """The Vulkan device features those capabilities need (the plan's ``require``)."""
    return [FEATURE_OF_CAPABILITY[c] for c in capabilities(module) if c in FEATURE_OF_CAPABILITY]


def _set_entry_point_abi(module: ir.Module):
    for function in walk_ops(module.operation, {"gpu.func"}):
        x, y, z = list(ir.DenseI32ArrayAttr(function.attributes["known_block_size"]))
        function.attributes["spirv.entry_point_abi"] = ir.Attribute.parse(
            f"#spirv.entry_point_abi<workgroup_size = [{x}, {y}, {z}]>")


def _expose_target_env(module: ir.Module):
    """Put each ``gpu.module``'s attached target on it as ``spirv.target_env`` too:
    ``convert-ub-to-spirv`` and ``convert-math-to-spirv`` look only there, and without
    it assume the default environment, which has no Float16 (an f16 value becomes f32)."""
    for gpu_module in walk_ops(module.operation, {"gpu.module"}):
        gpu_module.attributes["spirv.target_env"] = ir.ArrayAttr(gpu_module.attributes["targets"])[0]


def _nest_spirv_modules(module: ir.Module):
    """For shaders, ``convert-gpu-to-spirv`` puts ``spirv.module @__spv__X`` beside
    ``gpu.module @X``; ``gpu-module-to-binary`` serializes the one inside."""
    ops = [op.operation for op in module.body.operations]
    gpu_modules = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in ops if op.name == "gpu.module"}
    for op in ops:
        if op.name == "spirv.module":
            name = ir.StringAttr(op.attributes["sym_name"]).value.removeprefix("__spv__")
            op.move_before(gpu_modules[name].regions[0].blocks[0].operations[0])


def find_spirv_tool(name: str) -> str:
    """The path of a SPIRV-Tools program (``spirv-val``, ``spirv-dis``): ``$DNNF_SPIRV_VAL``
    for the validator, else the one on the PATH."""
    found = (os.environ.get("DNNF_SPIRV_VAL") if name == "spirv-val" else None) or shutil.which(name)
    if found is None:
        raise CodegenError(f"{name} not found: install spirv-tools (every SPIR-V binary is validated)")
    return found


def _run_on(tool: str, binary: bytes, *arguments) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile(suffix=".spv") as file:
        file.write(binary)
        file.flush()
        return subprocess.run([find_spirv_tool(tool), *arguments, file.name], capture_output=True, text=True)


def validate(binary: bytes, what: str):
    """Run ``spirv-val`` on ``binary``; a failure is a ``CodegenError`` about ``what``."""
    check = _run_on("spirv-val", binary, "--target-env", TARGET_ENV)
    if check.returncode != 0:
        raise CodegenError(f"{what}: spirv-val rejects the SPIR-V: {(check.stdout + check.stderr).strip()}")


def disassemble(binary: bytes) -> str:
    """``binary`` as SPIR-V assembly (``spirv-dis``)."""
    result = _run_on("spirv-dis", binary)
    if result.returncode != 0:
        raise CodegenError(f"spirv-dis fails: {result.stderr.strip()}")
    return result.stdout


def to_spirv_binary(device: ir.Module, name: str):
    """Convert the ``gpu.module`` ``name``, alone in ``device``, into a ``gpu.binary`` of
    validated SPIR-V, which records the device features it needs (``REQUIRES_ATTR``)."""
    caps = ",".join(capabilities(device))
    requires = required_features(device)
    _set_entry_point_abi(device)
    run_passes(f"spirv-attach-target{{ver={SPIRV_VERSION} caps={caps} exts={','.join(EXTENSIONS)} client_api=Vulkan}}",
               device)
    _expose_target_env(device)
    run_pipeline(read_pipeline("gpu/vulkan/spirv.pipeline"), device)
    _nest_spirv_modules(device)
    run_passes("gpu-module-to-binary", device)
    binaries = walk_ops(device.operation, {"gpu.binary"})
    if len(binaries) != 1:
        raise CodegenError(f"kernel {name}: no SPIR-V binary was made")
    objects = ir.ArrayAttr(binaries[0].attributes["objects"])
    validate(bytes(_mlir.gpu.ObjectAttr(objects[0]).object), f"kernel {name}")
    binaries[0].attributes[REQUIRES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(f) for f in requires])


__all__ = ["capabilities", "disassemble", "find_spirv_tool", "required_features", "to_spirv_binary", "validate"]
