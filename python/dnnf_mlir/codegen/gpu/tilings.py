"""How a GPU kernel's root is tiled over workgroups and threads (``Tiling``), which
``schedule.py`` writes as transform-dialect steps.

A thread's tile is ``VECTOR`` elements along the innermost dim (fewer when that dim
is not a multiple), and for a contraction also ``VECTOR`` rows of its output. A
matmul-like contraction takes the device profile's ``matmul_threads`` (8x2, IREE's Mali
workgroup) and up to its ``matmul_rows`` rows a thread (4 on the generic profile; 16
on lavapipe's: fewer elements loaded per FMA, each a scalar load per SIMD lane there;
fewer where the grid would drop below ``MIN_MATMUL_WORKGROUPS``), by two vec4s of
columns where the grid still keeps that many (``_wide_columns``), its grid down the
rows first; a product written transposed (K^T) the same, its rows innermost. On a
device profile with ``attention_tiles``, an attention chain (scores, softmax, P V)
stages its scores once and tiles P V as a matmul (``attention_tiling``), its staged
loops spread over P V's threads only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..linalg_queries import parallel_loops
from .blocked_kernels import computes_blocked_convolution
from .contraction_steps import is_matmul_like
from .epilogue_dims import product_dims
from .kernels import RootGroup, is_contraction, loop_ranges
from .target import GpuDevice

VECTOR = 4  # elements per storage-buffer access: vec4
MAX_THREADS = 128  # per workgroup
MAX_THREADS_X = 64


def divisor(n: int, limit: int) -> int:
    """The largest divisor of ``n`` not above ``limit``."""
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            return d
    return 1


@dataclass(frozen=True)
class Tiling:
    """Per dim of the root's result: the elements of one thread's tile, and threads."""

    thread_tile: tuple
    threads: tuple

    @property
    def workgroup_tile(self) -> tuple:
        return tuple(t * n for t, n in zip(self.thread_tile, self.threads))

    @property
    def workgroup_size(self) -> int:
        return math.prod(self.threads)


def rows_dim(kernel: RootGroup) -> int | None:
    """The dim of the root's result a thread takes several rows of besides its innermost,
    sharing its loads: a contraction's rows (``epilogue_dims.product_dims``), or its
    columns where the root writes it transposed."""
    dims = product_dims(kernel)
    if dims is None:
        return None
    rows, columns = dims
    return rows if columns == len(kernel.shape) - 1 else columns


def choose_tiling(kernel: RootGroup, whole_rows: bool = False, matmul_threads: tuple | None = None,
                  matmul_rows: int = VECTOR) -> Tiling:
    """The root's tiling: ``VECTOR`` elements of its innermost dim a thread (and
    ``VECTOR`` rows for a contraction), at most ``MAX_THREADS_X`` threads along it, then
    the dims outward within ``MAX_THREADS``; a matmul's (``matmul_threads``: threads
    along its innermost dim, threads in all; ``matmul_rows``: a thread's rows, where its
    product's columns are the innermost dim) as the device profile says.
    ``whole_rows``: a workgroup spans the innermost dim whole, each thread its share
    (the statistics of a normalization, staged in shared memory, computed once per row)."""
    shape = kernel.shape
    rank = len(shape)
    tile = [1] * rank
    threads = [1] * rank
    if rank == 0:
        return Tiling((), ())
    tile[-1] = divisor(shape[-1], VECTOR)
    rows = rows_dim(kernel)
    if rows is not None:
        tile[rows] = divisor(shape[rows], VECTOR)
        if matmul_threads is not None:
            _register_tile(tile, shape, rows, product_dims(kernel)[1] != rank - 1, matmul_threads, matmul_rows)
    if rows is not None and tile[rows] < VECTOR and computes_blocked_convolution(kernel.contraction):
        # NC4HW4 at a width with no divisor of 4 (55, 27, 13, 7): VECTOR blocks of output
        # channels a thread instead of one pixel, each input load shared (PoCL SqueezeNet
        # 0.40 -> 0.16 of NCHW's GPU time; lavapipe 16 -> 64 channels at 55x55 1.23 -> 0.85).
        tile[rows], tile[1] = 1, divisor(shape[1], VECTOR)
    counts = [s // t for s, t in zip(shape, tile)]
    threads_x, budget = (matmul_threads if rows is not None and matmul_threads else (MAX_THREADS_X, MAX_THREADS))
    threads[-1] = divisor(counts[-1], threads_x)
    if whole_rows:
        tile[-1] = shape[-1] // threads[-1]
    budget //= threads[-1]
    for dim in ([rows] if rows is not None else []) + list(range(rank - 2, -1, -1)):
        if budget <= 1 or dim == rank - 1:
            continue
        if threads[dim] == 1:
            threads[dim] = divisor(counts[dim], budget)
            budget //= threads[dim]
    return _grid_of_three(Tiling(tuple(tile), tuple(threads)), shape)


MIN_MATMUL_WORKGROUPS = 8  # a matmul's thread rows shrink (to VECTOR at least) to keep this many workgroups


def _matmul_rows(shape, matmul_threads: tuple, matmul_rows: int) -> int:
    """At most ``matmul_rows`` rows a matmul's thread computes, fewer where its result has
    too few elements for ``MIN_MATMUL_WORKGROUPS`` workgroups of ``VECTOR`` columns a
    thread: a small batch matmul in one workgroup would run on one core of lavapipe."""
    per_row = VECTOR * matmul_threads[1] * MIN_MATMUL_WORKGROUPS
    return max(VECTOR, min(matmul_rows, math.prod(shape) // per_row))


def _register_tile(tile: list, shape, rows: int, transposed: bool, matmul_threads: tuple, matmul_rows: int):
    """A matmul's thread tile, set in ``tile``: up to ``matmul_rows`` rows of its product
    (``_matmul_rows``) by two vec4s of columns where ``_wide_columns`` says. ``rows`` is
    the root's dim besides its innermost that the thread tiles; a root written
    ``transposed`` (K^T) has the product's columns there and its rows innermost, stored
    a vec4 at a time: rows in vec4s, where the columns (the product's vectors) are too.
    On lavapipe MobileBERT's Q/K^T kernel took 0.73x the time of K^T's 4x4 with 16x8."""
    tall, wide = (len(shape) - 1, rows) if transposed else (rows, len(shape) - 1)
    most = _matmul_rows(shape, matmul_threads, matmul_rows)
    if not transposed:
        tile[tall] = divisor(shape[tall], most)
    elif shape[tall] % VECTOR == 0 and shape[wide] % VECTOR == 0:
        tile[tall] = VECTOR * divisor(shape[tall] // VECTOR, most // VECTOR)
    if _wide_columns(shape, tile[tall], shape[wide], matmul_threads):
        tile[wide] = 2 * VECTOR


def _wide_columns(shape, rows: int, columns: int, matmul_threads: tuple) -> bool:
    """Whether a matmul's thread of ``rows`` rows takes two vec4s of its ``columns``:
    where it is taller than ``VECTOR`` (its loops over rows and over the two vec4s then
    have distinct trip counts, unrolled in turn) and the grid keeps
    ``MIN_MATMUL_WORKGROUPS``. 16x8 reads 96 elements per 512 FMAs, 16x4 80 per 256."""
    wide = 2 * VECTOR
    return (rows > VECTOR and columns % wide == 0
            and math.prod(shape) // (rows * wide * matmul_threads[1]) >= MIN_MATMUL_WORKGROUPS)


def beyond_grid(trips) -> list:
    """The dims of more than one workgroup past the 3 innermost such: a grid spans 3
    dims, so these are taken whole by a workgroup, in loops of a thread."""
    return [d for d, n in enumerate(trips) if n > 1][:-3]


def _grid_of_three(tiling: Tiling, shape) -> Tiling:
    """The tiling with the dims ``beyond_grid`` whole in each thread's tile."""
    tile = list(tiling.thread_tile)
    for d in beyond_grid([n // t for n, t in zip(shape, tiling.workgroup_tile)]):
        tile[d] = shape[d] // tiling.threads[d]
    return Tiling(tuple(tile), tiling.threads)


ATTENTION_ROW_VALUES = 2  # values of K elements a row of an attention workgroup stages: its scores, their exponentials


def attention_rows(group: RootGroup) -> int | None:
    """The dim of an attention chain's result that its rows are: a group of reductions
    (the softmax) and two contractions (the scores, then P V, ``deferred_divisions``
    leaves matmul-like), its root that product or its epilogue, columns innermost."""
    if (group.kind != "reduction" or sum(1 for op in group.ops if is_contraction(op)) < 2
            or not is_matmul_like(group.contraction)):
        return None
    dims = product_dims(group, kinds=("reduction",))
    return dims[0] if dims is not None and dims[1] == len(group.shape) - 1 else None


def attention_tiling(group: RootGroup, rows: int, device: GpuDevice, tall: bool) -> Tiling | None:
    """An attention chain's tiling (``GpuDevice.attention_tiles``): a thread ``VECTOR``
    rows (``tall``: up to ``device.matmul_rows``) by ``VECTOR`` columns of P V (K
    stepped by 4, ``contraction_steps``), a workgroup as many rows as their staged
    values fit the device's shared memory (``ATTENTION_ROW_VALUES`` rows of K, a maximum
    and a sum, each) and a thread's share of their scores, computed in a private array,
    half its private memory (a 600-token sequence's 6 rows went over, one op a dispatch);
    None where one row does not fit.

    Tall threads in a small workgroup where the scores are staged: the staged loops
    then take P V's threads only (``GroupPlan.staged_threads``), and lavapipe runs a
    workgroup's invocations a SIMD width at a time, masked-off lanes included, so that
    P V over a few threads of a wide workgroup cost as much as over all of them."""
    shape, rank = group.shape, len(group.shape)
    ranges = loop_ranges(group.contraction)
    if ranges is None:
        return None
    extent = math.prod(r for r, p in zip(ranges, parallel_loops(group.contraction)) if not p)
    tile, threads = [1] * rank, [1] * rank
    tile[-1] = divisor(shape[-1], VECTOR)
    threads[-1] = divisor(shape[-1] // tile[-1], MAX_THREADS_X)
    fitting = min(device.max_shared_memory // ((ATTENTION_ROW_VALUES * extent + 2) * 4),
                  device.max_private_memory // 2 * threads[-1] // (extent * 4))
    if fitting < 1:
        return None
    tile[rows] = divisor(shape[rows], min(device.matmul_rows if tall else VECTOR, fitting))
    threads[rows] = divisor(shape[rows] // tile[rows], max(1, min(MAX_THREADS // threads[-1], fitting // tile[rows])))
    return _grid_of_three(Tiling(tuple(tile), tuple(threads)), shape)


__all__ = ["ATTENTION_ROW_VALUES", "MAX_THREADS", "MAX_THREADS_X", "MIN_MATMUL_WORKGROUPS", "Tiling", "VECTOR",
           "attention_rows", "attention_tiling", "beyond_grid", "choose_tiling", "divisor", "rows_dim"]
