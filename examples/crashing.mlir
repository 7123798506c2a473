// A module with a seeded bug: test-pass-crash-on-op{op=arith.remui} crashes on
// @f5, the one function that holds an arith.remui. passflow-reduce finds it:
// see docs/reduce.md.
builtin.module {
  func.func @f0(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f1(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f2(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f3(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f4(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f5(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.remui %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f6(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
  func.func @f7(%a: i32, %b: i32) -> i32 {
    %c = arith.constant 3 : i32
    %v0 = arith.addi %a, %c : i32
    %v1 = arith.muli %v0, %c : i32
    %v2 = arith.subi %v1, %c : i32
    %v3 = arith.addi %v2, %c : i32
    %v4 = arith.muli %v3, %c : i32
    %v5 = arith.subi %v4, %c : i32
    func.return %v5 : i32
  }
}
