// Region simplification after each canonicalization round (MLIR's simplifyRegions):
// dead ops and dead block arguments (with the operands feeding them) in normal
// mode; identical blocks merged and redundant arguments dropped in aggressive
// mode. The cases follow the shapes of MLIR's canonicalize-dce.mlir,
// canonicalize-block-merge.mlir and ControlFlow/canonicalize.mlir; mlir-opt
// 22.1.8 prints the same IR for each (up to value names and `return` spelling).
// "foo.*" ops are unregistered: an opaque "foo.jump" is a predecessor whose
// operands cannot be edited, as an op without BranchOpInterface in MLIR.
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -pass-pipeline='builtin.module(func.func(canonicalize{test-convergence}))' -o %t.normal
// RUN: filecheck %s --check-prefix=NORMAL < %t.normal
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -pass-pipeline='builtin.module(func.func(canonicalize{region-simplify=aggressive test-convergence}))' -o %t.aggressive
// RUN: filecheck %s --check-prefix=AGGR < %t.aggressive

// A value carried around a loop that nobody reads: the argument, its operands and
// the op computing the next value all go, though each "uses" the other.
// NORMAL-LABEL: func.func @loop_carried_dead(
// NORMAL-NEXT:    cf.br ^[[LOOP:.+]]{{$}}
// NORMAL-NEXT:  ^[[LOOP]]:
// NORMAL-NEXT:    cf.br ^[[LOOP]]{{$}}
func.func @loop_carried_dead(%init: f32) {
  cf.br ^loop(%init : f32)
^loop(%v: f32):
  %next = arith.addf %v, %v : f32
  cf.br ^loop(%next : f32)
}

// -----

// Arguments 0 and 2 are dead: they and the matching operands are erased, the
// others keep their order.
// NORMAL-LABEL: func.func @some_args_dead(
// NORMAL-SAME:    %[[C:[^:]+]]: i1, %[[A:[^:]+]]: i32, %[[B:[^:]+]]: i32, %{{[^:]+}}: i64)
// NORMAL-NEXT:    cf.cond_br %[[C]], ^[[USE:[a-zA-Z0-9_]+]](%[[B]], %[[A]] : i32, i32), ^[[DONE:.+]]{{$}}
// NORMAL-NEXT:  ^[[USE]](%[[Y:[^:]+]]: i32, %[[W:[^:]+]]: i32):
// NORMAL-NEXT:    "foo.sink"(%[[Y]])
// NORMAL-NEXT:    "foo.sink"(%[[W]])
func.func @some_args_dead(%c: i1, %a: i32, %b: i32, %d: i64) {
  cf.cond_br %c, ^use(%a, %b, %d, %a : i32, i32, i64, i32), ^done
^use(%x: i32, %y: i32, %z: i64, %w: i32):
  "foo.sink"(%y) : (i32) -> ()
  "foo.sink"(%w) : (i32) -> ()
  cf.br ^done
^done:
  return
}

// -----

// An unused argument goes even when the predecessor is opaque (MLIR does not
// mark it live: the op is not a registered terminator); a used one stays.
// NORMAL-LABEL: func.func @opaque_predecessor(
// NORMAL-NEXT:    "foo.jump"(%{{.*}}) [^[[NEXT:.+]]] : (i32) -> ()
// NORMAL-NEXT:  ^[[NEXT]]:
func.func @opaque_predecessor(%a: i32) {
  "foo.jump"(%a) [^next] : (i32) -> ()
^next(%unused: i32):
  return
}

// -----

// NORMAL-LABEL: func.func @opaque_predecessor_used(
// NORMAL-NEXT:    "foo.jump"() [^[[NEXT:.+]]] : () -> ()
// NORMAL-NEXT:  ^[[NEXT]](%[[USED:[^:]+]]: i32):
// NORMAL-NEXT:    func.return %[[USED]] : i32
func.func @opaque_predecessor_used() -> i32 {
  "foo.jump"() [^next] : () -> ()
^next(%used: i32):
  return %used : i32
}

// -----

