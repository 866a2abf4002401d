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
