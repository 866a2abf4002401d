"""TopK: one pass over each row, keeping the k best in a sorted buffer.

The input is viewed as (outer, n, inner) around its axis, the results as (outer, k,
inner); a row is one (outer, inner) pair. ``scf.for`` loops over the rows and their n
elements carry both results as tensors (updated in place once bufferized). A row's k
slots start empty (index -1). An element enters when it beats the k-th slot (or that
slot is empty; that slot's value and state are carried in registers): it is then
inserted by one pass over the slots, shifting down those it beats (``_insert``: by
value alone, since every kept index is lower; a general merge of two entries by value
and index made TopK 5 of 64x1000 1.8x slower on AVX-512). Entries compare by
value, then by index (the lower first); NaN beats every number and equals NaN. Work
is n comparisons per row plus k per insertion, and the IR does not grow with k.

Most elements of a long row do not enter, so the row is read in blocks of ``BLOCK``
first compared with the k-th value without a branch (one vector compare once LLVM
vectorizes them), and only a block with a candidate goes through the element loop;
the compare lets NaN through, so the element loop decides exactly as before.

From ``HEAP_FROM`` slots on, an insertion's k steps cost more than the row's compares
(and a GPU thread's loop budget, ``codegen/gpu/loop_budget.py``): the slots are then a
binary heap with the worst entry first, an entry entering in place of it and sifted
down (a loop of the heap's depth), and the heap is sorted at the end (k sifts). Every
loop has a constant trip count, so ``row_loop_iterations`` bounds a row's iterations
(``transforms/split_top_k.py`` splits the rows that would run past a GPU's budget).
"""

from math import prod

from ... import _mlir
from ..._mlir import arith, ir
from ...ecg.shapes import normalize_axis
from ...linalg_builders import element_of
from .builders import (
    compare, constant, empty, extract, index, is_float, is_unsigned, reinterpret, reshape, select, shape_of,
)
from .registry import lowers

# On the loop over rows: its iterations write disjoint rows, so a GPU runs a row per
# thread (``codegen/gpu/loop_kernels.py``).
INDEPENDENT_ATTR = "dnnf.independent_iterations"

# Elements per block of the pre-filter: one AVX-512 vector of f32 (two of AVX2).
BLOCK = 16
# The fewest slots kept as a heap (fewer: sorted, an insertion a pass over them).
HEAP_FROM = 33


def _i64():
    return ir.IntegerType.get_signless(64)


def _better(a, b, largest: bool):
    """Whether value ``a`` comes before value ``b`` (i1), and whether they tie (i1)."""
    if is_float(a.type):
        a_nan = arith.cmpf(arith.CmpFPredicate.UNO, a, a)
        b_nan = arith.cmpf(arith.CmpFPredicate.UNO, b, b)
        strictly = compare("gt" if largest else "lt", a, b)
        nan_wins = arith.andi(a_nan if largest else b_nan, arith.xori(b_nan if largest else a_nan,
                                                                         constant(a_nan.type, 1)))
        tie = arith.ori(compare("eq", a, b), arith.andi(a_nan, b_nan))
        return arith.ori(strictly, nan_wins), tie
    if is_unsigned(a.type):
        signless = ir.IntegerType.get_signless(ir.IntegerType(a.type).width)
        a, b = reinterpret(a, signless), reinterpret(b, signless)
        predicate = arith.CmpIPredicate.ugt if largest else arith.CmpIPredicate.ult
        return arith.cmpi(predicate, a, b), compare("eq", a, b)
    return compare("gt" if largest else "lt", a, b), compare("eq", a, b)


def _empty_slots(values, indices, filler, at, k: int):
    """Every slot of the row at ``at(s)`` empty: index -1, value ``filler`` (defined, never read
    as a value)."""
    loop = _mlir.scf.ForOp(index(0), index(k), index(1), [values, indices])
    with ir.InsertionPoint(loop.body):
        values, indices = loop.inner_iter_args
        slot = at(loop.induction_variable)
        _mlir.scf.YieldOp([_mlir.tensor.insert(filler, values, slot),
                           _mlir.tensor.insert(constant(_i64(), -1), indices, slot)])
    return loop.results


def _beats(value, position, held, held_at, largest: bool):
    """Whether the entry (``value``, ``position``) comes before the entry (``held``,
    ``held_at``) (i1): by value, then the lower index; an empty slot (index -1) last."""
    better, tie = _better(value, held, largest)
    earlier = compare("lt", position, held_at)
    zero = constant(_i64(), 0)
    return arith.andi(compare("ge", position, zero),
                      arith.ori(compare("lt", held_at, zero), arith.ori(better, arith.andi(tie, earlier))))


