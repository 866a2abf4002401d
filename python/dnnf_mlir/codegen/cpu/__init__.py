"""What the CPU targets (x86-64 and AArch64 through LLVM) add to the code generator.

The target-independent driver (``codegen.pipeline``) calls, in order:
``prepare.prepare`` (rewrites into the shapes the kernels take), ``planner.plan``
(the transform-dialect schedule of every linalg op: ``matmul.py``, ``matvec.py``,
``conv.py``, ``rows.py``, sized by ``tiles.py``), ``buffers`` (the scripts after
bufferization), ``openmp.parallelize`` (threads). ``objects`` compiles the LLVM IR
with ``llc-22``, ``cross`` builds and runs AArch64 executables under qemu, and
``features`` says what a CPU name allows.
"""
