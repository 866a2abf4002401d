// Transform library of the GPU targets (map to hardware): the vectors of a kernel as
// SPIR-V takes them, 1-d of at most 4 lanes. Transfers become plain loads and stores
// where they can (contiguous, in bounds) and loops of scalar ones where they cannot
// (strided reads: a gather along a convolution's channels; strided writes: a tile of
// rows written down a column); broadcasts and shape casts become 1-d ops. Strided 1-d
// transfers become loops first: the permutation patterns would turn a strided write into
// a 2-d one that the rank-1 lowering takes apart again, forever (LLaMA's attention).
//
//   dnnf-opt k.mlir --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=lowering/gpu/vector-lowering.mlir},transform-interpreter{entry-point=__dnnf_gpu_lower_vectors})'
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__dnnf_gpu_lower_vectors(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["gpu.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