def _insert(values, indices, value, position, at, k: int, largest: bool):
    """The entry (``value``, ``position``) inserted into the sorted slots ``at(s)``, s < k.
    The row is offered in order, so ``position`` is above every kept index: the entry
    goes to the first slot it beats by value alone (or that is empty; a tie keeps the
    kept entry first), and each slot after it takes the entry of the slot before. Slot s
    takes: itself where the entry does not beat it, else the slot before where the entry
    beat that one too, else the entry; one compare and two selects a slot."""
    i1 = ir.IntegerType.get_signless(1)
    loop = _mlir.scf.ForOp(index(0), index(k), index(1), [values, indices, value, position, constant(i1, 0)])
    with ir.InsertionPoint(loop.body):
        values, indices, before, before_at, shifting = loop.inner_iter_args
        slot = at(loop.induction_variable)
        held, held_at = extract(values, slot), extract(indices, slot)
        enters = arith.ori(compare("lt", held_at, constant(_i64(), 0)), _better(value, held, largest)[0])
        _mlir.scf.YieldOp([
            _mlir.tensor.insert(select(enters, select(shifting, before, value), held), values, slot),
            _mlir.tensor.insert(select(enters, select(shifting, before_at, position), held_at), indices, slot),
            held, held_at, enters,
        ])
    return loop.results[:2]


def heap_depth(k: int) -> int:
    """The levels below the root of a heap of ``k`` slots: a sift's steps."""
    return max(1, k.bit_length() - 1)


def _sift_down(values, indices, entry, hole, size, at, k: int, largest: bool):
    """The entry (value, index) placed from slot ``hole`` down the heap of the first
    ``size`` slots (each slot worse than its children): a child worse than the entry
    moves up into the hole, the worse of two first. Children are read at most at slot
    k - 1 (a missing one is not taken)."""
    value, position = entry
    loop = _mlir.scf.ForOp(index(0), index(heap_depth(k)), index(1),
                           [values, indices, hole, constant(ir.IntegerType.get_signless(1), 0)])
    with ir.InsertionPoint(loop.body):
        values, indices, hole, done = loop.inner_iter_args
        left = arith.addi(arith.muli(hole, index(2)), index(1))
        right = arith.addi(left, index(1))
        children = []
        for child in (left, right):
            slot = at(arith.minui(child, index(k - 1)))
            children.append((extract(values, slot), extract(indices, slot), arith.cmpi(arith.CmpIPredicate.ult,
                                                                                      child, size)))
        (left_value, left_at, has_left), (right_value, right_at, has_right) = children
        take_right = arith.andi(has_right, _beats(left_value, left_at, right_value, right_at, largest))
        child_value, child_at = select(take_right, right_value, left_value), select(take_right, right_at, left_at)
        move = arith.andi(arith.andi(has_left, arith.xori(done, constant(done.type, 1))),
                          _beats(value, position, child_value, child_at, largest))
        slot = at(hole)
        _mlir.scf.YieldOp([
            _mlir.tensor.insert(select(move, child_value, extract(values, slot)), values, slot),
            _mlir.tensor.insert(select(move, child_at, extract(indices, slot)), indices, slot),
            select(move, select(take_right, right, left), hole), arith.ori(done, arith.xori(move, constant(
                done.type, 1))),
        ])
    values, indices, hole, _ = loop.results
    slot = at(hole)
    return _mlir.tensor.insert(value, values, slot), _mlir.tensor.insert(position, indices, slot)


def _heap_sorted(values, indices, at, k: int, largest: bool):
    """The heap's entries sorted best first: the worst moved to the last free slot, k - 1 times."""
    loop = _mlir.scf.ForOp(index(1), index(k), index(1), [values, indices])
    with ir.InsertionPoint(loop.body):
        values, indices = loop.inner_iter_args
        end = arith.subi(index(k), loop.induction_variable)
        first, last = at(index(0)), at(end)
        entry = extract(values, last), extract(indices, last)
        values = _mlir.tensor.insert(extract(values, first), values, last)
        indices = _mlir.tensor.insert(extract(indices, first), indices, last)
        _mlir.scf.YieldOp(list(_sift_down(values, indices, entry, index(0), end, at, k, largest)))
    return loop.results


def row_loop_iterations(n: int, k: int) -> int:
    """The most loop iterations the TopK of one row of ``n`` runs (every element entering):
    what a GPU thread running the row runs at most."""
    if k < HEAP_FROM:
        return k + n // BLOCK + n * (1 + k)
    depth = heap_depth(k)
    return k + n // BLOCK + n * (1 + depth) + (k - 1) * (1 + depth)


