// Transform library of the CPU targets: how an f32 linalg.matmul / batch_matmul is
// tiled, packed and vectorized (stage 2, schedule). The kernel plan
// (python/dnnf_mlir/codegen/cpu/matmul.py) computes the parameters from the shapes and
// the target (MR x NR register tiles, whether to pad, pack and unroll; the thread
// split) and calls these sequences in this order, each on the op it tagged:
//
//   [@__dnnf_matmul_pad_to_register_tiles]    M or N not a multiple of MR, NR (threads
//                                             that cannot split the whole tiles evenly)
//   @__dnnf_matmul_register_tiles             or ..._epilogue_register_tiles
//   [@__dnnf_peel_partial_tile]               else, on the m then n loop that needs it
//   [@__dnnf_matmul_pack_b]                   at least 4 row tiles and K >= 16
//   @__dnnf_matmul_k_steps                    then the k loop unrolled by 4 or 2
//   @__dnnf_matmul_vectorize
//
// Each has a batch_matmul twin (@__dnnf_batch_matmul_...): the same steps with the
// batch dim tiled by one. Try a change on one op with dnnf-opt (test/Lowering/
// cpu-matmul.mlir shows how), or on a whole model with a changed copy of lowering/ in
// $DNNF_LOWERING.
module attributes {transform.with_named_sequence} {

