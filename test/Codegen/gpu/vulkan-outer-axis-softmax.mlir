// A softmax over the outer axis of a value the kernel computes (|x| here): its maximum
// and its sum are staged, each a loop over the workgroup's threads with |x| fused in.
// The sum's loop left a dead clone of the exponentials reading |x| behind, which made
// |x| count as used after the maximum's loop: fusion yielded it from that loop, and
// fusing it on into the maximum's scf.for aborted the process ("SmallVector unable to
// grow"). Dead clones are erased before each loop (codegen/gpu/schedule.py, _threads).
// RUN: dnnf-opt %s --split-input-file --dnnf-codegen-prepare=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-schedule=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-bufferize=target=vulkan \
// RUN:   | dnnf-opt --split-input-file --dnnf-codegen-map-to-hardware=target=vulkan | FileCheck %s

// 17 rows: the reductions are not split over threads (``schedule._split``).
// CHECK-LABEL: func.func private @kernel_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<17x8xf32>, %[[Y:[a-z0-9]+]]: memref<17x8xf32>
// CHECK-SAME: dnnf.gpu.schedule = "fused"
// CHECK: gpu.launch_func {{.*}} args(%[[X]] : memref<17x8xf32>, %[[Y]] : memref<17x8xf32>) {dnnf.gpu.writes = [false, true]}
// CHECK-NOT: gpu.launch_func
// CHECK: return
#id = affine_map<(r, c) -> (r, c)>
#col = affine_map<(r, c) -> (c)>
#one = affine_map<(c) -> (c)>
func.func private @kernel_0(%x: tensor<17x8xf32>) -> tensor<17x8xf32> attributes {dnnf.kernel} {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<17x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
       ins(%x : tensor<17x8xf32>) outs(%e : tensor<17x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.absf %v : f32
    linalg.yield %r : f32
  } -> tensor<17x8xf32>
  %ec = tensor.empty() : tensor<8xf32>
  %lows = linalg.generic {indexing_maps = [#one], iterator_types = ["parallel"]} outs(%ec : tensor<8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %lowest : f32
  } -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
       ins(%a : tensor<17x8xf32>) outs(%lows : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
       ins(%a, %m : tensor<17x8xf32>, tensor<8xf32>) outs(%e : tensor<17x8xf32>) {
  ^bb0(%v: f32, %mv: f32, %o: f32):
    %d = arith.subf %v, %mv : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<17x8xf32>
  %zeros = linalg.generic {indexing_maps = [#one], iterator_types = ["parallel"]} outs(%ec : tensor<8xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
       ins(%p : tensor<17x8xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
       ins(%p, %s : tensor<17x8xf32>, tensor<8xf32>) outs(%e : tensor<17x8xf32>) {
  ^bb0(%v: f32, %sv: f32, %o: f32):
    %r = arith.divf %v, %sv : f32
    linalg.yield %r : f32
  } -> tensor<17x8xf32>
  return %y : tensor<17x8xf32>
}

func.func @main(%x: tensor<17x8xf32>) -> tensor<17x8xf32> {
  %r = call @kernel_0(%x) : (tensor<17x8xf32>) -> tensor<17x8xf32>
  return %r : tensor<17x8xf32>
}