// Nested regions are simplified too; an entry block's arguments belong to the
// parent op and stay, used or not.
// NORMAL-LABEL: func.func @nested_region(
// NORMAL-NEXT:    "foo.region"() ({
// NORMAL-NEXT:    ^{{.+}}(%{{[^:]+}}: i32):
// NORMAL-NEXT:      cf.br ^[[LOOP:.+]]{{$}}
// NORMAL-NEXT:    ^[[LOOP]]:
// NORMAL-NEXT:      cf.cond_br %{{.+}}, ^[[LOOP]], ^[[EXIT:.+]]{{$}}
// NORMAL-NEXT:    ^[[EXIT]]:
// NORMAL-NEXT:      "foo.yield"() : () -> ()
func.func @nested_region(%c: i1, %a: i32) {
  "foo.region"() ({
  ^entry(%unused_entry: i32):
    cf.br ^loop(%a : i32)
  ^loop(%v: i32):
    %n = arith.addi %v, %v : i32
    cf.cond_br %c, ^loop(%n : i32), ^exit
  ^exit:
    "foo.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

// Dropping dead arguments alone is not a change as MLIR counts it: no further
// iteration runs, so the case now equal to the default stays (as in mlir-opt).
// NORMAL-LABEL: func.func @switch_dead_args(
// NORMAL:         cf.switch %{{.+}} : i32, [
// NORMAL-NEXT:    default: ^[[TARGET:[^,]+]],
// NORMAL-NEXT:      7: ^[[TARGET]]{{$}}
// NORMAL-NEXT:    ]
// NORMAL-NEXT:  ^[[TARGET]]:
func.func @switch_dead_args(%flag: i32, %a: i32, %b: i32) {
  "foo.jump"() [^sw, ^target] : () -> ()
^sw:
  cf.switch %flag : i32, [
    default: ^target(%a : i32),
    7: ^target(%b : i32)
  ]
^target(%v: i32):
  "foo.effect"() : () -> ()
  return
}

// -----

// Identical blocks are merged only in aggressive mode.
// NORMAL-LABEL: func.func @identical_blocks(
// NORMAL-NEXT:    "foo.jump"() [^[[A:.+]], ^[[B:.+]]] : () -> ()
// NORMAL-NEXT:  ^[[A]]:
// NORMAL-NEXT:    func.return
// NORMAL-NEXT:  ^[[B]]:
// NORMAL-NEXT:    func.return
// AGGR-LABEL:   func.func @identical_blocks(
// AGGR-NEXT:      "foo.jump"() [^[[A:.+]], ^[[A]]] : () -> ()
// AGGR-NEXT:    ^[[A]]:
// AGGR-NEXT:      func.return
// AGGR-NEXT:    }
func.func @identical_blocks() {
  "foo.jump"() [^a, ^b] : () -> ()
^a:
  return
^b:
  return
}

// -----

// Arguments used in the same way do not stop a merge.
// AGGR-LABEL: func.func @same_blocks_with_arguments(
// AGGR-NEXT:    "foo.jump"() [^[[A:.+]], ^[[A]]] : () -> ()
// AGGR-NEXT:  ^[[A]](%[[X:[^:]+]]: i32):
// AGGR-NEXT:    func.return %[[X]] : i32
// AGGR-NEXT:  }
func.func @same_blocks_with_arguments() -> i32 {
  "foo.jump"() [^a, ^b] : () -> ()
^a(%x: i32):
  return %x : i32
^b(%y: i32):
  return %y : i32
}

// -----

// Values from outside that differ would become arguments, but an opaque
// predecessor cannot pass them: no merge.
// AGGR-LABEL: func.func @outside_values_opaque_predecessor(
// AGGR-NEXT:    "foo.jump"() [^[[A:.+]], ^[[B:.+]]] : () -> ()
func.func @outside_values_opaque_predecessor(%p: i32, %q: i32) -> i32 {
  "foo.jump"() [^a, ^b] : () -> ()
^a:
  return %p : i32
^b:
  return %q : i32
}

// -----

// With a cf.cond_br they become an argument; the branch, now to one block with
// two operand lists, is then folded to a select by cf's patterns.
// AGGR-LABEL: func.func @outside_values(
// AGGR-SAME:    %[[C:[^:]+]]: i1, %[[P:[^:]+]]: i32, %[[Q:[^:]+]]: i32)
// AGGR-NEXT:    %[[R:.+]] = arith.select %[[C]], %[[P]], %[[Q]] : i32
// AGGR-NEXT:    func.return %[[R]] : i32
func.func @outside_values(%c: i1, %p: i32, %q: i32) -> i32 {
  cf.cond_br %c, ^a, ^b
^a:
  return %p : i32
^b:
  return %q : i32
}

// -----

// Existing arguments first, the new one after them.
// AGGR-LABEL: func.func @outside_values_and_arguments(
// AGGR-SAME:    %[[C:[^:]+]]: i1, %[[P:[^:]+]]: i32, %[[Q:[^:]+]]: i32)
// AGGR-NEXT:    %[[R0:.+]] = arith.select %[[C]], %[[Q]], %[[P]] : i32
// AGGR-NEXT:    %[[R1:.+]] = arith.select %[[C]], %[[P]], %[[Q]] : i32
// AGGR-NEXT:    func.return %[[R1]], %[[R0]] : i32, i32
func.func @outside_values_and_arguments(%c: i1, %p: i32, %q: i32) -> (i32, i32) {
  cf.cond_br %c, ^a(%q : i32), ^b(%p : i32)
^a(%x: i32):
  return %p, %x : i32, i32
^b(%y: i32):
  return %q, %y : i32, i32
}

// -----

// A block branching to itself merges with one branching to it: the back edge
// passes the loop-carried condition.
// AGGR-LABEL: func.func @back_edge(
// AGGR-SAME:    %[[C:[^:]+]]: i1, %[[D:[^:]+]]: i1)
// AGGR-NEXT:    %[[E:.+]] = "foo.def"() : () -> i1
// AGGR-NEXT:    cf.cond_br %[[C]], ^[[LOOP:[a-zA-Z0-9_]+]](%[[D]] : i1), ^[[EXIT:.+]]{{$}}
// AGGR-NEXT:  ^[[LOOP]](%[[ARG:[^:]+]]: i1):
// AGGR-NEXT:    cf.cond_br %[[ARG]], ^[[LOOP]](%[[E]] : i1), ^[[EXIT]]{{$}}
// AGGR-NEXT:  ^[[EXIT]]:
// AGGR-NEXT:    func.return
func.func @back_edge(%c: i1, %d: i1) {
  %e = "foo.def"() : () -> i1
  cf.cond_br %c, ^second, ^exit
^first:
  cf.cond_br %e, ^first, ^exit
^second:
  cf.cond_br %d, ^first, ^exit
^exit:
  return
}

// -----

// Ops that differ in an attribute are not the same op.
// AGGR-LABEL: func.func @different_attributes(
// AGGR:         memref.store %{{.*}} : memref<i32>
// AGGR-NEXT:    cf.br
// AGGR:         memref.store %{{.*}} {nontemporal = true} : memref<i32>
func.func @different_attributes(%c: i1, %m: memref<i32>) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  cf.br ^head
^head:
  cf.cond_br %c, ^a, ^b
^a:
  memref.store %zero, %m[] : memref<i32>
  cf.br ^head
^b:
  memref.store %one, %m[] {nontemporal = true} : memref<i32>
  cf.br ^head
}

// -----

// A result used in another block would be ambiguous after a merge: no merge,
// the call still passes two different values.
// AGGR-LABEL: func.func @value_used_outside(
// AGGR:         %[[I1:.+]] = arith.addi
// AGGR:         %[[J1:.+]] = arith.addi
// AGGR:       ^{{.+}}(%[[J:[^:]+]]: i32):
// AGGR:         func.call @use2(%[[J]], %[[I1]])
func.func private @use2(i32, i32)
func.func @value_used_outside(%n: i32, %i: i32) {
  %one = arith.constant 1 : i32
  %lt = arith.cmpi slt, %i, %n : i32
  cf.cond_br %lt, ^inc, ^exit
^inc:
  %i1 = arith.addi %i, %one : i32
  cf.br ^head(%i1 : i32)
^latch:
  %j1 = arith.addi %j, %one : i32
  cf.br ^head(%j1 : i32)
^head(%j: i32):
  %more = arith.cmpi slt, %j, %n : i32
  func.call @use2(%j, %i1) : (i32, i32) -> ()
  cf.cond_br %more, ^latch, ^exit
^exit:
  return
}

// -----

// Every predecessor passes %a as the first argument: it is used directly.
// AGGR-LABEL: func.func @same_value_from_every_predecessor(
// AGGR-SAME:    %[[A:[^:]+]]: i32, %[[B:[^:]+]]: i32)
// AGGR:         cf.br ^[[JOIN:[a-zA-Z0-9_]+]](%[[B]] : i32)
// AGGR:         cf.br ^[[JOIN]](%[[A]] : i32)
// AGGR-NEXT:  ^[[JOIN]](%[[V:[^:]+]]: i32):
// AGGR-NEXT:    %{{.+}} = arith.addi %[[A]], %[[V]] : i32
func.func @same_value_from_every_predecessor(%a: i32, %b: i32) -> i32 {
  "foo.jump"() [^x, ^y] : () -> ()
^x:
  cf.br ^join(%a, %b : i32, i32)
^y:
  cf.br ^join(%a, %a : i32, i32)
^join(%u: i32, %v: i32):
  %s = arith.addi %u, %v : i32
  return %s : i32
}

// -----

// cf.switch successors take the new operands too.
// AGGR-LABEL: func.func @switch_blocks(
// AGGR-SAME:    %{{[^:]+}}: i32, %[[P:[^:]+]]: i32, %[[Q:[^:]+]]: i32)
// AGGR-NEXT:    cf.switch
// AGGR-NEXT:    default: ^[[A:[a-zA-Z0-9_]+]](%[[P]] : i32),
// AGGR-NEXT:      1: ^[[A]](%[[Q]] : i32)
// AGGR-NEXT:    ]
// AGGR-NEXT:  ^[[A]](%[[X:[^:]+]]: i32):
// AGGR-NEXT:    "foo.sink"(%[[X]]) : (i32) -> ()
func.func @switch_blocks(%flag: i32, %p: i32, %q: i32) {
  cf.switch %flag : i32, [
    default: ^a,
    1: ^b
  ]
^a:
  "foo.sink"(%p) : (i32) -> ()
  return
^b:
  "foo.sink"(%q) : (i32) -> ()
  return
}
