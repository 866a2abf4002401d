// Transform library of the GPU targets (prepare): every named linalg op becomes a
// linalg.generic, which the schedules tile, fuse and vectorize alike, inputs a body does
// not read (a pooling op's window) are dropped, and reshapes of empty tensors become empty
// tensors of their own (an accumulator is then not a view of another buffer).
//
//   dnnf-opt k.mlir --pass-pipeline='builtin.module(transform-preload-library{transform-library-paths=lowering/gpu/generalize.mlir},transform-interpreter{entry-point=__dnnf_gpu_generalize})'
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__dnnf_gpu_generalize(%root: !transform.any_op {transform.readonly}) {
    %linalg = transform.structured.match interface{LinalgOp} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %linalg : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %generic = transform.structured.generalize %op : (!transform.any_op) -> !transform.any_op
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.linalg.erase_unnecessary_inputs
      transform.apply_patterns.tensor.fold_tensor_empty
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
