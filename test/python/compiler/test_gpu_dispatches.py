"""One GPU dispatch per kernel on both GPU targets, for kernels the GPU schedules used to
split into a dispatch per op (``dnnf.gpu.fallback``): the graphs below are the shapes
of the models' kernels that fell back (the steps of GRU and LSTM layers and their
concatenated outputs, LLaMA's projection with its rotation). Each is compiled for Vulkan (lavapipe) and OpenCL (PoCL); the manifest
must count as many dispatches per run as the CPU path has kernels (one more where a
kernel binds more buffers than one dispatch may, or reads part of a contraction's
result or a value through a view no map folds: two launches, ``codegen/gpu/phases.py``), and the outputs on standard normal inputs must match onnxruntime within ``checking.compare``'s default
(|got - want| <= 3e-5 + 1e-4 * |want| per element): a step or a gate read from the
wrong place moves outputs by O(1).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from gpu_artifacts import artifact_cache, assert_matches_onnxruntime

OPSET = 17


def _model(nodes, inputs: dict, outputs: dict, weights: dict) -> onnx.ModelProto:
    """``nodes`` over float32 ``inputs`` / ``outputs`` (name -> shape) and ``weights``
    (name -> array; a shape: standard normal values of that shape, scaled by 0.2)."""
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(value if isinstance(value, np.ndarray) else
                                     (rng.standard_normal(value) * 0.2).astype(np.float32), name)
             for name, value in weights.items()]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def _ints(*values):
    return np.array(values, np.int64)


def _recurrence(op: str, steps: int, directions: int, hidden: int = 16, **attributes):
    """A GRU or LSTM layer over ``steps`` steps (batch 2, 8 features, ``hidden`` units),
    unrolled into a kernel per step: each step's kernel returns its state, which is also
    a piece of the sequence output, and hands on its slice of the input gates; the last
    kernel concatenates each direction's steps, given a unit direction dim, along it."""
    gates = {"GRU": 3, "LSTM": 4}[op]
    return _model([helper.make_node(op, ["x", "w", "r", "b"], ["y"], hidden_size=hidden,
                                    direction="bidirectional" if directions == 2 else "forward", **attributes)],
                  {"x": [steps, 2, 8]}, {"y": [steps, directions, 2, hidden]},
                  {"w": [directions, gates * hidden, 8], "r": [directions, gates * hidden, hidden],
                   "b": [directions, gates * 2 * hidden]})


def _steps_transposed():
    """A bidirectional tagger's outputs: each direction's steps concatenated, given a
    unit direction dim, concatenated along it and transposed to [step, batch, direction]."""
    nodes = [helper.make_node("Tanh", [f"x{i}"], [f"t{i}"]) for i in range(4)] + [
        helper.make_node("Concat", ["t0", "t1"], ["forward"], axis=0),
        helper.make_node("Concat", ["t2", "t3"], ["backward"], axis=0),
        helper.make_node("Unsqueeze", ["forward", "one"], ["forward1"]),
        helper.make_node("Unsqueeze", ["backward", "one"], ["backward1"]),
        helper.make_node("Concat", ["forward1", "backward1"], ["both"], axis=1),
        helper.make_node("Transpose", ["both"], ["y"], perm=[0, 2, 1, 3])]
    return _model(nodes, {f"x{i}": [2, 2, 16] for i in range(4)}, {"y": [4, 2, 2, 16]}, {"one": _ints(1)})


