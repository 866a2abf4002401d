// Transform library of the CPU targets, stage 4 (lower-vectors): vector.contract ->
// outer products -> FMAs, n-D transfers -> 1-D loads and stores, multi-reductions
// unrolled. No canonicalization may run between this and the LLVM conversion: it would
// fold the rows of an accumulator back into one vector.from_elements of scalars.
//
// Functions marked dnnf.flatten_transfers (codegen/cpu/flat_transfers.py) first get their
// contiguous n-D transfers flattened into 1-D ones (permuted ones first become transposes
// of unpermuted ones, which flatten).
//
//   dnnf-opt kernel.mlir --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=lowering/cpu/vector-lowering.mlir},transform-interpreter{entry-point=__dnnf_lower_vectors})'
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__dnnf_lower_vectors(%root: !transform.any_op {transform.readonly}) {
    %flat = transform.structured.match ops{["func.func"]} attributes{dnnf.flatten_transfers} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %flat {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.flatten_vector_transfer_ops
    } : !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reorder_multi_reduction_dims lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.multi_reduction_flattening lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.multi_reduction_unrolling lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "eltwise"
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.yield
  }
}
