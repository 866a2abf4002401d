// The pass is usable as a flag and inside --pass-pipeline; `only` restricts the
// rules ('|' between globs); bad options and unwritable statistics files are clear
// errors with a non-zero exit.
// RUN: dnnf-opt %s --ecg-rewrite | FileCheck %s --check-prefix=ALL
// RUN: dnnf-opt %s --pass-pipeline='builtin.module(ecg-rewrite{stats-file=%t.json})' | FileCheck %s --check-prefix=ALL
// RUN: FileCheck %s --check-prefix=STATS < %t.json
// RUN: dnnf-opt %s --ecg-rewrite='only=add-*|mul-constants' | FileCheck %s --check-prefix=ONLY
// RUN: not dnnf-opt %s --ecg-rewrite=bogus=1 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not dnnf-opt %s --ecg-rewrite=only=no-such-rule 2>&1 | FileCheck %s --check-prefix=NO-RULE
// RUN: not dnnf-opt %s --ecg-rewrite=stats-file=%t.missing/stats.json 2>&1 | FileCheck %s --check-prefix=UNWRITABLE

// ALL-LABEL: func.func @f
// ALL-NEXT:    %[[C:.*]] = "ecg.constant"() {value = dense<6.000000e+00> : tensor<f32>}
// ALL-NEXT:    %[[S:.*]] = "ecg.add"(%arg0, %arg1)
// ALL-NEXT:    %[[E:.*]] = "ecg.exp"(%[[S]])
// ALL-NEXT:    %[[M:.*]] = "ecg.mul"(%[[E]], %[[C]])
// ALL-NEXT:    return %[[M]]

// The statistics: per function and in total, rules applied per family.
// STATS:      "functions": {
// STATS-NEXT:   "f": {
// STATS-NEXT:     "ops_before": 5,
// STATS-NEXT:     "ops_after": 3,
// STATS-NEXT:     "flops_before": 320,
// STATS-NEXT:     "flops_after": 192,
// STATS-NEXT:     "rules_applied": {
// STATS-NEXT:       "associative": 2,
// STATS-NEXT:       "distributive": 0,
// STATS-NEXT:       "commutative": 0,
// STATS-NEXT:       "strength": 0
// STATS-NEXT:     },
// STATS-NEXT:     "rules": {
// STATS-NEXT:       "exp-mul-exp-chain": 1,
// STATS-NEXT:       "mul-constants": 1
// STATS:      "total": {
// STATS-NEXT:   "ops_before": 5,
// STATS-NEXT:   "ops_after": 3,
// STATS-NEXT:   "flops_before": 320,
// STATS-NEXT:   "flops_after": 192,

// Without the exp rules both Exp stay; the constants still fold.
// ONLY-LABEL: func.func @f
// ONLY:         "ecg.exp"(%arg0)
// ONLY:         "ecg.exp"(%arg1)
// ONLY:         "ecg.constant"() {value = dense<6.000000e+00> : tensor<f32>}
// ONLY-NOT:     "ecg.constant"
// ONLY:         return

// OPTION: dnnf-opt: error: pass 'ecg-rewrite' has no option 'bogus'
// NO-RULE: error: ecg-rewrite: no rewrite rule matches 'no-such-rule' (dnnf-opt --list-rewrite-rules lists them)
// UNWRITABLE: dnnf-opt: error: No such file or directory

func.func @f(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "ecg.exp"(%a) : (tensor<64xf32>) -> tensor<64xf32>
  %1 = "ecg.exp"(%b) : (tensor<64xf32>) -> tensor<64xf32>
  %c2 = "ecg.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c3 = "ecg.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %2 = "ecg.mul"(%0, %c2) : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %3 = "ecg.mul"(%2, %c3) : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %4 = "ecg.mul"(%3, %1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %4 : tensor<64xf32>
}