  // Pad the whole op once to multiples of the register tile, so that every tile is full
  // and static (the vectorizer needs static tiles; the fill folds into a fill of the
  // padded shape).
  transform.named_sequence @__dnnf_matmul_pad_to_register_tiles(
      %matmul: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %padded, %pad, %copy = transform.structured.pad %matmul pad_to_multiple_of [%mr, %nr, 1] {
        padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2],
        nofold_flags = [0, 0, 0], copy_back_op = "none"}
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %padded : !transform.any_op
  }
  transform.named_sequence @__dnnf_batch_matmul_pad_to_register_tiles(
      %matmul: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> !transform.any_op {
    %padded, %pad, %copy = transform.structured.pad %matmul pad_to_multiple_of [1, %mr, %nr, 1] {
        padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [0, 1, 2, 3],
        nofold_flags = [0, 0, 0], copy_back_op = "none"}
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %padded : !transform.any_op
  }

  // MR x NR register tiles over the whole K, n outer and m inner (the packed B panel of
  // one n step serves every m step); the accumulator's fill is fused into the tile.
  // Returns the tiled op and the tile loops, outermost first. A dim that is not a
  // multiple of its tile ends in a partial tile, which @__dnnf_peel_partial_tile
  // makes a loop of its own.
  transform.named_sequence @__dnnf_matmul_register_tiles(
      %matmul: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op) {
    %tiled, %n, %m = transform.structured.fuse %matmul tile_sizes [%mr, %nr, 0] interchange [1, 0, 2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %n, %m : !transform.any_op, !transform.any_op, !transform.any_op
  }
  transform.named_sequence @__dnnf_batch_matmul_register_tiles(
      %matmul: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op) {
    %tiled, %b, %n, %m = transform.structured.fuse %matmul tile_sizes [1, %mr, %nr, 0] interchange [0, 2, 1, 3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %b, %n, %m : !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op
  }

  // The same tiles with an element-wise epilogue (bias, activation) as the root: the
  // matmul tile is computed inside the epilogue's register tile, and the epilogue
  // applies to the accumulators before the single store. Returns the tiled epilogue and
  // the tile loops, outermost first (the matmul is found inside them by its tag).
  transform.named_sequence @__dnnf_matmul_epilogue_register_tiles(
      %epilogue: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op) {
    %tiled, %n, %m = transform.structured.fuse %epilogue tile_sizes [%mr, %nr] interchange [1, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %n, %m : !transform.any_op, !transform.any_op, !transform.any_op
  }
  // The same with m outer and n inner (returns the m loop first): where A leaves L2 and B
  // stays there, read in place (matmul.tiles_rows_outer), A is read once.
  transform.named_sequence @__dnnf_matmul_epilogue_register_tiles_rows_outer(
      %epilogue: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op) {
    %tiled, %m, %n = transform.structured.fuse %epilogue tile_sizes [%mr, %nr] interchange [0, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %m, %n : !transform.any_op, !transform.any_op, !transform.any_op
  }
  transform.named_sequence @__dnnf_batch_matmul_epilogue_register_tiles(
      %epilogue: !transform.any_op {transform.consumed},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op) {
    %tiled, %b, %n, %m = transform.structured.fuse %epilogue tile_sizes [1, %mr, %nr] interchange [0, 2, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %b, %n, %m : !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op
  }

  // Peel the partial last tile off a tile loop (M or N not a multiple of MR, NR): the
  // loop keeps the whole tiles, a second one (one iteration) the remainder, and
  // canonicalization makes the sizes of both static, so that each vectorizes with its
  // epilogue and no padded copy of the operands (a padded matmul cannot take its
  // epilogue: DeepLab's 1x1 conv over 45x45 = 2025 columns paid a second pass and a
  // padded B copy). Returns the loop of whole tiles and the partial one.
  transform.named_sequence @__dnnf_peel_partial_tile(
      %loop: !transform.any_op {transform.consumed}) -> (!transform.any_op, !transform.any_op) {
    %for = transform.cast %loop : !transform.any_op to !transform.op<"scf.for">
    %whole, %partial = transform.loop.peel %for
      : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.yield %whole, %partial : !transform.any_op, !transform.any_op
  }

  // Pack the K x NR panel of B into a contiguous buffer: a nofold pad, hoisted out of
  // the m loop. Without it, rows of B that are a multiple of 4 KiB apart all land in
  // the same L1 sets (~3x slower on 768 x 3072). (Packing whole K x NC blocks by two
  // loops copies twice and still walks strip by strip: measured slower.)
  transform.named_sequence @__dnnf_matmul_pack_b(
      %matmul: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %padded, %pad, %copy = transform.structured.pad %matmul {
        padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [1],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %panel = transform.get_producer_of_operand %padded[1] : (!transform.any_op) -> !transform.any_op
    %packed = transform.structured.hoist_pad %panel by 1 loops : (!transform.any_op) -> !transform.any_op
    transform.yield %padded : !transform.any_op
  }
  transform.named_sequence @__dnnf_batch_matmul_pack_b(
      %matmul: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %padded, %pad, %copy = transform.structured.pad %matmul {
        padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32], padding_dimensions = [2],
        nofold_flags = [0, 1, 0], copy_back_op = "none"}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %panel = transform.get_producer_of_operand %padded[1] : (!transform.any_op) -> !transform.any_op
    %packed = transform.structured.hoist_pad %panel by 1 loops : (!transform.any_op) -> !transform.any_op
    transform.yield %padded : !transform.any_op
  }

  // One k step at a time: each step is an MR x 1 by 1 x NR outer product into the
  // accumulator tile, which stays in registers across the k loop. Returns the k loop
  // (the plan unrolls it by 4 when K allows: fewer loop-carried pointer updates, longer
  // runs of FMAs, ~+8% on AVX-512).
  transform.named_sequence @__dnnf_matmul_k_steps(
      %matmul: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %step, %k = transform.structured.tile_using_for %matmul tile_sizes [0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %k : !transform.any_op
  }
  transform.named_sequence @__dnnf_batch_matmul_k_steps(
      %matmul: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %step, %k = transform.structured.tile_using_for %matmul tile_sizes [0, 0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield %k : !transform.any_op
  }

  // Each k step becomes one vector.contract (lowered to broadcast FMAs by
  // vector-lowering.mlir); the accumulator's fill in the tile becomes a vector
  // constant. Takes the k steps and the fills of the register tiles.
  transform.named_sequence @__dnnf_matmul_vectorize(
      %steps: !transform.any_op {transform.consumed},
      %fills: !transform.any_op {transform.consumed}) {
    transform.structured.vectorize %steps {create_named_contraction} : !transform.any_op
    transform.sequence %fills : !transform.any_op failures(suppress) {
    ^bb0(%fill: !transform.any_op):
      transform.structured.vectorize %fill : !transform.any_op
      transform.yield
    }
    transform.yield
  }
}
