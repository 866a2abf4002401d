"""The JIT keeps the buffers generated code mallocs and frees in the heap, as a compiled
library does (``keep_buffers_in_heap``): otherwise glibc gives large buffers back to the
system after each call and the next call page-faults on all of them, which made a
measured Winograd convolution at 224x224 five times slower than in the model.

Each case runs in a process of its own (the setting is process-wide, and a library any
earlier test loaded sets it too): three buffers of Winograd's sizes at 224x224 (29, 29
and 13 MiB) malloc'd, written and freed four times; the page faults of each round.
"""

import json
import subprocess
import sys

PROBE = """
import ctypes, json, resource, sys
from dnnf_mlir.codegen.cpu.jit import keep_buffers_in_heap
if sys.argv[1] == "policy":
    keep_buffers_in_heap()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
sizes = [29 << 20, 29 << 20, 13 << 20]
faults = []
for _ in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    pointers = [libc.malloc(n) for n in sizes]
    for pointer, n in zip(pointers, sizes):
        ctypes.memset(pointer, 1, n)
    for pointer in reversed(pointers):
        libc.free(pointer)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps(faults))
"""


def page_faults(arm: str) -> list:
    run = subprocess.run([sys.executable, "-c", PROBE, arm], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def test_freed_buffers_stay_in_the_heap():
    # Without it every round faults on the buffers' pages (18,000 a round here; fewer
    # with transparent huge pages), with it only the first round: ten times fewer at least.
    default, policy = page_faults("default")[1:], page_faults("policy")[1:]
    assert min(default) > 0 and max(policy) * 10 < min(default), (default, policy)