def _projection_rotated():
    """LLaMA's attention inputs: one projection split into queries (2 heads), a key
    and a value head, each head moved before the sequence, the queries' halves
    rotated (the second, negated, before the first)."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]),
             helper.make_node("Split", ["p", "sizes"], ["q", "k", "v"], axis=2),
             helper.make_node("Reshape", ["q", "heads2"], ["q4"]),
             helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["k", "heads1"], ["k4"]),
             helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["v", "heads1"], ["v4"]),
             helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
             helper.make_node("Slice", ["qt", "zero", "half", "three"], ["first"]),
             helper.make_node("Slice", ["qt", "half", "whole", "three"], ["second"]),
             helper.make_node("Neg", ["second"], ["negated"]),
             helper.make_node("Concat", ["negated", "first"], ["rotated"], axis=3)]
    return _model(nodes, {"x": [1, 10, 32]}, {"qt": [1, 2, 10, 16], "rotated": [1, 2, 10, 16],
                                              "kt": [1, 1, 10, 16], "vt": [1, 1, 10, 16]},
                  {"w": [32, 64], "sizes": _ints(32, 16, 16), "heads2": _ints(1, 10, 2, 16),
                   "heads1": _ints(1, 10, 1, 16), "zero": _ints(0), "half": _ints(8), "whole": _ints(16),
                   "three": _ints(3)})


def _windows_merged():
    """Swin's window merge: 2 x 2 windows of 4 x 4 tokens back into the 8 x 8 grid read
    as 64 tokens, added to the residual stream and layer-normalized."""
    nodes = [helper.make_node("Reshape", ["windows", "grid"], ["w6"]),
             helper.make_node("Transpose", ["w6"], ["wt"], perm=[0, 1, 3, 2, 4, 5]),
             helper.make_node("Reshape", ["wt", "tokens"], ["merged"]),
             helper.make_node("Add", ["x", "merged"], ["sum"]),
             helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"], axis=-1)]
    return _model(nodes, {"windows": [4, 16, 8], "x": [1, 64, 8]}, {"sum": [1, 64, 8], "y": [1, 64, 8]},
                  {"grid": _ints(1, 2, 2, 4, 4, 8), "tokens": _ints(1, 64, 8), "gamma": [8], "beta": [8]})


def _tokens_normalized(axis: int):
    """Swin's patch embedding: 8 channels of a 4 x 4 grid moved last, read as 16 tokens
    and layer-normalized from ``axis`` on: -1, each token over its channels; 1, all of
    it, the reductions then over the dims the collapse merges."""
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["f"]),
             helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
             helper.make_node("LayerNormalization", ["t", "gamma", "beta"], ["y"], axis=axis)]
    norm = [8] if axis == -1 else [16, 8]
    return _model(nodes, {"x": [1, 8, 4, 4]}, {"y": [1, 16, 8]},
                  {"flat": _ints(1, 8, 16), "gamma": norm, "beta": norm})


def _rolled(grid: str, shift: int) -> tuple:
    """torch.roll of the 8 x 8 ``grid`` (1 x 8 x 8 x C) by -``shift`` along both axes as
    exported: per axis, the slices from ``shift`` and up to it concatenated. (The nodes,
    the rolled value's name, the constants they read.)"""
    nodes, rolled = [], grid
    for axis in (1, 2):
        nodes += [helper.make_node("Slice", [rolled, "shift", "eight", f"axis{axis}"], [f"tail{axis}"]),
                  helper.make_node("Slice", [rolled, "zero", "shift", f"axis{axis}"], [f"head{axis}"]),
                  helper.make_node("Concat", [f"tail{axis}", f"head{axis}"], [f"rolled{axis}"], axis=axis)]
        rolled = f"rolled{axis}"
    return nodes, rolled, {"zero": _ints(0), "shift": _ints(shift), "eight": _ints(8), "axis1": _ints(1),
                           "axis2": _ints(2)}


def _shifted_windows():
    """Swin's cyclic shift: the residual stream added, layer-normalized, as an 8 x 8 grid
    rolled by 2 along both axes (each roll two slices concatenated), then partitioned
    into 2 x 2 windows of 4 x 4 tokens."""
    rolls, rolled, constants = _rolled("g", 2)
    nodes = [helper.make_node("Add", ["x", "r"], ["sum"]),
             helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["n"], axis=-1),
             helper.make_node("Reshape", ["n", "grid"], ["g"]), *rolls,
             helper.make_node("Reshape", [rolled, "split"], ["w6"]),
             helper.make_node("Transpose", ["w6"], ["wt"], perm=[0, 1, 3, 2, 4, 5]),
             helper.make_node("Reshape", ["wt", "windows"], ["y"])]
    return _model(nodes, {"x": [1, 64, 8], "r": [1, 64, 8]}, {"sum": [1, 64, 8], "y": [4, 16, 8]},
                  {"gamma": [8], "beta": [8], "grid": _ints(1, 8, 8, 8), "split": _ints(1, 2, 4, 2, 4, 8),
                   "windows": _ints(4, 16, 8), **constants})


