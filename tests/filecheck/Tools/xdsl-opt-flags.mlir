// passflow-xdsl-opt beyond xdsl-opt: passflow's own passes by name in -p, and
// errors that end in one line where xdsl-opt prints a traceback.
// RUN: passflow-xdsl-opt %s -p symbol-dce,cse --time-passes | filecheck %s
// RUN: not passflow-xdsl-opt %s -p nope,cse,other 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not passflow-xdsl-opt %s -p 'arith-add-fastmath{flags=nnan' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not passflow-xdsl-opt %s -p convert-memref-to-ptr 2>&1 | filecheck %s --check-prefix=FAILED
// RUN: not passflow-xdsl-opt %s -p test-pass-failure 2>&1 | filecheck %s --check-prefix=PASSFLOW
// RUN: passflow-xdsl-opt --version | filecheck %s --check-prefix=VERSION

// CHECK: Pass symbol-dce took {{.*}} seconds
// CHECK-NEXT: Pass cse took {{.*}} seconds
// CHECK: func.func @used
// CHECK-NOT: @unused

// UNKNOWN-NOT: Traceback
// UNKNOWN: ValueError: Unrecognized passes: ['nope', 'other']

// SYNTAX-NOT: Traceback
// SYNTAX: xdsl.utils.exceptions.ArgSpecParseError: Error parsing pass pipeline specification:
// SYNTAX: Malformed pass arguments, expected either a space or `}` here

// FAILED-NOT: Traceback
// FAILED: xdsl.utils.exceptions.DiagnosticException: Unsupported layout type affine_map<(d0, d1) -> (d1, d0)>
// FAILED: | Error while applying pattern: Unsupported layout type

// PASSFLOW-NOT: Traceback
// PASSFLOW: error: failed to run pass 'TestFailurePass'

// VERSION: xdsl-opt built from xdsl version {{[0-9.]+}} (passflow-xdsl-opt {{[0-9a-z.]+}})

func.func private @unused() -> ()

func.func @used(%m: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, %i: index) -> f32 {
  %0 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  %1 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  %2 = arith.addf %0, %1 : f32
  func.return %2 : f32
}
