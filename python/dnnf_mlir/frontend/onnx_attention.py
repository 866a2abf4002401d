"""ONNX Attention (opsets 23 to 25) imported as its function body in existing ECG ops.

Q and K are each scaled by the square root of ``scale``, Q·Kᵀ is soft-capped, the
additive bias (attention mask, causal frontier, sliding window, key padding) is
added, a softmax follows and its rows whose bias is all -inf are zeroed, then the
product with V. Written with ``NodeBuilder.emit``, so the bias of a static mask and
cache folds to a constant at import, and each step is an ECG op that the rewrites,
the fusion planner and both code generators already handle; the two matmuls are
``mat_mul`` contractions (with grouped-query K and V expanded per query head).
"""

import numpy as np

from ..ecg.tensor_spec import dtype_name
from .node_builder import NodeBuilder
from .onnx_converters import converter
from .onnx_types import OnnxImportError, onnx_dtype

# qk_matmul_output_mode -> which intermediate the fourth output is.
_QK_OUTPUTS = {0: "capped", 1: "capped", 2: "scores", 3: "probabilities"}


def _optional(node: NodeBuilder, index: int):
    return node.operand(index) if node.has_input(index) else None


def _split_heads(node: NodeBuilder, x, heads, what: str):
    """(batch, sequence, heads*size) -> (batch, heads, sequence, size), as the 3-D form of the op reads it."""
    if heads is None:
        raise OnnxImportError(f"{node.info}: 3-D inputs need the q_num_heads and kv_num_heads attributes")
    batch, length, hidden = node.spec(x).shape
    if heads <= 0 or hidden % heads:
        raise OnnxImportError(f"{node.info}: {what}'s hidden size {hidden} is not a multiple of {heads} heads")
    x = node.emit_one("reshape", [x], shape=[batch, length, heads, hidden // heads])
    return node.emit_one("transpose", [x], perm=[0, 2, 1, 3])


def _repeat_heads(node: NodeBuilder, x, repeats: int):
    """Each key/value head repeated for the ``repeats`` query heads of its group: [h0, h0, h1, h1, ...]."""
    batch, heads, length, size = node.spec(x).shape
    x = node.emit_one("reshape", [x], shape=[batch, heads, 1, length, size])
    x = node.emit_one("expand", [x], shape=[batch, heads, repeats, length, size])
    return node.emit_one("reshape", [x], shape=[batch, heads * repeats, length, size])


def _allowed(node: NodeBuilder, batch: int, q_len: int, kv_len: int, past_len: int, nonpad):
    """Which keys each query may attend (bool, broadcasting to (batch, heads, q, kv)) under the
    causal frontier, the sliding window and the key padding; None when nothing restricts them."""
    causal = bool(node.attr("is_causal", 0))
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    conditions = []
    if causal or left >= 0 or right >= 0:
        # How far key j lies before query i, both as absolute positions: i + offset - j, where the
        # offset is the keys before the query block (the internal cache, or nonpad_kv_seqlen - q).
        distance = np.arange(q_len, dtype=np.int64)[:, None] - np.arange(kv_len, dtype=np.int64)[None, :]
        if nonpad is not None:
            offset = node.emit_one("reshape", [_int64(node, nonpad)], shape=[batch, 1, 1, 1])
            distance = node.emit_one("add", [distance, node.emit_one("sub", [offset, np.array(q_len, np.int64)])])
        else:
            distance = distance + past_len
        if causal:
            conditions.append(node.emit_one("greater_or_equal", [distance, np.array(0, np.int64)]))
        if left >= 0:
            conditions.append(node.emit_one("less_or_equal", [distance, np.array(left, np.int64)]))
        if right >= 0:
            conditions.append(node.emit_one("greater_or_equal", [distance, np.array(-right, np.int64)]))
    if nonpad is not None:
        lengths = node.emit_one("reshape", [_int64(node, nonpad)], shape=[batch, 1, 1, 1])
        conditions.append(node.emit_one("less", [np.arange(kv_len, dtype=np.int64), lengths]))
    if not conditions:
        return None
    allowed = conditions[0]
    for condition in conditions[1:]:
        allowed = node.emit_one("and", [allowed, condition])
    return allowed


def _int64(node: NodeBuilder, value):
    return value if node.spec(value).dtype == np.int64 else node.emit_one("cast", [value], to="i64")


def _additive(node: NodeBuilder, allowed, dtype):
    """A bool mask as an additive bias: 0 where attended, -inf where not."""
    return node.emit_one("where", [allowed, np.zeros((), dtype), np.array(-np.inf, dtype)])


def _bias(node: NodeBuilder, mask, allowed, kv_len: int, dtype):
    """The attention mask (padded with masked keys up to ``kv_len``) plus the ``allowed`` restriction,
    as one additive bias in ``dtype``; None without either."""
    terms = []
    if mask is not None:
        spec = node.spec(mask)
        if spec.shape[-1] < kv_len:
            fill = False if spec.dtype == np.bool_ else -np.inf
            padding = np.full(spec.shape[:-1] + (kv_len - spec.shape[-1],), fill, spec.dtype)
            mask = node.emit_one("concat", [mask, padding], axis=-1)
        if spec.dtype == np.bool_:
            mask = _additive(node, mask, dtype)
        elif spec.dtype != dtype:
            mask = node.emit_one("cast", [mask], to=dtype_name(dtype))
        terms.append(mask)
    if allowed is not None:
        terms.append(_additive(node, allowed, dtype))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else node.emit_one("add", terms)


@converter("Attention")
def _attention(node: NodeBuilder):
    q, k, v = node.operand(0), node.operand(1), node.operand(2)
    mask, past_key, past_value, nonpad = (_optional(node, i) for i in (3, 4, 5, 6))
    if (past_key is None) != (past_value is None):
        raise OnnxImportError(f"{node.info}: past_key and past_value must be given together")
    if nonpad is not None and past_key is not None:
        raise OnnxImportError(f"{node.info}: nonpad_kv_seqlen cannot be combined with past_key and past_value")
    rank, dtype = node.spec(q).rank, node.spec(q).dtype
    if rank == 3:
        q = _split_heads(node, q, node.attr("q_num_heads"), "Q")
        k = _split_heads(node, k, node.attr("kv_num_heads"), "K")
        v = _split_heads(node, v, node.attr("kv_num_heads"), "V")
    elif rank != 4 or node.spec(k).rank != 4 or node.spec(v).rank != 4:
        raise OnnxImportError(f"{node.info}: Q, K and V must all have rank 3 or all rank 4")
    batch, q_heads, q_len, head_size = node.spec(q).shape

    past_len = 0
    if past_key is not None:
        past_len = node.spec(past_key).shape[2]
        k = node.emit_one("concat", [past_key, k], axis=2)
        v = node.emit_one("concat", [past_value, v], axis=2)
    present_key, present_value = k, v
    scale = np.array(np.sqrt(node.attr("scale", 1 / np.sqrt(head_size))), dtype)
    q, k = node.emit_one("mul", [q, scale]), node.emit_one("mul", [k, scale])
    kv_heads, kv_len = node.spec(k).shape[1:3]
    if q_heads != kv_heads:
        if q_heads % kv_heads:
            raise OnnxImportError(f"{node.info}: {q_heads} query heads do not group over {kv_heads} key/value heads")
        k, v = _repeat_heads(node, k, q_heads // kv_heads), _repeat_heads(node, v, q_heads // kv_heads)

    values = {"capped": node.emit_one("mat_mul", [q, node.emit_one("transpose", [k], perm=[0, 1, 3, 2])])}
    softcap = node.attr("softcap", 0.0)
    if softcap > 0:
        cap = np.array(softcap, dtype)
        values["capped"] = node.emit_one("mul", [node.emit_one("tanh", [node.emit_one("div", [values["capped"], cap])]), cap])
    bias = _bias(node, mask, _allowed(node, batch, q_len, kv_len, past_len, nonpad), kv_len, dtype)
    values["scores"] = values["capped"] if bias is None else node.emit_one("add", [values["capped"], bias])

    scores = values["scores"]
    precision = node.attr("softmax_precision")
    if precision is not None and onnx_dtype(precision) != dtype:
        scores = node.emit_one("cast", [scores], to=dtype_name(onnx_dtype(precision)))
    probabilities = node.emit_one("softmax", [scores], axis=-1)
    if bias is not None:  # a row without an attendable key is all zeros, not the softmax's NaN
        row_max = node.emit_one("reduce_max", [bias], axes=[-1], keepdims=1)
        masked = node.emit_one("equal", [row_max, np.array(-np.inf, dtype)])
        zero = np.zeros((), node.spec(probabilities).dtype)
        probabilities = node.emit_one("where", [masked, zero, probabilities])
    if node.spec(probabilities).dtype != dtype:
        probabilities = node.emit_one("cast", [probabilities], to=dtype_name(dtype))
    values["probabilities"] = probabilities

    y = node.emit_one("mat_mul", [probabilities, v])
    if rank == 3:
        y = node.emit_one("transpose", [y], perm=[0, 2, 1, 3])
        y = node.emit_one("reshape", [y], shape=[batch, q_len, q_heads * node.spec(v).shape[3]])
    mode = node.attr("qk_matmul_output_mode", 0)
    if mode not in _QK_OUTPUTS:
        node.unsupported(f"qk_matmul_output_mode {mode}")
    return [y, present_key, present_value, values[_QK_OUTPUTS[mode]]]