def _shifted_back():
    """Swin's shift undone: 2 x 2 windows of 4 x 4 tokens merged into the 8 x 8 grid,
    rolled back by 2 along both axes (the slices the other way round: a shift of 6),
    read as 64 tokens, added to the residual stream and layer-normalized."""
    rolls, rolled, constants = _rolled("g", 6)
    nodes = [helper.make_node("Reshape", ["windows", "split"], ["w6"]),
             helper.make_node("Transpose", ["w6"], ["wt"], perm=[0, 1, 3, 2, 4, 5]),
             helper.make_node("Reshape", ["wt", "grid"], ["g"]), *rolls,
             helper.make_node("Reshape", [rolled, "tokens"], ["t"]),
             helper.make_node("Add", ["x", "t"], ["sum"]),
             helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"], axis=-1)]
    return _model(nodes, {"windows": [4, 16, 8], "x": [1, 64, 8]}, {"sum": [1, 64, 8], "y": [1, 64, 8]},
                  {"gamma": [8], "beta": [8], "grid": _ints(1, 8, 8, 8), "split": _ints(1, 2, 2, 4, 4, 8),
                   "tokens": _ints(1, 64, 8), **constants})


def _channels_rolled():
    """A layer normalization's channels rolled by 3 and scaled: the roll moves values
    across the normalization's reduction, which no producer computes row by row."""
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], axis=-1),
             helper.make_node("Slice", ["n", "three", "eight", "last"], ["tail"]),
             helper.make_node("Slice", ["n", "zero", "three", "last"], ["head"]),
             helper.make_node("Concat", ["tail", "head"], ["rolled"], axis=2),
             helper.make_node("Mul", ["rolled", "s"], ["y"])]
    return _model(nodes, {"x": [1, 64, 8], "s": [1, 64, 8]}, {"y": [1, 64, 8]},
                  {"gamma": [8], "beta": [8], "zero": _ints(0), "three": _ints(3), "eight": _ints(8),
                   "last": _ints(2)})


SWIN_PHASES = [(0, 0), (1, 0), (0, 1), (1, 1)]


def _patches_merged(phases=SWIN_PHASES):
    """Swin's patch merging: the residual stream added, as an 8 x 8 grid, its four 2 x 2
    ``phases`` (strided slices, (row, column) each) concatenated along the channels and
    layer-normalized."""
    nodes = [helper.make_node("Add", ["x", "r"], ["sum"]),
             helper.make_node("Reshape", ["sum", "grid"], ["g"])]
    for i in range(4):
        nodes.append(helper.make_node("Slice", ["g", f"start{i}", "ends", "axes", "steps"], [f"phase{i}"]))
    nodes += [helper.make_node("Concat", [f"phase{i}" for i in range(4)], ["c"], axis=-1),
              helper.make_node("Reshape", ["c", "tokens"], ["t"]),
              helper.make_node("LayerNormalization", ["t", "gamma", "beta"], ["y"], axis=-1)]
    starts = {f"start{i}": _ints(row, column) for i, (row, column) in enumerate(phases)}
    return _model(nodes, {"x": [1, 64, 8], "r": [1, 64, 8]}, {"y": [1, 16, 32]},
                  {"grid": _ints(1, 8, 8, 8), "ends": _ints(8, 8), "axes": _ints(1, 2), "steps": _ints(2, 2),
                   "tokens": _ints(1, 16, 32), "gamma": [32], "beta": [32], **starts})


def _rows_at_offset():
    """A residual sum returned, and the sums of its rows 16 to 63 (``offset_reads.py``:
    read at an offset, the residual sum is computed in the reduction's body)."""
    nodes = [helper.make_node("Add", ["x", "r"], ["sum"]),
             helper.make_node("Slice", ["sum", "sixteen", "end", "one"], ["tail"]),
             helper.make_node("ReduceSum", ["tail", "last"], ["y"], keepdims=0)]
    return _model(nodes, {"x": [1, 64, 32], "r": [1, 64, 32]}, {"sum": [1, 64, 32], "y": [1, 48]},
                  {"sixteen": _ints(16), "end": _ints(64), "one": _ints(1), "last": _ints(2)})


def _projection_and_half(rows: int, features: int, outputs: int):
    """A bidirectional LSTM's input projection (``rows`` x 2 rows of ``features``, 2 x
    ``outputs`` columns, its bias the accumulator's init: a Gemm) returned whole and,
    for the forward steps, its first half (a slice along the columns) returned too."""
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["x2"]),
             helper.make_node("Gemm", ["x2", "w", "b"], ["m"]),
             helper.make_node("Reshape", ["m", "steps"], ["p"]),
             helper.make_node("Slice", ["p", "zero", "half", "last"], ["forward"])]
    return _model(nodes, {"x": [rows, 2, features]}, {"p": [rows, 2, 2 * outputs], "forward": [rows, 2, outputs]},
                  {"w": [features, 2 * outputs], "b": [2 * outputs], "flat": _ints(2 * rows, features),
                   "steps": _ints(rows, 2, 2 * outputs), "zero": _ints(0), "half": _ints(outputs), "last": _ints(2)})


