"""Reorganize ops that cut, join and pad along axes: slice, concat, split and pad
(no arithmetic, 0 FLOPs).

ONNX inputs that the importer requires to be constant (Slice's starts/ends/axes/
steps, Split's split, Pad's pads) are attributes here, named like the ONNX input,
and hold *resolved* static values: the importer turns ONNX's conventions (clamping
of Slice bounds, num_outputs of Split, axes of Pad) into them with
``SliceOp.normalize``, ``SplitOp.resolve_split`` and ``PadOp.resolve_pads``. Axis
attributes keep ONNX's convention: negative values count from the end.

Note: IRDL gives all values of one variadic operand or result a single type, so
``ecg.concat`` is binary and ``ecg.split`` results of different types do not pass
the IRDL part of the MLIR verifier (the importer emits one slice per output then).
"""

import numpy as np

from ..._mlir import ext
from ..attributes import Float, Int, Ints, Str
from ..base import ECGOp, Tensor, TensorResult, define_with_slots, value_slots
from ..properties import UNARY_ELEMENTWISE, Algebra, MappingType
from ..shapes import normalize_axes, normalize_axis, require, same_dtype
from ..tensor_spec import TensorSpec
from .common import COMMUTES_WITH_UNARY, int_list


class SliceOp(ECGOp, name="slice"):
    """Strided slices along ``axes``, with normalized bounds.

    For each i, the result keeps indices ``range(starts[i], ends[i], steps[i])`` of
    axis ``axes[i]`` (Python range semantics, no wrap-around): the importer stores
    ONNX's bounds after ONNX's negative-index adjustment and clamping (see
    ``normalize``), so 0 <= start, end <= dim for steps > 0 and
    0 <= start <= dim-1, -1 <= end <= dim-1 for steps < 0 (end -1: through index 0).
    ``axes`` defaults to 0..len(starts)-1 and ``steps`` to 1s.
    """

    input: Tensor
    output: TensorResult
    starts: Ints
    ends: Ints
    axes: Ints
    steps: Ints
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Slice",)

    @classmethod
    def complete_attrs(cls, operands, attrs):
        defaults = {}
        if "starts" in attrs:
            if "axes" not in attrs:
                defaults["axes"] = list(range(len(attrs["starts"])))
            if "steps" not in attrs:
                defaults["steps"] = [1] * len(attrs["starts"])
        return super().complete_attrs(operands, {**defaults, **attrs})

    @classmethod
    def normalize(cls, input_shape, starts, ends, axes=None, steps=None) -> dict:
        """ECG attributes for ONNX Slice inputs: adjusted, clamped bounds, sorted axes."""
        shape = int_list(input_shape)
        rank = len(shape)
        starts, ends = int_list(starts), int_list(ends)
        axes = list(range(len(starts))) if axes is None else int_list(axes)
        steps = [1] * len(starts) if steps is None else int_list(steps)
        require(len(starts) == len(ends) == len(axes) == len(steps),
                f"slice starts {starts}, ends {ends}, axes {axes} and steps {steps} must have one length")
        axes = normalize_axes(axes, rank)
        entries = []
        for start, end, axis, step in zip(starts, ends, axes, steps):
            require(step != 0, f"slice step for axis {axis} must not be 0")
            dim = shape[axis]
            start = start + dim if start < 0 else start
            end = end + dim if end < 0 else end
            if step > 0:
                start, end = min(max(start, 0), dim), min(max(end, 0), dim)
            else:
                start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
            entries.append((axis, start, end, step))
        entries.sort()
        return {
            "starts": [e[1] for e in entries],
            "ends": [e[2] for e in entries],
            "axes": [e[0] for e in entries],
            "steps": [e[3] for e in entries],
        }

    @classmethod
    def _slices(cls, shape, attrs) -> tuple:
        """The result shape and the numpy index; raises for unnormalized attributes."""
        starts, ends, axes, steps = (int_list(attrs[k]) for k in ("starts", "ends", "axes", "steps"))
        require(len(starts) == len(ends) == len(axes) == len(steps),
                f"starts {starts}, ends {ends}, axes {axes} and steps {steps} must have one length")
        for a in axes:
            require(0 <= a < len(shape), f"axes {axes} must be normalized into [0, {len(shape)})")
        require(len(set(axes)) == len(axes), f"axes {axes} repeat an axis")
        out, index = list(shape), [slice(None)] * len(shape)
        for start, end, axis, step in zip(starts, ends, axes, steps):
            dim = shape[axis]
            require(step != 0, f"step for axis {axis} must not be 0")
            if step > 0:
                ok = 0 <= start <= dim and 0 <= end <= dim
                bounds = f"[0, {dim}]"
            else:
                ok = min(0, dim - 1) <= start <= dim - 1 and -1 <= end <= dim - 1
                bounds = f"[0, {dim - 1}] and ends in [-1, {dim - 1}]"
            require(ok, f"start {start} and end {end} for axis {axis} with step {step} must be normalized: "
                        f"starts in {bounds} (use SliceOp.normalize)")
            out[axis] = max(0, (end - start + step - (1 if step > 0 else -1)) // step)
            index[axis] = slice(start, end if end >= 0 else None, step)
        return out, tuple(index)

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        shape, _ = cls._slices(x.shape, attrs)
        return [x.with_shape(shape)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        _, index = cls._slices(inputs[0].shape, attrs)
        return [inputs[0][index]]


class ConcatOp(ECGOp, name="concat"):
    """Join two inputs along ``axis``; the other dimensions must agree.

    Binary because IRDL binds all values of one variadic field to one type, so a
    variadic concat could not join tensors of different shapes; the importer folds
    an N-input ONNX Concat into a left-to-right chain.
    """

    lhs: Tensor
    rhs: Tensor
    output: TensorResult
    axis: Int
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Concat",)

    @classmethod
    def infer(cls, operands, attrs):
        dtype = same_dtype(operands, "inputs")
        first = operands[0]
        require(first.rank >= 1, f"inputs must have rank >= 1, got {first}")
        axis = normalize_axis(attrs["axis"], first.rank)
        for spec in operands[1:]:
            same = spec.rank == first.rank and all(
                a == b for i, (a, b) in enumerate(zip(spec.shape, first.shape)) if i != axis
            )
            require(same, f"input {spec} does not match {first} outside axis {axis}")
        shape = list(first.shape)
        shape[axis] = sum(spec.shape[axis] for spec in operands)
        return [TensorSpec(shape, dtype)]

    @classmethod
    def reference(cls, inputs, attrs, results):
        return [np.concatenate(inputs, axis=attrs["axis"])]


MAX_SPLIT_OUTPUTS = 32


class _SplitBase(ECGOp):
    """Cut the input along ``axis`` into pieces of sizes ``split`` (one result each, at most 32)."""

    input: Tensor
    axis: Int
    split: Ints
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = COMMUTES_WITH_UNARY
    ONNX = ("Split",)
    DEFAULTS = {"axis": 0}

    @property
    def outputs(self) -> list:
        return list(self.operation.results)

    @classmethod
    def resolve_split(cls, dim: int, num_outputs: int) -> list:
        """Sizes for ``num_outputs`` pieces without a split input (ONNX 18: last may be smaller)."""
        require(num_outputs >= 1, f"split needs at least one output, got {num_outputs}")
        chunk = -(-dim // num_outputs)
        last = dim - chunk * (num_outputs - 1)
        require(last >= 0, f"a dimension of size {dim} cannot be split into {num_outputs} pieces")
        return [chunk] * (num_outputs - 1) + [last]

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        require(x.rank >= 1, f"input must have rank >= 1, got {x}")
        axis = normalize_axis(attrs["axis"], x.rank)
        split = int_list(attrs["split"])
        require(len(split) >= 1, "split must name at least one piece")
        require(all(s >= 0 for s in split), f"split sizes {split} must be non-negative")
        require(sum(split) == x.shape[axis],
                f"split sizes {split} sum to {sum(split)} but axis {axis} of {x} has size {x.shape[axis]}")
        results = []
        for size in split:
            shape = list(x.shape)
            shape[axis] = size
            results.append(x.with_shape(shape))
        return results

    @classmethod
    def reference(cls, inputs, attrs, results):
        x = inputs[0]
        axis = normalize_axis(attrs["axis"], x.ndim)
        cuts = np.cumsum(int_list(attrs["split"]))[:-1]
        return list(np.split(x, cuts, axis=axis))


SplitOp = define_with_slots(_SplitBase, "split", value_slots("output", MAX_SPLIT_OUTPUTS, ext.Result))


class PadOp(ECGOp, name="pad"):
    """Pad (or, with negative pads, crop) every axis.

    ``pads`` is ONNX's [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over all axes
    (the importer expands ONNX 18's ``axes`` with ``resolve_pads``). ``mode`` is
    constant, reflect, edge or wrap; negative pads crop before padding.
    """

    input: Tensor
    output: TensorResult
    mode: Str
    pads: Ints
    constant_value: Float
    MAPPING = MappingType.REORGANIZE
    ALGEBRA = Algebra(
        commutes_with=(f"{UNARY_ELEMENTWISE} (edge, reflect, wrap; constant if f(constant_value) == constant_value)",)
    )
    ONNX = ("Pad",)
    DEFAULTS = {"mode": "constant", "constant_value": 0.0}
    MODES = ("constant", "reflect", "edge", "wrap")

    @classmethod
    def resolve_pads(cls, rank: int, onnx_pads, axes=None) -> list:
        """Full-rank pads for ONNX pads given over ``axes`` (ONNX 18)."""
        onnx_pads = int_list(onnx_pads)
        if axes is None:
            require(len(onnx_pads) == 2 * rank, f"pads {onnx_pads} must have {2 * rank} entries for rank {rank}")
            return onnx_pads
        axes = normalize_axes(int_list(axes), rank)
        require(len(onnx_pads) == 2 * len(axes), f"pads {onnx_pads} must have {2 * len(axes)} entries for axes {axes}")
        pads = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            pads[axis], pads[rank + axis] = onnx_pads[i], onnx_pads[len(axes) + i]
        return pads

    @classmethod
    def _plan(cls, shape, attrs) -> tuple:
        """Per axis (crop_begin, crop_end, pad_begin, pad_end), checked."""
        rank = len(shape)
        mode, pads = attrs["mode"], int_list(attrs["pads"])
        require(mode in cls.MODES, f"mode '{mode}' is not one of {', '.join(cls.MODES)}")
        require(len(pads) == 2 * rank, f"pads {pads} must have {2 * rank} entries (begins, then ends) for rank {rank}")
        plan = []
        for axis, dim in enumerate(shape):
            begin, end = pads[axis], pads[rank + axis]
            crop = (max(0, -begin), max(0, -end))
            pad = (max(0, begin), max(0, end))
            kept = dim - sum(crop)
            require(kept >= 0, f"pads {begin} and {end} crop more than the {dim} elements of axis {axis}")
            if mode == "reflect" and max(pad) > 0:
                require(max(pad) < kept, f"reflect pads {pad} of axis {axis} must be smaller than its size {kept}")
            if mode in ("edge", "wrap") and max(pad) > 0:
                require(kept > 0, f"{mode} mode cannot pad the empty axis {axis}")
            plan.append(crop + pad)
        return plan

    @classmethod
    def infer(cls, operands, attrs):
        (x,) = operands
        plan = cls._plan(x.shape, attrs)
        return [x.with_shape(dim - cb - ce + pb + pe for dim, (cb, ce, pb, pe) in zip(x.shape, plan))]

    @classmethod
    def reference(cls, inputs, attrs, results):
        x = inputs[0]
        plan = cls._plan(x.shape, attrs)
        x = x[tuple(slice(cb, dim - ce) for dim, (cb, ce, _, _) in zip(x.shape, plan))]
        width = [(pb, pe) for (_, _, pb, pe) in plan]
        if attrs["mode"] == "constant":
            value = np.array(attrs["constant_value"]).astype(x.dtype)
            return [np.pad(x, width, mode="constant", constant_values=value)]
        return [np.pad(x, width, mode=attrs["mode"])]
