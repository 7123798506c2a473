// The result cache: the cold run stores both functions, the warm run prints
// the same from the cache (docs/cache.md), and the statistics count both.
// RUN: rm -rf %t.cache
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize,cse))' --cache=%t.cache | filecheck %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize,cse))' --cache=%t.cache | filecheck %s
// RUN: passflow-opt --cache=%t.cache --cache-stats | filecheck --check-prefix=STATS %s

// CHECK-LABEL: func.func @square
// CHECK-NEXT:    %{{.*}} = arith.muli %a, %a : i32
func.func @square(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %x = arith.addi %a, %c0 : i32
  %y = arith.addi %a, %c0 : i32
  %z = arith.muli %x, %y : i32
  func.return %z : i32
}

// CHECK-LABEL: func.func @caller
// CHECK-NEXT:    func.call @square
func.func @caller(%a: i32) -> i32 {
  %r = func.call @square(%a) : (i32) -> i32
  func.return %r : i32
}

// STATS: entries: 2
// STATS: lookups: 4: 2 hits, 2 misses
