"""GPU artifacts of small test graphs, compiled once per graph, target and precision."""

import onnx

from dnnf_mlir.compiler import Artifact, compile_model


def artifact_cache(directory, build):
    """``get(name, target, precision)``: (the ``Artifact`` of ``build(name)``'s model,
    compiled into ``directory``, the rest of what ``build`` returned), compiled the first
    time it is asked for."""
    cache = {}

    def get(name, target, precision):
        key = (name, target, precision)
        if key not in cache:
            model, *rest = build(name)
            path = directory / f"{name}.onnx"
            onnx.save(model, path)
            out = directory / f"{name}-{target}-{precision}"
            compile_model(path, out, target=target, precision=precision)
            cache[key] = (Artifact(out), *rest)
        return cache[key]

    return get
