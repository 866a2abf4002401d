"""The pass registry: every pass ``dnnf-opt`` knows, in one table, ``PASS_TABLE``.

Passes live where their work is (``transforms/``, ``rewriting/``, ``conversion/``,
``codegen/``), and each of those imports ``ModulePass`` from this package, so this
package must not import them back. An entry therefore names its class as
``"module:Class"``, and ``PASSES`` imports that module the first time the pass is
looked up. An entry also carries what ``dnnf-opt --help`` prints (the summary and
the options), so that the help lists every pass without loading the conversion or
the code generator. This is the only place they are written: a pass class takes
its ``SUMMARY`` and ``OPTIONS`` from its entry (``@described_by_table``).
``test/python/test_pass_registry.py`` loads every entry.
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass

from .pass_base import Option


class RegistryError(Exception):
    """A ``PASS_TABLE`` entry whose class is another pass."""


@dataclass(frozen=True)
class PassEntry:
    name: str
    implementation: str  # "module:Class"
    summary: str
    options: tuple = ()

    def load(self) -> type:
        """The pass class, importing its module."""
        module, _, class_name = self.implementation.partition(":")
        cls = getattr(importlib.import_module(module), class_name)
        if cls.NAME != self.name:
            raise RegistryError(f"{self.implementation} is pass '{cls.NAME}', not '{self.name}' ({__name__})")
        return cls


CPU_OPTION = Option("cpu", str, "", "CPU targets: the CPU as LLVM names it (native, x86-64-v3, znver3, cortex-a76, "
                    "...); default: $DNNF_CPU or native for the host, generic for aarch64")
DEVICE_OPTION = Option("device", str, "", "GPU targets: the device profile whose limits the code keeps (vulkan: "
                       "generic, the default)")


def target_options(target_help: str = "a registered target: host, aarch64, vulkan, ...", default: str = "host") -> tuple:
    """The options of the code generator's passes: the target (codegen.get_target) and threads."""
    return (
        Option("target", str, default, target_help),
        CPU_OPTION,
        DEVICE_OPTION,
        Option("threads", int, 1, "threads the parallel loops are split for (CPU targets: OpenMP when > 1)"),
    )


