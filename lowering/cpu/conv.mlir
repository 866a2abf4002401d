// Transform library of the CPU targets: how an f32 linalg.conv_2d_nchw_fchw is tiled
// and vectorized (stage 2, schedule). The kernel plan
// (python/dnnf_mlir/codegen/cpu/conv.py) computes the parameters from the shapes and
// the target (FR output channels x WV output columns per register tile, the thread
// split, which window loops to unroll) and calls these sequences in this order:
//
//   @__dnnf_conv2d_register_tiles      (@__dnnf_conv2d_epilogue_register_tiles with an epilogue)
//   [@__dnnf_conv2d_peel_partial_columns]  a strided one's partial last column tile
//   @__dnnf_conv2d_reduction_steps    then the kw (and kh) loops unrolled
//   @__dnnf_conv2d_vectorize
//
// Before it, cpu/prepare.py has widened the output width to whole vectors and the plan
// has materialized the zero-padded input once (tiling would otherwise fuse the pad
// into every tile as a dynamic, scalar pad of a slice).
module attributes {transform.with_named_sequence} {

  // Register tiles of FR output channels x one row x WV columns; channels outer, so
  // that the weights of a channel block stay in cache while the rows stream (where the
  // input does not stay in L2, the plan has tiled the rows first: tiles.conv_rows_outer). The
  // accumulator's fill is fused into the tile. Returns the tiled op and the outermost
  // tile loop.
  transform.named_sequence @__dnnf_conv2d_register_tiles(
      %conv: !transform.any_op {transform.consumed},
      %fr: !transform.param<i64> {transform.readonly},
      %wv: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op) {
    %tiled, %n, %f, %oh, %ow = transform.structured.fuse %conv tile_sizes [1, %fr, 1, %wv, 0, 0, 0] interchange [0, 1, 2, 3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %n : !transform.any_op, !transform.any_op
  }

  // The same tiles rooted at an element-wise consumer of the convolution (bias,
  // activation, residual add over the output [N, F, OH, OW]): the convolution and its
  // fill are fused into each of its tiles, and the consumer applies to the accumulator
  // before the single store. Returns the tiled consumer and the outermost tile loop.
  transform.named_sequence @__dnnf_conv2d_epilogue_register_tiles(
      %epilogue: !transform.any_op {transform.consumed},
      %fr: !transform.param<i64> {transform.readonly},
      %wv: !transform.param<i64> {transform.readonly}) -> (!transform.any_op, !transform.any_op) {
    %tiled, %n, %f, %oh, %ow = transform.structured.fuse %epilogue tile_sizes [1, %fr, 1, %wv] interchange [0, 1, 2, 3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %tiled, %n : !transform.any_op, !transform.any_op
  }

  // Peel the partial last column tile off the tile loop of a tiled convolution (or its
  // epilogue), the loop enclosing it: a strided convolution's phases then write the
  // model's output width directly (conv.py). Returns the loop of whole tiles and the
  // partial one.
  transform.named_sequence @__dnnf_conv2d_peel_partial_columns(
      %tiled: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_op) {
    %loop = transform.get_parent_op %tiled {op_name = "scf.for"} : (!transform.any_op) -> !transform.op<"scf.for">
    %whole, %partial = transform.loop.peel %loop
      : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    transform.yield %whole, %partial : !transform.any_op, !transform.any_op
  }

  // The reductions one step at a time, input channels outermost: the KH x KW window of
  // one input plane is reused from L1 by the kh and kw steps. Returns the c, kh and kw
  // loops (the plan unrolls kw, and kh for windows up to 3x3: one straight run of FMA
  // groups per input channel instead of two short loops, ~+10%).
  transform.named_sequence @__dnnf_conv2d_reduction_steps(
      %conv: !transform.any_op {transform.consumed})
      -> (!transform.any_op, !transform.any_op, !transform.any_op) {
    %step, %c, %kh, %kw = transform.structured.tile_using_for %conv tile_sizes [0, 0, 0, 0, 1, 1, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield %c, %kh, %kw : !transform.any_op, !transform.any_op, !transform.any_op
  }

  // Each step, a conv_2d with one output row and a 1x1 window, is decomposed to a
  // conv_1d_ncw_fcw and vectorized; the fill becomes a vector constant; on this
  // kernel's loops only, the multiply-reduce becomes a vector.contract. Takes the steps
  // and the outermost tile loop.
  transform.named_sequence @__dnnf_conv2d_vectorize(
      %steps: !transform.any_op {transform.consumed},
      %tiles: !transform.any_op {transform.readonly}) {
    %conv1d = transform.structured.decompose %steps : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv1d : !transform.any_op
    %fills = transform.structured.match ops{["linalg.fill"]} in %tiles : (!transform.any_op) -> !transform.any_op
    transform.sequence %fills : !transform.any_op failures(suppress) {
    ^bb0(%fill: !transform.any_op):
      transform.structured.vectorize %fill : !transform.any_op
      transform.yield
    }
    transform.apply_patterns to %tiles {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.yield
  }
}
