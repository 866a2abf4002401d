"""ONNX Einsum imported as contractions: each operand's repeated labels become a diagonal
(a select against an identity mask and a sum), labels no one else needs are summed out,
and the operands are contracted pairwise as one batched ``mat_mul`` each (batch, free
and contracted labels grouped by a transpose and a reshape), then the result transposed
to the output's order. The contractions are what the code generators' matmul schedules
take, not loops over the labels.
"""

import re

import numpy as np

from ..ecg.tensor_spec import element_kind
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError

# Labels standing for the axes an ellipsis covers (ONNX labels are letters only).
_ELLIPSIS_LABELS = "0123456789"


def _parse(node: NodeBuilder, equation: str, ranks: list) -> tuple:
    """(labels per operand, output labels), an ellipsis expanded to digit labels."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks) or not re.fullmatch(r"[A-Za-z.,]*", inputs) or not re.fullmatch(r"[A-Za-z.]*", output):
        raise OnnxImportError(f"{node.info}: equation '{equation}' does not fit {len(ranks)} operands")
    widest = 0
    for term, rank in zip(terms, ranks):
        if "..." in term:
            widest = max(widest, rank - (len(term) - 3))
    ellipsis = _ELLIPSIS_LABELS[:widest]
    labels = []
    for term, rank in zip(terms, ranks):
        if "..." in term:
            term = term.replace("...", ellipsis[widest - (rank - (len(term) - 3)):])
        if len(term) != rank:
            raise OnnxImportError(f"{node.info}: '{term}' labels {len(term)} axes of a rank-{rank} operand")
        labels.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:  # implicit: the ellipsis, then the labels used once, alphabetically
        counts = {label: "".join(labels).count(label) for label in "".join(labels)}
        output = ellipsis + "".join(sorted(label for label, n in counts.items() if n == 1 and label not in ellipsis))
    return labels, output


def _transposed(node: NodeBuilder, x, labels: str, order: str):
    perm = [labels.index(label) for label in order]
    return x if perm == sorted(perm) else node.emit_one("transpose", [x], perm=perm)


def _reshaped(node: NodeBuilder, x, shape: list):
    return x if list(node.spec(x).shape) == list(shape) else node.emit_one("reshape", [x], shape=list(shape))


def _diagonal(node: NodeBuilder, x, labels: str):
    """Each label repeated within ``labels`` reduced to its diagonal; the labels left."""
    while any(labels.count(label) > 1 for label in labels):
        label = next(label for label in labels if labels.count(label) > 1)
        first, second = labels.index(label), labels.index(label, labels.index(label) + 1)
        spec = node.spec(x)
        mask_shape = [1] * spec.rank
        mask_shape[first] = mask_shape[second] = spec.shape[first]
        mask = np.eye(spec.shape[first], dtype=np.bool_).reshape(mask_shape)
        x = node.emit_one("where", [mask, x, np.zeros((), spec.dtype)])
        x = node.emit_one("reduce_sum", [x], axes=[second], keepdims=0)
        labels = labels[:second] + labels[second + 1:]
    return x, labels


def _sum_out(node: NodeBuilder, x, labels: str, keep: set):
    axes = [axis for axis, label in enumerate(labels) if label not in keep]
    if not axes:
        return x, labels
    x = node.emit_one("reduce_sum", [x], axes=axes, keepdims=0)
    return x, "".join(label for label in labels if label in keep)


def _contract(node: NodeBuilder, a, a_labels: str, b, b_labels: str, keep: set):
    """a and b contracted over their shared labels outside ``keep``, as one batched mat_mul."""
    sizes = dict(zip(a_labels, node.spec(a).shape)) | dict(zip(b_labels, node.spec(b).shape))
    batch = "".join(label for label in a_labels if label in b_labels and label in keep)
    summed = "".join(label for label in a_labels if label in b_labels and label not in keep)
    a_free = "".join(label for label in a_labels if label not in b_labels)
    b_free = "".join(label for label in b_labels if label not in a_labels)

    def extent(labels):
        return int(np.prod([sizes[label] for label in labels], dtype=np.int64))

    a = _reshaped(node, _transposed(node, a, a_labels, batch + a_free + summed),
                  [extent(batch), extent(a_free), extent(summed)])
    b = _reshaped(node, _transposed(node, b, b_labels, batch + summed + b_free),
                  [extent(batch), extent(summed), extent(b_free)])
    product = node.emit_one("mat_mul", [a, b])
    labels = batch + a_free + b_free
    return _reshaped(node, product, [sizes[label] for label in labels]), labels


@converter("Einsum")
def _einsum(node: NodeBuilder):
    operands = node.operands()
    specs = [node.spec(x) for x in operands]
    if any(spec.dtype != specs[0].dtype for spec in specs) or element_kind(specs[0].dtype) not in "fiu":
        node.unsupported(f"operands of types {[str(s.dtype) for s in specs]} (one numeric type for all)")
    labels, output = _parse(node, node.attr("equation", ""), [spec.rank for spec in specs])
    extents = {}
    for term, spec in zip(labels, specs):
        for label, size in zip(term, spec.shape):
            extents.setdefault(label, set()).add(size)
    for label, sizes in extents.items():
        if len(sizes - {1}) > 1:
            raise OnnxImportError(f"{node.info}: label '{label}' has extents {sorted(sizes)}")
    # an axis of extent 1 broadcasts: expanded to the label's extent elsewhere
    full = {label: max(sizes) for label, sizes in extents.items()}
    operands = [x if list(spec.shape) == [full[label] for label in term]
                else node.emit_one("expand", [x], shape=[full[label] for label in term])
                for x, spec, term in zip(operands, specs, labels)]
    if len(set(output)) != len(output) or not set(output) <= set("".join(labels)):
        raise OnnxImportError(f"{node.info}: output '{output}' repeats a label or names one no operand has")

    terms = []
    for index, (x, term) in enumerate(zip(operands, labels)):
        x, term = _diagonal(node, x, term)
        others = set(output).union(*(set(t) for i, t in enumerate(labels) if i != index))
        terms.append(_sum_out(node, x, term, others))
    result, result_labels = terms[0]
    for index, (x, term) in enumerate(terms[1:], start=1):
        keep = set(output).union(*(set(t) for _, t in terms[index + 1:]))
        result, result_labels = _contract(node, result, result_labels, x, term, keep)
    result, result_labels = _sum_out(node, result, result_labels, set(output))
    return [_transposed(node, result, result_labels, output)]
