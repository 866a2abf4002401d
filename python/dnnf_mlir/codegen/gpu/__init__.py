"""The GPU backends: linalg on tensors -> one dispatch per kernel function, for a GPU API.

What the APIs share is here, as ``backend.GpuBackend``'s steps: the kernel rewrites
(``prepare.py``: ``gathers``, ``oversized``, ``slices``, ``reshapes``, ``concats``),
the kernel analysis (``kernels.py``: the roots a fused kernel is tiled by), the
schedules (``schedule.py``: workgroup and thread tiling, vectors of 4), the compilation
of each kernel function on its own with its per-op fallback (``lower.py``), the
launches (``mapping.py``), the device code (``device.py``, ``storage.py``: vec4
storage buffers) and the dispatch plan read from the emitted module (``program.py``).
Each API is a sub-package with its backend and targets: ``vulkan/`` (SPIR-V).
"""
