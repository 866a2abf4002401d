"""Timing every kernel of a compiled CPU model in context (``dnnf-run OUT --profile``).

Compiled in only when asked (``CompileOptions.profile_kernels``): ``dnnf-kernel-statistics``
records each kernel function's ops, shapes, FLOPs and bytes while they are still ECG,
``dnnf-instrument-kernels`` wraps each kernel call of the lowered entry in calls of the
C glue's timers (``compiler/kernel_timer_glue.py``), and ``report.py`` turns the times a run leaves into the
table (against this machine's ``roofline``) and a Chrome trace. A model compiled
without the option has no timer at all.
"""
