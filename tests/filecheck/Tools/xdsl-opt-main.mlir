// An xDSL project's xDSLOptMain subclass: passflow-opt takes the dialect and
// the pass it registers, and names the fix for a spec that is not one.
// RUN: passflow-opt %s --load-xdsl-opt-main=%S/../../../examples/xdsl_project_opt.py:ToyOptMain -p 'builtin.module(toy-fuse-doubles)' | filecheck %s
// RUN: passflow-opt --load-xdsl-opt-main %S/../../../examples/xdsl_project_opt.py:ToyOptMain --list-passes | filecheck --check-prefix=LIST %s
// RUN: not passflow-opt %s --load-xdsl-opt-main=%S/../../../examples/xdsl_project_opt.py:DoubleOp 2>&1 | filecheck --check-prefix=NOTONE %s
// RUN: not passflow-opt %s -p 'builtin.module(toy-fuse-doubles)' 2>&1 | filecheck --check-prefix=WITHOUT %s

// CHECK:      %0 = "toy.double"(%x) : (i32) -> i32
// CHECK-NEXT: %1 = "toy.quad"(%x) : (i32) -> i32

// LIST: Passes and pipelines of plugin {{.*}}xdsl_project_opt.py:ToyOptMain:
// LIST-NEXT:   toy-fuse-doubles {{ +}}Fuse `toy.double(toy.double(x))` into `toy.quad(x)`.

// NOTONE: passflow-opt: Failed to load the xDSLOptMain subclass '{{.*}}xdsl_project_opt.py:DoubleOp': RegistrationError: '{{.*}}:DoubleOp' is the class DoubleOp, not an xDSLOptMain subclass; fix: name the class, as 'package.module:MyOptMain' or 'file.py:MyOptMain'
// NOTONE-NEXT: note: --load-xdsl-opt-main takes a subclass of xDSL's xDSLOptMain (xdsl.xdsl_opt_main), loaded before the run starts

// WITHOUT: error: operation being parsed with an unregistered dialect

func.func @f(%x: i32) -> i32 {
  %0 = "toy.double"(%x) : (i32) -> i32
  %1 = "toy.double"(%0) : (i32) -> i32
  func.return %1 : i32
}
