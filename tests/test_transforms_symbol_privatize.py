"""`symbol-privatize`: output against mlir-opt 22.1.8 and the `exclude` option."""

from __future__ import annotations

from transforms_support import assert_same_ir, run_pipeline

from passflow.registry import lookup_pass
from passflow.transforms import SymbolPrivatize

SYMBOLS = """
module {
  func.func @public_function() {
    return
  }
  func.func private @already_private()
  func.func @other() {
    return
  }
  module @nested {
    func.func @stays_public() {
      return
    }
  }
  "foo.op"() : () -> ()
}
"""

MLIR_EXCLUDING = """
module {
  func.func @public_function() {
    return
  }
  func.func private @already_private()
  func.func private @other() {
    return
  }
  module @nested {
    func.func @stays_public() {
      return
    }
  }
  "foo.op"() : () -> ()
}
"""

MLIR_ALL = """
module {
  func.func private @public_function() {
    return
  }
  func.func private @already_private()
  func.func private @other() {
    return
  }
  module @nested attributes {sym_visibility = "private"} {
    func.func @stays_public() {
      return
    }
  }
  "foo.op"() : () -> ()
}
"""


def test_privatizes_every_top_level_symbol() -> None:
    assert_same_ir(run_pipeline(SYMBOLS, "builtin.module(symbol-privatize)"), MLIR_ALL)


def test_exclude_keeps_the_named_symbols_public() -> None:
    pipeline = "builtin.module(symbol-privatize{exclude=public_function,nested})"
    assert_same_ir(run_pipeline(SYMBOLS, pipeline), MLIR_EXCLUDING)


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("symbol-privatize")
    assert info is not None and info.pass_class is SymbolPrivatize
    assert SymbolPrivatize.name == "SymbolPrivatize"
    assert SymbolPrivatize.summary == "Mark symbols private"
    assert str(SymbolPrivatize()) == "symbol-privatize{}"
    assert str(info.create("exclude=foo,bar")) == "symbol-privatize{exclude={foo,bar}}"
