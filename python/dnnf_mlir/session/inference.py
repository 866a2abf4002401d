"""``InferenceSession``: a model compiled on first use and run as onnxruntime runs it.

    import dnnf_mlir
    session = dnnf_mlir.InferenceSession("bert.onnx")
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask})

A model whose inputs all have fixed shapes is compiled when the session is made; one
with symbolic dimensions (batch, sequence length) when it is first fed, for the shapes
fed, and again for each new set of shapes: a specialisation. The session keeps the
``max_specializations`` most recently used ones loaded; every one is also kept in the
compile cache (``dnnf_mlir.cache``), so a new session, in this process or the next,
loads it instead of compiling it.

``run`` may be called from several threads at once: each call gets its own output
buffers, the generated code allocates its scratch memory per call and keeps no
state between calls, and the C glue keeps its error text per thread; a thread that
needs a new specialisation compiles it while the others go on running theirs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from ..cache import CompileCache, compile_cached
from ..compiler import Artifact, CompileOptions, InvalidInput
from ..kernel_profile.report import KernelProfile, ProfileError
from .feeds import InvalidArgument, check_feeds, output_indices
from .source import ModelSource


class _Loaded:
    """One specialisation, loaded: a host library in this process, or a private copy of
    another target's directory (its runner reads the files at every run)."""

    def __init__(self, directory: Path, threads: int):
        self.threads = threads
        self.scratch = None
        artifact = Artifact(directory)
        self.profile = None
        if artifact.is_host:
            self.host = artifact.session(threads)
            self.openmp = artifact.manifest.get("openmp", False)  # a GPU library runs no OpenMP
            if "kernel_launches" in artifact.manifest:  # compiled with profile_kernels
                self.profile = KernelProfile(artifact.manifest["kernel_launches"], threads)
        else:
            self.scratch = tempfile.TemporaryDirectory(prefix="dnnf-session-")
            copy = Path(self.scratch.name) / "model"
            shutil.copytree(directory, copy)
            self.host, self.artifact = None, Artifact(copy)

    def run(self, arrays) -> list:
        """The outputs; ``InvalidArgument`` for inputs the compiled code refused (an index
        out of range), as onnxruntime's INVALID_ARGUMENT."""
        try:
            if self.host is None:
                return self.artifact.run(arrays, threads=self.threads)[0]
            if self.openmp:
                self.host.set_threads(self.threads)  # OpenMP's thread count is per calling thread
            start = time.perf_counter()
            outputs = self.host.run(arrays)
            if self.profile is not None:  # the timers are the calling thread's: read them now
                self.profile.record(start, time.perf_counter(), *self.host.kernel_times())
            return outputs
        except InvalidInput as error:
            raise InvalidArgument(str(error)) from None


