// A small module for the demo: redundant arithmetic that canonicalize and cse
// clean up, a private function nobody calls (symbol-dce), and a call to inline.
func.func @square_plus_one(%x: i32) -> i32 {
  %one = arith.constant 1 : i32
  %sq = arith.muli %x, %x : i32
  %sq2 = arith.muli %x, %x : i32
  %zero = arith.constant 0 : i32
  %r = arith.addi %sq, %one : i32
  %unused = arith.addi %sq2, %zero : i32
  func.return %r : i32
}

func.func private @dead(%x: i32) -> i32 {
  func.return %x : i32
}

func.func @main(%x: i32) -> i32 {
  %c = arith.constant 2 : i32
  %y = arith.addi %x, %c : i32
  %z = func.call @square_plus_one(%y) : (i32) -> i32
  func.return %z : i32
}
