// dnnf-codegen-map-to-hardware, code generation step 4, after steps 1-3 in other
// processes (CPU): on two threads the rows split between them become an OpenMP
// parallel loop whose workers sleep soon after the call (its team is the caller's
// choice: no omp_set_dynamic), and the module says it runs OpenMP; on one thread a
// plain loop.
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3,threads=2 | dnnf-opt --dnnf-codegen-schedule=cpu=x86-64-v3,threads=2 \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=cpu=x86-64-v3,threads=2 \
// RUN:   | dnnf-opt --dnnf-codegen-map-to-hardware=cpu=x86-64-v3,threads=2 | FileCheck %s
// RUN: dnnf-opt %s --dnnf-codegen-prepare=cpu=x86-64-v3 | dnnf-opt --dnnf-codegen-schedule=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --dnnf-codegen-bufferize=cpu=x86-64-v3 \
// RUN:   | dnnf-opt --dnnf-codegen-map-to-hardware=cpu=x86-64-v3 | FileCheck %s --check-prefix=ONE

// CHECK: module attributes {{.*}}dnnf.codegen.openmp
// CHECK-NOT: omp_set_dynamic
// CHECK-LABEL: func.func @add(
// CHECK: call @kmp_set_blocktime
// CHECK-NOT: omp_set_dynamic
// CHECK: omp.parallel {
// CHECK: omp.wsloop {
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NOT: scf.forall

// ONE-NOT: dnnf.codegen.openmp
// ONE-LABEL: func.func @add(
// ONE-NOT: omp.
// ONE: scf.for
// ONE-NOT: scf.forall
#id = affine_map<(i, j) -> (i, j)>
func.func @add(%x: tensor<256x128xf32>, %y: tensor<256x128xf32>) -> tensor<256x128xf32> {
  %e = tensor.empty() : tensor<256x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x, %y : tensor<256x128xf32>, tensor<256x128xf32>) outs(%e : tensor<256x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<256x128xf32>
  return %s : tensor<256x128xf32>
}