PASS_TABLE: dict[str, PassEntry] = {
    entry.name: entry
    for entry in (
        PassEntry(
            "ecg-op-stats",
            "dnnf_mlir.transforms.op_stats:OpStatsPass",
            "Report ops by mapping type, FLOPs and intermediate-result bytes as JSON",
            (Option("output", str, "-", "file to write the JSON report to ('-' is stderr)"),),
        ),
        PassEntry(
            "ecg-rewrite",
            "dnnf_mlir.rewriting.pass_:RewritePass",
            "Math-property graph rewriting: FLOPs-driven associative/distributive/commutative rules",
            (
                Option("stats-file", str, "", "file to write the JSON statistics to ('-' is stderr; default: none)"),
                Option("only", str, "", "apply only the rules whose names match these globs, separated by '|'"),
            ),
        ),
        PassEntry(
            "ecg-apply-rule",
            "dnnf_mlir.rewriting.pass_:ApplyRulePass",
            "Apply one rewrite rule at its first match in each function, whatever it gains (for testing)",
            (Option("rule", str, "", "the rule's name (default: the function's name, e.g. @\"exp-mul-exp\")"),),
        ),
        PassEntry(
            "ecg-fuse",
            "dnnf_mlir.fusion.pass_:FusePass",
            "Fuse ECG ops into ecg.fused blocks by mapping type (DNNFusion's Listing 1) or TVM's fixed patterns",
            (
                Option("mode", str, "dnnf", "dnnf (Table 3 planner), tvm (TVM's FuseOps baseline) or none"),
                Option("horizontal", bool, True, "dnnf mode: merge sibling contractions of one input (Q/K/V "
                       "projections, an Inception module's 1x1 convolutions) into one after Listing 1"),
                Option("attention", bool, True, "dnnf mode: make each attention chain (scores matmul, softmax, "
                       "probabilities matmul) one block, the one exception to Table 3's Many-to-Many R cell"),
                Option("profile", bool, False, "decide Table 3's Y cells by measuring them on this machine, kept in the "
                       "profiling database (false: the conservative oracle)"),
                Option("profile-db", str, "", "the profiling database (default: $DNNF_PROFILE_DB or "
                       "~/.cache/dnnf-mlir/fusion-profile.sqlite3)"),
                Option("target", str, "host", "the target the code is for: its kernels' limits bound every block "
                       "(only the host's Y cells can be measured)"),
                CPU_OPTION,
                DEVICE_OPTION,
                Option("stats-file", str, "", "file to write the JSON statistics to ('-' is stderr; default: none)"),
                Option("svg-file", str, "", "file to draw the plan in (SVG by Graphviz: one cluster per block; "
                       "default: none)"),
                Option("plan-file", str, "", "file to write the plan to as JSON (fusion/plan_graph.py: what "
                       "dnnf-run --profile-svg draws; default: none)"),
            ),
        ),
        PassEntry(
            "ecg-unroll-recurrence",
            "dnnf_mlir.transforms.unroll_recurrence:UnrollRecurrencePass",
            "Replace each LSTM/GRU/RNN recurrence op by its time steps in ECG ops (for targets without loops "
            "around kernels: the GPUs)",
        ),
        PassEntry(
            "ecg-split-top-k",
            "dnnf_mlir.transforms.split_top_k:SplitTopKPass",
            "Split each TopK whose rows would run a GPU thread past its loop budget into TopKs of chunks of "
            "the rows, then of the chunks' winners (for the GPU targets)",
            (Option("max-iterations", int, 65535, "the loop iterations a thread may run (lavapipe's: 65535)"),),
        ),
        PassEntry(
            "ecg-flatten-concats",
            "dnnf_mlir.transforms.flatten_concats:FlattenConcatsPass",
            "Make each concat whose operand is a concat along the same axis that other ops read too read the "
            "pieces, through a chain of its own (a DenseNet block's growing concat no longer copied whole by "
            "every layer)",
        ),
        PassEntry(
            "ecg-outline-kernels",
            "dnnf_mlir.fusion.kernels:OutlineKernelsPass",
            "Make every kernel (ecg.fused op or unfused ECG op) a call of a private function, "
            "one function per distinct kernel",
        ),
        PassEntry(
            "convert-ecg-to-linalg",
            "dnnf_mlir.conversion.ecg_to_linalg.pass_:ConvertECGToLinalgPass",
            "Lower ECG ops to linalg, tensor, arith and math ops on tensors",
        ),
        PassEntry(
            "dnnf-lower-to-llvm",
            "dnnf_mlir.codegen.cpu.lower_pass:LowerToLLVMPass",
            "Tile, pack, vectorize and bufferize linalg on tensors and lower it to the LLVM dialect",
            target_options("host or aarch64"),
        ),
        PassEntry(
            "dnnf-lower-to-spirv",
            "dnnf_mlir.codegen.gpu.vulkan.lower_pass:LowerToSpirvPass",
            "Compile each kernel function of linalg on tensors into GPU launches of SPIR-V kernels (gpu.binary) "
            "for Vulkan",
            target_options("vulkan", default="vulkan"),
        ),
        PassEntry(
            "dnnf-lower-to-opencl",
            "dnnf_mlir.codegen.gpu.opencl.lower_pass:LowerToOpenclPass",
            "Compile each kernel function of linalg on tensors into GPU launches of OpenCL C kernels (gpu.binary)",
            target_options("opencl", default="opencl"),
        ),
        PassEntry(
            "dnnf-lower",
            "dnnf_mlir.codegen.lower_pass:LowerPass",
            "Lower linalg on tensors for a target: every step of its backend (prepare, schedule, bufferize, "
            "map to hardware, emit)",
            target_options(),
        ),
        *(
            PassEntry(f"dnnf-codegen-{step}", f"dnnf_mlir.codegen.step_passes:{cls}", summary, target_options())
            for step, cls, summary in (
                ("prepare", "PreparePass", "Code generation step 1: rewrite linalg into the shapes the target's "
                 "kernels take"),
                ("schedule", "SchedulePass", "Code generation step 2: plan every linalg op's kernel (tiling, "
                 "fusion, vectorization) and apply it as a transform script"),
                ("bufferize", "BufferizePass", "Code generation step 3: tensors to buffers, results written in "
                 "place into the caller's"),
                ("map-to-hardware", "MapToHardwarePass", "Code generation step 4: loops and vectors onto the "
                 "target's hardware (CPU: vector lowering, OpenMP threads)"),
                ("emit", "EmitPass", "Code generation step 5: the module in the target's final dialect (CPU: LLVM)"),
            )
        ),
        PassEntry(
            "dnnf-externalize-weights",
            "dnnf_mlir.compiler.weights:ExternalizeWeightsPass",
            "Turn the large constants of the entry function into arguments read from a weights file",
            (
                Option("entry", str, "", "the entry function (default: the module's one public function)"),
                Option("weights-file", str, "", "where to write the weights (none: only the IR changes)"),
            ),
        ),
        PassEntry(
            "dnnf-winograd",
            "dnnf_mlir.codegen.winograd_pass:WinogradPass",
            "Compute 3x3 stride-1 convolutions with constant filters by Winograd F(4x4, 3x3): the filters "
            "transformed at compile time, one batch matmul between the input and output transforms",
            (Option("mode", str, "auto", "auto (where dnnf-tune measured it faster, else where the cost model "
                    "expects it), always (every one it can) or strict (always, and an error for a convolution it "
                    "cannot rewrite)"),
             Option("threads", int, 1, "threads the code is split for (auto: the measurements' and the cost model's)"),
             Option("target", str, "host", "the CPU target the code is for (host or aarch64): with cpu, whose "
                    "measurements apply"),
             CPU_OPTION,
             Option("measured", bool, True, "auto: use the measurements of the profiling database (false: the cost "
                    "model alone)"),
             Option("profile-db", str, "", "the profiling database (default: $DNNF_PROFILE_DB or "
                    "~/.cache/dnnf-mlir/fusion-profile.sqlite3)"),
             Option("stats-file", str, "", "file to write how many convolutions became Winograd, and how many "
                    "decisions the measurements and the cost model made, as JSON ('-' is stderr; default: none)")),
        ),
        PassEntry(
            "dnnf-channel-panels",
            "dnnf_mlir.codegen.cpu.panels_pass:ChannelPanelsPass",
            "Compute single-image convolutions with constant filters over few positions as X_col^T W^T "
            "(vectors along the output channels), the filters cut into panels of output channels at compile time",
            (Option("mode", str, "auto", "auto (where the plain schedule would pad at least 1.25 times more work, "
                    "1.5 with 16 vector registers) or always (every one it can)"),
            ) + target_options("the CPU target the code is for (host or aarch64): its vector width"),
        ),
        PassEntry(
            "dnnf-cpu-buffer-arena",
            "dnnf_mlir.codegen.cpu.buffer_arena:BufferArenaPass",
            "CPU, on buffers after deallocation: put the public functions' static intermediate buffers in one arena "
            "per call, each at an offset freed most recently (cache-hot) once the buffers before it are dead",
        ),
        PassEntry(
            "dnnf-cpu-kernel-scratch",
            "dnnf_mlir.codegen.cpu.kernel_scratch:KernelScratchPass",
            "CPU, on buffers after deallocation, before dnnf-cpu-buffer-arena: a kernel function's static scratch "
            "buffers allocated by its callers around each call and passed in, so that the arena places them",
        ),
        PassEntry(
            "dnnf-int8-matmuls",
            "dnnf_mlir.codegen.cpu.int8_matmuls:Int8MatmulsPass",
            "On CPUs with AVX512-VNNI: compute f32 matmuls of converted bytes (A - zero point) by constant "
            "integer weights in -128 ... 127 from the bytes, with vpdpbusd, the weights packed at compile time",
            target_options("the CPU target the code is for (host or aarch64): whether it has avx512vnni"),
        ),
        PassEntry(
            "dnnf-weight-panels",
            "dnnf_mlir.codegen.cpu.weight_panels:WeightPanelsPass",
            "Compute matmuls with constant weights from panels of the weights cut at compile time in the order "
            "the micro-kernel reads them (one matmul per panel), not packed on every call",
            (Option("mode", str, "auto", "auto (where the matmul schedule would pack the weights) or always "
                    "(every one it can)"),
            ) + target_options("the CPU target the code is for (host or aarch64): its vector width"),
        ),
        PassEntry(
            "dnnf-gpu-fp16-storage",
            "dnnf_mlir.codegen.gpu.precision:Fp16StoragePass",
            "GPU fp16: keep the f32 tensors between kernels (weights, activations) in f16, every kernel "
            "computing in f32; the entry function's inputs and outputs stay f32",
        ),
        PassEntry(
            "dnnf-gpu-channel-blocks",
            "dnnf_mlir.codegen.gpu.channel_blocks:ChannelBlocksPass",
            "GPU: compute convolution kernels (constant filters, element-wise epilogues) in NC4HW4, four "
            "channels of a pixel innermost, the values between them kept so; NCHW copies only where others read them",
        ),
        PassEntry(
            "dnnf-kernel-statistics",
            "dnnf_mlir.kernel_profile.statistics_pass:KernelStatisticsPass",
            "Record on every kernel function its ECG ops, shapes, FLOPs and bytes (for the kernel profiler)",
        ),
        PassEntry(
            "dnnf-instrument-kernels",
            "dnnf_mlir.kernel_profile.instrument:InstrumentKernelsPass",
            "Wrap every kernel call of the lowered (LLVM dialect) public functions in calls of the C glue's "
            "kernel timers, and record the launches on the module",
        ),
    )
}


def described_by_table(cls: type) -> type:
    """Class decorator: the pass's ``SUMMARY`` and ``OPTIONS`` are those of its
    ``PASS_TABLE`` entry (a pass missing from the table is a ``KeyError`` at import)."""
    entry = PASS_TABLE[cls.NAME]
    cls.SUMMARY, cls.OPTIONS = entry.summary, entry.options
    return cls


class LazyPasses(Mapping):
    """Pass name -> pass class; a class's module is imported when the class is first looked up."""

    def __getitem__(self, name: str) -> type:
        return PASS_TABLE[name].load()

    def __contains__(self, name) -> bool:
        return name in PASS_TABLE

    def get(self, name, default=None):
        # Not Mapping.get: a KeyError raised while importing a pass must not read as "no such pass".
        return self[name] if name in PASS_TABLE else default

    def __iter__(self):
        return iter(PASS_TABLE)

    def __len__(self) -> int:
        return len(PASS_TABLE)


PASSES = LazyPasses()