def _may_enter(value, threshold, largest: bool):
    """Whether ``value`` may beat ``threshold`` (i1): ``_better`` for integers; for floats
    also when either is NaN (one unordered compare, a superset of ``_better``)."""
    if is_float(value.type):
        return arith.cmpf(arith.CmpFPredicate.UGT if largest else arith.CmpFPredicate.ULT, value, threshold)
    return _better(value, threshold, largest)[0]


def _filtered_blocks(rows, o, i, blocks: int, state, scan, largest: bool):
    """The first ``blocks * BLOCK`` elements of the row, a block at a time: the block's
    elements are compared with the k-th value without a branch (LLVM's SLP vectorizer
    makes that one vector compare and an or-reduction), and only a block holding a
    candidate, or met while a slot is empty, is offered element by element (``scan``)."""
    loop = _mlir.scf.ForOp(index(0), index(blocks * BLOCK), index(BLOCK), state)
    with ir.InsertionPoint(loop.body):
        begin = loop.induction_variable
        threshold, open_slot = loop.inner_iter_args[2:]
        candidate = open_slot
        for lane in range(BLOCK):
            at = arith.addi(begin, index(lane)) if lane else begin
            candidate = arith.ori(candidate, _may_enter(extract(rows, [o, at, i]), threshold, largest))
        branch = _mlir.scf.IfOp(candidate, [t.type for t in state], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            _mlir.scf.YieldOp(scan(begin, BLOCK, list(loop.inner_iter_args)))
        with ir.InsertionPoint(branch.else_block):
            _mlir.scf.YieldOp(list(loop.inner_iter_args))
        _mlir.scf.YieldOp(list(branch.results))
    return list(loop.results)


@lowers("top_k")
def lower_top_k(op, args):
    (x,) = args
    shape = shape_of(x)
    axis = normalize_axis(op.attrs["axis"], len(shape))
    k, largest = op.attrs["k"], bool(op.attrs["largest"])
    outer, n, inner = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    rows = reshape(x, (outer, n, inner))
    element = element_of(x)
    loop = _mlir.scf.ForOp(index(0), index(outer * inner), index(1),
                           [empty((outer, k, inner), element), empty((outer, k, inner), _i64())])
    loop.attributes[INDEPENDENT_ATTR] = ir.UnitAttr.get()
    with ir.InsertionPoint(loop.body):
        row = loop.induction_variable
        o = arith.divui(row, index(inner)) if inner != 1 else row
        i = arith.remui(row, index(inner)) if inner != 1 else index(0)

        def at(slot):
            """The coordinates of slot ``slot`` of this row in the results."""
            return [o, slot, i]

        values, indices = _empty_slots(*loop.inner_iter_args, extract(rows, [o, index(0), i]), at, k)
        # The worst kept entry's value and whether its slot is empty ride in registers, beside
        # the results: the last slot when sorted, the first when a heap.
        heap = k >= HEAP_FROM
        worst = at(index(0 if heap else k - 1))

        def scan(begin, count: int, state):
            """The ``count`` elements from ``begin`` of the row offered to the slots, one by one."""
            offers = _mlir.scf.ForOp(index(0), index(count), index(1), state)
            with ir.InsertionPoint(offers.body):
                values, indices, threshold, open_slot = offers.inner_iter_args
                j = arith.addi(begin, offers.induction_variable)
                value = extract(rows, [o, j, i])
                better, _ = _better(value, threshold, largest)  # a tie comes later: it does not enter
                branch = _mlir.scf.IfOp(arith.ori(open_slot, better), [t.type for t in state], has_else=True)
                with ir.InsertionPoint(branch.then_block):
                    entry = value, arith.index_cast(_i64(), j)
                    if heap:
                        values, indices = _sift_down(values, indices, entry, index(0), index(k), at, k, largest)
                    else:
                        values, indices = _insert(values, indices, *entry, at, k, largest)
                    still_open = compare("lt", extract(indices, worst), constant(_i64(), 0))
                    _mlir.scf.YieldOp([values, indices, extract(values, worst), still_open])
                with ir.InsertionPoint(branch.else_block):
                    _mlir.scf.YieldOp(list(offers.inner_iter_args))
                _mlir.scf.YieldOp(list(branch.results))
            return list(offers.results)

        state = [values, indices, extract(values, worst), constant(ir.IntegerType.get_signless(1), 1)]
        blocks = n // BLOCK
        if blocks:
            state = _filtered_blocks(rows, o, i, blocks, state, scan, largest)
        if n % BLOCK:
            state = scan(index(blocks * BLOCK), n % BLOCK, state)
        _mlir.scf.YieldOp(list(_heap_sorted(*state[:2], at, k, largest)) if heap else state[:2])
    out_shape = list(shape)
    out_shape[axis] = k
    return [reshape(result, out_shape) for result in loop.results]