class InferenceSession:
    """A compiled ONNX model, with onnxruntime's ``InferenceSession`` interface.

    ``model`` is a path, the serialized model (bytes) or an ``onnx.ModelProto``.
    ``options`` (a ``CompileOptions``) and ``option_fields`` (its fields: ``target``,
    ``cpu``, ``fusion``, ``rewrite``, ``outline``, ``profile``, ...) say how it is
    compiled, as for ``compile_model``: ``target`` is ``host`` (run in this process),
    ``vulkan`` or ``opencl`` (run in this process on the device the runtime finds) or
    ``aarch64`` (run under qemu-aarch64, one process per run), fusion decides Table
    3's yellow cells conservatively unless ``profile=True`` (deterministic plans, and no
    measuring on first use). ``threads`` are the OpenMP threads of the parallel loops
    (default: those of ``options`` when given, else the CPUs this process may use, 1
    for a target whose code does not run here).
    ``cache_dir`` overrides the compile cache's directory (``$DNNF_CACHE_DIR``, else
    ``~/.cache/dnnf-mlir/compiled``); ``use_cache=False`` compiles every
    specialisation afresh. ``compilations`` counts the compilations this session ran.
    ``profile_kernels=True`` (host) times every kernel launch of every run, as
    onnxruntime's ``enable_profiling``: ``kernel_profile()`` has them,
    ``end_profiling()`` writes them as a Chrome trace.
    """

    def __init__(self, model, *, options: CompileOptions | None = None, threads: int | None = None,
                 cache_dir: "str | os.PathLike | None" = None, use_cache: bool = True, max_specializations: int = 8,
                 **option_fields):
        if max_specializations < 1:
            raise ValueError(f"max_specializations must be at least 1, got {max_specializations}")
        chosen = replace(options or CompileOptions(), **option_fields)
        target = chosen.resolve_target()  # an unknown target or CPU is an error now, not at the first run
        if threads is None and options is None:
            threads = len(os.sched_getaffinity(0)) if target.runs_here else 1
        self._options = chosen if threads is None else replace(chosen, threads=threads)
        self._cache = CompileCache(cache_dir) if use_cache else None
        self._source = ModelSource(model, self._cache)
        self._info = self._source.info
        self._max = max_specializations
        self._loaded = OrderedDict()  # input shapes -> _Loaded, least recently used first
        self._lock = threading.Lock()  # guards _loaded
        self._compiling = threading.Lock()  # one compilation at a time
        self.compilations = 0
        shapes = self._info.static_shapes({})
        if shapes is not None:  # compiled now, as onnxruntime does its work when the session is made
            self._specialization(shapes)

    def get_inputs(self) -> list:
        return list(self._info.inputs)

    def get_outputs(self) -> list:
        return list(self._info.outputs)

    def get_modelmeta(self):
        return self._info.metadata

    @property
    def specializations(self) -> list:
        """The input shapes of the loaded specialisations, least recently used first."""
        with self._lock:
            return [dict(key) for key in self._loaded]

    def run(self, output_names, input_feed) -> list:
        """The outputs named (all for None), in that order, for the inputs ``input_feed``
        (name -> array); an ``InvalidArgument`` says what does not fit the model."""
        arrays, shapes = check_feeds(self._info.inputs, input_feed)
        indices = output_indices(self._info.outputs, output_names)
        outputs = self._specialization(shapes).run(arrays)
        return [outputs[i] for i in indices]

    def kernel_profile(self) -> KernelProfile:
        """The kernel times of the runs of the most recently used specialisation
        (``ProfileError`` unless compiled with ``profile_kernels`` for the host)."""
        with self._lock:
            loaded = next(reversed(self._loaded.values()), None)
        if loaded is None or loaded.profile is None:
            raise ProfileError("no kernel timers: make the session with profile_kernels=True (host target) and run it")
        return loaded.profile

    def end_profiling(self, path: "str | os.PathLike | None" = None) -> str:
        """Write ``kernel_profile()`` as a Chrome trace (default: ``dnnf_profile_<date>.json``
        here, as onnxruntime names its own) and return its path."""
        path = str(path or time.strftime("dnnf_profile_%Y-%m-%d_%H-%M-%S.json"))
        with open(path, "w") as file:
            json.dump(self.kernel_profile().chrome_trace(self._source.name), file)
        return path

    def _specialization(self, shapes: dict) -> _Loaded:
        key = tuple(shapes.items())
        with self._lock:
            if key in self._loaded:
                self._loaded.move_to_end(key)
                return self._loaded[key]
        with self._compiling:
            with self._lock:
                if key in self._loaded:  # another thread made it meanwhile
                    return self._loaded[key]
            options = self._options
            loaded, compiled = compile_cached(
                self._source.file, self._source.digest if self._cache else "", shapes, options, self._cache,
                load=lambda directory: _Loaded(directory, options.threads), name=self._source.name,
            )
            with self._lock:
                self.compilations += compiled
                self._loaded[key] = loaded
                while len(self._loaded) > self._max:
                    self._loaded.popitem(last=False)  # freed once no run() holds it
            return loaded


__all__ = ["InferenceSession", "InvalidArgument"]
