"""The heap settings a compiled library (``compiler/cpu_glue.py``'s ``dnnf_load``) and
the JIT (``jit.py``) apply before generated code runs, and the limit the buffer arena
(``buffer_arena.py``) derives from them.

Generated code mallocs and frees its large buffers on every call (the arena, kernel
scratch). Above glibc's mmap threshold each call would map fresh pages and page-fault
on all of them (Winograd's 29 MB intermediates at 224x224 took 5x their run's time
so); below it, and with the heap not trimmed back, a call reuses the last call's pages.
"""

# glibc's mallopt parameters.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# glibc's largest M_MMAP_THRESHOLD (HEAP_MAX / 2 on 64 bits): a block this big or bigger is mmapped.
MMAP_THRESHOLD_BYTES = 32 << 20
# How much free memory the heap's top keeps before glibc gives it back.
TRIM_THRESHOLD_BYTES = 512 << 20

__all__ = ["MMAP_THRESHOLD_BYTES", "M_MMAP_THRESHOLD", "M_TRIM_THRESHOLD", "TRIM_THRESHOLD_BYTES"]
