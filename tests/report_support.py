"""The input and pipeline both report tests run: `@a` changes under
canonicalize, `@c` under cse, `@b` under nothing, and a pass fails."""

INPUT = """\
func.func @a(%x: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %r = arith.addi %x, %zero : i32
  func.return %r : i32
}
func.func @b(%x: i32) -> i32 {
  func.return %x : i32
}
func.func @c(%x: i32) -> i32 {
  %m1 = arith.muli %x, %x : i32
  %m2 = arith.muli %x, %x : i32
  %s = arith.addi %m1, %m2 : i32
  func.return %s : i32
}
"""
PIPELINE = (
    "builtin.module(func.func(canonicalize,cse,test-stats-pass),"
    "test-pass-failure{gen-diagnostics=true})"
)
