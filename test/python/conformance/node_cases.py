"""Which ONNX backend node test cases the importer covers, and which are excluded.

A node test case is *covered* when every node of its graph is in the default
ONNX domain and has a converter in ``onnx_importer.CONVERTERS``. Covered cases
run in ``test_onnx_backend.py`` unless listed in ``EXCLUDED`` (features the
project deliberately does not support; the importer rejects each of them with
an ``OnnxImportError``, which the test checks).
"""

import warnings

from dnnf_mlir.frontend.onnx_importer import CONVERTERS, ONNX_DOMAINS

# case name (without the _cpu suffix) -> why it does not run
EXCLUDED = {
}


# Operands the importer needs at compile time (``NodeBuilder.known``): ONNX op type ->
# input indices. ONNX's node tests often feed them as graph inputs; the test binds
# such inputs to their test values (``constant_inputs``), as onnx-mlir's backend
# tests do. Computing them from runtime values stays unsupported.
CONSTANT_OPERANDS = {
    "Reshape": (1,), "Expand": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "Slice": (1, 2, 3, 4),
    "Split": (1,), "Tile": (1,), "Pad": (1, 2, 3), "Clip": (1, 2), "ConstantOfShape": (0,),
    "Range": (0, 1, 2), "Resize": (1, 2, 3), "Upsample": (1,), "Dropout": (2,),
    **{op: (1,) for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
    )},
}
# Ops whose result depends only on their input's shape, not its values.
_SHAPE_ONLY = ("Shape", "Size")


def constant_inputs(model) -> list:
    """Graph inputs whose values the importer needs: they reach a ``CONSTANT_OPERANDS`` slot."""
    needed = set()
    for node in reversed(model.graph.node):
        if node.op_type not in _SHAPE_ONLY and needed.intersection(node.output):
            needed.update(node.input)
        for index in CONSTANT_OPERANDS.get(node.op_type, ()) if node.domain in ONNX_DOMAINS else ():
            if index < len(node.input):
                needed.add(node.input[index])
    initializers = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name in needed and i.name not in initializers]


def load_cases() -> list:
    """ONNX's node test cases (generated in memory from ``onnx.backend.test.case.node``)."""
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_model_tests(kind="node")


def graph_ops(graph) -> set:
    """(domain, op_type) of every node, including nodes of subgraphs."""
    ops = set()
    for node in graph.node:
        ops.add((node.domain, node.op_type))
        for attribute in node.attribute:
            for subgraph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                ops |= graph_ops(subgraph)
    return ops


def uncovered_ops(model) -> set:
    """Op types of ``model`` the importer does not cover (custom domains are prefixed)."""
    return {
        op_type if domain in ONNX_DOMAINS else f"{domain}::{op_type}"
        for domain, op_type in graph_ops(model.graph)
        if domain not in ONNX_DOMAINS or op_type not in CONVERTERS
    }


def classify(cases=None) -> dict:
    """name -> ("covered" | "excluded" | "uncovered", case, detail)."""
    result = {}
    for case in cases if cases is not None else load_cases():
        missing = uncovered_ops(case.model)
        if missing:
            result[case.name] = ("uncovered", case, sorted(missing))
        elif case.name in EXCLUDED:
            result[case.name] = ("excluded", case, EXCLUDED[case.name])
        else:
            result[case.name] = ("covered", case, None)
    return result