# name -> (graph, dispatches beyond the kernels: the minimum the schedules allow). A
# kernel reading part of a contraction's result (the first step's gates, from the whole
# sequence's input projection; the projection's Q, K and V columns) runs in two
# launches: the contraction, then the rest (``phases.py``); every other kernel is one.
# Before the phases, those kernels ran a dispatch per op: 4, 5 + 1, 8 and 6 beyond.
GRAPHS = {
    "gru": (lambda: _recurrence("GRU", 3, 1, linear_before_reset=1), 1),
    # Over 16 steps the first step's gates are 1/16 of the projection: its kernel
    # computes them again in the step's tiles (``slices.RECOMPUTED_PART``), one launch.
    # Over 3 steps (above) a third: the projection first, the step next.
    "gru_16_steps": (lambda: _recurrence("GRU", 16, 1, linear_before_reset=1), 0),
    "steps_transposed": (_steps_transposed, 0),
    # The last kernel concatenates 32 steps given a unit direction dim, read through 36
    # views, over the generic profile's 24 bindings a dispatch: its groups run in two
    # launches, not one per op. The projection's forward half, returned beside it, is
    # computed again in the projection's launch (``slices.RECOMPUTED_WORK``; before, a
    # launch of its own: 1 + 1).
    "bidirectional_lstm_16_steps": (lambda: _recurrence("LSTM", 16, 2), 1),
    "projection_rotated": (_projection_rotated, 1),
    # The merged windows are read as 64 tokens through a collapse of the 2 x 2 x 4 x 4
    # grid, which no map folds; the normalization's ops each expanded to iterate over the
    # grid (``collapsed_reads.py``) are one launch. Before, the grid was computed first,
    # its normalization next: two launches.
    "windows_merged": (_windows_merged, 0),
    "tokens_normalized": (lambda: _tokens_normalized(-1), 0),
    "grid_normalized": (lambda: _tokens_normalized(1), 0),
    # A concatenation built in place and read by another op of its kernel: its pieces are
    # computed a launch before their readers (``phases.py``); before, a dispatch per op.
    # The phases merged along the channels, then normalized: one launch, the
    # concatenation read as the grid's transpose (``strided_concats.py``; before, two:
    # the pieces, then the normalization), the row's phase varying slowest too. In an
    # order that is no transpose (the second and last phases swapped), still the pieces
    # first.
    "patches_merged": (_patches_merged, 0),
    "patches_merged_row_major": (lambda: _patches_merged([(0, 0), (0, 1), (1, 0), (1, 1)]), 0),
    "patches_merged_out_of_order": (lambda: _patches_merged([(0, 0), (1, 1), (0, 1), (1, 0)]), 1),
    # The rolls moved up to the kernel's arguments, read at the rotated token
    # (``rotations.py``): the normalization computes the rotated rows, one launch.
    # Before, the normalized rows into the first roll's pieces, those into the second's,
    # then the windows: three launches; the shift undone, four.
    "shifted_windows": (_shifted_windows, 0),
    "shifted_back": (_shifted_back, 0),
    # A roll across the reduction is not moved up (the normalization would read other
    # rows' sums): its reader is split at the pieces (``concats.py``), one launch as before.
    "channels_rolled": (_channels_rolled, 0),
    "rows_at_offset": (_rows_at_offset, 0),
    # The returned half of a small projection is computed again by a copy of the matmul
    # for its columns (``slices.RECOMPUTED_WORK``): one launch. Before, the projection
    # first, then the half copied from it: two, as still for a projection whose copy
    # would run over 2^20 iterations (2^21 here).
    "projection_and_half": (lambda: _projection_and_half(16, 32, 64), 0),
    "large_projection_and_half": (lambda: _projection_and_half(64, 128, 128), 1),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(name, target, precision) -> (the Artifact of GRAPHS[name] compiled for target,), once."""
    return artifact_cache(tmp_path_factory.mktemp("dispatches"), lambda name: (GRAPHS[name][0](),))


@pytest.mark.parametrize("target", ["vulkan", "opencl"])
@pytest.mark.parametrize("name", GRAPHS)
def test_one_dispatch_per_kernel_and_matches_onnxruntime(name, target, compiled):
    (artifact,) = compiled(name, target, "fp32")
    assert artifact.manifest["dispatches"] == artifact.manifest["kernels"] + GRAPHS[name][1]
    assert_matches_onnxruntime(artifact, seed=5)
